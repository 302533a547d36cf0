"""Team deployment: two app processes on different ports share one PostgreSQL database.

As behind a reverse proxy with sticky sessions: each browser session stays on
one process, the processes share nothing but the database. Judgements saved
through either process are all stored, and a user who comes back through the
other process resumes where the database says, not where a process
remembers.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.assignment import assign
from annotator.accounts.auth import add_user
from tests.apptest_helpers import seed_project
from tests.browser.conftest import app_server  # noqa: F401  (a fixture)

from reliability_browser import PW, caption_number, choose, current_of, new_page, run_with_browser, save_and_confirm

pytestmark = [pytest.mark.browser, pytest.mark.serial, pytest.mark.timeout(420)]  # serial: two app processes at once


@pytest.mark.slow
def test_two_app_processes_one_postgres_database(pg_store, app_server, tmp_path):  # noqa: F811
    store = pg_store
    caps = seed_project(store, "demo", n_items=12, image_root=str(tmp_path / "img"), with_images=True)
    for name in ("alice", "bob"):
        add_user(store, name, "annotator", PW)
    summary = assign(store, "demo", ["alice", "bob"], double_fraction=0)
    assert summary.per_annotator["alice"]["total"] == summary.per_annotator["bob"]["total"] == 6
    a = app_server(store.url)
    b = app_server(store.url)
    assert a.port != b.port
    acked = run_with_browser(lambda browser: _annotate_through_both(browser, a, b))
    for n, (who, (label, types)) in acked.items():
        j = current_of(store, caps[n], who)
        assert j is not None and (j.label.value, j.error_types, j.revision) == (label, types, 1), (n, who)
    from annotator.store.projects import table_counts
    assert table_counts(store)["judgements"] == len(acked) == 7


def _annotate_through_both(browser, a, b) -> dict:
    ctx_a, alice = new_page(browser, a.url, "alice")
    ctx_b, bob = new_page(browser, b.url, "bob")
    acked = {}
    for _ in range(3):  # turn by turn through both processes
        for who, page, server in (("alice", alice, a), ("bob", bob, b)):
            n = caption_number(page)
            values = choose(page, n)
            save_and_confirm(page, n, server)
            acked[n] = (who, values)
    alice_seen = sorted(n for n, (w, _) in acked.items() if w == "alice")
    bob_seen = sorted(n for n, (w, _) in acked.items() if w == "bob")
    assert not set(alice_seen) & set(bob_seen), "both were given the same caption"
    ctx_a.close()

    # Alice comes back through the *other* process: it has never seen her, the database has.
    ctx_a2, alice2 = new_page(browser, b.url, "alice")
    n = caption_number(alice2)
    assert n not in acked and n == min(set(range(alice_seen[0], alice_seen[0] + 6)) - set(alice_seen))
    values = choose(alice2, n)
    save_and_confirm(alice2, n, b)
    acked[n] = ("alice", values)
    expect(alice2.locator('[data-testid="stSidebar"]')).to_contain_text("4 / 6")
    # Bob's page on process B and a fresh look through process A agree on his progress.
    ctx_b3, bob_on_a = new_page(browser, a.url, "bob")
    expect(bob_on_a.locator('[data-testid="stSidebar"]')).to_contain_text("3 / 6")
    for c in (ctx_a2, ctx_b, ctx_b3):
        c.close()
    return acked
