"""``annotator judge run`` killed with SIGKILL in the middle of a run resumes without asking again for any answer it
had stored, and ends with every caption's k answers (against the local chat-completions stand-in,
tests/judge_server.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from annotator.judges import load_judge
from annotator.judges.runner import RunSettings, run_judge
from annotator.sample import answer_key, load_sample
from annotator.store import open_store
from annotator.store.judges import cached_answers
from annotator.store.projects import load_project
from tests.judge_server import StandIn

pytestmark = [pytest.mark.serial, pytest.mark.timeout(300)]
ROOT = Path(__file__).resolve().parents[2]
K = 3


def stored(store, ids) -> set[tuple[int, int]]:
    with store.read() as conn:
        return set(cached_answers(conn, ids, model="m", prompt_version="1", settings=RunSettings(
            "http://127.0.0.1/v1", "m").cache_settings))


def test_a_killed_run_resumes_without_asking_again(tmp_path):
    url = f"sqlite:///{tmp_path / 'run.db'}"
    store = open_store(url)
    load_sample(store, with_judgements=False)
    key = answer_key()
    captions = {c.caption_id: c.text for it in load_project(store, "sample").items for c in it.captions}
    truth = {c.text: key[c.system][c.line] for it in load_project(store, "sample").items for c in it.captions}
    everything = {(cid, s) for cid in captions for s in range(K)}
    with StandIn(truth, delay=0.15) as server:
        proc = subprocess.Popen([sys.executable, "-m", "annotator", "--db", url, "judge", "run", "--project", "sample",
                                 "--judge", "vlm", "--endpoint", server.url, "--model", "m", "--k", str(K),
                                 "--concurrency", "2"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        deadline = time.monotonic() + 120
        while len(stored(store, captions)) < 10:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the run stored no answers"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
        before = stored(store, captions)
        assert 10 <= len(before) < len(everything)
        asked_before = len(server.requests)
        server.delay = 0.0
        result = run_judge(store, "sample", "vlm", RunSettings(server.url, "m", k=K, backoff=0.01))
        again = {(c, s) for c, s, _ in server.requests[asked_before:]}
    by_text = {text: cid for cid, text in captions.items()}
    again = {(by_text[c], s) for c, s in again}
    assert again.isdisjoint(before), "asked again for answers it had stored"
    assert again | before == everything
    assert (result.stats.cached, result.stats.answered, result.outputs) == (len(before), len(again), 16)
    judge = load_judge(store, "sample", "vlm")
    assert all(len(o.answers) == K for o in judge.outputs.values())
    assert store.integrity_check() == "ok"
