"""The websocket load client (tests/reliability/ws_load.py, used by bench/ws_load_bench.py) against a real app
server: two simulated annotators log in through the form, land on Annotate and save every half second for a few
seconds; every save they saw confirmed is stored with the values they ticked, and each saw its own captions.

The client speaks Streamlit's protocol as the page does (BackMsg.rerun_script with the changed widget states,
ForwardMsg runs read to their end); if the app's widgets or its log-in change, this fails before the benchmark
silently measures something else.
"""

from __future__ import annotations

import asyncio

import pytest

from annotator.accounts.auth import add_user
from annotator.assignment import assign
from annotator.store import open_store
from tests.apptest_helpers import seed_project
from tests.browser.conftest import app_server  # noqa: F401  (a fixture)

from ws_load import ProtocolError, annotator_session, lost_saves, run_load

pytestmark = [pytest.mark.serial, pytest.mark.timeout(300)]  # serial: an app server and many sessions at once

PW = "load client pass"


def test_two_simulated_annotators_save_and_nothing_is_lost(app_server, tmp_path, reliability_report):  # noqa: F811
    store = open_store(f"sqlite:///{tmp_path / 'load.db'}")
    seed_project(store, "load", n_items=60)
    users = ["ann0", "ann1"]
    for u in users:
        add_user(store, u, "annotator", PW)
    assign(store, "load", users, double_fraction=0)
    server = app_server(store.url)

    result = asyncio.run(run_load([server.url], users, PW, period=0.5, duration=4.0, seed=3))

    assert result.errors == []
    saves = [len(a.saved) for a in result.annotators]
    assert all(n >= 2 for n in saves), saves
    assert {label for a in result.annotators for _, label, _ in a.saved} == {"accurate", "inaccurate"}
    assert lost_saves(store, "load", result.annotators) == []
    # each saw only its own captions (the project is shared out, no caption twice)
    seen = [{cap for cap, _, _ in a.saved} for a in result.annotators]
    assert not seen[0] & seen[1]
    store.dispose()
    reliability_report(f"websocket load client, 2 annotators, {sum(saves)} saves: p95 "
                       f"{result.quantile(0.95) * 1000:.0f} ms (server answer to Save & next)")


def test_a_wrong_password_is_reported_by_name(app_server, tmp_path):  # noqa: F811
    store = open_store(f"sqlite:///{tmp_path / 'load.db'}")
    seed_project(store, "load", n_items=4)
    add_user(store, "ann0", "annotator", PW)
    server = app_server(store.url)
    with pytest.raises(ProtocolError, match="ann0: not on Annotate after logging in"):
        asyncio.run(annotator_session(server.url, "ann0", "not the password"))
    store.dispose()
