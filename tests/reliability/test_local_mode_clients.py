"""Local mode (no account can log in yet: the browser works as the admin) only for a browser on the server's
own machine: a request from another address, or one that came through a proxy, gets the log-in form with a
message saying how to create the first admin, whatever address the server listens on. Accounts made by
imports (no password) neither switch local mode on for such requests nor keep it on once an account with a
password exists.
"""

from __future__ import annotations

import pytest

import annotator.ui.session.identity
from annotator.accounts.access import is_local_client, is_own_origin
from annotator.accounts.auth import add_user
from annotator.io import import_judgements
from tests.apptest_helpers import app_test, page_test, seed_project, texts

PW = "correct horse battery"
REMOTE = [("203.0.113.9", {}), ("10.0.0.7", {}), (None, {"X-Forwarded-For": "203.0.113.9"}),
          (None, {"x-real-ip": "203.0.113.9"}), (None, {"Forwarded": "for=203.0.113.9"}),
          ("127.0.0.1", {"X-Forwarded-For": "127.0.0.1"})]


#: Proxy, load-balancer and CDN headers that once left local mode on (issue 22, item 2), and made-up ones that
#: only the name rule (``forwarded``, ``client-ip`` anywhere in the name) catches.
PROXY_HEADERS = ["True-Client-IP", "CF-Connecting-IP", "X-Client-IP", "X-Forwarded", "Client-IP",
                 "X-Original-Forwarded-For", "X-Azure-ClientIP-Forwarded", "X-Acme-Client-IP"]
LOOPBACK = {"Host": "127.0.0.1:8501", "Origin": "http://127.0.0.1:8501"}
#: Host and Origin a browser sends when a page's own name was rebound to 127.0.0.1 (DNS rebinding), or when it
#: reaches the server by a loopback name on another port or in a malformed way.
NOT_LOOPBACK = [{"Host": "evil.example:8501", "Origin": "http://evil.example:8501"},
                {"Host": "evil.example:8501"}, {"Host": "127.0.0.1.evil.example:8501"},
                {"Host": "localhost.evil.example:8501"}, {"Host": "127.0.0.1:8502"}, {"Host": "localhost"},
                {"Host": "127.0.0.1:8501", "Origin": "http://evil.example:8501"},
                {"Host": "127.0.0.1:8501", "Origin": "http://localhost:3000"},
                {"Host": "127.0.0.1:8501", "Origin": "null"}, {"Host": "127.0.0.1@evil.example:8501"},
                {"Host": "[::1]"}, {"Origin": "http://127.0.0.1:8501"}, {"Host": "::1:8501"}]


@pytest.mark.parametrize("peer, headers, local", [
    (None, {}, True), ("127.0.0.1", {}, True), ("127.0.0.2", {}, True), ("::1", {}, True),
    ("::ffff:127.0.0.1", {}, True), (None, {"Host": "localhost:8501", "Origin": "http://localhost:8501"}, True),
    (None, LOOPBACK, True), (None, {"host": "LOCALHOST:8501"}, True), (None, {"Host": "127.8.9.10:8501"}, True),
    (None, {"Host": "[::1]:8501", "Origin": "http://[::1]:8501"}, True),
    *[(peer, headers, False) for peer, headers in REMOTE],
    ("192.168.1.20", {}, False), ("not an address", {}, False),
    *[(None, {**LOOPBACK, name: "203.0.113.9"}, False) for name in PROXY_HEADERS],
    *[(None, headers, False) for headers in NOT_LOOPBACK],
])
def test_is_local_client(peer, headers, local):
    assert is_local_client(peer, headers, port=8501) is local


def test_the_configured_port_counts():
    assert is_local_client(None, {"Host": "localhost:9000"}, port=9000)
    assert not is_local_client(None, {"Host": "localhost:9000"}, port=8501)
    assert is_local_client(None, {"Host": "localhost"}, port=80)
    assert is_local_client(None, {"Host": "localhost", "Origin": "https://localhost"}, port=443)


@pytest.mark.parametrize("origin, host, own", [
    (None, "127.0.0.1:8501", True), ("http://127.0.0.1:8501", "127.0.0.1:8501", True),
    ("https://annotate.example.org", "annotate.example.org", True),
    ("http://Annotate.example.org:8080", "annotate.example.org:8080", True),
    ("http://localhost:3000", "127.0.0.1:8501", False), ("http://127.0.0.1:3000", "127.0.0.1:8501", False),
    ("http://localhost:8501", "127.0.0.1:8501", False), ("null", "127.0.0.1:8501", False),
    ("http://evil.example:8501", "127.0.0.1:8501", False), ("http://127.0.0.1:8501", None, False),
    ("file://", "127.0.0.1:8501", False),
])
def test_is_own_origin(origin, host, own):
    assert is_own_origin(origin, host) is own


def test_listed_origins_are_own():
    assert is_own_origin("https://portal.example.org", "127.0.0.1:8501", ["https://portal.example.org"])
    assert not is_own_origin("https://portal.example.org:444", "127.0.0.1:8501", ["https://portal.example.org"])


@pytest.fixture
def no_accounts(sqlite_store):
    seed_project(sqlite_store, "demo", n_items=3)
    return sqlite_store


def _has_button(at, key) -> bool:
    return any(b.key == key for b in at.button)


def _client(monkeypatch, peer, headers):
    monkeypatch.setattr(annotator.ui.session.identity, "client_address", lambda: (peer, dict(headers)))


ATTACKS = REMOTE + [(None, {**LOOPBACK, "CF-Connecting-IP": "203.0.113.9"}), (None, NOT_LOOPBACK[0])]


@pytest.mark.parametrize("peer, headers", ATTACKS, ids=[f"{p}-{sorted(h.items())}" for p, h in ATTACKS])
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


@pytest.mark.parametrize("scope_type, origin, passed", [
    ("websocket", "http://127.0.0.1:8501", True), ("websocket", None, True),
    ("websocket", "http://localhost:3000", False), ("websocket", "http://evil.example", False),
    ("http", "http://localhost:3000", True),   # plain requests are Streamlit's and the cookie routes' to judge
])
def test_origin_guard_closes_foreign_websockets(scope_type, origin, passed):
    import asyncio

    from annotator.ui.session.origin_guard import POLICY_VIOLATION, OriginGuard
    reached, sent = [], []

    async def app(scope, receive, send):
        reached.append(scope["type"])

    async def receive():
        return {"type": "websocket.connect"}

    async def send(message):
        sent.append(message)

    headers = [(b"host", b"127.0.0.1:8501")] + ([(b"origin", origin.encode())] if origin else [])
    asyncio.run(OriginGuard(app)({"type": scope_type, "headers": headers, "path": "/_stcore/stream"}, receive, send))
    assert (reached == [scope_type]) is passed
    assert sent == ([] if passed else [{"type": "websocket.close", "code": POLICY_VIOLATION}])
