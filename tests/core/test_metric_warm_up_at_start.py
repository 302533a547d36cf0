"""METEOR's processes are one pool per server process, warmed in the background once someone who may open
Rescoring or Correction is in: an annotator's session starts nothing, a lead's starts the pool, and a second
session (or page) finds it started rather than starting another."""

from __future__ import annotations

import pytest

from annotator.metrics import meteor
from annotator.ui import start_metric_warm_up
from tests.apptest_helpers import app_test

# slow: each test starts METEOR's JVM from cold (make check leaves them out)
pytestmark = [pytest.mark.skipif(not meteor.meteor_available(), reason="METEOR needs Java and its jar"), pytest.mark.slow]


@pytest.fixture
def cold_pool(monkeypatch):
    monkeypatch.setenv("ANNOTATOR_WARM_METRICS", "1")
    # which session starts the pool is the point here, not how warm it gets: one round of warm-up captions
    warm_rounds = meteor._warm_rounds
    monkeypatch.setattr(meteor, "_warm_rounds", lambda rounds: warm_rounds(1))
    meteor.shutdown()
    start_metric_warm_up.clear()
    yield
    start_metric_warm_up.clear()
    if meteor.warm_state() == "warming":
        meteor.warm_up()  # let the background warm-up finish before the processes are stopped
    meteor.shutdown()


def test_an_annotator_starts_nothing_a_lead_starts_one_pool(sqlite_store, cold_pool):
    at = app_test(sqlite_store.url, user="ann", role="annotator").run()
    assert not at.exception
    assert meteor.warm_state() == "cold"
    at = app_test(sqlite_store.url, user="lea", role="lead").run()
    assert not at.exception
    assert meteor.warm_state() in ("warming", "ready")
    first = meteor._warming
    again = app_test(sqlite_store.url, user="ana", role="analyst").run()
    assert not again.exception
    assert meteor._warming is first  # the same pool, not a second start
    assert meteor.warm_up() == "ready" and len(meteor.POOL.procs()) >= 1


def test_switched_off_a_lead_starts_nothing(sqlite_store, cold_pool, monkeypatch):
    monkeypatch.setenv("ANNOTATOR_WARM_METRICS", "0")
    at = app_test(sqlite_store.url, user="lea", role="lead").run()
    assert not at.exception
    assert meteor.warm_state() == "cold"
