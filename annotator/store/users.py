"""User rows. Password hashing and lock-out policy live in annotator.accounts.auth.

One rule for user names everywhere: a name is stored as typed, in Unicode NFC and without surrounding
white space, and compared by its key (:func:`user_name_key`): case-folded, compatibility-normalised
(NFKC, so full-width letters are the plain ones), without invisible format characters and with inner
white space collapsed. "Alice", "ALICE" and "ａｌｉｃｅ" are therefore one account, for creating,
logging in, importing and assigning alike.
"""

from __future__ import annotations

import secrets
import unicodedata
from datetime import datetime, timezone

from sqlalchemy import Connection, exists, func, select

from ..errors import InputError, NotFound
from ..model import Role, User
from ..names import check_email, clean_name, email_key
from .rows import insert_if_absent
from .schema import users

MAX_NAME_LENGTH = 100


def user_name_key(name: str | None) -> str:
    """The form in which user names are compared ("" for an empty or invisible name)."""
    text = unicodedata.normalize("NFKC", str(name or ""))
    text = unicodedata.normalize("NFKC", text.casefold())
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return " ".join(text.split())


def normalise_user_name(name: str | None) -> str:
    """``name`` as it is stored (NFC, stripped); InputError when it cannot be a user name.

    Which characters a name may hold is the rule every name follows (:func:`annotator.names.clean_name`).
    """
    text = clean_name("" if name is None else str(name), "a user name", max_len=MAX_NAME_LENGTH)
    if not user_name_key(text):
        raise InputError("a user name needs at least one visible character")
    return text


def new_session_epoch() -> int:
    """A fresh session epoch: random, so that a restored backup never brings an old value back."""
    return secrets.randbits(62)


def _named(name: str):
    return users.c.name_key == user_name_key(name)


def _row_to_user(r) -> User:
    return User(name=r.name, role=Role(r.role), password_hash=r.password_hash, user_id=r.id, email=r.email)


def user_id(conn: Connection, name: str, *, create_role: Role | None = None) -> int:
    """Id of user ``name``; create it (no password) with ``create_role`` if given, else NotFound."""
    uid = conn.execute(select(users.c.id).where(_named(name))).scalar()
    if uid is None:
        if create_role is None:
            raise NotFound(f"no user called {name!r}")
        try:
            uid = create_user(conn, name, create_role)
        except InputError:
            # Created by a concurrent import or save since the lookup above: use that user.
            uid = conn.execute(select(users.c.id).where(_named(name))).scalar()
            if uid is None:
                raise
    return uid


def create_user(conn: Connection, name: str, role: Role, password_hash: str | None = None, *,
                email: str | None = None) -> int:
    """Insert a user; InputError if the name is taken (compared by its key) or not a valid name, or the e-mail
    address is not one or is another account's."""
    name = normalise_user_name(name)
    if email is not None:
        email = check_email(email)
        _email_free(conn, email, None)
    taken = conn.execute(select(users.c.name).where(_named(name))).scalar()
    if taken is None:
        # ON CONFLICT DO NOTHING: a concurrent creation of the same name makes this insert a no-op, not a database error.
        uid = insert_if_absent(conn, users, {
            "name": name, "name_key": user_name_key(name), "role": Role(role).value, "password_hash": password_hash,
            "session_epoch": new_session_epoch(), "active": True, "created_at": datetime.now(timezone.utc),
            "email": email, "email_key": None if email is None else email_key(email)})
        if uid is not None:
            return uid
        taken = conn.execute(select(users.c.name).where(_named(name))).scalar() or name
    raise InputError(f"a user called {taken!r} exists already" if taken == name else
                     f"the name {name!r} is taken by the user {taken!r} (names are compared regardless of case)")


def get_user(conn: Connection, name: str) -> User:
    """The user called ``name`` (NotFound if none)."""
    r = conn.execute(select(users).where(_named(name))).first()
    if r is None:
        raise NotFound(f"no user called {name!r}")
    return _row_to_user(r)


def get_user_row(conn: Connection, name: str, *, for_update: bool = False):
    """The raw row of user ``name`` (role, hash, session epoch, active), or None.

    ``for_update`` locks the row until the transaction ends (PostgreSQL; SQLite's
    write transactions are serialised already).
    """
    q = select(users).where(_named(name))
    if for_update and conn.dialect.name != "sqlite":
        q = q.with_for_update()
    return conn.execute(q).first()


def session_row(conn: Connection, uid: int):
    """(name, role, session_epoch, active) of user ``uid``, by primary key, or None."""
    return conn.execute(select(users.c.name, users.c.role, users.c.session_epoch, users.c.active)
                        .where(users.c.id == uid)).first()


def list_users(conn: Connection) -> list[User]:
    """All users by name."""
    return [_row_to_user(r) for r in conn.execute(select(users).order_by(users.c.name))]


def _admins_who_can_log_in():
    return (users.c.role == Role.ADMIN.value) & users.c.active.is_(True) & users.c.password_hash.is_not(None)


def lock_admins(conn: Connection) -> int:
    """Lock every active admin account with a password until the transaction ends (PostgreSQL; SQLite's write
    transactions are serialised already) and return how many there are.

    Every change that can take an admin away calls this first, before it locks its own row: two such changes
    then run one after the other (the second sees the first's result), and always take their locks in the
    same order, so they cannot deadlock.
    """
    q = select(users.c.id).where(_admins_who_can_log_in()).order_by(users.c.id)
    if conn.dialect.name != "sqlite":
        q = q.with_for_update()
    return len(conn.execute(q).all())


def count_admins_who_can_log_in(conn: Connection) -> int:
    """How many active admin accounts have a password."""
    return int(conn.execute(select(func.count()).select_from(users).where(_admins_who_can_log_in())).scalar())


def any_user_with_password(conn: Connection) -> bool:
    """True when some account can log in (users made by imports have no password; deactivated ones count)."""
    return bool(conn.execute(select(exists().where(users.c.password_hash.is_not(None)))).scalar())


def update_user(conn: Connection, name: str, *, end_sessions: bool = False, **values) -> None:
    """Update columns of user ``name`` (NotFound if none); ``end_sessions`` also gives it a new session epoch."""
    if "role" in values:
        values["role"] = Role(values["role"]).value
    if end_sessions:
        values["session_epoch"] = new_session_epoch()
    n = conn.execute(users.update().where(_named(name)).values(**values)).rowcount
    if n == 0:
        raise NotFound(f"no user called {name!r}")


# ------------------------------------------------------------------ e-mail addresses

def _email_free(conn: Connection, email: str, owner: str | None) -> None:
    """InputError when ``email`` belongs to an account other than ``owner`` (compared regardless of case)."""
    holder = conn.execute(select(users.c.name).where(users.c.email_key == email_key(email))).scalar()
    if holder is not None and (owner is None or user_name_key(holder) != user_name_key(owner)):
        raise InputError(f"the e-mail address {email!r} belongs to the account {holder!r} already (addresses are "
                         "compared regardless of case)")


def set_user_email(conn: Connection, name: str, email: str | None) -> str | None:
    """Give account ``name`` the e-mail address ``email`` (None: take it away) and return it as stored;
    InputError when it is not an address or another account has it, NotFound when there is no such account."""
    if email is not None:
        email = check_email(email)
        _email_free(conn, email, name)
    update_user(conn, name, email=email, email_key=None if email is None else email_key(email))
    return email


def user_by_email(conn: Connection, email: str):
    """The row of the account whose e-mail address is ``email`` (the whole address, any case), or None."""
    return conn.execute(select(users).where(users.c.email_key == email_key(email))).first()
