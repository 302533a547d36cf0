"""The database engine under a store: how annotator connects to SQLite and PostgreSQL (used by the Store and by
the backup files' own migrations)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url

SQLITE_BUSY_TIMEOUT_MS = 30_000


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL (None for another database or an in-memory one)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def create_store_engine(url: str, *, create_folder: bool = True) -> Engine:
    """The SQLAlchemy engine of a store: SQLite in WAL mode with foreign keys, a busy timeout, FULL sync and
    ``BEGIN IMMEDIATE`` for writers (``create_folder``: make the file's folder); PostgreSQL with a checked pool."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if create_folder and sqlite_file(url) is not None:
            sqlite_file(url).parent.mkdir(parents=True, exist_ok=True)
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
