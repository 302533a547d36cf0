"""Race-safe creation of named rows (projects, systems, users).

Two processes that both find no project called ``P`` and both insert it would
collide on the unique name: on PostgreSQL the second one's INSERT waits for the
first to commit and then fails with a unique violation. ``INSERT … ON CONFLICT
DO NOTHING`` makes the loser's insert a no-op instead (after waiting for the
winner), and the following SELECT finds the winner's row — on PostgreSQL and on
SQLite alike.
"""

from __future__ import annotations

from sqlalchemy import Connection, Table


def insert_if_absent(conn: Connection, table: Table, values: dict) -> int | None:
    """Insert one row unless it conflicts with a unique constraint; return its new id, or None when it was not inserted.

    ``RETURNING`` reports the id only for a row really inserted (SQLite's
    ``lastrowid`` would be stale after a skipped insert); on None the caller
    reads the existing row back with its own lookup.
    """
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return conn.execute(insert(table).values(**values).on_conflict_do_nothing().returning(table.c.id)).scalar()
