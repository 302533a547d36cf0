"""Sessions follow the account: a role change, a new password or a deactivation ends the sessions already
open (the next click shows the log-in form with a message, and nothing more is saved); a lock-out by
someone else's wrong guesses and an unlock do not. The guard re-reads the account once per page run, by
primary key.
"""

from __future__ import annotations

import io

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from annotator.assignment import assign
from annotator.accounts.auth import SESSION_ENDED_MESSAGE, add_user
from annotator.cli import main
from annotator.store.judgements import current_judgement
from annotator.store.users import user_id
from tests.apptest_helpers import app_test, seed_project, texts

PW = "correct horse battery"
NEW_PW = "a brand new secret"


@pytest.fixture
def team(sqlite_store):
    seed_project(sqlite_store, "demo", n_items=4)
    add_user(sqlite_store, "lea", "lead", PW)
    add_user(sqlite_store, "alice", "annotator", PW)
    assign(sqlite_store, "demo", ["alice"], double_fraction=0.0)
    return sqlite_store


def _login(at, name, password):
    at.text_input(key="login_name").input(name)
    at.text_input(key="login_password").input(password)
    at.form_submit_button[0].click()
    return at.run()


def _logged_in(url, name, password=PW):
    at = _login(app_test(url, project="demo").run(), name, password)
    assert "annotator_user" in at.session_state, texts(at)
    return at


def _shows_login_form_with_message(at) -> bool:
    return (at.text_input(key="login_name") is not None and "annotator_user" not in at.session_state
            and any(SESSION_ENDED_MESSAGE in w.value for w in at.warning))


def _cli(url, *args, stdin: str | None = None, monkeypatch=None) -> int:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return main(["--db", url, "users", *args])


def _judgement(store, name):
    with store.read() as conn:
        uid = user_id(conn, name)
        cid = conn.execute(text("SELECT caption_id FROM assignments WHERE user_id = :u"), {"u": uid}).scalars().first()
        return current_judgement(conn, cid, uid)


def test_demoted_lead_loses_the_lead_pages_at_the_next_click(team):
    url = team.url
    at = _logged_in(url, "lea")
    at.switch_page("pages/agreement.py").run()
    assert not at.exception and not at.error and "Agreement" in [t.value for t in at.title]
    assert _cli(url, "role", "lea", "annotator") == 0
    at.run()  # the next click on the open page
    assert _shows_login_form_with_message(at), texts(at)
    assert "Agreement" not in [t.value for t in at.title]
    at = _login(at, "lea", PW)
    assert at.session_state["annotator_user"]["role"] == "annotator"
    at.switch_page("pages/agreement.py").run()
    assert any("Not allowed" in e.value for e in at.error)
    # ... with links to the pages the role may open (issue 24 item 12).
    links = " ".join(m.value for m in at.markdown)
    assert "[Annotate](/annotate)" in links and "[Guidelines](/guidelines)" in links and "/agreement" not in links


def test_the_message_says_the_save_of_the_ended_session_was_not_stored():
    """Issue 24 item 12: demoted while deciding, the log-in form says the decision was not stored."""
    assert "was not stored" in SESSION_ENDED_MESSAGE and "a decision" in SESSION_ENDED_MESSAGE


def test_new_password_ends_the_session_and_its_save_is_not_stored(team, monkeypatch):
    url = team.url
    at = _logged_in(url, "alice")
    at.radio(key="ann_label").set_value("accurate")
    assert _cli(url, "passwd", "alice", "--password-stdin", stdin=NEW_PW + "\n", monkeypatch=monkeypatch) == 0
    at.button(key="ann_save").click().run()
    assert _shows_login_form_with_message(at), texts(at)
    assert _judgement(team, "alice") is None  # the click of the ended session stored nothing
    assert any("Unknown user name or wrong password" in e.value for e in _login(at, "alice", PW).error)
    at = _login(at, "alice", NEW_PW)
    assert "annotator_user" in at.session_state and not at.warning


def test_deactivated_account_is_logged_out_and_cannot_log_in(team):
    at = _logged_in(team.url, "lea")
    assert _cli(team.url, "deactivate", "lea") == 0
    at.run()
    assert _shows_login_form_with_message(at)
    at = _login(at, "lea", PW)
    assert "annotator_user" not in at.session_state
    assert [e.value for e in at.error] == ["Unknown user name or wrong password."]


def test_lock_out_by_wrong_guesses_and_unlock_leave_the_open_session_alone(team):
    """Anyone can lock a name by guessing; that must not throw the real user out of their work."""
    url = team.url
    at = _logged_in(url, "alice")
    attacker = app_test(url).run()
    for _ in range(5):
        attacker = _login(attacker, "ALICE", "guess guess")
    assert "locked" in attacker.error[0].value
    at.radio(key="ann_label").set_value("accurate")
    at.button(key="ann_save").click().run()
    assert not at.exception and "annotator_user" in at.session_state
    assert _judgement(team, "alice").label.value == "accurate"
    assert _cli(url, "unlock", "alice") == 0
    at.run()
    assert "annotator_user" in at.session_state and at.button(key="ann_save") is not None


def test_an_account_replaced_under_the_same_id_ends_the_session(team):
    """A restore can give the session's user id to someone else: the name is part of the claim."""
    at = _logged_in(team.url, "lea")
    with team.transaction() as conn:
        conn.execute(text("UPDATE users SET name = 'mallory', name_key = 'mallory' WHERE name = 'lea'"))
    at.run()
    assert _shows_login_form_with_message(at)


def test_role_is_read_once_per_page_run_by_primary_key(team):
    statements: list[str] = []

    def seen(conn, cursor, statement, *args):
        if "session_epoch" in statement and "FROM users" in statement:
            statements.append(statement)

    at = _logged_in(team.url, "lea")
    at.switch_page("pages/agreement.py").run()
    event.listen(Engine, "before_cursor_execute", seen)
    try:
        at.run()
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
    assert len(statements) == 1, statements
    assert "WHERE users.id = " in statements[0]
