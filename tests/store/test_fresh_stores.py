"""The tests' fresh stores (tests/fresh_stores.py): a copy of the SQLite template and a PostgreSQL schema handed
to a second test are each a freshly migrated store's equal, and a schema a test changed is dropped instead."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import text

from annotator.accounts.auth import add_user
from annotator.store import open_store
from annotator.store.projects import table_counts
from tests.apptest_helpers import seed_project
from tests.conftest import PG_URL, SKIP_PG
from tests.fresh_stores import SchemaPool, SqliteTemplate



def on_postgresql(test):
    """Mark a test as a PostgreSQL one (make check leaves it out)."""
    return pytest.mark.postgresql(pytest.mark.skipif(SKIP_PG, reason="ANNOTATOR_TEST_SKIP_PG=1")(test))


def _sqlite_picture(path) -> dict:
    with sqlite3.connect(path) as conn:
        return {"objects": sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")),
                "migrations": conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall(),
                "pragmas": [conn.execute(f"PRAGMA {p}").fetchone() for p in ("journal_mode", "user_version",
                                                                            "page_size", "auto_vacuum", "encoding")]}


def test_a_copy_of_the_sqlite_template_is_a_freshly_migrated_store(tmp_path):
    fresh = open_store(f"sqlite:///{tmp_path / 'fresh.db'}")
    template = SqliteTemplate()
    copy = template.copy_to(tmp_path / "copy.db", open_store)
    fresh_counts = table_counts(fresh)
    assert table_counts(copy) == fresh_counts
    ids = _first_ids(copy)
    assert ids == _first_ids(fresh)
    fresh.dispose()
    copy.dispose()
    assert _sqlite_picture(tmp_path / "copy.db") == _sqlite_picture(tmp_path / "fresh.db")
    second = template.copy_to(tmp_path / "second.db", open_store)  # what the first copy's test wrote stays there
    assert table_counts(second) == fresh_counts
    assert _first_ids(second) == ids
    second.dispose()


@pytest.fixture
def pool():
    if SKIP_PG:
        pytest.skip("ANNOTATOR_TEST_SKIP_PG=1")
    own = SchemaPool(PG_URL)
    yield own
    own.close()


def _exists(pool, schema: str) -> bool:
    with pool.admin().connect() as conn:
        return conn.execute(text("SELECT count(*) FROM pg_namespace WHERE nspname = :s"), {"s": schema}).scalar() == 1


def _first_ids(store) -> tuple[int, int]:
    seed_project(store, "p", n_items=2)
    add_user(store, "ann1", "annotator")
    with store.read() as conn:
        return (conn.execute(text("SELECT min(id) FROM projects")).scalar(),
                conn.execute(text("SELECT min(id) FROM users")).scalar())


@on_postgresql
def test_a_reused_schema_is_empty_restarts_its_ids_and_has_a_fresh_stores_shape(pool):
    first, schema = pool.take(open_store)
    fresh_counts = table_counts(first)
    fresh_ids = _first_ids(first)
    assert any(table_counts(first)[t] for t in ("projects", "items", "captions", "users"))
    first.dispose()
    assert pool.give_back(schema)

    again, renamed = pool.take(open_store)
    assert pool.reused == 1 and pool.made == 1
    # the same schema under a new name: the store's URL is one no earlier test used (caches are keyed by it)
    assert renamed != schema and not _exists(pool, schema) and again.url != first.url
    assert table_counts(again) == fresh_counts
    assert _first_ids(again) == fresh_ids  # the sequences start over, as in a new store
    again.dispose()

    other, new = pool.take(open_store)  # the pool is empty now: a new schema, migrated from nothing
    assert new != renamed and pool.made == 2
    with pool.admin().begin() as conn:
        assert pool.shape(conn, new) == pool.shape(conn, renamed)
    other.dispose()
    pool.drop(new)
    pool.drop(renamed)


@on_postgresql
@pytest.mark.parametrize("change", [
    "ALTER TABLE users ADD COLUMN planted INTEGER",
    "ALTER TABLE users ALTER COLUMN name DROP NOT NULL",
    "CREATE INDEX planted ON captions (text)",
    "DROP TABLE human_scores",
    "DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)",
])
def test_a_schema_whose_shape_a_test_changed_is_dropped_not_reused(pool, change):
    store, schema = pool.take(open_store)
    with store.transaction() as conn:
        conn.execute(text(change))
    store.dispose()
    assert not pool.give_back(schema)
    assert not _exists(pool, schema) and pool.dropped == 1
    replacement, new = pool.take(open_store)
    assert new != schema
    replacement.dispose()
    assert pool.give_back(new)
