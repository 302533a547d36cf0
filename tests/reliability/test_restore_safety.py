"""`annotator restore` refuses a file that is not a sound annotator database, and then changes nothing.

Each bad file is restored through the CLI, as a real process, with and without ``--no-safety-copy``: exit code
2, one line naming the file and what is wrong (never the outage wording), and the live database byte for byte
as it was, still answering with its data. Good files of an older schema or another page size are migrated
and installed. The expected tables and columns of each schema version come from replaying the migrations;
that replay is checked against freshly migrated SQLite and PostgreSQL stores.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import inspect

import reliability_helpers as H
from annotator import backup as B
from annotator.store import open_store
from annotator.store import backup as files
from annotator.store.judgements import save_judgement
from tests.zygote import run_annotator

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def live(sqlite_store, tmp_path):
    """A live store with judgements (kept open, as a running app keeps it) and a good backup of it."""
    cids, uids = H.seed_project(sqlite_store, n_items=6, users=[("ann", "annotator"), ("bob", "annotator")])
    for c in cids:
        save_judgement(sqlite_store, c, uids["ann"], label="accurate")
        save_judgement(sqlite_store, c, uids["bob"], label="inaccurate", error_types=("object",))
    good = Path(B.backup(sqlite_store.url, tmp_path / "good.db").path)
    save_judgement(sqlite_store, cids[0], uids["ann"], label="inaccurate", error_types=("count",))  # after the backup
    return sqlite_store, good, tmp_path


def _db_file(store) -> Path:
    return Path(store.url.removeprefix("sqlite:///"))


def _fingerprint(store) -> tuple[bytes, bytes]:
    """The live database's bytes: its file and its write-ahead log (missing = empty)."""
    db = _db_file(store)
    wal = Path(str(db) + "-wal")
    return (hashlib.sha256(db.read_bytes()).digest(),
            hashlib.sha256(wal.read_bytes() if wal.exists() else b"").digest())


