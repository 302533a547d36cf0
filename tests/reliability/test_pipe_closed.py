"""A command whose reader stops early (``annotator users changes | head -4``) ends quietly: no BrokenPipe
traceback on standard error, the first lines intact, exit code 141 (128 + SIGPIPE, as a shell reports it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from annotator.model import Role
from annotator.store.audit import record_account_change
from annotator.store.users import create_user
from tests.conftest import _fresh_sqlite_store

ROOT = Path(__file__).resolve().parents[2]
#: Far more than a pipe's buffer (64 KiB), so the command is still writing when ``head`` has gone.
ACCOUNTS = 3000


@pytest.fixture(scope="module")
def many_changes(tmp_path_factory):
    """One store for the module's tests, which only read it: its 3,000 accounts took 10–26 s to write per test."""
    with _fresh_sqlite_store(tmp_path_factory.mktemp("many_changes")) as store:
        with store.transaction() as conn:
            for i in range(ACCOUNTS):
                create_user(conn, f"person{i:04d}", Role.ANNOTATOR)
                record_account_change(conn, "root", "created", f"person{i:04d}", "role annotator, no password")
        yield store


def _piped(url: str, *argv: str) -> subprocess.CompletedProcess:
    command = " ".join([sys.executable, "-m", "annotator", "--db", url, *argv])
    # bash's PIPESTATUS gives the annotator's own exit code, not head's.
    script = f"{command} | head -4; echo \"annotator exit ${{PIPESTATUS[0]}}\" >&2"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("argv", [("users", "changes", "--limit", str(ACCOUNTS)), ("users", "list", "--json")])
def test_closed_pipe_ends_quietly(many_changes, argv):
    run = _piped(many_changes.url, *argv)
    assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, run.stderr
    assert run.stderr.strip() == "annotator exit 141"
    assert len(run.stdout.splitlines()) == 4


def test_a_reader_that_reads_everything_sees_exit_0(many_changes):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "annotator", "--db", many_changes.url, "users", "changes",
                          "--limit", str(ACCOUNTS)], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0 and run.stderr == ""
    assert sum("person" in line for line in run.stdout.splitlines()) == ACCOUNTS
