"""Command-line runs forked from the test process's zygote (tests/zygote.py ``run_annotator``) answer as a fresh
``python -m annotator`` does: the same exit code, standard output and standard error, with their own environment,
working directory and standard input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import zygote

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not zygote.forking(), reason="commands are started as fresh interpreters")


def _fresh(args, *, cwd, env, input=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "annotator", *args], cwd=cwd, env=env, input=input,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def _same(args, *, cwd=ROOT, env=None, input=None) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env or {})}
    forked = zygote.run_annotator(args, cwd=cwd, env=env, input=input)
    fresh = _fresh(args, cwd=cwd, env=env, input=input)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    return forked


def test_help_and_a_usage_error_are_a_fresh_interpreters():
    assert _same(["--help"]).returncode == 0
    usage = _same(["tables", "--no-such-option"])
    assert usage.returncode == 2 and "usage: annotator" in usage.stderr


def test_environment_working_directory_and_standard_input_are_the_runs_own(tmp_path):
    bad_url = _same(["projects"], env={"ANNOTATOR_DATABASE_URL": "mysql://x@y/z"})
    assert bad_url.returncode == 2 and "ANNOTATOR_DATABASE_URL" in bad_url.stderr
    # a plain path is a SQLite file relative to the working directory, here tmp_path
    made = zygote.run_annotator(["--db", "here.db", "users", "add", "ann1", "--role", "annotator",
                                 "--password-stdin"], cwd=tmp_path, input="Correct-Horse-9\n")
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "here.db").is_file() and not (ROOT / "here.db").exists()
    listed = _same(["--db", "here.db", "users", "list"], cwd=tmp_path)
    assert listed.returncode == 0 and "ann1" in listed.stdout


def test_a_run_past_its_timeout_is_killed(tmp_path):
    # The import reads a named pipe no one writes to: it waits there however fast the machine is (a command that
    # only failed quickly ran inside a 0.01 s limit on an idle machine, and nothing was killed).
    os.mkfifo(tmp_path / "items.jsonl")
    with pytest.raises(subprocess.TimeoutExpired):
        zygote.run_annotator(["--db", "t.db", "import", "jsonl", "--project", "p", "items.jsonl"],
                             cwd=tmp_path, timeout=0.5)
