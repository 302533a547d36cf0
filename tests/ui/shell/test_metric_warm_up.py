"""METEOR's processes are one pool per server process, started in the background at the first visit of a page that
scores (Rescoring, Correction: the "metrics" task of annotator.startup), never at log-in or on another page. A plain
visit to Annotate in local mode, where the local admin may open every page, starts no Java (it started two
JVMs of 2 GB heap each before); a lead's first Rescoring starts the pool, and a second session's Correction finds it
started rather than starting another."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotator import startup
from annotator.metrics import meteor
from tests.apptest_helpers import app_test, seed_project, texts

pytestmark = pytest.mark.skipif(not meteor.meteor_available(), reason="METEOR needs Java and its jar")


@pytest.fixture
def cold_pool(monkeypatch):
    monkeypatch.setenv("ANNOTATOR_WARM_METRICS", "1")
    # which page starts the pool is the point here, not how warm it gets: one round of warm-up captions
    warm_rounds = meteor._warm_rounds
    monkeypatch.setattr(meteor, "_warm_rounds", lambda rounds: warm_rounds(1))
    meteor.shutdown()
    startup.forget("metrics")
    # The reference's METEOR (pycocoevalcap keeps its own JVM for the whole run) may already run in this test
    # process when a java-marked test came first: only processes started meanwhile count.
    already = set(meteor_processes())
    yield already
    startup.forget("metrics")
    if meteor.warm_state() == "warming":
        meteor.warm_up()  # let the background warm-up finish before the processes are stopped
    meteor.shutdown()


def meteor_processes(besides: set[int] = frozenset()) -> list[int]:
    """The ids of this process's child processes that run METEOR's jar, other than those in `besides`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        if ppid == os.getpid() and b"meteor" in command and int(stat.parent.name) not in besides:
            found.append(int(stat.parent.name))
    return found


def test_annotate_in_local_mode_starts_no_java(sqlite_store, cold_pool):
    seed_project(sqlite_store, "demo", n_items=3)
    at = app_test(sqlite_store.url).run()  # nobody has an account: the local admin, who may open every page
    assert not at.exception and "Local mode" in texts(at)
    at.button(key="ann_assign_me").click().run()
    assert not at.exception and at.button(key="ann_save") is not None
    for page in ("team", "agreement", "analysis", "guidelines"):  # pages that do not score
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, page
    assert meteor.warm_state() == "cold" and meteor_processes(besides=cold_pool) == []
    assert "metrics" not in startup.started()


@pytest.mark.slow  # starts METEOR's JVM from cold (make check leaves it out)
def test_the_first_scoring_page_starts_one_pool(sqlite_store, cold_pool):
    at = app_test(sqlite_store.url, user="lea", role="lead").run()
    assert not at.exception and meteor.warm_state() == "cold"  # a lead's log-in starts nothing
    at.switch_page("pages/rescore.py").run()
    assert not at.exception
    assert meteor.warm_state() in ("warming", "ready") and "metrics" in startup.started()
    first = meteor._warming
    again = app_test(sqlite_store.url, user="ana", role="analyst").run()
    again.switch_page("pages/correct.py").run()
    assert not again.exception
    assert meteor._warming is first  # the same pool, not a second start
    assert meteor.warm_up() == "ready" and len(meteor.POOL.procs()) >= 1 and meteor_processes(besides=cold_pool)


def test_switched_off_a_scoring_page_starts_no_warm_up(sqlite_store, cold_pool, monkeypatch):
    monkeypatch.setenv("ANNOTATOR_WARM_METRICS", "0")
    at = app_test(sqlite_store.url, user="lea", role="lead").run()
    at.switch_page("pages/rescore.py").run()  # no project yet: the page scores nothing either
    assert not at.exception
    assert meteor.warm_state() == "cold" and "metrics" not in startup.started()
    assert meteor_processes(besides=cold_pool) == []
