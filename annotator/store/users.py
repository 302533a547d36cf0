"""User rows. Password hashing and lock-out policy live in annotator.auth."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import Connection, select

from ..errors import InputError, NotFound
from ..model import Role, User
from .schema import users


def _row_to_user(r) -> User:
    return User(name=r.name, role=Role(r.role), password_hash=r.password_hash, user_id=r.id)


def user_id(conn: Connection, name: str, *, create_role: Role | None = None) -> int:
    """Id of user ``name``; create it (no password) with ``create_role`` if given, else NotFound."""
    uid = conn.execute(select(users.c.id).where(users.c.name == name)).scalar()
    if uid is None:
        if create_role is None:
            raise NotFound(f"no user called {name!r}")
        uid = create_user(conn, name, create_role)
    return uid


def create_user(conn: Connection, name: str, role: Role, password_hash: str | None = None) -> int:
    """Insert a user; InputError if the name is taken or empty."""
    name = name.strip()
    if not name:
        raise InputError("a user name cannot be empty")
    if conn.execute(select(users.c.id).where(users.c.name == name)).scalar() is not None:
        raise InputError(f"a user called {name!r} exists already")
    return conn.execute(users.insert().values(name=name, role=Role(role).value, password_hash=password_hash,
                                              failed_logins=0, created_at=datetime.now(timezone.utc))).inserted_primary_key[0]


def get_user(conn: Connection, name: str) -> User:
    """The user called ``name`` (NotFound if none)."""
    r = conn.execute(select(users).where(users.c.name == name)).first()
    if r is None:
        raise NotFound(f"no user called {name!r}")
    return _row_to_user(r)


def get_user_row(conn: Connection, name: str, *, for_update: bool = False):
    """The raw row (with lock-out fields) of user ``name``, or None.

    ``for_update`` locks the row until the transaction ends (PostgreSQL; SQLite's
    write transactions are serialised already), so concurrent log-in attempts
    count their failures one after another instead of overwriting each other.
    """
    q = select(users).where(users.c.name == name)
    if for_update and conn.dialect.name != "sqlite":
        q = q.with_for_update()
    return conn.execute(q).first()


def list_users(conn: Connection) -> list[User]:
    """All users by name."""
    return [_row_to_user(r) for r in conn.execute(select(users).order_by(users.c.name))]


def count_users_with_password(conn: Connection) -> int:
    """How many users can log in (users made by imports have no password)."""
    return len(conn.execute(select(users.c.id).where(users.c.password_hash.is_not(None))).all())


def update_user(conn: Connection, name: str, **values) -> None:
    """Update columns of user ``name`` (NotFound if none)."""
    if "role" in values:
        values["role"] = Role(values["role"]).value
    n = conn.execute(users.update().where(users.c.name == name).values(**values)).rowcount
    if n == 0:
        raise NotFound(f"no user called {name!r}")
