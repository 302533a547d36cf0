"""`make run` says what it installs, step by step, and prints no warning of ours: the package metadata is what
today's setuptools asks for (an SPDX licence string, not the table it warns about)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_licence_is_an_spdx_string_for_a_setuptools_that_reads_one():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["license"] == "MIT"  # a table ({text = ...}) is deprecated: a warning on every install
    assert "setuptools>=77" in meta["build-system"]["requires"]  # the first to read the string


def test_make_run_names_each_install_step_and_shows_the_long_one(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    plan = subprocess.run(["make", "--no-print-directory", "-n", "run", f"VENV={tmp_path / 'venv'}", "PORT=8600"],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    said = [line for line in plan if line.startswith("echo")]
    assert [s for s in said if "[1/3]" in s or "[2/3]" in s or "[3/3]" in s] == said[1:4], plan
    assert "make run PORT=8600" in said[-1] and "Ctrl+C" in said[-1]
    app_packages = next(line for line in plan if "-r requirements.txt" in line)
    assert " -q" not in app_packages  # pip names each package of the long step
    editable = next(line for line in plan if "--no-deps -e ." in line)
    assert 'PYTHONWARNINGS="ignore:Editable installation"' in editable
    assert plan[-1].endswith("streamlit run serve.py --server.port 8600")


@pytest.mark.slow  # builds the package with the newest setuptools pip finds, as the install does
def test_the_package_builds_without_a_warning(tmp_path):
    source = tmp_path / "src"
    (source / "annotator").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copy(ROOT / "README.md", source)
    (source / "annotator" / "__init__.py").write_text("", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "wheel"),
                          str(source)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    said = out.stdout + out.stderr
    assert "deprecat" not in said.lower() and "BuildBackendWarning" not in said, said
