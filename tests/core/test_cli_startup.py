"""A command imports only what it needs: ``annotator --version`` and ``annotator projects`` start without pandas,
NumPy, Streamlit, scikit-learn, Altair or the metrics (they cost 1.5 s of CPU and 155 MB before), because the
command line imports only the module of the command it runs (annotator.commands.COMMANDS). The CPU time itself is
a benchmark (bench/cli_startup_bench.py), not a timed test."""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from annotator import __version__, commands
from annotator.cli import build_parser, command_modules

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "numpy", "streamlit", "sklearn", "altair", "scipy", "PIL", "annotator.metrics",
         "annotator.exchange", "sqlalchemy.dialects.postgresql")


def _fresh_run(*argv: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``python -X importtime -m annotator ARGV`` as a fresh interpreter (not forked from a warm one); the
    modules it imported, from the import-time lines on standard error."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "annotator", *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    imported = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return proc, imported


def _heavy(imported: set[str]) -> list[str]:
    return sorted(m for m in imported if m.startswith(HEAVY))


def test_projects_imports_neither_pandas_nor_streamlit(tmp_path):
    db = tmp_path / "a.db"
    from annotator.cli import main
    assert main(["--db", str(db), "init"]) == 0
    proc, imported = _fresh_run("--db", str(db), "projects")
    assert proc.returncode == 0 and "no projects" in proc.stdout, proc.stderr[-2000:]
    assert "annotator.store.projects" in imported  # the probe sees the command's own imports
    assert _heavy(imported) == []


def test_version_imports_no_store():
    proc, imported = _fresh_run("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"annotator {__version__}"
    assert _heavy(imported) == [] and not any(m.startswith(("sqlalchemy", "annotator.store")) for m in imported)


def test_help_still_lists_every_command():
    proc, _ = _fresh_run("--help")
    assert proc.returncode == 0
    for name in commands.COMMANDS:
        assert name in proc.stdout


def _registered(module: str) -> set[str]:
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(f"annotator.commands.{module}").register(sub)
    return set(sub.choices)


@pytest.mark.parametrize("module", command_modules())
def test_the_table_names_every_command_of_each_module(module):
    if not hasattr(importlib.import_module(f"annotator.commands.{module}"), "register"):
        assert module not in commands.COMMANDS.values()
        return
    assert _registered(module) == {name for name, m in commands.COMMANDS.items() if m == module}


@pytest.mark.parametrize(("argv", "modules"), [
    (["projects"], ("projects",)),
    (["--db", "x.db", "projects", "--json"], ("projects",)),
    (["--db=x.db", "import", "lines", "--help"], ("io",)),
    (["--db", "projects", "users", "list"], ("users",)),  # --db's value is not the command
    (["--version"], ()),
    (["--help"], None), ([], None), (["no-such-command"], None), (["--bogus", "projects"], None),
])
def test_modules_for(argv, modules):
    assert commands.modules_for(argv) == modules


def test_a_partial_parser_parses_as_the_full_one():
    argv = ["--db", "x.db", "agreement", "--project", "P", "--annotator", "a", "--annotator", "b", "--json"]
    full, partial = build_parser().parse_args(argv), build_parser(commands.modules_for(argv)).parse_args(argv)
    assert vars(full) == vars(partial)
