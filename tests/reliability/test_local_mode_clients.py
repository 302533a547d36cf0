"""Local mode (no account can log in yet: the browser works as the admin) only for a browser on the server's
own machine: a request from another address, or one that came through a proxy, gets the log-in form with a
message saying how to create the first admin, whatever address the server listens on. Accounts made by
imports (no password) neither switch local mode on for such requests nor keep it on once an account with a
password exists.
"""

from __future__ import annotations

import pytest

import annotator.ui
from annotator.access import is_local_client
from annotator.auth import add_user
from annotator.io import import_judgements
from tests.apptest_helpers import app_test, page_test, seed_project, texts

PW = "correct horse battery"
REMOTE = [("203.0.113.9", {}), ("10.0.0.7", {}), (None, {"X-Forwarded-For": "203.0.113.9"}),
          (None, {"x-real-ip": "203.0.113.9"}), (None, {"Forwarded": "for=203.0.113.9"}),
          ("127.0.0.1", {"X-Forwarded-For": "127.0.0.1"})]


@pytest.mark.parametrize("peer, headers, local", [
    (None, {}, True), ("127.0.0.1", {}, True), ("127.0.0.2", {}, True), ("::1", {}, True),
    ("::ffff:127.0.0.1", {}, True), (None, {"Host": "localhost:8501", "Origin": "http://localhost:8501"}, True),
    *[(peer, headers, False) for peer, headers in REMOTE],
    ("192.168.1.20", {}, False), ("not an address", {}, False),
])
def test_is_local_client(peer, headers, local):
    assert is_local_client(peer, headers) is local


@pytest.fixture
def no_accounts(sqlite_store):
    seed_project(sqlite_store, "demo", n_items=3)
    return sqlite_store


def _has_button(at, key) -> bool:
    return any(b.key == key for b in at.button)


def _client(monkeypatch, peer, headers):
    monkeypatch.setattr(annotator.ui, "client_address", lambda: (peer, dict(headers)))


@pytest.mark.parametrize("peer, headers", REMOTE, ids=[f"{p}-{sorted(h)}" for p, h in REMOTE])
def test_remote_or_proxied_browser_gets_the_login_form_and_the_first_admin_hint(no_accounts, monkeypatch, peer, headers):
    _client(monkeypatch, peer, headers)
    at = app_test(no_accounts.url).run()
    assert not at.exception
    assert at.text_input(key="login_name") is not None
    shown = texts(at)
    assert "Local mode" not in shown and "annotator users add NAME --role admin" in shown
    assert not _has_button(at, "ann_assign_me")
    # A page asked for directly refuses as well (its own guard).
    page = page_test("data", no_accounts.url, user=None).run()
    assert any("Please log in" in w.value for w in page.warning) and not page.button


def test_the_server_machine_keeps_local_mode(no_accounts, monkeypatch):
    _client(monkeypatch, None, {"Host": "127.0.0.1:8501"})
    at = app_test(no_accounts.url).run()
    assert "Local mode" in texts(at) and _has_button(at, "ann_assign_me")


def test_accounts_made_by_imports_do_not_open_local_mode_to_others(no_accounts, monkeypatch, tmp_path):
    coarse = tmp_path / "coarse.json"
    coarse.write_text('{"0": "congruent", "1": "incongruent"}')
    fine = tmp_path / "fine.json"
    fine.write_text('{"1": ["gender"]}')
    import_judgements(no_accounts, "demo", "sys-a", "imported-annotator", coarse, fine)
    _client(monkeypatch, "203.0.113.9", {})
    at = app_test(no_accounts.url).run()
    assert at.text_input(key="login_name") is not None and "Local mode" not in texts(at)
    # Once an account with a password exists, local mode is off on the server's machine too.
    _client(monkeypatch, None, {})
    assert "Local mode" in texts(app_test(no_accounts.url).run())
    add_user(no_accounts, "root", "admin", PW)
    at = app_test(no_accounts.url).run()
    assert "Local mode" not in texts(at) and "--role admin" not in texts(at)
    assert at.text_input(key="login_name") is not None


def test_first_admin_logs_in_from_afar(no_accounts, monkeypatch):
    _client(monkeypatch, None, {"X-Forwarded-For": "203.0.113.9"})
    at = app_test(no_accounts.url).run()
    add_user(no_accounts, "root", "admin", PW)
    at.text_input(key="login_name").input("root")
    at.text_input(key="login_password").input(PW)
    at.form_submit_button[0].click()
    at.run()
    assert at.session_state["annotator_user"]["role"] == "admin" and "Logged in as" in texts(at)
