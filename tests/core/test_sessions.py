"""Log-in sessions in the store (annotator.accounts.sessions), on SQLite and PostgreSQL: the handoff that makes the
cookie, the cookie's signature, idle and absolute expiry, log-out, and the account changes that end them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from annotator.accounts import sessions as s
from annotator.accounts.auth import SESSION_ENDED_MESSAGE, add_user, authenticate, set_active, set_password, set_role, unlock
from annotator.errors import SessionEnded
from annotator.store.sessions import count_sessions

PW = "correct horse battery"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
POLICY = s.SessionPolicy(idle=timedelta(hours=2), lifetime=timedelta(hours=10))


@pytest.fixture
def lea(store):
    add_user(store, "lea", "lead", PW)
    return authenticate(store, "lea", PW)


def _cookie(store, user, at=T0):
    new = s.start_session(store, user, now=at, policy=POLICY)
    value, max_age = s.redeem_handoff(store, new.handoff_code, now=at + timedelta(seconds=5))
    return new, value, max_age


def test_a_redeemed_handoff_gives_a_cookie_that_resumes_the_session(store, lea):
    new, value, max_age = _cookie(store, lea)
    assert max_age == 10 * 3600 - 5
    got = s.resume_from_cookie(store, value, now=T0 + timedelta(hours=1), policy=POLICY)
    assert got.sid == new.sid and got.user.name == "lea" and got.user.role.value == "lead"
    # the store keeps neither the token nor the code, only their hashes
    with store.read() as conn:
        from sqlalchemy import text
        row = conn.execute(text("SELECT id, token_hash, handoff FROM sessions")).one()
    token = value.split(".")[0]
    assert row.handoff is None and row.token_hash != token and token not in row.token_hash


def test_a_handoff_code_works_once_and_not_after_its_time(store, lea):
    new = s.start_session(store, lea, now=T0, policy=POLICY)
    assert s.redeem_handoff(store, new.handoff_code, now=T0 + timedelta(seconds=s.HANDOFF_SECONDS + 1)) is None
    new = s.start_session(store, lea, now=T0, policy=POLICY)
    assert s.redeem_handoff(store, new.handoff_code, now=T0) is not None
    assert s.redeem_handoff(store, new.handoff_code, now=T0) is None
    assert s.redeem_handoff(store, "made-up", now=T0) is None


def test_forged_or_tampered_cookies_are_nobody(store, lea):
    _, value, _ = _cookie(store, lea)
    token, sig = value.split(".")
    later = T0 + timedelta(minutes=1)
    for forged in (token, f"{token}.{sig[:-2]}xx", f"x{token}.{sig}", "", "a.b.c", f"{token}é.{sig}", None):
        assert s.resume_from_cookie(store, forged, now=later, policy=POLICY) is None
    # a well-signed token the store does not know (another database's key would not sign it either)
    assert s.resume_from_cookie(store, s.cookie_value(store, "unknown-token"), now=later, policy=POLICY) is None


def test_idle_and_absolute_expiry(store, lea):
    _, value, _ = _cookie(store, lea)
    # used every 90 minutes: never idle for 2 hours, but over after 10 hours
    at = T0
    while at + timedelta(minutes=90) < T0 + timedelta(hours=10):
        at += timedelta(minutes=90)
        assert s.resume_from_cookie(store, value, now=at, policy=POLICY) is not None
    with pytest.raises(SessionEnded, match="expired"):
        s.resume_from_cookie(store, value, now=T0 + timedelta(hours=10, seconds=1), policy=POLICY)
    with store.read() as conn:
        assert count_sessions(conn) == 0  # the ended session is deleted
    _, value, _ = _cookie(store, lea)
    with pytest.raises(SessionEnded, match="expired"):
        s.resume_from_cookie(store, value, now=T0 + timedelta(hours=2, minutes=1), policy=POLICY)


def test_activity_is_written_at_most_once_a_minute(store, lea):
    new, value, _ = _cookie(store, lea)
    from sqlalchemy import text

    def last_seen():
        with store.read() as conn:
            v = conn.execute(text("SELECT last_seen_at FROM sessions")).scalar()
        return s._utc(v if not isinstance(v, str) else datetime.fromisoformat(v))
    s.resume_from_cookie(store, value, now=T0 + timedelta(seconds=30), policy=POLICY)
    assert last_seen() == T0
    s.check_session(store, lea.user_id, "lea", lea.session_epoch, new.sid, now=T0 + timedelta(seconds=61),
                    policy=POLICY)
    assert last_seen() == T0 + timedelta(seconds=61)


@pytest.mark.parametrize("change", ["password", "role", "deactivate"])
def test_account_changes_end_every_session_of_that_user(store, lea, change):
    add_user(store, "bob", "annotator", PW)
    bob = authenticate(store, "bob", PW)
    first, value, _ = _cookie(store, lea)
    second, _, _ = _cookie(store, lea)
    bobs, bob_value, _ = _cookie(store, bob)
    {"password": lambda: set_password(store, "lea", "another password"),
     "role": lambda: set_role(store, "lea", "annotator"),
     "deactivate": lambda: set_active(store, "lea", False)}[change]()
    later = T0 + timedelta(minutes=5)
    with pytest.raises(SessionEnded, match="account was changed"):
        s.resume_from_cookie(store, value, now=later, policy=POLICY)
    with pytest.raises(SessionEnded) as ended:
        s.check_session(store, lea.user_id, "lea", lea.session_epoch, second.sid, now=later, policy=POLICY)
    assert str(ended.value) == SESSION_ENDED_MESSAGE
    assert s.resume_from_cookie(store, bob_value, now=later, policy=POLICY).user.name == "bob"


def test_a_lock_out_and_an_unlock_leave_sessions_alone(store, lea):
    new, value, _ = _cookie(store, lea)
    unlock(store, "lea")
    assert s.resume_from_cookie(store, value, now=T0 + timedelta(minutes=1), policy=POLICY).user.name == "lea"


def test_logging_out_ends_the_session_for_every_tab(store, lea):
    new, value, _ = _cookie(store, lea)
    s.end_session(store, new.sid)
    assert s.resume_from_cookie(store, value, now=T0, policy=POLICY) is None
    with pytest.raises(SessionEnded, match="logged out"):
        s.check_session(store, lea.user_id, "lea", lea.session_epoch, new.sid, now=T0, policy=POLICY)
    new, value, _ = _cookie(store, lea)
    assert s.end_session_by_cookie(store, value)
    assert not s.end_session_by_cookie(store, value)
    assert s.resume_from_cookie(store, value, now=T0, policy=POLICY) is None


def test_two_processes_share_the_signing_key_and_the_sessions(store, lea):
    from annotator.store import open_store
    other = open_store(store.url)
    try:
        s._KEY_CACHE.clear()
        new = s.start_session(store, lea, now=T0, policy=POLICY)
        value, _ = s.redeem_handoff(store, new.handoff_code, now=T0)
        s._KEY_CACHE.clear()  # the second process has not seen the key yet
        got = s.resume_from_cookie(other, value, now=T0 + timedelta(minutes=3), policy=POLICY)
        assert got is not None and got.sid == new.sid
    finally:
        other.dispose()


def test_a_configured_secret_key_signs_instead(store, lea, monkeypatch):
    _, value, _ = _cookie(store, lea)
    monkeypatch.setenv("ANNOTATOR_SECRET_KEY", "a key from the environment")
    assert s.resume_from_cookie(store, value, now=T0, policy=POLICY) is None  # signed with the stored key
    _, value, _ = _cookie(store, lea)
    assert s.resume_from_cookie(store, value, now=T0, policy=POLICY) is not None


def test_remembered_choices_per_user(store, lea):
    s.remember(store, lea.user_id, "last_project", "demo")
    s.remember(store, lea.user_id, "last_project", "other")
    s.remember(store, lea.user_id, "last_page", "agreement")
    assert s.recall(store, lea.user_id) == {"last_project": "other", "last_page": "agreement"}
    assert s.recall(store, lea.user_id, ["last_page"]) == {"last_page": "agreement"}


def test_users_logout_ends_every_session_of_that_account_only(store, lea, capsys):
    from annotator.cli import main
    add_user(store, "bob", "annotator", PW)
    bob = authenticate(store, "bob", PW)
    _, value, _ = _cookie(store, lea, at=datetime.now(timezone.utc))
    _, other, _ = _cookie(store, lea, at=datetime.now(timezone.utc))
    _, bobs, _ = _cookie(store, bob, at=datetime.now(timezone.utc))
    assert main(["--db", store.url, "users", "logout", "LEA"]) == 0
    assert "2 stored sessions ended" in capsys.readouterr().out
    for cookie in (value, other):
        assert s.resume_from_cookie(store, cookie, policy=POLICY) is None
    assert s.resume_from_cookie(store, bobs, policy=POLICY).user.name == "bob"
    # a tab logged in without a stored session ends too (the account's epoch changed)
    with pytest.raises(SessionEnded):
        from annotator.accounts.auth import SessionClaim, resume_session
        resume_session(store, SessionClaim.of(lea))
    assert authenticate(store, "lea", PW).role.value == "lead"  # the password and role are unchanged
    assert main(["--db", store.url, "users", "logout", "nobody"]) != 0
