"""The tab's side of store sessions through AppTest (as served by serve.py): a log-in keeps the session's id,
every page run checks it with one read, and a log-out in one tab ends the other tabs of that session."""

from __future__ import annotations

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from annotator.accounts.auth import add_user
from annotator.accounts.sessions import SESSION_LOGGED_OUT_MESSAGE
from tests.apptest_helpers import app_test, seed_project, texts

PW = "correct horse battery"


@pytest.fixture
def served(monkeypatch):
    monkeypatch.setattr("annotator.ui.session.routes._served", True)


def _logged_in(url):
    at = app_test(url).run()
    at.text_input(key="login_name").input("lea")
    at.text_input(key="login_password").input(PW)
    at.form_submit_button[0].click()
    at.run()
    assert "annotator_user" in at.session_state, texts(at)
    return at


def test_a_page_run_checks_the_session_with_one_read_and_no_write(sqlite_store, served):
    seed_project(sqlite_store, "demo", n_items=2)
    add_user(sqlite_store, "lea", "lead", PW)
    at = _logged_in(sqlite_store.url)
    sid = at.session_state["annotator_user"]["sid"]
    with sqlite_store.read() as conn:
        assert conn.execute(text("SELECT user_id FROM sessions WHERE id = :s"), {"s": sid}).scalar() is not None
    seen: list[str] = []

    def record(conn, cursor, statement, *args):
        if "sessions" in statement:
            seen.append(statement)
    event.listen(Engine, "before_cursor_execute", record)
    try:
        at.run()
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    assert len(seen) == 1 and seen[0].lstrip().startswith("SELECT") and "WHERE users.id = " in seen[0], seen


def test_logging_out_in_one_tab_ends_the_others(sqlite_store, served):
    seed_project(sqlite_store, "demo", n_items=2)
    add_user(sqlite_store, "lea", "lead", PW)
    first = _logged_in(sqlite_store.url)
    second = app_test(sqlite_store.url).run()  # a second tab of the same session, as a cookie would resume it
    second.session_state["annotator_user"] = dict(first.session_state["annotator_user"])
    second.run()
    assert "Logged in as" in texts(second)
    first.button(key="annotator_logout").click().run()
    assert "annotator_user" not in first.session_state
    second.run()
    assert "annotator_user" not in second.session_state
    assert any(SESSION_LOGGED_OUT_MESSAGE in w.value for w in second.warning), texts(second)
