"""SQLite database files for backup and restore: copying, checking, migrating and swapping them.

The policy (what makes a backup acceptable, where files go, what the user is
told) lives in :mod:`annotator.backup`; this module holds the SQL it needs.
Every copy goes through SQLite's online backup API, which reads the source
inside one read transaction (a consistent snapshot, the source's ``-wal``
included) and writes the destination inside one write transaction.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from . import schema
from .engine import create_store_engine
from .migrations import MIGRATIONS, migrate

LOCK_TIMEOUT_S = 30.0
SQLITE_MAGIC = b"SQLite format 3\x00"
NEWEST_VERSION = max(v for v, _, _ in MIGRATIONS)

#: {table: column names}, the shape compared between a file and a schema version.
Shape = dict[str, frozenset[str]]

#: What the functions here raise when a file cannot be read or written as a database.
DatabaseError = sqlite3.DatabaseError
OperationalError = sqlite3.OperationalError
Error = sqlite3.Error


@dataclass(frozen=True)
class FileFacts:
    """What a database file holds, read in one transaction."""

    bytes: int
    schema_version: int
    judgements: int
    current_judgements: int


def database_file(url: str) -> Path | None:
    """The file of a SQLite URL; None for another kind of database or an in-memory one."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def is_sqlite_url(url: str) -> bool:
    """True when ``url`` names a SQLite database (a file or in memory)."""
    return make_url(url).get_backend_name() == "sqlite"


def libpq_url(url: str) -> str:
    """``url`` as a libpq connection string for pg_dump/pg_restore, the password shown as ``***``."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=True)


def has_sqlite_header(path: Path) -> bool:
    """True when the file starts with SQLite's 16-byte magic string."""
    with open(path, "rb") as fh:
        return fh.read(16) == SQLITE_MAGIC


def connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection: it never changes the file, nor creates a missing one."""
    return sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, timeout=LOCK_TIMEOUT_S)


def copy_database(source: Path, dest: Path, *, page_size: int | None = None) -> None:
    """Copy the database ``source`` into the new file ``dest`` in one step, as one self-contained file
    (rollback journal, no ``-wal`` beside it); with ``page_size``, rebuilt with that page size.

    sqlite3.DatabaseError when ``source`` cannot be read as a database.
    """
    with closing(connect_ro(source)) as src, closing(sqlite3.connect(dest)) as out:
        # pages=-1: the whole database in one step, so one read snapshot, not a copy that restarts on every write.
        src.backup(out, pages=-1)
        out.execute("PRAGMA journal_mode=DELETE")
        if page_size is not None and _page_size(out) != page_size:
            out.execute(f"PRAGMA page_size={int(page_size)}")
            out.execute("VACUUM")


def integrity(path: Path) -> str:
    """``PRAGMA integrity_check`` of the file ('ok' when sound)."""
    with closing(connect_ro(path)) as conn:
        return "\n".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check"))


def page_size(path: Path) -> int | None:
    """The page size of the database file at ``path`` (None if it cannot be read as one)."""
    try:
        with closing(connect_ro(path)) as conn:
            return _page_size(conn)
    except sqlite3.DatabaseError:
        return None


def recorded_versions(path: Path) -> list[int] | None:
    """The schema versions recorded in the file, ascending; None if it has no ``schema_migrations`` table."""
    with closing(connect_ro(path)) as conn:
        if "schema_migrations" not in _shape(conn):
            return None
        return [int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]


def file_shape(path: Path) -> Shape:
    """The tables of the file and their columns."""
    with closing(connect_ro(path)) as conn:
        return _shape(conn)


@lru_cache(maxsize=None)
def shape_at(version: int) -> Shape:
    """The tables and columns a database at schema ``version`` has: migrations 1..version replayed on an
    empty in-memory database (so a new migration needs no list updated here)."""
    engine = create_engine("sqlite://")
    try:
        with engine.begin() as conn:
            schema.schema_migrations.create(conn)
            for v, _, apply in MIGRATIONS:
                if v <= version:
                    apply(conn)
            return _shape(conn.connection.dbapi_connection)
    finally:
        engine.dispose()


def missing_from(expected: Shape, actual: Shape) -> list[str]:
    """What ``actual`` lacks of ``expected``: 'table t' and 'column t.c' entries, in a stable order."""
    out = []
    for table in sorted(expected):
        if table not in actual:
            out.append(f"table {table}")
        else:
            out += [f"column {table}.{c}" for c in sorted(expected[table] - actual[table])]
    return out


def migrate_file(path: Path) -> list[int]:
    """Apply the pending migrations to the database file at ``path`` (nobody else has it open); the
    database errors of a failing migration propagate. Leaves no ``-wal`` beside the file."""
    engine = create_store_engine(f"sqlite:///{path}")
    try:
        return migrate(engine)
    finally:
        engine.dispose()
        with closing(sqlite3.connect(path)) as conn:
            conn.execute("PRAGMA journal_mode=DELETE")


def replace_contents(live: Path, source: Path) -> None:
    """Make the database at ``live`` hold exactly what ``source`` holds, in one write transaction.

    The backup API takes ``live``'s write lock and writes every page of ``source`` through ``live``'s own
    journal (its ``-wal`` when in WAL mode), so processes that have it open see the old database or the new
    one, never a mixture, and pages still waiting in the old ``-wal`` cannot leak into the new one. Replacing
    the file on disk instead would break both. ``source`` must have ``live``'s page size when ``live`` is in
    WAL mode (see :func:`copy_database`). A missing ``live`` is created; it ends in WAL mode.
    """
    with closing(connect_ro(source)) as src, closing(sqlite3.connect(live, timeout=LOCK_TIMEOUT_S)) as dst:
        src.backup(dst, pages=-1)
        dst.execute("PRAGMA journal_mode=WAL")


def describe(path: Path) -> FileFacts:
    """Size (pages × page size: a live WAL database keeps recent pages in its ``-wal``), newest schema
    version and judgement counts of a database file, read in one transaction."""
    with closing(connect_ro(path)) as conn:
        conn.execute("BEGIN")
        tables = _shape(conn)
        version = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0] \
            if "schema_migrations" in tables else 0
        counts = [conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] if t in tables else 0
                  for t in ("judgements", "current_judgements")]
        size = conn.execute("PRAGMA page_count").fetchone()[0] * _page_size(conn)
        conn.execute("COMMIT")
    return FileFacts(size, int(version), *counts)


def fsync(path: Path) -> None:
    """Flush a file (or a directory's entries) to disk; a directory some filesystems cannot sync is let be."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - e.g. a directory on some filesystems
        if not path.is_dir():
            raise
    finally:
        os.close(fd)


def _page_size(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA page_size").fetchone()[0])


def _shape(conn: sqlite3.Connection) -> Shape:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
                                        "ESCAPE '\\'")]
    return {n: frozenset(str(r[1]) for r in conn.execute(f"PRAGMA table_info({_quoted(n)})")) for n in names}


def _quoted(identifier: str) -> str:
    # Table names come from the file being checked: quote them, whatever they hold.
    return '"' + str(identifier).replace('"', '""') + '"'
