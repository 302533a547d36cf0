"""Accounts: password hashing, log-in with throttling and lock-out, user management.

Passwords are hashed with Argon2id (argon2-cffi); only the hash is stored and
nothing secret is ever logged or put in an error message. A failed log-in
never says whether the user name or the password was wrong.

Lock-out policy (see :class:`LoginPolicy`): after a few consecutive failures
each further attempt must wait a growing delay (attempts made too early are
refused unchecked and count as failures), and after ``max_failures`` the
account is locked for ``lock_minutes``. A successful log-in or a password
change resets the counters.

Sessions (see :class:`SessionClaim`): a log-in remembers the account's
session epoch; a password change, a role change or a deactivation gives the
account a new one, which ends every session it has.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from ..errors import AccountLocked, AuthenticationFailed, InputError, NotFound, SessionEnded
from ..names import check_email
from ..model import Role, User
from .access import LEADS, require_role

log = logging.getLogger(__name__)

#: ``ANNOTATOR_PASSWORD_HASHING=fast`` turns the Argon2id parameters down to one pass over 1 MiB (about a
#: millisecond) from argon2-cffi's default, RFC 9106's low-memory choice: three passes over 64 MiB, about 0.2 s of
#: CPU per log-in. For test suites only, which create and check thousands of passwords; a hash made either way
#: verifies either way, and a log-in under the default parameters rehashes a fast one.
FAST_HASHING_VARIABLE = "ANNOTATOR_PASSWORD_HASHING"
_FAST_PARAMETERS = {"time_cost": 1, "memory_cost": 1024, "parallelism": 1}


@functools.cache
def password_hasher() -> PasswordHasher:
    """The Argon2id hasher of this process (its parameters are read once, from the environment)."""
    if os.environ.get(FAST_HASHING_VARIABLE, "").strip().lower() == "fast":
        log.warning("%s=fast: passwords are hashed with test-suite parameters", FAST_HASHING_VARIABLE)
        return PasswordHasher(**_FAST_PARAMETERS)
    return PasswordHasher()


@functools.cache
def _dummy_hash() -> str:
    """Verified against when the user does not exist, so both failures cost the same time. Made on first use:
    a process that never checks a password (most commands) does not pay for it at start."""
    return password_hasher().hash("not a real password, only for constant-time failures")

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
    return password_hasher().hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True when ``password`` matches ``password_hash`` (False for a missing or broken hash)."""
    if not password_hash:
        _safe_verify(_dummy_hash(), password)
        return False
    return _safe_verify(password_hash, password)


def _safe_verify(password_hash: str, password: str) -> bool:
    try:
        return password_hasher().verify(password_hash, password or "")
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


