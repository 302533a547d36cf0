"""Log-in sessions that outlive a browser tab: a row in the store behind a signed, HttpOnly cookie.

How a log-in becomes a cookie (Streamlit scripts cannot set HttpOnly cookies; see docs/teams.md):

1. The log-in form authenticates and calls :func:`start_session`: a session row (the account's id and
   session epoch, idle and absolute expiry) and a one-time *handoff code* (kept as its hash, valid for
   ``HANDOFF_SECONDS``). The tab keeps the session's id in its own state.
2. The page posts the code to the app's cookie route (annotator.ui.session.routes); :func:`redeem_handoff`
   spends the code and makes the cookie's token, kept in the store only as its SHA-256. The route answers with
   ``Set-Cookie: annotator_session=<token>.<signature>; HttpOnly; SameSite=Strict; Path=/`` (``Secure`` over
   HTTPS). The token never reaches page JavaScript or the script.
3. A reload, a new tab or a typed URL opens a new Streamlit session whose request carries the cookie;
   :func:`resume_from_cookie` checks its signature, finds the row and the account, and the tab is logged
   in again.

Every page run checks the session (:func:`check_session`, one read by the user's primary key, the session
joined on): it ends when the account's epoch changed (password, role, access: annotator.accounts.auth), the account
is gone or deactivated, the session was logged out (its row deleted, from any tab or process), it was idle
longer than the policy's idle time, or its absolute lifetime is over. Everything lives in the store, so
several app processes on one database share the sessions; the signing key is ANNOTATOR_SECRET_KEY or,
unset, a random key the first process stores in the database.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from ..errors import SessionEnded
from ..model import Role, User

COOKIE_NAME = "annotator_session"
#: How long the page has to hand the one-time code to the cookie route.
HANDOFF_SECONDS = 120
#: Activity is written to the session row at most this often (a page run does not write each time).
TOUCH_EVERY = timedelta(seconds=60)

SESSION_EXPIRED_MESSAGE = "Your session expired. Please log in again."
SESSION_LOGGED_OUT_MESSAGE = "You were logged out (in another tab or window). Please log in again."


@dataclass(frozen=True)
class SessionPolicy:
    """How long a session lasts: ``idle`` without use, ``lifetime`` after the log-in whatever the use."""

    idle: timedelta = timedelta(hours=8)
    lifetime: timedelta = timedelta(hours=24)

    @classmethod
    def from_settings(cls, settings=None) -> "SessionPolicy":
        """The policy of the settings (default: the environment's, annotator.config)."""
        if settings is None:
            from ..config import load_settings
            settings = load_settings()
        return cls(idle=timedelta(minutes=settings.session_idle_minutes),
                   lifetime=timedelta(hours=settings.session_max_hours))


@dataclass(frozen=True)
class NewSession:
    """A session just started: its id (kept by the tab) and the one-time code the page hands to the cookie route."""

    sid: str
    handoff_code: str
    expires_at: datetime


def _now(now: datetime | None) -> datetime:
    return now or datetime.now(timezone.utc)


def _utc(dt: datetime | None) -> datetime | None:
    # SQLite gives naive datetimes back; they were written as UTC.
    if dt is None:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def start_session(store, user: User, *, now: datetime | None = None, policy: SessionPolicy | None = None) -> NewSession:
    """Store a session for ``user`` (as annotator.accounts.auth.authenticate returned it) and a one-time handoff code.

    Sessions past their end are deleted on the way (log-ins are rare enough to carry that work).
    """
    from ..store.sessions import insert_session, prune_sessions
    if user.user_id is None or user.session_epoch is None:
        raise ValueError("a session starts from a user returned by authenticate()")
    now, policy = _now(now), policy or SessionPolicy.from_settings()
    sid, code = secrets.token_hex(16), secrets.token_urlsafe(32)
    expires = now + policy.lifetime
    with store.transaction() as conn:
        prune_sessions(conn, now, now - policy.idle)
        insert_session(conn, sid, int(user.user_id), int(user.session_epoch), now, expires,
                       _digest(code), now + timedelta(seconds=HANDOFF_SECONDS))
    return NewSession(sid, code, expires)


# --------------------------------------------------------------------------- the cookie

_KEY_CACHE: dict[str, bytes] = {}


def signing_key(store) -> bytes:
    """The key that signs session cookies: ANNOTATOR_SECRET_KEY, else the store's own random key (one for
    every process on the database, made by the first one that needs it)."""
    from ..config import load_settings
    configured = load_settings().secret_key
    if configured:
        return configured.encode("utf-8")
    key = _KEY_CACHE.get(store.url)
    if key is None:
        from ..store.sessions import server_key
        with store.transaction() as conn:
            value = server_key(conn, "session_cookie", lambda: secrets.token_urlsafe(48), _now(None))
        key = _KEY_CACHE[store.url] = value.encode("utf-8")
    return key


def _signature(key: bytes, token: str) -> str:
    mac = hmac.new(key, token.encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def cookie_value(store, token: str) -> str:
    """What the cookie holds: the token and its signature."""
    return f"{token}.{_signature(signing_key(store), token)}"


def token_from_cookie(store, value: str | None) -> str | None:
    """The token of a cookie whose signature is right; None for a missing, malformed or forged one."""
    if not value or value.count(".") != 1 or len(value) > 200:
        return None
    token, signature = value.split(".")
    try:
        token.encode("ascii")
        expected = _signature(signing_key(store), token)
    except UnicodeEncodeError:
        return None
    return token if token and hmac.compare_digest(expected, signature) else None


def redeem_handoff(store, code: str, *, now: datetime | None = None) -> tuple[str, int] | None:
    """Spend a one-time handoff code: (the cookie value, its max-age in seconds), or None when the code is unknown,
    spent, too old or its session has ended. The token is made here and kept only as its hash."""
    from ..store.sessions import redeem_handoff as redeem
    if not code or len(code) > 200:
        return None
    now = _now(now)
    token = secrets.token_urlsafe(32)
    with store.transaction() as conn:
        expires = redeem(conn, _digest(code), _digest(token), now)
    if expires is None:
        return None
    return cookie_value(store, token), max(1, int((_utc(expires) - now).total_seconds()))


# --------------------------------------------------------------------------- checking a session

@dataclass(frozen=True)
class ResumedSession:
    """A valid session: its id and the user as the store has them now."""

    sid: str
    user: User


def _verdict(row, epoch_now: int, now: datetime, policy: SessionPolicy) -> str | None:
    """Why the session ``row`` (user columns and session columns) is no longer valid, or None."""
    from .auth import SESSION_ENDED_MESSAGE
    if not row.active or int(row.session_epoch) != int(epoch_now):
        return SESSION_ENDED_MESSAGE
    if _utc(row.expires_at) <= now or now - _utc(row.last_seen_at) > policy.idle:
        return SESSION_EXPIRED_MESSAGE
    return None


def _touch(store, sid: str, last_seen: datetime, now: datetime) -> None:
    from ..errors import StoreUnavailable
    from ..store.sessions import touch_session
    if now - _utc(last_seen) >= TOUCH_EVERY:
        try:
            with store.transaction() as conn:
                touch_session(conn, sid, now)
        except StoreUnavailable:
            pass  # reading worked; the activity is recorded at the next page run


def resume_from_cookie(store, cookie: str | None, *, now: datetime | None = None,
                       policy: SessionPolicy | None = None) -> ResumedSession | None:
    """The session a browser's cookie belongs to, or None (no cookie, a forged or unknown one).

    SessionEnded when the cookie names a session that ended (account changed, expired); the session row is
    then deleted.
    """
    from ..store.sessions import delete_session, session_by_token
    token = token_from_cookie(store, cookie)
    if token is None:
        return None
    now, policy = _now(now), policy or SessionPolicy.from_settings()
    with store.read() as conn:
        row = session_by_token(conn, _digest(token))
    if row is None:
        return None
    why = _verdict(row, row.epoch, now, policy)
    if why is not None:
        with store.transaction() as conn:
            delete_session(conn, row.id)
        raise SessionEnded(why)
    _touch(store, row.id, row.last_seen_at, now)
    return ResumedSession(row.id, User(name=row.name, role=Role(row.role), user_id=int(row.user_id),
                                       session_epoch=int(row.epoch)))


def check_session(store, user_id: int, name: str, epoch: int, sid: str, *, now: datetime | None = None,
                  policy: SessionPolicy | None = None) -> User:
    """The user of the tab's session ``sid`` as the store has them now, or SessionEnded.

    One read of the user row by primary key with the session joined on. Ends (and deletes) the session as
    :func:`resume_from_cookie` does; a session logged out elsewhere (its row gone) ends with its own message.
    """
    from .auth import SESSION_ENDED_MESSAGE
    from ..store.sessions import delete_session, user_with_session
    from ..store.users import user_name_key
    now, policy = _now(now), policy or SessionPolicy.from_settings()
    with store.read() as conn:
        row = user_with_session(conn, user_id, sid)
    if row is None or user_name_key(row.name) != user_name_key(name) or not row.active \
            or int(row.session_epoch) != int(epoch):
        raise SessionEnded(SESSION_ENDED_MESSAGE)
    if row.epoch is None:
        raise SessionEnded(SESSION_LOGGED_OUT_MESSAGE)
    why = _verdict(row, row.epoch, now, policy)
    if why is not None:
        with store.transaction() as conn:
            delete_session(conn, sid)
        raise SessionEnded(why)
    _touch(store, sid, row.last_seen_at, now)
    return User(name=row.name, role=Role(row.role), user_id=int(user_id), session_epoch=int(epoch))


def end_session(store, sid: str) -> None:
    """Log a session out (every tab and process using it ends at its next page run)."""
    from ..store.sessions import delete_session
    with store.transaction() as conn:
        delete_session(conn, sid)


def end_session_by_cookie(store, cookie: str | None) -> bool:
    """Log out the session a browser's cookie belongs to (the cookie route's log-out); True if one ended."""
    from ..store.sessions import delete_session_by_token
    token = token_from_cookie(store, cookie)
    if token is None:
        return False
    with store.transaction() as conn:
        return delete_session_by_token(conn, _digest(token)) > 0


# --------------------------------------------------------------------------- remembered choices

def remember(store, user_id: int, key: str, value: str) -> None:
    """Remember a choice of a user (last project, last page, team selection) across sessions."""
    from ..store.sessions import set_user_setting
    with store.transaction() as conn:
        set_user_setting(conn, int(user_id), key, str(value), _now(None))


def recall(store, user_id: int, keys=None) -> dict[str, str]:
    """A user's remembered choices (all, or those of ``keys``)."""
    from ..store.sessions import get_user_settings
    with store.read() as conn:
        return get_user_settings(conn, int(user_id), keys)
