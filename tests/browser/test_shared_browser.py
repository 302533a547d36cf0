"""The Chromium the browser tests share is stopped when a worker goes on to other tests: while Playwright's
synchronous API is open it keeps an event loop running in the main thread, and a test after it that runs asyncio
itself failed (seen when a lane's worker went on to the rest of the suite)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


def test_a_test_after_the_browser_tests_runs_its_own_event_loop(tmp_path):
    # The suite's fixture and hook, in a run of their own: two browser tests, then one that runs asyncio, then a
    # browser test again (the shared Chromium starts anew).
    (tmp_path / "conftest.py").write_text(f'''
import sys, types
tests = types.ModuleType("tests")  # the suite's folder, not a "tests" package some library installs
tests.__path__ = [{str(ROOT / "tests")!r}]
sys.modules["tests"] = tests
pytest_plugins = ["tests.browser.conftest"]  # its fixtures and hooks
''')
    (tmp_path / "test_order.py").write_text('''
import asyncio

def test_browser_1(browser):
    browser.new_page().close()

def test_browser_2(browser):
    browser.new_page().close()

def test_asyncio_after_them():
    assert asyncio.run(asyncio.sleep(0, result="ran")) == "ran"

def test_browser_again(browser):
    browser.new_page().close()
''')
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_order.py")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed" in run.stdout
