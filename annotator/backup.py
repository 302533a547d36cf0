"""Online backup and restore of a SQLite store.

A backup is taken with SQLite's backup API in a single step, i.e. inside one
read transaction: the copy is the database as of one instant, even while
other processes keep saving (in WAL mode readers never block writers, and
writers do not block this reader). The copy is written to a temporary file,
switched to a self-contained rollback journal, checked with ``PRAGMA
integrity_check``, synced, and only then renamed into place, so a backup file
that exists is a complete one.

Restore never touches the live database until the backup has proven sound.
It copies the file to a staging copy beside the database and checks that
copy: ``integrity_check`` ok, schema versions recorded 1..n with n no newer
than this program's, and every table and column that schema version n has
(replayed from the migrations, :func:`annotator.store.backup.shape_at`). It
then migrates the copy to the current schema and checks it again. Only then
does it keep a safety copy of the live database and write the staged copy
into the live one through the same backup API, under the live database's
write lock and through its own journal, so running app processes see either
the old or the restored database, never a mixture or a broken file. Any
refusal leaves the live database as it was (InputError, exit code 2, naming
the file and what it lacks).

PostgreSQL stores are backed up with the server's own tools; see
:func:`pg_instructions`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, NoReturn

from .errors import AnnotatorError, InputError
from .store import backup as files


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
    path = files.database_file(url)
    if path is None:
        if files.is_sqlite_url(url):
            raise AnnotatorError("an in-memory SQLite database cannot be backed up or restored")
        raise AnnotatorError(pg_instructions(url))
    return path


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
    files.copy_database(src_path, partial)
    integrity = files.integrity(partial)
    if integrity != "ok":
        partial.unlink(missing_ok=True)
        raise AnnotatorError(f"the backup of {src_path} failed its integrity check: {integrity}")
    files.fsync(partial)
    os.replace(partial, dest)
    files.fsync(dest.parent)
    return _result(dest, integrity)


def restore(backup_file: str | Path, url: str, *, safety_copy: bool = True) -> BackupResult:
    """Replace the SQLite store at ``url`` with the contents of ``backup_file``, brought up to date.

    The file is proven sound on a staging copy and migrated there before the
    live database is touched (InputError naming the file and what is wrong
    otherwise; the live database is then unchanged). With ``safety_copy`` the
    current database is backed up first (its path is in the result). Running
    app processes may stay up: they see the restored data on their next query.
    """
    src_path = Path(backup_file)
    target = sqlite_path(url)
    if target.exists() and target.resolve() == src_path.resolve():
        raise InputError("the backup file is the database itself", str(src_path))
    # A live WAL database accepts pages of its own size only: the staged copy is rebuilt to that size.
    live_page_size = files.page_size(target) if target.is_file() else None
    with _proven_copy(src_path, beside=target.parent, page_size=live_page_size) as staged:
        kept = None
        if safety_copy and target.is_file():
            kept = backup(url, default_backup_path(url, label="before-restore")).path
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            files.replace_contents(target, staged)
        except files.Error as exc:
            raise AnnotatorError(f"the database at {target} could not be replaced ({exc}); it was left as it was"
                                 + (f" (a copy of it is at {kept})" if kept else "")) from exc
    integrity = files.integrity(target)
    if integrity != "ok":  # pragma: no cover - the staged copy passed its own check
        raise AnnotatorError(f"the restored database at {target} failed its integrity check: {integrity}")
    result = _result(target, integrity)
    return BackupResult(**{**result.__dict__, "safety_copy": kept})


def check_backup_file(path: str | Path) -> BackupResult:
    """Describe the backup file ``path`` (never changing it); InputError unless restoring it would succeed:
    see :func:`restore` for what is checked."""
    p = Path(path)
    with _proven_copy(p):
        pass
    return _result(p, "ok")


@contextmanager
def _proven_copy(src_path: Path, *, beside: Path | None = None, page_size: int | None = None) -> Iterator[Path]:
    """A staging copy of ``src_path``, proven sound and migrated to the current schema, removed afterwards.

    Checked on the copy (the very bytes that will be installed): ``integrity_check``, schema versions 1..n
    recorded with n no newer than this program's, every table of schema version n; then migrated, and every
    table and column of the current schema checked. InputError naming ``src_path`` at the first failure.
    """
    if not src_path.is_file():
        raise InputError("no such backup file", str(src_path))
    if not files.has_sqlite_header(src_path):
        raise InputError(f"not a SQLite database file; {_UNCHANGED}", str(src_path))
    # Beside the live database (same disk: no surprise about space or a small /tmp), unless its folder does
    # not exist yet (a refused restore must not create it).
    staging_dir = Path(tempfile.mkdtemp(prefix=".annotator-restore-", dir=beside if beside and beside.is_dir() else None))
    try:
        staged = staging_dir / "staged.db"
        try:
            files.copy_database(src_path, staged, page_size=page_size)
            recorded, lacking = _check_recorded_schema(staged, src_path)
        except files.DatabaseError as exc:
            raise InputError(f"the file cannot be read as a database ({exc}); {_UNCHANGED}", str(src_path)) from exc
        try:
            files.migrate_file(staged)
        except Exception as exc:  # whatever the migration code meets in this file: the copy is thrown away
            if lacking:
                _refuse(src_path, f"it lacks {_listed(lacking)}, which schema version {recorded} has")
            raise InputError(f"the backup cannot be brought up to schema version {files.NEWEST_VERSION} "
                             f"({_first_line(exc)}); {_UNCHANGED}", str(src_path)) from exc
        missing = files.missing_from(files.shape_at(files.NEWEST_VERSION), files.file_shape(staged))
        if missing:
            version = recorded if set(missing) <= set(lacking) else files.NEWEST_VERSION
            _refuse(src_path, f"it lacks {_listed(missing)}, which schema version {version} has")
        yield staged
    finally:
        shutil.rmtree(staging_dir, ignore_errors=True)


def _check_recorded_schema(db: Path, named: Path) -> tuple[int, list[str]]:
    """Refuse ``db`` (InputError naming ``named``) unless it passes ``integrity_check``, records schema versions
    1..n with n no newer than this program's, and has every table of version n. Returns n and the columns of
    version n it lacks: a later migration may add those (a column added to an existing table is in the
    replayed schema of every version), so they are judged after migrating."""
    integrity = files.integrity(db)
    if integrity != "ok":
        _refuse(named, f"its integrity check fails ({integrity.splitlines()[0]})")
    versions = files.recorded_versions(db)
    if versions is None:
        _refuse(named, "it has no schema_migrations table")
    if not versions:
        _refuse(named, "it records no schema version")
    newest = versions[-1]
    if newest > files.NEWEST_VERSION:
        raise InputError(f"the backup has schema version {newest}, newer than this program's "
                         f"({files.NEWEST_VERSION}); upgrade annotator before restoring it", str(named))
    missing = files.missing_from(files.shape_at(max(newest, 1)), files.file_shape(db))
    if any(m.startswith("table ") for m in missing):
        _refuse(named, f"it lacks {_listed(missing)}, which schema version {newest} has")
    gaps = sorted(set(range(1, newest + 1)) - set(versions))
    if gaps or versions[0] < 1:
        _refuse(named, f"it records schema version {newest} but not version{'s' if len(gaps) > 1 else ''} "
                       f"{', '.join(map(str, gaps or versions[:1]))}")
    return newest, missing


_UNCHANGED = "nothing was restored"


def _refuse(named: Path, what: str) -> NoReturn:
    raise InputError(f"not a sound annotator database: {what}; {_UNCHANGED}", str(named))


def _listed(missing: list[str], limit: int = 12) -> str:
    shown = ", ".join(missing[:limit])
    return shown + (f" and {len(missing) - limit} more" if len(missing) > limit else "")


def pg_instructions(url: str) -> str:
    """How to back up and restore a PostgreSQL store with pg_dump / pg_restore (password not shown)."""
    libpq = files.libpq_url(url)
    return ("annotator backup/restore handle SQLite files only; this store is on PostgreSQL. "
            "Use the server's tools, which take a consistent snapshot while the app runs:\n"
            f"  backup:  pg_dump --format=custom --file=annotator-$(date +%Y%m%d-%H%M%S).dump '{libpq}'\n"
            f"  restore: pg_restore --clean --if-exists --no-owner --dbname='{libpq}' annotator-YYYYmmdd-HHMMSS.dump\n"
            "(the password comes from ~/.pgpass or PGPASSWORD; see docs/reliability.md)")


def _result(path: Path, integrity: str) -> BackupResult:
    facts = files.describe(path)
    return BackupResult(str(path), facts.bytes, integrity, facts.schema_version, facts.judgements,
                        facts.current_judgements)


def _first_line(exc: Exception) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
