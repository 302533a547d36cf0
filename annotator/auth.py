"""Accounts: password hashing, log-in with throttling and lock-out, user management.

Passwords are hashed with Argon2id (argon2-cffi); only the hash is stored and
nothing secret is ever logged or put in an error message. A failed log-in
never says whether the user name or the password was wrong.

Lock-out policy (see :class:`LoginPolicy`): after a few consecutive failures
each further attempt must wait a growing delay (attempts made too early are
refused unchecked and count as failures), and after ``max_failures`` the
account is locked for ``lock_minutes``. A successful log-in or a password
change resets the counters.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from .access import LEADS, require_role
from .errors import AccountLocked, AuthenticationFailed, InputError, NotFound
from .model import Role, User

log = logging.getLogger(__name__)

_HASHER = PasswordHasher()
#: Verified against when the user does not exist, so both failures cost the same time.
_DUMMY_HASH = _HASHER.hash("not a real password, only for constant-time failures")

#: The one message for a wrong name or a wrong password.
FAILED_MESSAGE = "Unknown user name or wrong password."
MIN_PASSWORD_LENGTH = 8


@dataclass(frozen=True)
class LoginPolicy:
    """How failed log-ins slow down and lock an account."""

    #: Consecutive failures that lock the account.
    max_failures: int = 5
    #: How long a locked account stays locked.
    lock_minutes: float = 15.0
    #: Failures allowed before attempts have to wait.
    free_failures: int = 2
    #: Wait after the first throttled failure, doubled after each further one.
    base_delay_seconds: float = 1.0

    def delay_after(self, failures: int) -> float:
        """Seconds an attempt must wait after ``failures`` consecutive failures."""
        if failures <= self.free_failures:
            return 0.0
        return self.base_delay_seconds * 2 ** (failures - self.free_failures - 1)


DEFAULT_POLICY = LoginPolicy()


def _utc(dt: datetime | None) -> datetime | None:
    # SQLite gives naive datetimes back; they were written as UTC.
    if dt is None:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def hash_password(password: str) -> str:
    """The Argon2id hash of ``password`` (InputError if it is too short)."""
    if password is None or len(password) < MIN_PASSWORD_LENGTH:
        raise InputError(f"a password needs at least {MIN_PASSWORD_LENGTH} characters")
    return _HASHER.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True when ``password`` matches ``password_hash`` (False for a missing or broken hash)."""
    if not password_hash:
        _safe_verify(_DUMMY_HASH, password)
        return False
    return _safe_verify(password_hash, password)


def _safe_verify(password_hash: str, password: str) -> bool:
    try:
        return _HASHER.verify(password_hash, password or "")
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


#: Failure counters for names that have no account, kept in memory so that an
#: unknown name is throttled and "locked" exactly like a real one and the
#: messages do not reveal which names exist.
_UNKNOWN_NAMES: dict[str, tuple[int, datetime | None, datetime | None]] = {}
_UNKNOWN_NAMES_MAX = 10_000
_UNKNOWN_LOCK = threading.Lock()


