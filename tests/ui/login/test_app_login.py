"""The app shell through AppTest: login, wrong password, lock-out, logout, local mode, menu by role."""

from __future__ import annotations

import pytest

from annotator.accounts.auth import add_user
from tests.apptest_helpers import app_test, seed_project, texts

PW = "correct horse battery"


def _login(at, name, password):
    at.text_input(key="login_name").input(name)
    at.text_input(key="login_password").input(password)
    at.form_submit_button[0].click()
    return at.run()


@pytest.fixture
def accounts(sqlite_store):
    seed_project(sqlite_store, "demo", n_items=3)
    add_user(sqlite_store, "alice", "annotator", PW)
    return sqlite_store


def test_login_page_then_right_password(accounts):
    at = app_test(accounts.url).run()
    assert not at.exception
    assert at.text_input(key="login_name") is not None
    assert "Please log in" not in texts(at)
    at = _login(at, "alice", PW)
    assert not at.exception
    kept = at.session_state["annotator_user"]
    assert {k: kept[k] for k in ("name", "role")} == {"name": "alice", "role": "annotator"}
    assert set(kept) == {"id", "name", "epoch", "role"}  # the session's claim, checked on every run
    # Logged in: the annotate page is shown (nothing assigned to alice yet).
    assert "Nothing is assigned to you" in texts(at)
    assert "Logged in as" in texts(at)


def test_wrong_password_and_unknown_user_get_the_same_message(accounts):
    at = app_test(accounts.url).run()
    at = _login(at, "alice", "not the password")
    first = [e.value for e in at.error]
    at = _login(at, "mallory", PW)
    second = [e.value for e in at.error]
    assert first == second == ["Unknown user name or wrong password."]
    assert "annotator_user" not in at.session_state


def test_lock_out_after_repeated_failures(accounts):
    at = app_test(accounts.url).run()
    messages = []
    for _ in range(5):
        at = _login(at, "alice", "guess guess")
        messages.append(at.error[0].value)
    assert messages[0] == messages[1] == "Unknown user name or wrong password."
    assert "locked" in messages[-1]
    at = _login(at, "alice", PW)  # the right password no longer helps
    assert "locked" in at.error[0].value and "annotator_user" not in at.session_state


def test_logout(accounts):
    at = app_test(accounts.url, user="alice", role="annotator", create_user=False).run()
    assert "Logged in as" in texts(at)
    at.button(key="annotator_logout").click().run()
    assert "annotator_user" not in at.session_state
    assert at.text_input(key="login_name") is not None


def test_local_mode_without_accounts(sqlite_store):
    seed_project(sqlite_store, "demo", n_items=3)
    at = app_test(sqlite_store.url).run()
    assert not at.exception
    assert "Local mode" in texts(at)
    # The local admin sees every page that exists, and can start annotating alone.
    assert at.button(key="ann_assign_me") is not None
    at.button(key="ann_assign_me").click().run()
    assert not at.exception
    assert at.button(key="ann_save") is not None


def test_any_url_asks_for_login_then_opens_that_page(accounts):
    at = app_test(accounts.url).run()
    at.switch_page("pages/guidelines.py").run()
    assert at.text_input(key="login_name") is not None  # logged out: the form, whatever the URL
    assert "Annotation guidelines" not in texts(at)
    at = _login(at, "alice", PW)
    assert "Annotation guidelines" in texts(at)
