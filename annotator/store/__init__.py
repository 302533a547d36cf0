"""Storage: the only place in annotator that speaks SQL.

``open_store(url)`` returns a migrated :class:`Store` (creating the database if
needed); ``open_existing_store(url)`` opens one as it is, for commands that must
not create or change a database. SQLite (the default, a
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
from typing import Iterator

from sqlalchemy import Connection, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, DataError, DBAPIError, IntegrityError, OperationalError

from ..errors import InputError, NotFound, StoreUnavailable
from . import backup as files
from . import schema
from .engine import create_store_engine, sqlite_file
from .migrations import MIGRATIONS, applied_versions, migrate

__all__ = ["Store", "checked_url", "open_existing_store", "open_store", "schema"]

#: Kinds of database annotator stores data in (SQLAlchemy backend names).
SUPPORTED_BACKENDS = ("sqlite", "postgresql")
URL_FORMS = "sqlite:///PATH/TO/FILE.db or postgresql+psycopg://USER@HOST:PORT/DATABASE"


class Store:
    """A database behind a URL, migrated to the current schema."""

    def __init__(self, url: str, *, engine: Engine | None = None, create_folder: bool = True):
        self.url = url
        self.engine = engine or create_store_engine(url, create_folder=create_folder)
        self.dialect = self.engine.dialect.name

    @property
    def is_sqlite(self) -> bool:
        """True for a SQLite store."""
        return self.dialect == "sqlite"

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One write transaction: committed on normal exit, rolled back on error."""
        with self._errors(writing=True), self.engine.begin() as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection for reading (a transaction that is never written to)."""
        with self._errors(), self.engine.connect().execution_options(annotator_read=True) as conn:
            yield conn

    @contextmanager
    def _errors(self, *, writing: bool = False) -> Iterator[None]:
        # Database failures become the core's errors (after the rollback), so callers show a message, not a traceback.
        try:
            yield
        except OperationalError as exc:
            raise _unavailable(self, exc, writing=writing) from exc
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


    def schema_versions(self) -> list[int]:
        """The schema versions recorded in the database (empty when it has no annotator schema)."""
        with self.read() as conn:
            return applied_versions(conn)


def _unavailable(store: Store, exc: Exception, *, writing: bool = False) -> StoreUnavailable:
    # Only a failed write transaction lost something the user asked to store; a failed read says just the outage.
    lost = "; your last unsaved change was not stored —" if writing else ";"
    return StoreUnavailable(f"the database at {display_url(store.url)} is not available ({_first_line(exc)}){lost} "
                            "try again when it is back")


def display_url(url: str) -> str:
    """``url`` as shown to people: the password replaced by ``***``."""
    return make_url(url).render_as_string(hide_password=True)


def checked_url(url: str, source: str | None = None) -> str:
    """``url`` when annotator can open a store there; InputError naming ``source`` (e.g. ``--db``) otherwise:
    not a URL, another kind of database, or a driver that is not installed. The message never repeats the
    URL itself, which may hold a password."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError, TypeError):
        raise InputError(f"not a database URL; use {URL_FORMS}", source) from None
    backend = parsed.get_backend_name()
    if backend not in SUPPORTED_BACKENDS:
        hint = " (a PostgreSQL URL starts with postgresql:// or postgresql+psycopg://)" if backend.startswith("postgres") else ""
        raise InputError(f"annotator stores its data in SQLite or PostgreSQL, not {backend!r}{hint}; use {URL_FORMS}", source)
    try:
        parsed.get_dialect().import_dbapi()
    except Exception as exc:  # an unknown driver name or a driver that is not installed
        raise InputError(f"the database driver {parsed.drivername!r} is not available here ({_first_line(exc)}); "
                         f"use {URL_FORMS}", source) from None
    return url


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


def open_store(url: str | None = None, *, migrate: bool = True) -> Store:
    """Open (and by default migrate, creating the database if needed) the store at ``url``; default from the
    settings. InputError for a URL annotator cannot open (see :func:`checked_url`)."""
    url = checked_url(url if url is not None else _settings_url())
    store = Store(url)
    if migrate:
        with _not_a_database(store):
            store.migrate()
    return store


def open_existing_store(url: str | None = None) -> Store:
    """The store at ``url`` (default from the settings) as it is: no file, folder or table is created and
    nothing is migrated, for commands that only read (or that need data a store must already hold).

    NotFound when there is no annotator database there; InputError when its schema is not this program's
    (older: ``annotator init`` brings it up to date) or the file is not a database.
    """
    url = checked_url(url if url is not None else _settings_url())
    path = sqlite_file(url)
    if path is None:
        store = Store(url, create_folder=False)
        with _not_a_database(store):
            _require_current_schema(store.schema_versions(), url)
        return store
    if not path.is_file():
        raise NotFound(f"there is no database at {path}; nothing was created (`annotator init` or an import creates one)")
    try:  # read-only, before any connection that could write to the file (even its journal mode)
        versions = files.recorded_versions(path) or []
    except files.OperationalError as exc:  # locked for longer than the busy timeout, or not readable
        raise StoreUnavailable(f"the database at {path} is not available ({exc}); try again when it is back") from exc
    except files.DatabaseError as exc:
        raise InputError(f"not a database annotator can open ({exc})", str(path)) from exc
    _require_current_schema(versions, url)
    return Store(url, create_folder=False)


def _require_current_schema(versions: list[int], url: str) -> None:
    newest = max(v for v, _, _ in MIGRATIONS)
    if not versions:
        raise NotFound(f"there is no annotator database at {display_url(url)} (no schema recorded); nothing was "
                       "created (`annotator init` or an import creates one)")
    if versions[-1] < newest:
        raise InputError(f"the database at {display_url(url)} has schema version {versions[-1]}, older than this "
                         f"program's ({newest}); run `annotator init` (or start the app) to bring it up to date")
    if versions[-1] > newest:
        raise InputError(f"the database at {display_url(url)} has schema version {versions[-1]}, newer than this "
                         f"program's ({newest}); upgrade annotator")


def _settings_url() -> str:
    from ..config import load_settings
    return load_settings().database_url


@contextmanager
def _not_a_database(store: Store) -> Iterator[None]:
    """A file that is not a SQLite database → InputError naming it (after closing the store's connections)."""
    try:
        yield
    except DatabaseError as exc:
        store.dispose()
        if isinstance(exc, (OperationalError, IntegrityError, DataError)):
            raise
        raise InputError(f"not a database annotator can open ({_first_line(exc)})", display_url(store.url)) from exc
    except BaseException:
        store.dispose()
        raise


def retrying(func, *, attempts: int = 5, delay: float = 0.05):
    """Run ``func()`` again after a transient conflict (unique race, serialisation failure)."""
    for attempt in range(attempts):
        try:
            return func()
        except IntegrityError:
            if attempt == attempts - 1:
                raise
            time.sleep(delay * (attempt + 1))