def _gate(failures: int, last_failed_at, locked_until, now: datetime, policy: LoginPolicy) -> tuple[int, bool, float]:
    """Raise AccountLocked while locked; return (failures so far, attempt too early?, required wait)."""
    locked_until = _utc(locked_until)
    if locked_until is not None and now < locked_until:
        minutes = max(1, int((locked_until - now).total_seconds() // 60) + 1)
        raise AccountLocked(f"This account is locked after too many failed log-ins. "
                            f"Try again in {minutes} minute{'s' if minutes != 1 else ''} or ask an admin to unlock it.")
    if locked_until is not None:
        failures = 0  # the lock has expired: start afresh
    last = _utc(last_failed_at)
    wait = policy.delay_after(failures)
    too_early = last is not None and wait > 0 and (now - last).total_seconds() < wait
    return failures, too_early, wait


def authenticate(store, name: str, password: str, *, now: datetime | None = None,
                 policy: LoginPolicy = DEFAULT_POLICY) -> User:
    """Check a log-in; return the user or raise AuthenticationFailed / AccountLocked.

    Unknown users and wrong passwords get the same message, the same
    throttling and take the same time. Counters of real accounts live in the
    user row, so they hold across server restarts and app processes.

    The attempt is counted as a failure *before* the password is checked, in a
    short write transaction that locks the user row: parallel guesses are
    counted one by one and reach the lock-out. The (slow) hash comparison runs
    outside any transaction, so a flood of log-ins never holds the write lock
    that annotators' saves need; a right password then resets the counters.
    """
    from .store.users import get_user_row, update_user
    now = now or datetime.now(timezone.utc)
    name = (name or "").strip()
    with store.transaction() as conn:
        row = get_user_row(conn, name, for_update=True) if name else None
        known = row is not None and bool(row.password_hash)
        if known:
            state = (int(row.failed_logins or 0), row.last_failed_at, row.locked_until)
        else:
            with _UNKNOWN_LOCK:
                state = _UNKNOWN_NAMES.get(name.lower(), (0, None, None))
        failures, too_early, wait = _gate(*state, now, policy)
        failures += 1
        locked_until = now + timedelta(minutes=policy.lock_minutes) if failures >= policy.max_failures else None
        if known:
            update_user(conn, name, failed_logins=failures, last_failed_at=now, locked_until=locked_until)
        else:
            with _UNKNOWN_LOCK:
                if len(_UNKNOWN_NAMES) >= _UNKNOWN_NAMES_MAX:
                    _UNKNOWN_NAMES.pop(next(iter(_UNKNOWN_NAMES)))
                _UNKNOWN_NAMES[name.lower()] = (failures, now, locked_until)
    ok = (not too_early) and verify_password(row.password_hash if known else None, password) and known
    if ok:
        with store.transaction() as conn:
            update_user(conn, name, failed_logins=0, last_failed_at=None, locked_until=None)
            if _HASHER.check_needs_rehash(row.password_hash):
                update_user(conn, name, password_hash=_HASHER.hash(password))
        return User(name=row.name, role=Role(row.role), password_hash=None, user_id=row.id)
    # Log the fact, never the name typed (it may be a password typed in the wrong field).
    log.info("failed log-in (%d in a row)", failures)
    if locked_until is not None:
        raise AccountLocked(f"Too many failed log-ins: this account is locked for {policy.lock_minutes:g} minutes.")
    if too_early:
        raise AuthenticationFailed(f"Too many failed log-ins: wait {wait:g} seconds before the next attempt.")
    raise AuthenticationFailed(FAILED_MESSAGE)


def add_user(store, name: str, role: Role | str, password: str | None = None) -> User:
    """Create an account; with a password it can log in (InputError if the name is taken)."""
    from .store.users import create_user
    try:
        role = Role(role)
    except ValueError:
        raise InputError(f"unknown role {role!r}; roles: {', '.join(r.value for r in Role)}") from None
    password_hash = hash_password(password) if password is not None else None
    with store.transaction() as conn:
        uid = create_user(conn, name, role, password_hash)
    return User(name=name.strip(), role=role, password_hash=None, user_id=uid)


def set_password(store, name: str, password: str) -> None:
    """Set a new password and clear the failure counters and any lock."""
    from .store.users import update_user
    password_hash = hash_password(password)
    with store.transaction() as conn:
        update_user(conn, name, password_hash=password_hash, failed_logins=0, last_failed_at=None, locked_until=None)


def unlock(store, name: str) -> None:
    """Clear a user's failure counters and lock."""
    from .store.users import update_user
    with store.transaction() as conn:
        update_user(conn, name, failed_logins=0, last_failed_at=None, locked_until=None)


def set_role(store, name: str, role: Role | str) -> None:
    """Change a user's role."""
    from .store.users import update_user
    with store.transaction() as conn:
        update_user(conn, name, role=Role(role))


@dataclass(frozen=True)
class UserInfo:
    """What ``users list`` shows: never the hash, only whether there is one."""

    name: str
    role: str
    can_log_in: bool
    failed_logins: int
    locked_until: datetime | None


def list_users(store) -> list[UserInfo]:
    """All accounts with their log-in state, by name."""
    from .store.users import get_user_row, list_users as _list
    out = []
    with store.read() as conn:
        for u in _list(conn):
            row = get_user_row(conn, u.name)
            out.append(UserInfo(u.name, u.role.value, bool(row.password_hash), int(row.failed_logins or 0),
                                _utc(row.locked_until)))
    return out


def ensure_user_id(store, name: str, role: Role | str) -> int:
    """Id of user ``name``; create a password-less row for it if missing (the local user)."""
    from .store.users import user_id
    with store.read() as conn:
        try:
            return user_id(conn, name)
        except NotFound:
            pass
    with store.transaction() as conn:
        return user_id(conn, name, create_role=Role(role))


def require_lead(role: Role | str | None, action: str) -> None:
    """Raise PermissionDenied unless ``role`` is lead or admin."""
    require_role(role, LEADS, action)
