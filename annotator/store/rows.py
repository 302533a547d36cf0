"""Race-safe writes: creation of named rows (projects, systems, users), upserts, and a lock per logical key.

Two processes that both find no project called ``P`` and both insert it would
collide on the unique name: on PostgreSQL the second one's INSERT waits for the
first to commit and then fails with a unique violation. ``INSERT … ON CONFLICT
DO NOTHING`` makes the loser's insert a no-op instead (after waiting for the
winner), and the following SELECT finds the winner's row — on PostgreSQL and on
SQLite alike.
"""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy import Connection, Table, text


def _insert(conn: Connection, table: Table):
    """The connection's dialect's INSERT of ``table``, which knows ON CONFLICT."""
    return _dialect_insert(conn.dialect.name, table)


def _dialect_insert(dialect: str, table: Table):
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table)


def insert_if_absent(conn: Connection, table: Table, values: dict) -> int | None:
    """Insert one row unless it conflicts with a unique constraint; return its new id, or None when it was not inserted.

    ``RETURNING`` reports the id only for a row really inserted (SQLite's
    ``lastrowid`` would be stale after a skipped insert); on None the caller
    reads the existing row back with its own lookup.
    """
    return conn.execute(_insert(conn, table).values(**values).on_conflict_do_nothing().returning(table.c.id)).scalar()


def upsert(conn: Connection, table: Table, values: dict, key_cols: list[str]):
    """Insert one row, or update the row with the same ``key_cols`` to ``values``."""
    stmt = _upsert_statement(conn.dialect.name, table, tuple(values), tuple(key_cols))
    return conn.execute(stmt, values)


@lru_cache(maxsize=64)
def _upsert_statement(dialect: str, table: Table, columns: tuple[str, ...], key_cols: tuple[str, ...]):
    # Built once per table and column set, values bound at execution: building the ON CONFLICT clause (its
    # ``excluded`` pseudo-table proxies every column) cost more than running the statement on SQLite.
    stmt = _dialect_insert(dialect, table)
    update = {k: stmt.excluded[k] for k in columns if k not in key_cols}
    return stmt.on_conflict_do_update(index_elements=list(key_cols), set_=update)


def lock_key(conn: Connection, key: str) -> None:
    """Serialise writers of one logical key until the transaction ends.

    On PostgreSQL a transaction-scoped advisory lock on the key's hash: the
    first save of a brand-new key has no row to lock, and racing inserts of
    revision 1 could otherwise deadlock between the unique index and the
    current-pointer upsert. SQLite needs nothing: BEGIN IMMEDIATE already
    admits one writer at a time. Advisory locks are shared by the whole
    database, so the key is qualified by the schema: stores in two schemas of
    one database (two deployments, or tests side by side) never wait for, or
    deadlock with, each other's keys.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/' || :key, 0))"),
                     {"key": key})


def _after(keys: tuple, last: tuple):
    """(k1, k2, …) > (l1, l2, …), spelled out column by column so that the keys' index serves it."""
    from sqlalchemy import and_, or_
    if len(keys) == 1:
        return keys[0] > last[0]
    return or_(keys[0] > last[0], and_(keys[0] == last[0], _after(keys[1:], last[1:])))


def keyset_chunks(conn: Connection, query, keys: tuple, size: int):
    """The rows of ``query`` in the order of the columns ``keys`` (unique together), ``size`` at a time: each
    chunk is read when the one before is used up, after the last row's keys (keyset paging, no OFFSET), so memory
    holds a chunk and not the whole result. ``query`` must select the key columns."""
    last = None
    while True:
        q = query if last is None else query.where(_after(keys, last))
        rows = conn.execute(q.order_by(*keys).limit(size)).all()
        if not rows:
            return
        last = tuple(rows[-1]._mapping[k] for k in keys)
        yield rows
