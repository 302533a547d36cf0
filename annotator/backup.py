"""Online backup and restore of a SQLite store.

A backup is taken with SQLite's backup API in a single step, i.e. inside one
read transaction: the copy is the database as of one instant, even while
other processes keep saving (in WAL mode readers never block writers, and
writers do not block this reader). The copy is written to a temporary file,
switched to a self-contained rollback journal, checked with ``PRAGMA
integrity_check``, synced, and only then renamed into place, so a backup file
that exists is a complete one.

Restore checks the file first (a SQLite database, sound, with an annotator
schema no newer than this program's), keeps a safety copy of the current
database, copies the backup into the live database through the same backup
API (holding SQLite's write lock, so running app processes see either the old
or the restored database, never a mixture) and brings its schema up to date.

PostgreSQL stores are backed up with the server's own tools; see
:func:`pg_instructions`.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy.engine import make_url

from .errors import AnnotatorError, InputError

_SQLITE_MAGIC = b"SQLite format 3\x00"
_LOCK_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class BackupResult:
    """What a backup or restore produced."""

    path: str
    bytes: int
    integrity: str
    schema_version: int
    judgements: int
    current_judgements: int
    safety_copy: str | None = None


def sqlite_path(url: str) -> Path:
    """The database file of a SQLite URL; AnnotatorError for any other kind of database."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        raise AnnotatorError(pg_instructions(url))
    if not parsed.database or parsed.database == ":memory:":
        raise AnnotatorError("an in-memory SQLite database cannot be backed up or restored")
    return Path(parsed.database)


def default_backup_path(url: str, *, label: str = "", now: datetime | None = None) -> Path:
    """``<database folder>/backups/<name>[-<label>]-<UTC time>.db`` for the SQLite database at ``url``."""
    db = sqlite_path(url)
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%d-%H%M%S-%f")
    return db.parent / "backups" / f"{db.stem}{'-' + label if label else ''}-{stamp}.db"


def backup(url: str, output: str | Path | None = None) -> BackupResult:
    """Copy the live SQLite store at ``url`` to ``output`` (default: :func:`default_backup_path`).

    Safe while the app is running and saving. Raises AnnotatorError if the
    database file does not exist or the copy fails its integrity check.
    """
    src_path = sqlite_path(url)
    if not src_path.is_file():
        raise AnnotatorError(f"there is no database file at {src_path} to back up")
    dest = Path(output) if output is not None else default_backup_path(url)
    if dest.resolve() == src_path.resolve():
        raise InputError("the backup file cannot be the database itself", str(dest))
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    partial.unlink(missing_ok=True)
    src = _connect_ro(src_path)
    try:
        out = sqlite3.connect(partial)
        try:
            # pages=-1: the whole database in one step, so one read snapshot, not a copy that restarts on every write.
            src.backup(out, pages=-1)
            out.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
            integrity = _integrity(out)
        finally:
            out.close()
    finally:
        src.close()
    if integrity != "ok":
        partial.unlink(missing_ok=True)
        raise AnnotatorError(f"the backup of {src_path} failed its integrity check: {integrity}")
    _fsync(partial)
    os.replace(partial, dest)
    _fsync_dir(dest.parent)
    return _describe(dest, integrity)


def restore(backup_file: str | Path, url: str, *, safety_copy: bool = True) -> BackupResult:
    """Replace the SQLite store at ``url`` with the contents of ``backup_file``.

    The file is checked before anything is touched (InputError if it is not a
    sound annotator database). With ``safety_copy`` the current database is
    backed up first (its path is in the result). Running app processes may stay
    up: they see the restored data on their next query.
    """
    from .store import open_store
    from .store.migrations import MIGRATIONS
    src_path = Path(backup_file)
    info = check_backup_file(src_path)
    newest = max(v for v, _, _ in MIGRATIONS)
    if info.schema_version > newest:
        raise InputError(f"the backup has schema version {info.schema_version}, newer than this program's "
                         f"({newest}); upgrade annotator before restoring it", str(src_path))
    target = sqlite_path(url)
    if target.exists() and target.resolve() == src_path.resolve():
        raise InputError("the backup file is the database itself", str(src_path))
    kept = None
    if safety_copy and target.is_file():
        kept = backup(url, default_backup_path(url, label="before-restore")).path
    target.parent.mkdir(parents=True, exist_ok=True)
    src = _connect_ro(src_path)
    try:
        dst = sqlite3.connect(target, timeout=_LOCK_TIMEOUT_S)
        try:
            # The backup API takes the target's write lock and replaces every page in one step.
            src.backup(dst, pages=-1)
            dst.execute("PRAGMA journal_mode=WAL")
            integrity = _integrity(dst)
        finally:
            dst.close()
    finally:
        src.close()
    if integrity != "ok":  # pragma: no cover - the source passed its own check
        raise AnnotatorError(f"the restored database at {target} failed its integrity check: {integrity}")
    store = open_store(url)  # applies migrations a backup from an older version lacks
    store.dispose()
    result = _describe(target, integrity)
    return BackupResult(**{**result.__dict__, "safety_copy": kept})


def check_backup_file(path: str | Path) -> BackupResult:
    """Open ``path`` read-only and describe it; InputError unless it is a sound annotator database."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such backup file", str(p))
    with open(p, "rb") as fh:
        if fh.read(16) != _SQLITE_MAGIC:
            raise InputError("not a SQLite database file", str(p))
    try:
        conn = _connect_ro(p)
        try:
            integrity = _integrity(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"the file cannot be read as a database ({exc})", str(p)) from exc
    if integrity != "ok":
        raise InputError(f"the backup is damaged: {integrity.splitlines()[0]}", str(p))
    return _describe(p, integrity)


def pg_instructions(url: str) -> str:
    """How to back up and restore a PostgreSQL store with pg_dump / pg_restore (password not shown)."""
    parsed = make_url(url)
    libpq = parsed.set(drivername="postgresql").render_as_string(hide_password=True)
    return ("annotator backup/restore handle SQLite files only; this store is on PostgreSQL. "
            "Use the server's tools, which take a consistent snapshot while the app runs:\n"
            f"  backup:  pg_dump --format=custom --file=annotator-$(date +%Y%m%d-%H%M%S).dump '{libpq}'\n"
            f"  restore: pg_restore --clean --if-exists --no-owner --dbname='{libpq}' annotator-YYYYmmdd-HHMMSS.dump\n"
            "(the password comes from ~/.pgpass or PGPASSWORD; see docs/reliability.md)")


def _connect_ro(path: Path) -> sqlite3.Connection:
    # Read-only URI: a backup never changes its source, even by creating a missing file.
    return sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, timeout=_LOCK_TIMEOUT_S)


def _integrity(conn: sqlite3.Connection) -> str:
    return "\n".join(r[0] for r in conn.execute("PRAGMA integrity_check"))


def _describe(path: Path, integrity: str) -> BackupResult:
    conn = _connect_ro(path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "schema_migrations" not in tables:
            raise InputError("not an annotator database (no schema_migrations table)", str(path))
        version = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]
        counts = [conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] if t in tables else 0
                  for t in ("judgements", "current_judgements")]
        # Pages × page size, not the file size: a live WAL database keeps recent pages in its -wal file.
        size = conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    return BackupResult(str(path), size, integrity, int(version), *counts)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        _fsync(path)
    except OSError:  # pragma: no cover - some filesystems cannot sync a directory
        pass
