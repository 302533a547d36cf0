"""Storage: the only place in annotator that speaks SQL.

``open_store(url)`` returns a migrated :class:`Store`. SQLite (the default, a
file under data/) runs in WAL mode with foreign keys on and a busy timeout,
and every write transaction starts with ``BEGIN IMMEDIATE`` so concurrent
writers queue instead of failing on lock upgrades. PostgreSQL is chosen by a
``postgresql+psycopg://`` URL.

Repository functions live in the submodules (projects, judgements, users …)
and take a Store or an open Connection.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sqlalchemy import Connection, create_engine, event, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DataError, DBAPIError, OperationalError

from ..errors import InputError, StoreUnavailable
from . import schema
from .migrations import migrate

__all__ = ["Store", "open_store", "schema"]

SQLITE_BUSY_TIMEOUT_MS = 30_000


class Store:
    """A database behind a URL, migrated to the current schema."""

    def __init__(self, url: str, *, engine: Engine | None = None):
        self.url = url
        self.engine = engine or _create_engine(url)
        self.dialect = self.engine.dialect.name

    @property
    def is_sqlite(self) -> bool:
        """True for a SQLite store."""
        return self.dialect == "sqlite"

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One write transaction: committed on normal exit, rolled back on error."""
        with self._errors(), self.engine.begin() as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection for reading (a transaction that is never written to)."""
        with self._errors(), self.engine.connect().execution_options(annotator_read=True) as conn:
            yield conn

    @contextmanager
    def _errors(self) -> Iterator[None]:
        # Database failures become the core's errors (after the rollback), so callers show a message, not a traceback.
        try:
            yield
        except OperationalError as exc:
            raise _unavailable(self, exc) from exc
        except DataError as exc:
            raise _refused_value(exc) from exc
        except OverflowError as exc:
            if "SQLite INTEGER" not in str(exc):
                raise  # a programming error, not a value from the input
            raise _refused_value(exc) from exc

    def migrate(self) -> list[int]:
        """Apply pending migrations; return the versions applied."""
        try:
            if self.dialect == "postgresql":
                # Serialise concurrent first starts of several app processes.
                with self.engine.connect() as conn:
                    conn.execute(text("SELECT pg_advisory_lock(7261530)"))
                    try:
                        return migrate(self.engine)
                    finally:
                        conn.execute(text("SELECT pg_advisory_unlock(7261530)"))
                        conn.commit()
            return migrate(self.engine)
        except OperationalError as exc:
            raise _unavailable(self, exc) from exc

    def ping(self) -> bool:
        """True when the database answers a trivial query."""
        try:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            return True
        except DBAPIError:
            return False

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` result ('ok' when sound); 'ok' on PostgreSQL."""
        if not self.is_sqlite:
            return "ok"
        with self.engine.connect() as conn:
            return "\n".join(r[0] for r in conn.execute(text("PRAGMA integrity_check")))

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"Store({make_url(self.url).render_as_string(hide_password=True)!r})"


def _unavailable(store: Store, exc: Exception) -> StoreUnavailable:
    where = make_url(store.url).render_as_string(hide_password=True)
    reason = _first_line(exc)
    return StoreUnavailable(f"the database at {where} is not available ({reason}); your last unsaved change was not stored — try again when it is back")


def _refused_value(exc: Exception) -> InputError:
    """A value the database cannot hold (too long, out of range, a NUL byte) → InputError; the transaction rolled back.

    PostgreSQL enforces column widths, integer ranges and text without NUL
    (DataError); SQLite's driver cannot bind integers beyond 64 bits
    (OverflowError). Readers should refuse such values first, with file and
    line; this is the net under them, so the user gets a message, not a
    traceback.
    """
    return InputError(f"the database cannot store a value of this input ({_first_line(exc)}); nothing was saved")


def _first_line(exc: Exception) -> str:
    # The driver's own message without SQLAlchemy's statement dump (which may hold input values).
    text = str(getattr(exc, "orig", exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _create_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):
            # Take transaction control from pysqlite so we can BEGIN IMMEDIATE ourselves.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            # FULL: a committed save survives power loss, not only a killed process.
            cur.execute("PRAGMA synchronous=FULL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn):
            # Writers take the write lock up front; readers use a deferred snapshot.
            if conn.get_execution_options().get("annotator_read"):
                conn.exec_driver_sql("BEGIN")
            else:
                conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)


def open_store(url: str | None = None, *, migrate: bool = True) -> Store:
    """Open (and by default migrate) the store at ``url``; default from the settings."""
    if url is None:
        from ..config import load_settings
        url = load_settings().database_url
    store = Store(url)
    if migrate:
        store.migrate()
    return store


def retrying(func, *, attempts: int = 5, delay: float = 0.05):
    """Run ``func()`` again after a transient conflict (unique race, serialisation failure)."""
    from sqlalchemy.exc import IntegrityError
    for attempt in range(attempts):
        try:
            return func()
        except IntegrityError:
            if attempt == attempts - 1:
                raise
            time.sleep(delay * (attempt + 1))
