"""Fresh stores for the tests, made for less than migrating a new database each time.

SQLite (:class:`SqliteTemplate`): one database per test process is migrated once; each test gets a copy of the
file. Migrating a new file costs about 30 ms of CPU, and make check alone makes over a thousand.

PostgreSQL (:class:`SchemaPool`): one schema of database ``test`` per test, reused when the test leaves its shape
alone. Making a store from nothing (a schema, then every migration) and dropping it afterwards costs about 0.3 s of CPU,
half of it in the server; the suite makes hundreds. So a test process keeps the schemas its tests are done with:
one whose tables, columns, defaults, indexes, constraints and recorded migrations are still exactly those of a
freshly migrated store is emptied (one ``TRUNCATE … RESTART IDENTITY``, which also restarts the id sequences),
renamed (so that no cache keyed by a store's URL can answer the next test with an earlier one's data) and handed
to the next test; any other (a test changed the schema, or a connection still holds a lock) is dropped, and
the next test gets a new one.

tests/store/test_fresh_stores.py checks that both give a fresh store's equal.
"""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text

# One line per relation (kind, columns with types, nullability and defaults), index, constraint, function and
# recorded migration; without the schema's name, two schemas of the same shape give the same lines.
_SHAPE = text("""
SELECT 'relation ' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(string_agg(
           a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text || ' '
           || coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY a.attnum), '')
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE n.nspname = :schema
GROUP BY c.relname, c.relkind
UNION ALL
SELECT 'index ' || pg_get_indexdef(i.indexrelid)
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = :schema
UNION ALL
SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(co.oid)
FROM pg_constraint co JOIN pg_namespace n ON n.oid = co.connamespace
WHERE n.nspname = :schema
UNION ALL
SELECT 'function ' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = :schema
UNION ALL
SELECT 'migration ' || version::text FROM schema_migrations
""")


class SqliteTemplate:
    """A migrated SQLite database made once; :meth:`copy_to` writes a copy of it where a test wants its store."""

    def __init__(self):
        self._path: Path | None = None

    def path(self, open_store) -> Path:
        """The template file (made on first use, with ``open_store``, and removed at the end of the process)."""
        if self._path is None:
            folder = Path(tempfile.mkdtemp(prefix="annotator-template-"))
            atexit.register(shutil.rmtree, folder, True)
            path = folder / "annotator.db"
            open_store(f"sqlite:///{path}").dispose()
            with sqlite3.connect(path) as conn:  # everything in the main file: a copy of it alone is the database
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._path = path
        return self._path

    def copy_to(self, path: Path, open_store):
        """A store on a copy of the template at ``path`` (``open_store`` finds nothing to migrate)."""
        shutil.copyfile(self.path(open_store), path)
        return open_store(f"sqlite:///{path}")


def schema_url(url: str, schema: str) -> str:
    """``url`` with its search path set to ``schema``."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


class SchemaPool:
    """Fresh stores on PostgreSQL for one test process: :meth:`take` gives (store, schema), :meth:`give_back`
    empties the schema for the next test or drops it."""

    def __init__(self, url: str):
        self.url = url
        self._admin = None
        self._free: list[str] = []
        self._made: set[str] = set()
        self._fresh_shape: list[str] | None = None
        self.made = self.reused = self.dropped = 0
        atexit.register(self.close)

    def admin(self):
        if self._admin is None:
            self._admin = create_engine(self.url, pool_size=1, max_overflow=2)
        return self._admin

    def take(self, open_store):
        """A store on an empty, migrated schema: one given back earlier, or a new one (``open_store(url)``
        migrates it). Returns (store, schema name)."""
        if self._free:
            schema = self._free.pop()
            self.reused += 1
            return open_store(schema_url(self.url, schema)), schema
        store, schema = self.create(open_store)
        if self._fresh_shape is None:
            with self.admin().begin() as conn:
                self._fresh_shape = self.shape(conn, schema)
        return store, schema

    def create(self, open_store):
        """A store on a brand-new schema (``open_store(url)`` migrates it); returns (store, schema name). It is
        dropped by :meth:`drop`, or at the end of the process."""
        schema = f"t_{uuid.uuid4().hex[:12]}"
        with self.admin().begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        self._made.add(schema)
        self.made += 1
        return open_store(schema_url(self.url, schema)), schema

    @staticmethod
    def shape(conn, schema: str) -> list[str]:
        """The sorted lines describing ``schema``'s definition and recorded migrations (inside ``conn``'s
        transaction: it sets the search path for the rest of it)."""
        conn.execute(text(f'SET LOCAL search_path TO "{schema}"'))
        # pg_get_indexdef names the schema even when it is on the search path
        return sorted(line.replace(f'"{schema}".', "").replace(f"{schema}.", "")
                      for line in conn.execute(_SHAPE, {"schema": schema}).scalars())

    def give_back(self, schema: str) -> bool:
        """Empty ``schema`` for the next test if its shape is a fresh store's (True), else drop it (False).
        Every connection to it must be closed."""
        try:
            with self.admin().begin() as conn:
                conn.execute(text("SET LOCAL lock_timeout = '5s'"))
                if self.shape(conn, schema) != self._fresh_shape:
                    raise _Changed
                tables = conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = :schema "
                                           "AND tablename <> 'schema_migrations'"), {"schema": schema}).scalars()
                conn.execute(text("TRUNCATE " + ", ".join(f'"{t}"' for t in tables) + " RESTART IDENTITY CASCADE"))
                # A new name, so the next test's store has a URL no earlier test used: the app's caches (and
                # Streamlit's, which outlive an AppTest) are keyed by it.
                renamed = f"t_{uuid.uuid4().hex[:12]}"
                conn.execute(text(f'ALTER SCHEMA "{schema}" RENAME TO "{renamed}"'))
        except Exception:  # changed shape, a lock held past the timeout, or the server gone: start anew
            self.drop(schema)
            return False
        self._made.discard(schema)
        self._made.add(renamed)
        self._free.append(renamed)
        return True

    def drop(self, schema: str) -> None:
        """Drop ``schema`` and everything in it."""
        self.dropped += 1
        self._made.discard(schema)
        with self.admin().begin() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))

    def close(self) -> None:
        """Drop every schema this pool made that is still there (at the end of the test process)."""
        if self._admin is None:
            return
        try:
            self._free.clear()
            for schema in sorted(self._made):
                self.drop(schema)
        finally:
            self._admin.dispose()
            self._admin = None


class _Changed(Exception):
    """The schema a test gives back is no longer a fresh store's shape."""
