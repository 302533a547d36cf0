"""The record of account changes (table account_changes): written in the transaction of the change itself."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import Connection, select

from .schema import account_changes

#: Who a change made without a logged-in user (the ``annotator users`` command) is recorded as.
COMMAND_LINE = "command line"


def record_account_change(conn: Connection, actor: str | None, action: str, target: str, detail: str = "") -> None:
    """Append one change (``actor`` None: the command line) inside the caller's transaction."""
    conn.execute(account_changes.insert().values(at=datetime.now(timezone.utc), actor=actor or COMMAND_LINE,
                                                 action=action, target=target, detail=detail))


def account_change_rows(conn: Connection, *, limit: int | None = None, target: str | None = None) -> list:
    """Changes, newest first (rows: id, at, actor, action, target, detail); only ``target``'s when given."""
    q = select(account_changes).order_by(account_changes.c.id.desc())
    if target is not None:
        q = q.where(account_changes.c.target == target)
    if limit is not None:
        q = q.limit(int(limit))
    return conn.execute(q).all()
