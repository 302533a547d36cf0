"""Browser sessions annotating at once against one app server lose nothing.

Four users log in and save three judgements each, all at the same time (tests/reliability/browser_load.py): every
confirmed save is stored with the values chosen, no user gets another's caption, the SQLite file stays sound. The
save latency (click on "Save & next" → confirmation on screen) is reported. The full size, ten sessions, is
bench/browser_load_bench.py: the property is the same at four, and four keep the suite's longest browser test at
about a third of its time.
"""

from __future__ import annotations

import pytest

from annotator.store import open_store
from tests.browser.conftest import app_server  # noqa: F401  (a fixture)

from browser_load import annotate_at_once, check_nothing_lost, latency_line, seed, user_names

pytestmark = [pytest.mark.browser, pytest.mark.serial, pytest.mark.timeout(420)]  # serial: many sessions at once

SESSIONS = 4


@pytest.mark.slow
def test_sessions_at_once_lose_nothing(app_server, tmp_path, reliability_report):  # noqa: F811
    store = open_store(f"sqlite:///{tmp_path / 'load.db'}")
    users = user_names(SESSIONS)
    caps = seed(store, str(tmp_path / "img"), users)
    server = app_server(store.url)

    results, wall = annotate_at_once(server.url, users)

    latencies = check_nothing_lost(store, caps, users, results)
    store.dispose()
    reliability_report(latency_line(SESSIONS, latencies, wall))
