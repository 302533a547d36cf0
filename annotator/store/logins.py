"""Failed log-ins per typed name (its user name key), whether or not an account has that name.

Keeping the counters of unknown names in the same table, written the same way, as those of real
accounts is what makes throttling and lock-out look alike for every name, across app processes and
restarts (annotator.accounts.auth.authenticate).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, and_, delete, or_, select

from .rows import lock_key
from .schema import login_failures


def failure_state(conn: Connection, key: str) -> tuple[int, datetime | None, datetime | None]:
    """(consecutive failures, last failure, locked until) of a name key, serialising concurrent attempts on it
    until the transaction ends (an advisory lock on PostgreSQL; SQLite's writers are serial already)."""
    lock_key(conn, f"login:{key}")
    r = conn.execute(select(login_failures.c.failures, login_failures.c.last_failed_at, login_failures.c.locked_until)
                     .where(login_failures.c.name_key == key)).first()
    return (0, None, None) if r is None else (int(r.failures), r.last_failed_at, r.locked_until)


def record_failure(conn: Connection, key: str, failures: int, at: datetime, locked_until: datetime | None) -> None:
    """Set the counters of a name key (after :func:`failure_state` in the same transaction)."""
    values = {"failures": failures, "last_failed_at": at, "locked_until": locked_until}
    n = conn.execute(login_failures.update().where(login_failures.c.name_key == key).values(**values)).rowcount
    if n == 0:
        conn.execute(login_failures.insert().values(name_key=key, **values))


def clear_failures(conn: Connection, key: str) -> None:
    """Forget the failures of a name key (a successful log-in, a new password, an unlock)."""
    conn.execute(delete(login_failures).where(login_failures.c.name_key == key))


def prune_failures(conn: Connection, older_than: datetime, now: datetime) -> int:
    """Delete counters whose last failure is before ``older_than`` and that hold no running lock."""
    return conn.execute(delete(login_failures).where(and_(
        login_failures.c.last_failed_at < older_than,
        or_(login_failures.c.locked_until.is_(None), login_failures.c.locked_until < now)))).rowcount


def failures_by_key(conn: Connection) -> dict[str, tuple[int, datetime | None, datetime | None]]:
    """Every stored counter: name key → (failures, last failure, locked until)."""
    return {r.name_key: (int(r.failures), r.last_failed_at, r.locked_until)
            for r in conn.execute(select(login_failures))}