def _cli(url: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m annotator --db url *args`` as a process of its own (forked: tests/zygote.py)."""
    return run_annotator(["--db", url, *args], cwd=ROOT)


def _variant(good: Path, name: str, *statements: str) -> Path:
    out = good.with_name(name)
    shutil.copyfile(good, out)
    conn = sqlite3.connect(out)
    try:
        for sql in statements:
            conn.execute(sql)
        conn.commit()
    finally:
        conn.close()
    return out


def _only_schema_migrations(good: Path, name: str, versions: list[int]) -> Path:
    out = good.with_name(name)
    conn = sqlite3.connect(out)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR(200) NOT NULL, "
                 "applied_at DATETIME NOT NULL)")
    conn.executemany("INSERT INTO schema_migrations VALUES (?, 'x', '2026-01-01 00:00:00')", [(v,) for v in versions])
    conn.commit()
    conn.close()
    return out


def _corrupt(good: Path, name: str) -> Path:
    """The good backup with one b-tree page overwritten (the header and the first pages intact)."""
    data = bytearray(good.read_bytes())
    size = files.page_size(good)
    page = len(data) // size - 2
    data[page * size:(page + 1) * size] = bytes([0x5A]) * size
    out = good.with_name(name)
    out.write_bytes(bytes(data))
    return out


BAD_FILES = {
    # name: (builder, words the message must contain)
    "only-migrations.db": (lambda g: _only_schema_migrations(g, "only-migrations.db",
                                                             list(range(1, files.NEWEST_VERSION + 1))),
                           ["lacks table ", "table assignments", f"schema version {files.NEWEST_VERSION}"]),
    "only-migrations-empty.db": (lambda g: _only_schema_migrations(g, "only-migrations-empty.db", []),
                                 ["records no schema version"]),
    "table-dropped.db": (lambda g: _variant(g, "table-dropped.db", "DROP TABLE current_judgements"),
                         ["lacks table current_judgements"]),
    "column-dropped.db": (lambda g: _variant(g, "column-dropped.db", "ALTER TABLE judgements DROP COLUMN note"),
                          ["lacks column judgements.note"]),
    "corrupt.db": (lambda g: _corrupt(g, "corrupt.db"), ["malformed"]),
    "newer.db": (lambda g: _variant(g, "newer.db", "INSERT INTO schema_migrations VALUES (99, 'a later version', "
                                                   "'2030-01-01 00:00:00')"),
                 ["schema version 99", "newer than this program's"]),
    "version-gap.db": (lambda g: _variant(g, "version-gap.db", "DELETE FROM schema_migrations WHERE version = 2"),
                       [f"records schema version {files.NEWEST_VERSION} but not version 2"]),
    "no-migrations-table.db": (lambda g: _variant(g, "no-migrations-table.db", "DROP TABLE schema_migrations"),
                               ["no schema_migrations table"]),
}


@pytest.mark.parametrize("safety", ["safety-copy", "no-safety-copy"])
@pytest.mark.parametrize("bad", list(BAD_FILES))
def test_a_bad_backup_is_refused_and_the_live_database_stays_as_it_was(live, bad, safety):
    store, good, tmp_path = live
    build, words = BAD_FILES[bad]
    path = build(good)
    before_bytes = _fingerprint(store)
    before_rows = H.db_state(store)
    args = ["restore", str(path)] + (["--no-safety-copy"] if safety == "no-safety-copy" else [])
    proc = _cli(store.url, *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    message = proc.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert str(path) in message and ("nothing was restored" in message or "newer" in message), message
    for w in words:
        assert w in message, message
    assert "not available" not in message and "try again" not in message
    # Byte for byte as it was; nothing left beside it (no safety copy, no staging copy).
    assert _fingerprint(store) == before_bytes
    assert H.db_state(store) == before_rows
    assert sorted(p.name for p in _db_file(store).parent.iterdir() if p.name.startswith((".", "backups"))) == []
    # The store still answers, with its data.
    listed = _cli(store.url, "projects")
    assert listed.returncode == 0 and "load: 6 items" in listed.stdout, listed.stderr
    assert store.integrity_check() == "ok"
    caption, user, _ = next(iter(H.check_consistent(store)[1]))
    assert save_judgement(store, caption, user, label="accurate") >= 2


def test_a_backup_of_an_older_schema_is_migrated_before_it_is_installed(live):
    store, good, _ = live
    old = _variant(good, "version-1.db", "DROP INDEX ix_current_judgements_judgement", "DROP TABLE project_settings",
                   "DELETE FROM schema_migrations WHERE version > 1")
    assert B.check_backup_file(old).schema_version == 1
    proc = _cli(store.url, "restore", str(old), "--json")
    assert proc.returncode == 0, proc.stderr
    restored = open_store(store.url, migrate=False)
    with restored.engine.connect() as conn:
        found = inspect(conn)
        assert "project_settings" in found.get_table_names()
        assert "ix_current_judgements_judgement" in {i["name"] for i in found.get_indexes("current_judgements")}
    assert files.describe(_db_file(store)).schema_version == files.NEWEST_VERSION
    hist, cur = H.check_consistent(restored)
    assert len(hist) == 12 and {r.label for k, r in cur.items() if k[1] == 1} == {"accurate"}
    restored.dispose()


def test_a_backup_made_before_migration_4_is_accepted_although_the_replayed_users_table_differs(live):
    """Migration 1 creates tables from today's definitions, so the replayed users table of every version has
    migration 4's columns; a real version-3 backup lacks them (and has the old failure counters). It must be
    migrated and installed, not refused."""
    store, good, _ = live
    v3 = _variant(good, "version-3.db", "DROP INDEX uq_users_name_key", "DROP TABLE login_failures",
                  "ALTER TABLE users DROP COLUMN name_key", "ALTER TABLE users DROP COLUMN session_epoch",
                  "ALTER TABLE users DROP COLUMN active",
                  "ALTER TABLE users ADD COLUMN failed_logins INTEGER NOT NULL DEFAULT 0",
                  "ALTER TABLE users ADD COLUMN last_failed_at DATETIME",
                  "ALTER TABLE users ADD COLUMN locked_until DATETIME",
                  "DELETE FROM schema_migrations WHERE version > 3")
    assert "column users.name_key" in files.missing_from(files.shape_at(3), files.file_shape(v3))
    proc = _cli(store.url, "restore", str(v3))
    assert proc.returncode == 0, proc.stderr
    assert files.describe(_db_file(store)).schema_version == files.NEWEST_VERSION
    users = _cli(store.url, "users", "list", "--json")
    assert users.returncode == 0 and "ann" in users.stdout, users.stderr
    assert len(H.check_consistent(store)[0]) == 12


def test_a_backup_made_before_migration_21_gets_its_times_as_integers(live):
    """A version-20 backup keeps each current judgement's save time as a timestamp (updated_at) and its working
    time as a float (seconds); the replayed schema of version 20 has migration 21's integer columns as well. It is
    migrated and installed, each time kept."""
    store, good, _ = live
    query = "SELECT judgement_id, saved_us, hundredths FROM current_judgements"
    with closing(sqlite3.connect(good)) as conn:
        times = conn.execute(query).fetchall()
    from_revision = "(SELECT {} FROM judgements WHERE judgements.id = current_judgements.judgement_id)"
    v20 = _variant(good, "version-20.db",
                   "ALTER TABLE current_judgements ADD COLUMN updated_at DATETIME NOT NULL DEFAULT ''",
                   "ALTER TABLE current_judgements ADD COLUMN seconds REAL",
                   f"UPDATE current_judgements SET updated_at = {from_revision.format('created_at')}, "
                   f"seconds = {from_revision.format('seconds')}",
                   "ALTER TABLE current_judgements DROP COLUMN saved_us",
                   "ALTER TABLE current_judgements DROP COLUMN hundredths",
                   "DELETE FROM schema_migrations WHERE version > 20")
    assert files.missing_from(files.shape_at(20), files.file_shape(v20)) == [
        "column current_judgements.hundredths", "column current_judgements.saved_us"]
    proc = _cli(store.url, "restore", str(v20))
    assert proc.returncode == 0, proc.stderr
    assert files.describe(_db_file(store)).schema_version == files.NEWEST_VERSION
    with store.read() as conn:
        assert sorted(conn.exec_driver_sql(query).all()) == sorted(times) and all(h == 1 for _, _, h in times)
    assert len(H.check_consistent(store)[0]) == 12


def test_a_backup_with_another_page_size_is_installed_into_a_live_wal_database(live):
    store, good, _ = live
    small = _variant(good, "small-pages.db", "PRAGMA page_size=1024", "VACUUM")
    assert files.page_size(small) == 1024 and files.page_size(_db_file(store)) == 4096
    proc = _cli(store.url, "restore", str(small))
    assert proc.returncode == 0, proc.stderr
    assert files.page_size(_db_file(store)) == 4096 and store.integrity_check() == "ok"
    hist, _ = H.check_consistent(store)
    assert len(hist) == 12  # the backup's judgements, without the save made after it


def test_restore_into_a_missing_folder_creates_nothing_when_refused(live):
    store, good, tmp_path = live
    bad = BAD_FILES["table-dropped.db"][0](good)
    target = tmp_path / "not-yet" / "annotator.db"
    proc = _cli(f"sqlite:///{target}", "restore", str(bad))
    assert proc.returncode == 2 and not target.parent.exists()
    proc = _cli(f"sqlite:///{target}", "restore", str(good))
    assert proc.returncode == 0 and B.check_backup_file(target).judgements == 12


def test_the_schema_of_each_version_is_replayed_from_the_migrations(store):
    newest = files.shape_at(files.NEWEST_VERSION)
    with store.engine.connect() as conn:
        found = inspect(conn)
        actual = {t: frozenset(c["name"] for c in found.get_columns(t)) for t in found.get_table_names()}
    assert actual == newest  # the replay is what a migrated store has, on SQLite and PostgreSQL
    assert "project_settings" not in files.shape_at(1) and "project_settings" in files.shape_at(2)
    assert "table project_settings" in files.missing_from(newest, files.shape_at(1))
    # A migration that adds a table shows in the replay of the versions before it; one that adds a column to an
    # existing table (4, 7, 9) does not, since migration 1 creates today's tables.
    later = ["table judge_answers", "table judge_outputs", "table judges",  # migrations 17-19
             "table queue_tallies"]  # migration 20
    assert files.missing_from(newest, files.shape_at(7)) == ["table account_changes", "table drafts", *later]
    assert files.missing_from(newest, files.shape_at(9)) == ["table drafts", *later]
    assert files.missing_from(newest, files.shape_at(16)) == later
    assert files.missing_from(newest, files.shape_at(19)) == ["table queue_tallies"]