#: Counters of names nobody has tried for this long are deleted (a lock still running is kept).
FORGET_FAILURES_AFTER = timedelta(days=1)


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

    Unknown names, accounts without a password, deactivated accounts and wrong
    passwords get the same message, the same throttling and lock-out and take
    the same time: the failure counters belong to the typed name's key
    (store.users.user_name_key), live in the store whether or not an account
    has that name, and hold across server restarts and app processes. So
    neither the messages nor the lock behaviour tell which names exist.

    The attempt is counted as a failure *before* the password is checked, in a
    short write transaction that serialises attempts on that name: parallel
    guesses are counted one by one and reach the lock-out. The (slow) hash
    comparison runs outside any transaction, so a flood of log-ins never holds
    the write lock that annotators' saves need; a right password then resets
    the counters.

    The returned user carries the account's session epoch: a session started
    from it stays valid until the password, role or access changes
    (:func:`resume_session`).
    """
    from ..store.logins import clear_failures, failure_state, prune_failures, record_failure
    from ..store.users import get_user_row, update_user, user_name_key
    now = now or datetime.now(timezone.utc)
    key = user_name_key(name)
    with store.transaction() as conn:
        row = get_user_row(conn, name) if key else None
        known = row is not None and bool(row.password_hash) and bool(row.active)
        failures, too_early, wait = _gate(*failure_state(conn, key), now, policy)
        failures += 1
        locked_until = now + timedelta(minutes=policy.lock_minutes) if failures >= policy.max_failures else None
        record_failure(conn, key, failures, now, locked_until)
        prune_failures(conn, now - FORGET_FAILURES_AFTER, now)
    ok = (not too_early) and verify_password(row.password_hash if known else None, password) and known
    if ok:
        with store.transaction() as conn:
            clear_failures(conn, key)
            if password_hasher().check_needs_rehash(row.password_hash):
                update_user(conn, row.name, password_hash=password_hasher().hash(password))
        return User(name=row.name, role=Role(row.role), password_hash=None, user_id=row.id,
                    session_epoch=int(row.session_epoch), must_change_password=bool(row.must_change_password))
    # Log the fact, never the name typed (it may be a password typed in the wrong field).
    log.info("failed log-in (%d in a row)", failures)
    if locked_until is not None:
        raise AccountLocked(f"Too many failed log-ins: this account is locked for {policy.lock_minutes:g} minutes.")
    if too_early:
        raise AuthenticationFailed(f"Too many failed log-ins: wait {wait:g} seconds before the next attempt.")
    raise AuthenticationFailed(FAILED_MESSAGE)


def add_user(store, name: str, role: Role | str, password: str | None = None, *, actor: str | None = None,
             must_change: bool = False, email: str | None = None) -> User:
    """Create an account; with a password it can log in (InputError if the name is taken, or the e-mail
    address is not one or another account's). ``must_change``: the password was generated for the person, who
    sets their own at the first log-in.

    This and the other account changes below are recorded (annotator.store.audit) in their own
    transaction: ``actor`` is the logged-in user who made it, None for the command line."""
    from ..store.audit import record_account_change
    from ..store.users import create_user, normalise_user_name, update_user
    try:
        role = Role(role)
    except ValueError:
        raise InputError(f"unknown role {role!r}; roles: {', '.join(r.value for r in Role)}") from None
    name = normalise_user_name(name)
    password_hash = hash_password(password) if password is not None else None
    with store.transaction() as conn:
        uid = create_user(conn, name, role, password_hash, email=email)
        if must_change and password is not None:
            update_user(conn, name, must_change_password=True)
        record_account_change(conn, actor, "created", name,
                              f"role {role.value}, " + ("with a password" if password is not None else "no password")
                              + (f", e-mail {check_email(email)}" if email else ""))
    return User(name=name, role=role, password_hash=None, user_id=uid, email=get_email(store, name) if email else None)


def get_email(store, name: str) -> str | None:
    """The e-mail address of account ``name`` (None: none given); NotFound when there is no such account."""
    from ..store.users import get_user
    with store.read() as conn:
        return get_user(conn, name).email


def set_email(store, name: str, email: str | None, *, actor: str | None = None) -> str | None:
    """Give account ``name`` an e-mail address (None or "": take it away), recorded as an account change; the
    address as stored. InputError when it is not an address or another account has it (whole address, any
    case)."""
    from ..store.audit import record_account_change
    from ..store.users import get_user, set_user_email
    email = email if email and email.strip() else None
    with store.transaction() as conn:
        before = get_user(conn, name)
        stored = set_user_email(conn, name, email)
        if stored != before.email:
            record_account_change(conn, actor, "e-mail", before.name, f"{before.email or '(none)'} → {stored or '(none)'}")
    return stored


def set_password(store, name: str, password: str, *, actor: str | None = None, detail: str = "password set",
                 must_change: bool = False) -> None:
    """Set a new password, clear the failure counters and any lock, and end the user's sessions; with
    ``must_change`` (a generated password) the person sets their own at the next log-in."""
    from ..store.audit import record_account_change
    from ..store.logins import clear_failures
    from ..store.users import update_user, user_name_key
    password_hash = hash_password(password)
    with store.transaction() as conn:
        update_user(conn, name, password_hash=password_hash, end_sessions=True, must_change_password=bool(must_change))
        clear_failures(conn, user_name_key(name))
        record_account_change(conn, actor, "password", name, detail)


def change_own_password(store, name: str, current: str, new: str) -> User:
    """A logged-in person changes their own password: ``current`` is checked as a log-in is (wrong guesses
    count towards the lock-out), ``new`` must follow the rule of ``annotator users passwd`` (at least
    MIN_PASSWORD_LENGTH characters) and differ from ``current``. Clears "must change at next log-in", ends
    the account's other sessions and returns the account as a fresh log-in would (its new session epoch).
    """
    from ..store.audit import record_account_change
    from ..store.users import get_user_row, update_user
    account = authenticate(store, name, current)
    if new == current:
        raise InputError("the new password is the same as the current one; choose another")
    password_hash = hash_password(new)
    with store.transaction() as conn:
        update_user(conn, account.name, password_hash=password_hash, end_sessions=True, must_change_password=False)
        record_account_change(conn, account.name, "password", account.name, "changed by the account itself")
        row = get_user_row(conn, account.name)
    return User(name=row.name, role=Role(row.role), user_id=row.id, session_epoch=int(row.session_epoch))


def unlock(store, name: str, *, actor: str | None = None) -> None:
    """Clear a user's failure counters and lock (sessions already open go on)."""
    from ..store.audit import record_account_change
    from ..store.logins import clear_failures
    from ..store.users import get_user_row, user_name_key
    with store.transaction() as conn:
        if get_user_row(conn, name) is None:
            raise NotFound(f"no user called {name!r}")
        clear_failures(conn, user_name_key(name))
        record_account_change(conn, actor, "unlocked", name, "failed log-ins and lock cleared")


#: Why a change that would leave no admin able to log in is refused.
LAST_ADMIN_MESSAGE = ("{name} is the last active admin with a password: make another account admin first, "
                      "so that someone can still manage accounts")


def _keep_an_admin(conn, before: int, name: str) -> None:
    """Refuse (InputError, so the transaction rolls back) a change after which no active admin with a password
    is left, when there was one before it (``before``: annotator.store.users.lock_admins, taken first)."""
    from ..store.users import count_admins_who_can_log_in
    if before and not count_admins_who_can_log_in(conn):
        raise InputError(LAST_ADMIN_MESSAGE.format(name=name))


def set_role(store, name: str, role: Role | str, *, actor: str | None = None) -> None:
    """Change a user's role; a real change ends the user's sessions (they log in again with the new role).
    Demoting the last active admin with a password is refused, also when two demotions run at once."""
    from ..store.audit import record_account_change
    from ..store.users import get_user_row, lock_admins, update_user
    try:
        role = Role(role)
    except ValueError:
        raise InputError(f"unknown role {role!r}; roles: {', '.join(r.value for r in Role)}") from None
    with store.transaction() as conn:
        admins = lock_admins(conn)
        row = get_user_row(conn, name, for_update=True)
        if row is None:
            raise NotFound(f"no user called {name!r}")
        if row.role != role.value:
            update_user(conn, name, role=role, end_sessions=True)
            _keep_an_admin(conn, admins, row.name)
            record_account_change(conn, actor, "role", name, f"{row.role} → {role.value}")


def set_active(store, name: str, active: bool, *, actor: str | None = None) -> None:
    """Deactivate (``active=False``: no log-in, sessions end, judgements kept) or reactivate an account.
    Deactivating the last active admin with a password is refused."""
    from ..store.audit import record_account_change
    from ..store.users import get_user_row, lock_admins, update_user
    with store.transaction() as conn:
        admins = lock_admins(conn)
        row = get_user_row(conn, name, for_update=True)
        if row is None:
            raise NotFound(f"no user called {name!r}")
        if bool(row.active) != bool(active):
            update_user(conn, name, active=bool(active), end_sessions=not active)
            _keep_an_admin(conn, admins, row.name)
            record_account_change(conn, actor, "activated" if active else "deactivated", name)


def end_sessions(store, name: str, *, actor: str | None = None) -> int:
    """End every open session of an account (a lost laptop, a shared computer) and change nothing else; the number
    of stored sessions ended (tabs without one end too, through the account's new session epoch)."""
    from ..store.audit import record_account_change
    from ..store.sessions import delete_user_sessions
    from ..store.users import get_user_row, update_user
    with store.transaction() as conn:
        row = get_user_row(conn, name, for_update=True)
        if row is None:
            raise NotFound(f"no user called {name!r}")
        update_user(conn, name, end_sessions=True)
        ended = delete_user_sessions(conn, row.id)
        record_account_change(conn, actor, "logged out", name, f"every session ended ({ended} stored)")
        return ended


@dataclass(frozen=True)
class UserInfo:
    """What ``users list`` shows: never the hash, only whether there is one."""

    name: str
    role: str
    can_log_in: bool
    failed_logins: int
    locked_until: datetime | None
    active: bool = True
    email: str | None = None


def list_users(store) -> list[UserInfo]:
    """All accounts with their log-in state, by name."""
    from ..store.logins import failures_by_key
    from ..store.users import get_user_row, list_users as _list, user_name_key
    now = datetime.now(timezone.utc)
    out = []
    with store.read() as conn:
        failures = failures_by_key(conn)
        for u in _list(conn):
            row = get_user_row(conn, u.name)
            count, _, locked = failures.get(user_name_key(u.name), (0, None, None))
            locked = _utc(locked)
            out.append(UserInfo(u.name, u.role.value, bool(row.password_hash), count,
                                locked if locked is not None and locked > now else None, bool(row.active), u.email))
    return out


def ensure_user_id(store, name: str, role: Role | str) -> int:
    """Id of user ``name``; create a password-less row for it if missing (the local user)."""
    from ..store.users import user_id
    with store.read() as conn:
        try:
            return user_id(conn, name)
        except NotFound:
            pass
    with store.transaction() as conn:
        return user_id(conn, name, create_role=Role(role))


# --------------------------------------------------------------------------- sessions

#: What a session that ended is told (the same words whatever changed: password, role or access).
SESSION_ENDED_MESSAGE = ("Your account was changed since you logged in (its password, role or access), "
                         "so you were logged out. What you were saving just now (a judgement, a decision, a correction) "
                         "was not stored. Please log in again.")


@dataclass(frozen=True)
class SessionClaim:
    """What a session remembers about its user at log-in: who (id and name) and the account's epoch then.

    Whatever keeps sessions (the app's session state today; a session table
    behind a cookie later) stores these three values and asks
    :func:`resume_session` on every request. Changing the password, the role
    or the access of an account gives it a new epoch, which ends all of its
    sessions at once without finding them.
    """

    user_id: int
    name: str
    epoch: int

    @classmethod
    def of(cls, user: User) -> "SessionClaim":
        """The claim of a user just returned by :func:`authenticate`."""
        if user.user_id is None or user.session_epoch is None:
            raise ValueError("a session starts from a user returned by authenticate()")
        return cls(int(user.user_id), user.name, int(user.session_epoch))

    def to_dict(self) -> dict:
        """Plain values to keep in a session."""
        return {"id": self.user_id, "name": self.name, "epoch": self.epoch}

    @classmethod
    def from_dict(cls, raw) -> "SessionClaim":
        """The claim kept by :meth:`to_dict`; SessionEnded when it is incomplete (a session from before epochs)."""
        try:
            return cls(int(raw["id"]), str(raw["name"]), int(raw["epoch"]))
        except (KeyError, TypeError, ValueError):
            raise SessionEnded(SESSION_ENDED_MESSAGE) from None


def resume_session(store, claim: SessionClaim) -> User:
    """The session's user as the store has it now (role included), or SessionEnded.

    One read of the user row by primary key. The session ends when the
    account is gone, was replaced by another under the same id (a restore),
    is deactivated, or has a new epoch (password, role or access changed). A lock-out by failed log-ins does not end it:
    anyone can trigger a lock-out by guessing, and it must not log the real
    user out; the lock stops new log-ins only.
    """
    from ..store.users import session_row, user_name_key
    with store.read() as conn:
        row = session_row(conn, claim.user_id)
    if (row is None or user_name_key(row.name) != user_name_key(claim.name) or not row.active
            or int(row.session_epoch) != claim.epoch):
        raise SessionEnded(SESSION_ENDED_MESSAGE)
    return User(name=row.name, role=Role(row.role), user_id=claim.user_id, session_epoch=claim.epoch)


def require_lead(role: Role | str | None, action: str) -> None:
    """Raise PermissionDenied unless ``role`` is lead or admin."""
    require_role(role, LEADS, action)
