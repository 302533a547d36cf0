"""The suite's own layout and tooling: test folders that mirror the house, markers declared once, Hypothesis
profiles, the xdist groups (two lanes and Java), and the make targets that time themselves."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from hypothesis import settings

from tests.property_helpers import BASE_EXAMPLES, examples

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
FOLDERS = {"core", "store", "io", "ui", "browser", "reliability", "fidelity"}


def test_every_test_file_sits_in_a_folder_of_the_house():
    flat = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert flat == [], f"test files directly in tests/: {flat}"
    elsewhere = sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("test_*.py")
                       if p.relative_to(TESTS).parts[0] not in FOLDERS and p.relative_to(TESTS).parts[0] != "fixtures")
    assert elsewhere == []
    for folder in FOLDERS:
        assert list((TESTS / folder).rglob("test_*.py")), f"tests/{folder}/ holds no tests"


def test_no_two_test_files_share_a_name():
    """pytest imports a test file by its name alone (the default import mode, with no __init__.py in tests/), so two
    files of one name in two folders (tests/ui/<screen>/ mirrors annotator/ui/) would clash: keep the screen in it."""
    names: dict[str, list[str]] = {}
    for path in TESTS.rglob("*.py"):
        if path.name.startswith("test_") or path.name.endswith("_helpers.py"):
            names.setdefault(path.name, []).append(str(path.relative_to(TESTS)))
    assert {n: p for n, p in names.items() if len(p) > 1} == {}


def test_markers_are_declared_once_in_pyproject():
    declared = {m.split(":")[0] for m in
                tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]}
    assert {"slow", "browser", "serial", "postgresql"} <= declared
    for conftest in TESTS.rglob("conftest.py"):
        assert "addinivalue_line" not in conftest.read_text(), f"{conftest} declares markers again"
    builtin = {"parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings", "timeout", "xdist_group"}
    used = set()
    for path in TESTS.rglob("*.py"):
        used |= set(re.findall(r"pytest\.mark\.(\w+)", path.read_text(encoding="utf-8")))
    assert used - builtin <= declared, f"undeclared markers: {used - builtin - declared}"


def test_the_deep_profile_runs_ten_times_the_stated_examples():
    current = settings._current_profile
    try:
        settings.load_profile("default")
        assert settings.default.max_examples == BASE_EXAMPLES
        assert examples(300) == 300 and examples(60) == 60
        settings.load_profile("deep")
        assert examples(300) == 3000 and examples(60) == 600
    finally:
        settings.load_profile(current)


def test_browser_and_serial_tests_run_in_two_lanes_one_test_at_a_time(tmp_path):
    """Three workers: the browser tests all report one worker and do not overlap in time; so do the serial tests
    (a browser test marked serial among them), on another worker; the others spread. Tests marked ``java`` all run
    on one worker too, a ``cold_java`` one first. The lanes run at the run's priority, the rest at a lower one."""
    log = tmp_path / "log"
    (tmp_path / "test_group.py").write_text(f'''
import os, time
import pytest

def _run(tag):
    start = time.time()
    time.sleep(0.3)
    with open({str(log)!r}, "a") as fh:
        fh.write(f"{{tag}} {{os.environ['PYTEST_XDIST_WORKER']}} {{start}} {{time.time()}} "
                 f"{{os.getpriority(os.PRIO_PROCESS, 0)}}\\n")

@pytest.mark.browser
@pytest.mark.parametrize("n", range(3))
def test_b(n): _run("browser")

@pytest.mark.serial
def test_s1(): _run("serial")

@pytest.mark.serial
def test_s2(): _run("serial")

@pytest.mark.browser
@pytest.mark.serial
def test_browser_and_serial(): _run("serial")

@pytest.mark.parametrize("n", range(6))
def test_free(n): _run("free")

@pytest.mark.java
@pytest.mark.parametrize("n", range(3))
def test_java(n): _run("java")

@pytest.mark.java
@pytest.mark.cold_java
def test_java_cold(): _run("java-cold")
''')
    # The suite's grouping, as tests/conftest.py calls it.
    (tmp_path / "conftest.py").write_text(f'''
import importlib.util
spec = importlib.util.spec_from_file_location("suite_groups", {str(TESTS / "xdist_groups.py")!r})
groups = importlib.util.module_from_spec(spec)
spec.loader.exec_module(groups)

def pytest_collection_modifyitems(config, items):
    groups.cold_java_first(items)
    groups.group_serial_tests(config, items)

def pytest_runtest_protocol(item, nextitem):
    groups.yield_to_the_lanes(item)
''')
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    browser\n    serial\n    java\n    cold_java\n")
    # Only pytest-xdist among the installed plugins: the workers start in a second or two.
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "xdist.plugin", "-p", "no:cacheprovider",
                          "-n", "3", "--dist", "loadgroup", "--strict-markers", str(tmp_path / "test_group.py")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [line.split() for line in log.read_text().splitlines()]
    # The lanes run at the run's priority, every other test at a lower one (tests/xdist_groups.py).
    base = os.getpriority(os.PRIO_PROCESS, 0)
    assert {int(n) for tag, _, _, _, n in rows if tag in ("browser", "serial")} == {base}, rows
    assert {int(n) for tag, _, _, _, n in rows if tag not in ("browser", "serial")} == {min(base + 10, 19)}, rows
    rows = [row[:4] for row in rows]
    lanes = {}
    for lane in ("browser", "serial"):
        runs = sorted((float(a), float(b), w) for tag, w, a, b in rows if tag == lane)
        assert len(runs) == 3 and len({w for _, _, w in runs}) == 1, (lane, runs)
        assert all(runs[i][1] <= runs[i + 1][0] for i in range(2)), f"the {lane} lane's tests overlapped: {runs}"
        lanes[lane] = runs[0][2]
    assert lanes["browser"] != lanes["serial"], "the two lanes ran on one worker"
    assert len({w for tag, w, _, _ in rows if tag == "free"}) >= 2
    java = sorted((float(a), tag, w) for tag, w, a, _ in rows if tag.startswith("java"))
    assert len({w for _, _, w in java}) == 1, rows  # Java's processes start on one worker
    assert [tag for _, tag, _ in java] == ["java-cold"] + ["java"] * 3, java  # the cold start first, though last


def test_make_test_and_make_check_time_themselves():
    def plan(target):
        return subprocess.run(["make", "-n", "-o", "install-dev", "-o", "system-deps", "-o", "postgres", target],
                              cwd=ROOT, capture_output=True, text=True, check=True).stdout
    test = plan("test")
    assert "scripts/timed.sh" in test and "--dist loadgroup" in test and "--durations=15" in test and " -n " in test
    check = plan("check")
    assert '-m "not browser and not serial and not postgresql and not slow and not java"' in check
    assert "tests/core tests/store tests/io tests/ui" in check
    assert "tests/browser" not in check and "tests/reliability" not in check and "tests/fidelity" not in check
    # The Java tests the inner loop leaves out, on their own (one process: METEOR starts once).
    java = plan("check-java")
    assert '-m "not browser and not serial and not postgresql and not slow and java"' in java and " -n " not in java
    done = subprocess.run(["bash", str(ROOT / "scripts" / "timed.sh"), "the label", "sh", "-c", "echo hi; exit 3"],
                          capture_output=True, text=True)
    assert done.returncode == 3
    assert done.stdout.splitlines()[0] == "hi"
    assert re.fullmatch(r"the label: wall time 0m 0\ds \(exit status 3\)", done.stdout.splitlines()[1])
