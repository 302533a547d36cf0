"""METEOR 1.5: perfect matches, the numpy port of its formula and the process manager, against pycocoevalcap.

Needs Java; every test is skipped with that reason when ``java`` is missing.
Identity with pycocoevalcap's Meteor on generated corpora (raw and
PTB-tokenised), the statistics contract, bad input and the signature are
checked for every registered metric in test_metrics_contract.py.
"""

from __future__ import annotations

import shutil
import threading

import numpy as np
import pytest
from metric_helpers import edge_corpus, reference_scores

from annotator.metrics import REGISTRY, Meteor, MetricUnavailable, meteor

pytestmark = [pytest.mark.skipif(shutil.which("java") is None, reason="METEOR needs Java (no `java` on PATH)"),
              pytest.mark.java]

pcc_meteor = pytest.importorskip("pycocoevalcap.meteor.meteor")


@pytest.fixture
def coco_meteor(reference_scorers):
    return reference_scorers("meteor")


def corpus(seed=0, n=200):
    # with captions equal to a reference: a perfect match's chunk does not count when METEOR sums statistics
    return edge_corpus(seed, n)


def test_identical_caption_scores_one_and_perfect_chunks_are_not_summed(coco_meteor):
    m = Meteor()
    assert m.corpus_score(["a dog runs"], [["a dog runs"]]).value == 1.0
    hyps = ["a dog runs", "a man rides a horse", "two cats sleep"]
    refs = [["a dog runs"], ["a man rides a horse"], ["cats are sleeping on a bed"]]
    st = m.stats(hyps, refs)
    assert st[0, 20] == 1 and st[1, 20] == 1
    summed = meteor.summable(st).sum(axis=0)
    assert summed[20] == st[2, 20]  # only the imperfect segment's chunks
    want, _ = reference_scores("meteor", hyps, refs, coco_meteor)
    assert m.aggregate(st).value == want["METEOR"]


def test_numpy_formula_matches_the_jar():
    hyps, refs = corpus(1, 150)
    m = Meteor()
    st = m.stats(hyps, refs)
    segs, total = meteor.eval_rows(st)
    assert meteor.scores_from_stats(st) == pytest.approx(segs, abs=1e-15)
    assert meteor.scores_from_stats(meteor.summable(st).sum(axis=0))[0] == pytest.approx(total, abs=1e-15)


def test_segment_stats_equal_batch_rows():
    hyps, refs = corpus(2, 60)
    m = Meteor()
    prep = m.prepare(refs)
    batch = m.stats(hyps, prep)
    meteor.clear_cache()
    for i in (0, 1, 5, 59):
        assert m.segment_stats(hyps[i], prepared=prep, index=i).tolist() == batch[i].tolist()
        assert m.segment_stats(hyps[i], refs[i]).tolist() == batch[i].tolist()


def test_pool_splits_batches_and_keeps_order(monkeypatch):
    # two stand-in processes that echo each line back (cat) show the split and the reassembly
    from annotator.java import JavaProcess
    pool = meteor._Pool(lambda: JavaProcess("echo", lambda: ["cat"]))
    monkeypatch.setenv("ANNOTATOR_METEOR_PROCESSES", "2")
    lines = [f"line {i}" for i in range(333)]
    try:
        assert pool.score_lines(lines) == lines
        assert len(pool.procs()) == 2 and all(p.running for p in pool.procs())
    finally:
        pool.close()


def test_thread_safe():
    hyps, refs = corpus(4, 40)
    m = Meteor()
    prep = m.prepare(refs)
    meteor.clear_cache()
    want = [m.segment_stats(h, prepared=prep, index=i).tolist() for i, h in enumerate(hyps)]
    meteor.clear_cache()
    got: dict[int, list] = {}

    def work(part):
        for i in part:
            got[i] = m.segment_stats(hyps[i] + "", prepared=prep, index=i).tolist()
    threads = [threading.Thread(target=work, args=(range(k, 40, 4),)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[i] for i in range(40)] == want


def test_without_java_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(meteor, "POOL", meteor._Pool())
    meteor.clear_cache()
    assert not meteor.meteor_available()
    with pytest.raises(MetricUnavailable, match="Java"):
        Meteor().corpus_score(["a dog"], [["a dog"]])
    # the warm-up starts nothing and says so; the registry gives the reason
    assert meteor.warm_up() == "unavailable" and meteor.warm_state() == "unavailable"
    assert REGISTRY.unavailable(REGISTRY.defaults()) == {"meteor": "METEOR needs Java, which is not available here"}
    assert REGISTRY.warm_up(REGISTRY.defaults(), wait=True) == {"bleu": "ready", "meteor": "unavailable", "rouge": "ready",
                                                           "cider": "ready"}


@pytest.mark.cold_java  # first in its process, where nothing has started METEOR yet
def test_warm_up_starts_once_per_process_and_reports_its_state():
    meteor.shutdown()  # stops nothing when it runs first; after other tests (a -k selection), what they started
    assert meteor.warm_state() == "cold"
    assert meteor.warm_up(wait=False, rounds=1) == "warming"  # starting a JVM takes seconds
    first = meteor._warming
    assert meteor.warm_up(wait=False) in ("warming", "ready") and meteor._warming is first  # no second start
    assert meteor.warm_up() == "ready" and meteor._warming is first
    assert meteor.warm_state() == "ready" and all(p.running for p in meteor.POOL.procs())
    assert REGISTRY.warm_up(REGISTRY.defaults()) == {"bleu": "ready", "meteor": "ready", "rouge": "ready", "cider": "ready"}
    assert Meteor().corpus_score(["a dog runs"], [["a dog runs"]]).value == 1.0


def test_resample_exact_and_numpy_agree():
    hyps, refs = corpus(5, 120)
    m = Meteor()
    st = m.stats(hyps, refs)
    rng = np.random.default_rng(0)
    w = np.vstack([np.ones(120), rng.multinomial(120, [1 / 120] * 120, size=50)]).astype(float)
    exact = m.resample(st, w)[:, 0]
    assert exact[0] == m.aggregate(st).value
    approx = meteor.scores_from_stats(w @ meteor.summable(st))
    assert approx == pytest.approx(exact, abs=1e-15)
