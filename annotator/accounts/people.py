"""People: the account changes an admin makes in the app, each recorded with who made it.

The changes themselves are annotator.accounts.auth's (add_user, set_role, set_password,
unlock, set_active), called with the admin as ``actor``, so the record
(annotator.store.audit) is written in the change's own transaction. This
module adds what the People page needs on top: a generated password for a new
account or a reset (shown once, never stored in clear), the guard that keeps
an admin from locking themselves out, and the record as a table.
"""

from __future__ import annotations

import secrets

import pandas as pd

from ..errors import InputError
from ..model import Role
from .access import require_role

__all__ = ["generate_password", "add_person", "change_email", "reset_password", "change_role", "change_active",
           "unlock_person", "log_out_everywhere", "account_changes", "CHANGE_COLUMNS"]

#: Letters and digits that cannot be mistaken for one another when read off a screen (no 0/O, 1/l/I).
_ALPHABET = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
PASSWORD_LENGTH = 16
CHANGE_COLUMNS = ["when (UTC)", "by", "action", "account", "detail"]


def generate_password(length: int = PASSWORD_LENGTH) -> str:
    """A random password of ``length`` unambiguous letters and digits (about 5.8 bits each)."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(int(length)))


def _admin(actor_role) -> None:
    require_role(actor_role, {Role.ADMIN}, "managing accounts")


def add_person(store, name: str, role: Role | str, *, actor: str, actor_role: Role | str,
               email: str | None = None) -> tuple[str, str]:
    """Create an account (with ``email`` when given) with a generated password, to be changed at the first
    log-in; return (stored name, password) — the one time it is shown."""
    from .auth import add_user
    _admin(actor_role)
    password = generate_password()
    user = add_user(store, name, role, password, actor=actor, must_change=True, email=email)
    return user.name, password


def change_email(store, name: str, email: str | None, *, actor: str, actor_role: Role | str) -> str | None:
    """Set (or with None take away) ``name``'s e-mail address; the address as stored."""
    from .auth import set_email
    _admin(actor_role)
    return set_email(store, name, email, actor=actor)


def reset_password(store, name: str, *, actor: str, actor_role: Role | str) -> str:
    """Give ``name`` a new generated password (ends their sessions, clears a lock; to be changed at the next
    log-in); return it, to show once.
    Never the admin's own account: they change their own password themselves."""
    from .auth import set_password
    _admin(actor_role)
    from ..store.users import user_name_key
    if user_name_key(name) == user_name_key(actor):
        # The reset would end the admin's own session before the new password is on screen.
        raise InputError("you cannot reset the password of your own account here; use “Change my password” in "
                         "the sidebar (it asks for your current password)")
    password = generate_password()
    set_password(store, name, password, actor=actor, detail="password reset (generated)", must_change=True)
    return password


def _not_self(name: str, actor: str, what: str) -> None:
    from ..store.users import user_name_key
    if user_name_key(name) == user_name_key(actor):
        raise InputError(f"you cannot {what} your own account here; another admin can, or `annotator users`")


def change_role(store, name: str, role: Role | str, *, actor: str, actor_role: Role | str) -> None:
    """Set ``name``'s role (their open sessions end); an admin cannot change their own role here."""
    from .auth import set_role
    _admin(actor_role)
    _not_self(name, actor, "change the role of")
    set_role(store, name, role, actor=actor)


def change_active(store, name: str, active: bool, *, actor: str, actor_role: Role | str) -> None:
    """Deactivate (sessions end, judgements stay) or reactivate ``name``; never the admin's own account."""
    from .auth import set_active
    _admin(actor_role)
    if not active:
        _not_self(name, actor, "deactivate")
    set_active(store, name, active, actor=actor)


def unlock_person(store, name: str, *, actor: str, actor_role: Role | str) -> None:
    """Clear ``name``'s failed log-ins and lock."""
    from .auth import unlock
    _admin(actor_role)
    unlock(store, name, actor=actor)


def _utc_text(at) -> str:
    stamp = pd.Timestamp(at)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")  # SQLite gives naive UTC
    return stamp.strftime("%Y-%m-%d %H:%M:%S")


def log_out_everywhere(store, name: str, *, actor: str, actor_role: Role | str) -> int:
    """End every open session of ``name`` (nothing else changes); the number of stored sessions ended."""
    from .auth import end_sessions
    _admin(actor_role)
    return end_sessions(store, name, actor=actor)


def account_changes(store, *, limit: int | None = 500, target: str | None = None) -> pd.DataFrame:
    """The record of account changes, newest first, as a table (CHANGE_COLUMNS)."""
    from ..store.audit import account_change_rows
    with store.read() as conn:
        rows = account_change_rows(conn, limit=limit, target=target)
    return pd.DataFrame([{"when (UTC)": _utc_text(r.at), "by": r.actor, "action": r.action, "account": r.target, "detail": r.detail} for r in rows],
                        columns=CHANGE_COLUMNS)
