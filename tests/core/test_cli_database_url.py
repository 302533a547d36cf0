"""Which database the CLI opens, and what it says when it cannot.

A URL that is not one, or names another kind of database, gets one line and exit code 2. Commands that only
read never create a folder, a file or a table: with no database at the path they say so. Only a failed
write mentions an unsaved change.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.errors import StoreUnavailable
from annotator.store import Store, open_store
from tests.apptest_helpers import seed_project
from tests.zygote import run_annotator

ROOT = Path(__file__).resolve().parents[2]
UNSAVED = "unsaved change"


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m annotator *args`` as a separate process (forked: tests/zygote.py)."""
    return run_annotator(list(args), cwd=ROOT, env={**os.environ, **(env or {})})


def _in_process(capsys, *args: str) -> subprocess.CompletedProcess:
    """The same command line called in this process (the messages are the point, not the process boundary, which
    the tests below that use :func:`_cli` cross)."""
    try:
        code = main(list(args))
    except SystemExit as stop:
        code = stop.code
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["annotator", *args], code, out.out, out.err)


def _one_line_error(proc: subprocess.CompletedProcess, code: int = 2) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    return proc.stderr.strip()


@pytest.mark.parametrize("url, words", [
    ("not a url://x", "not a database URL"),  # a value without "://" is a SQLite file's path (below)
    ("mysql://reader:Secr3tPw@db.example/annot", "not 'mysql'"),
    ("postgres://reader@db.example/annot", "postgresql://"),
    ("postgresql+psycopg2://reader@db.example/annot", "driver 'postgresql+psycopg2' is not available"),
])
def test_a_url_annotator_cannot_open_is_one_line(url, words, capsys):
    msg = _one_line_error(_in_process(capsys, "--db", url, "projects"))
    assert msg.startswith("annotator: error: --db: ") and words in msg and "sqlite:///" in msg
    assert "Secr3tPw" not in msg


def test_the_environment_variable_is_named_when_it_is_the_bad_one():
    msg = _one_line_error(_cli("projects", env={"ANNOTATOR_DATABASE_URL": "mysql://x@y/z"}))
    assert "ANNOTATOR_DATABASE_URL: " in msg


READ_ONLY = [
    ["projects"],
    ["users", "list"],
    ["agreement", "--project", "p"],
    ["disagreements", "--project", "p"],
    ["tables", "--project", "p", "--layer", "adjudicated"],
    ["export", "--project", "p", "--format", "jsonl"],
    ["corrections", "list", "--project", "p"],
    ["human-scores", "list", "--project", "p"],
]


@pytest.mark.parametrize("args", READ_ONLY, ids=[" ".join(a) for a in READ_ONLY])
def test_read_only_commands_create_nothing_where_there_is_no_database(tmp_path, args, capsys):
    target = tmp_path / "nonexistent" / "deeper" / "x.db"
    msg = _one_line_error(_in_process(capsys, "--db", f"sqlite:///{target}", *args))
    assert f"there is no database at {target}" in msg and UNSAVED not in msg
    assert not (tmp_path / "nonexistent").exists()


def test_creating_commands_still_create_the_store(tmp_path):
    target = tmp_path / "new" / "x.db"
    assert _cli("--db", f"sqlite:///{target}", "init").returncode == 0
    assert target.is_file()
    proc = _cli("--db", f"sqlite:///{target}", "projects")
    assert proc.returncode == 0 and "no projects" in proc.stdout


def test_an_empty_or_foreign_file_is_not_turned_into_a_store(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    msg = _one_line_error(_cli("--db", f"sqlite:///{empty}", "projects"))
    assert "there is no annotator database" in msg and empty.read_bytes() == b""
    text = tmp_path / "notes.db"
    text.write_text("these are my notes, not a database\n" * 50)
    before = text.read_bytes()
    msg = _one_line_error(_cli("--db", f"sqlite:///{text}", "users", "list"))
    assert str(text) in msg and "not a database" in msg and text.read_bytes() == before


def test_an_older_schema_is_reported_not_migrated_by_a_read(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = open_store(url)
    seed_project(store, "p", n_items=2)
    store.dispose()
    conn = sqlite3.connect(tmp_path / "old.db")
    newest = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0]
    conn.execute("DELETE FROM schema_migrations WHERE version = ?", (newest,))  # as if the last migration were new
    conn.commit()
    conn.close()
    digest = hashlib.sha256((tmp_path / "old.db").read_bytes()).digest()
    msg = _one_line_error(_cli("--db", url, "projects"))
    assert f"schema version {newest - 1}, older than this program's ({newest})" in msg and "annotator init" in msg
    assert hashlib.sha256((tmp_path / "old.db").read_bytes()).digest() == digest
    assert _cli("--db", url, "init").returncode == 0
    proc = _cli("--db", url, "projects")
    assert proc.returncode == 0 and "p: 2 items" in proc.stdout


def test_only_a_failed_write_speaks_of_an_unsaved_change():
    down = Store("postgresql+psycopg://postgres@127.0.0.1:1/test")  # nothing listens on port 1
    try:
        with pytest.raises(StoreUnavailable) as read_err:
            with down.read() as conn:
                conn.exec_driver_sql("SELECT 1")
        with pytest.raises(StoreUnavailable) as write_err:
            with down.transaction() as conn:
                conn.exec_driver_sql("SELECT 1")
    finally:
        down.dispose()
    assert "is not available" in str(read_err.value) and "try again" in str(read_err.value)
    assert UNSAVED not in str(read_err.value)
    assert UNSAVED in str(write_err.value) and "try again" in str(write_err.value)
    msg = _one_line_error(_cli("--db", "postgresql+psycopg://postgres@127.0.0.1:1/test", "projects"), code=4)
    assert "is not available" in msg and UNSAVED not in msg


def test_a_plain_path_is_a_sqlite_file_relative_to_the_working_directory(tmp_path):
    """Issue 24 item 23: ``--db my.db`` (and ANNOTATOR_DATABASE_URL=my.db) open the SQLite file there."""
    store = open_store(f"sqlite:///{tmp_path / 'my.db'}")
    seed_project(store, "plain", n_items=2)
    store.dispose()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ANNOTATOR_DATABASE_URL", None)
    for args, extra in ((["--db", "my.db"], {}), ([], {"ANNOTATOR_DATABASE_URL": "my.db"})):
        proc = run_annotator([*args, "projects"], cwd=tmp_path, env={**env, **extra})
        assert proc.returncode == 0, proc.stderr
        assert "plain" in proc.stdout, proc.stdout
