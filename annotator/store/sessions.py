"""Rows of log-in sessions, per-user remembered choices and server keys. The policy (tokens, signing,
expiry) lives in annotator.accounts.sessions."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, and_, delete, or_, select

from .schema import server_keys, sessions, user_settings, users


def _insert(conn: Connection, table):
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table)


def insert_session(conn: Connection, sid: str, user_id: int, epoch: int, now: datetime, expires_at: datetime,
                   handoff: str | None, handoff_expires_at: datetime | None) -> None:
    """Store a new session (``sid``: the hash of its token)."""
    conn.execute(sessions.insert().values(id=sid, user_id=user_id, epoch=epoch, created_at=now, last_seen_at=now,
                                          expires_at=expires_at, handoff=handoff,
                                          handoff_expires_at=handoff_expires_at))


def session_by_token(conn: Connection, token_hash: str):
    """The session whose cookie token hashes to ``token_hash`` with its user's row (id, user_id, name, role,
    session_epoch, active, epoch, last_seen_at, expires_at), or None."""
    return conn.execute(
        select(sessions.c.id, sessions.c.user_id, users.c.name, users.c.role, users.c.session_epoch, users.c.active,
               sessions.c.epoch, sessions.c.last_seen_at, sessions.c.expires_at)
        .select_from(sessions.join(users, users.c.id == sessions.c.user_id))
        .where(sessions.c.token_hash == token_hash)).first()


def user_with_session(conn: Connection, user_id: int, sid: str):
    """User ``user_id``'s row (name, role, session_epoch, active) with the session ``sid`` of that user joined on
    (epoch, last_seen_at, expires_at: None when there is no such session), in one read by primary key."""
    joined = users.outerjoin(sessions, and_(sessions.c.id == sid, sessions.c.user_id == users.c.id))
    return conn.execute(
        select(users.c.name, users.c.role, users.c.session_epoch, users.c.active,
               sessions.c.epoch, sessions.c.last_seen_at, sessions.c.expires_at)
        .select_from(joined).where(users.c.id == user_id)).first()


def redeem_handoff(conn: Connection, handoff: str, token_hash: str, now: datetime):
    """Give the session whose one-time handoff code hashes to ``handoff`` (still valid) its cookie token's hash and
    spend the code (a second redemption finds nothing); the session's absolute end, or None."""
    row = conn.execute(select(sessions.c.id, sessions.c.expires_at)
                       .where(sessions.c.handoff == handoff, sessions.c.handoff_expires_at >= now,
                              sessions.c.expires_at > now)).first()
    if row is None:
        return None
    spent = conn.execute(sessions.update().where(sessions.c.id == row.id, sessions.c.handoff == handoff)
                         .values(handoff=None, handoff_expires_at=None, token_hash=token_hash)).rowcount
    return row.expires_at if spent == 1 else None


def touch_session(conn: Connection, sid: str, now: datetime) -> None:
    """Record activity on a session (its idle time starts again)."""
    conn.execute(sessions.update().where(sessions.c.id == sid).values(last_seen_at=now))


def delete_session(conn: Connection, sid: str) -> int:
    """End one session; the number of rows deleted."""
    return conn.execute(delete(sessions).where(sessions.c.id == sid)).rowcount


def delete_session_by_token(conn: Connection, token_hash: str) -> int:
    """End the session a cookie token belongs to."""
    return conn.execute(delete(sessions).where(sessions.c.token_hash == token_hash)).rowcount


def delete_user_sessions(conn: Connection, user_id: int) -> int:
    """End every session of a user."""
    return conn.execute(delete(sessions).where(sessions.c.user_id == user_id)).rowcount


def prune_sessions(conn: Connection, now: datetime, idle_before: datetime) -> int:
    """Delete sessions past their absolute end or idle since before ``idle_before``."""
    return conn.execute(delete(sessions).where(or_(sessions.c.expires_at < now,
                                                   sessions.c.last_seen_at < idle_before))).rowcount


def count_sessions(conn: Connection, user_id: int | None = None) -> int:
    """Stored sessions (of one user, or all)."""
    from sqlalchemy import func
    q = select(func.count()).select_from(sessions)
    if user_id is not None:
        q = q.where(sessions.c.user_id == user_id)
    return int(conn.execute(q).scalar())


# --------------------------------------------------------------------------- per-user choices

def get_user_settings(conn: Connection, user_id: int, keys=None) -> dict[str, str]:
    """A user's remembered values (all, or those of ``keys``)."""
    q = select(user_settings.c.key, user_settings.c.value).where(user_settings.c.user_id == user_id)
    if keys is not None:
        q = q.where(user_settings.c.key.in_(list(keys)))
    return {r.key: r.value for r in conn.execute(q)}


def set_user_setting(conn: Connection, user_id: int, key: str, value: str, now: datetime) -> None:
    """Remember ``value`` under ``key`` for a user (replacing what was there)."""
    n = conn.execute(user_settings.update().where(user_settings.c.user_id == user_id, user_settings.c.key == key)
                     .values(value=value, updated_at=now)).rowcount
    if n == 0:
        stmt = _insert(conn, user_settings).values(user_id=user_id, key=key, value=value, updated_at=now)
        conn.execute(stmt.on_conflict_do_update(index_elements=["user_id", "key"],
                                                set_={"value": value, "updated_at": now}))


# --------------------------------------------------------------------------- server keys

def server_key(conn: Connection, name: str, make, now: datetime) -> str:
    """The server key ``name``; created with ``make()`` the first time (the first process to create it wins)."""
    value = conn.execute(select(server_keys.c.value).where(server_keys.c.name == name)).scalar()
    if value is None:
        conn.execute(_insert(conn, server_keys).values(name=name, value=make(), created_at=now).on_conflict_do_nothing())
        value = conn.execute(select(server_keys.c.value).where(server_keys.c.name == name)).scalar()
    return value
