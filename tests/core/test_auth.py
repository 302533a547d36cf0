"""Accounts: Argon2 hashing, uniform failure messages, throttling, lock-out, the users CLI."""

from __future__ import annotations

import io
import logging
from datetime import datetime, timedelta, timezone

import pytest

from annotator.accounts import auth
from annotator.cli import main
from annotator.errors import AccountLocked, AuthenticationFailed, InputError
from annotator.model import Role
from annotator.store.logins import failure_state
from annotator.store.users import get_user_row

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)
PW = "correct horse battery"


def test_hash_is_argon2id_and_verifies():
    h = auth.hash_password(PW)
    assert h.startswith("$argon2id$") and PW not in h
    assert auth.verify_password(h, PW)
    assert not auth.verify_password(h, PW + "x")
    assert not auth.verify_password(None, PW)
    assert not auth.verify_password("not-a-hash", PW)
    # Salted: two hashes of one password differ.
    assert auth.hash_password(PW) != h


@pytest.fixture
def hashing(monkeypatch):
    """Set ANNOTATOR_PASSWORD_HASHING for this test (``hashing(None)`` unsets it); the suite's own setting
    (tests/conftest.py) is back afterwards."""
    def use(value):
        if value is None:
            monkeypatch.delenv(auth.FAST_HASHING_VARIABLE, raising=False)
        else:
            monkeypatch.setenv(auth.FAST_HASHING_VARIABLE, value)
        auth.password_hasher.cache_clear()
        auth._dummy_hash.cache_clear()
    yield use
    monkeypatch.undo()
    auth.password_hasher.cache_clear()
    auth._dummy_hash.cache_clear()


def test_a_real_deployment_hashes_with_rfc_9106_low_memory_parameters(hashing):
    hashing(None)
    h = auth.hash_password(PW)
    # argon2id, 64 MiB, 3 passes, 4 lanes: RFC 9106's second recommended choice (argon2-cffi's default)
    assert h.startswith("$argon2id$v=19$m=65536,t=3,p=4$"), h
    assert auth.verify_password(h, PW)
    hashing("something else")  # only the word "fast" turns the cost down
    assert auth.hash_password(PW).startswith("$argon2id$v=19$m=65536,t=3,p=4$")


def test_fast_hashing_is_argon2id_too_and_a_real_log_in_upgrades_its_hashes(hashing, sqlite_store):
    hashing("fast")
    auth.add_user(sqlite_store, "alice", "annotator", PW)
    with sqlite_store.read() as conn:
        fast = get_user_row(conn, "alice").password_hash
    assert fast.startswith("$argon2id$v=19$m=1024,t=1,p=1$"), fast
    hashing(None)
    assert auth.verify_password(fast, PW) and not auth.verify_password(fast, PW + "x")
    auth.authenticate(sqlite_store, "alice", PW, now=T0)
    with sqlite_store.read() as conn:
        upgraded = get_user_row(conn, "alice").password_hash
    assert upgraded.startswith("$argon2id$v=19$m=65536,t=3,p=4$") and auth.verify_password(upgraded, PW)


def test_short_password_refused():
    with pytest.raises(InputError, match="at least 8"):
        auth.hash_password("short")


def test_add_user_stores_only_the_hash(store):
    auth.add_user(store, "alice", "annotator", PW)
    with store.read() as conn:
        row = get_user_row(conn, "alice")
    assert row.role == "annotator" and row.password_hash.startswith("$argon2id$")
    assert PW not in row.password_hash
    with pytest.raises(InputError, match="exists already"):
        auth.add_user(store, "alice", "lead", PW)
    with pytest.raises(InputError, match="unknown role"):
        auth.add_user(store, "bob", "boss", PW)


def test_login_success_and_uniform_failure_message(store):
    auth.add_user(store, "alice", Role.LEAD, PW)
    user = auth.authenticate(store, "alice", PW, now=T0)
    assert user.name == "alice" and user.role is Role.LEAD and user.password_hash is None
    with pytest.raises(AuthenticationFailed) as wrong_pw:
        auth.authenticate(store, "alice", "wrong password", now=T0)
    with pytest.raises(AuthenticationFailed) as unknown:
        auth.authenticate(store, "nobody", PW, now=T0)
    with pytest.raises(AuthenticationFailed) as empty:
        auth.authenticate(store, "", "", now=T0)
    assert str(wrong_pw.value) == str(unknown.value) == str(empty.value) == auth.FAILED_MESSAGE
    assert "password" in auth.FAILED_MESSAGE and "user" in auth.FAILED_MESSAGE


def test_account_without_password_cannot_log_in(sqlite_store):
    store = sqlite_store  # dialect-independent logic; the login test runs on both databases
    auth.add_user(store, "imported", "annotator", None)
    with pytest.raises(AuthenticationFailed, match="Unknown user name or wrong password"):
        auth.authenticate(store, "imported", "", now=T0)


def _fail(store, name, at, password="bad password"):
    with pytest.raises(AuthenticationFailed) as exc:
        auth.authenticate(store, name, password, now=at)
    return exc.value


def test_throttle_then_lock_then_expiry(store):
    policy = auth.DEFAULT_POLICY
    assert (policy.max_failures, policy.lock_minutes) == (5, 15)
    # Waits after 1..4 failures: 0, 0, 1 s, 2 s.
    assert [policy.delay_after(n) for n in (1, 2, 3, 4)] == [0, 0, 1, 2]
    auth.add_user(store, "alice", "annotator", PW)
    t = T0
    _fail(store, "alice", t)
    _fail(store, "alice", t + timedelta(seconds=0.1))          # 2 failures, no wait yet
    _fail(store, "alice", t + timedelta(seconds=0.2))          # 3rd failure: next must wait 1 s
    early = _fail(store, "alice", t + timedelta(seconds=0.5), password=PW)  # right password, too early
    assert "wait 1 seconds" in str(early) and not isinstance(early, AccountLocked)
    # The early attempt counted: 4 failures, so the next must wait 2 s after it.
    locked = _fail(store, "alice", t + timedelta(seconds=3.0))
    assert isinstance(locked, AccountLocked) and "15 minutes" in str(locked)
    # While locked even the right password is refused, with the lock message.
    with pytest.raises(AccountLocked, match="locked"):
        auth.authenticate(store, "alice", PW, now=t + timedelta(minutes=10))
    # After the lock runs out the right password works and resets the counters.
    assert auth.authenticate(store, "alice", PW, now=t + timedelta(minutes=16)).name == "alice"
    with store.read() as conn:
        assert failure_state(conn, "alice") == (0, None, None)


def test_success_resets_counter_before_lock(sqlite_store):
    store = sqlite_store  # dialect-independent logic; the login test runs on both databases
    auth.add_user(store, "alice", "annotator", PW)
    for k in range(2):
        _fail(store, "alice", T0 + timedelta(seconds=k))
    auth.authenticate(store, "alice", PW, now=T0 + timedelta(seconds=5))
    with store.read() as conn:
        assert failure_state(conn, "alice")[0] == 0


def test_unknown_names_are_throttled_like_real_ones(sqlite_store):
    store = sqlite_store  # dialect-independent logic; the login test runs on both databases
    # Otherwise the lock message would tell an attacker which names exist.
    name = "ghost-user-for-lock-test"
    msgs = []
    t = T0
    for k in range(5):
        t = t + timedelta(seconds=10 * (k + 1))
        msgs.append(_fail(store, name, t))
    assert isinstance(msgs[-1], AccountLocked)
    with pytest.raises(AccountLocked):
        auth.authenticate(store, name, "x", now=t + timedelta(minutes=1))


def test_passwd_and_unlock_clear_the_lock(sqlite_store):
    store = sqlite_store  # dialect-independent logic; the login test runs on both databases
    auth.add_user(store, "alice", "annotator", PW)
    t = T0
    for k in range(5):
        t = t + timedelta(seconds=10)
        _fail(store, "alice", t)
    with pytest.raises(AccountLocked):
        auth.authenticate(store, "alice", PW, now=t)
    auth.unlock(store, "alice")
    assert auth.authenticate(store, "alice", PW, now=t).name == "alice"
    auth.set_password(store, "alice", "a brand new secret")
    _fail(store, "alice", t, password=PW)
    assert auth.authenticate(store, "alice", "a brand new secret", now=t + timedelta(minutes=1)).name == "alice"


def test_no_secret_is_logged(sqlite_store, caplog):
    store = sqlite_store  # dialect-independent logic; the login test runs on both databases
    auth.add_user(store, "alice", "annotator", PW)
    caplog.set_level(logging.DEBUG)
    typed = "my-very-secret-typo"
    _fail(store, "alice", T0, password=typed)
    _fail(store, typed, T0)  # a password typed into the name field
    assert caplog.records, "a failed log-in should be logged"
    assert typed not in caplog.text and PW not in caplog.text


def test_users_cli(sqlite_store, monkeypatch, capsys):
    url = sqlite_store.url
    monkeypatch.setattr("sys.stdin", io.StringIO(PW + "\n"))
    assert main(["--db", url, "users", "add", "alice", "--role", "annotator", "--password-stdin"]) == 0
    assert "created annotator 'alice'" in capsys.readouterr().out
    assert main(["--db", url, "users", "add", "bob", "--role", "lead", "--no-password"]) == 0
    capsys.readouterr()
    assert main(["--db", url, "users", "list", "--json"]) == 0
    import json
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["role"], r["can_log_in"]) for r in rows] == [("alice", "annotator", True), ("bob", "lead", False)]
    assert all("hash" not in k for r in rows for k in r)
    monkeypatch.setattr("sys.stdin", io.StringIO("another secret\n"))
    assert main(["--db", url, "users", "passwd", "bob", "--password-stdin"]) == 0
    assert auth.authenticate(sqlite_store, "bob", "another secret").role is Role.LEAD
    # Bad input: exit 2 with a message; no terminal and no --password-stdin.
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["--db", url, "users", "add", "carol", "--role", "annotator"]) == 2
    assert "--password-stdin" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert main(["--db", url, "users", "add", "carol", "--role", "annotator", "--password-stdin"]) == 2
    assert main(["--db", url, "users", "role", "alice", "admin"]) == 0
    assert auth.authenticate(sqlite_store, "alice", PW).role is Role.ADMIN
