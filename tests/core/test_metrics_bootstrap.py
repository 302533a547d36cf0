"""Paired bootstrap over per-caption statistics."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.metrics import Bleu, CiderD, MetricInputError, RougeL, paired_bootstrap, resample_weights
from annotator.metrics.bootstrap import compare
from annotator.metrics.synthetic import perturb, synthetic_corpus

pcc_bleu = pytest.importorskip("pycocoevalcap.bleu.bleu")
pcc_rouge = pytest.importorskip("pycocoevalcap.rouge.rouge")


def test_weights_are_seeded_draws_with_replacement():
    w = resample_weights(50, 200, seed=7)
    assert w.shape == (200, 50)
    assert (w.sum(axis=1) == 50).all()
    assert (w >= 0).all() and (w == np.round(w)).all()
    assert np.array_equal(w, resample_weights(50, 200, seed=7))
    assert not np.array_equal(w, resample_weights(50, 200, seed=8))
    # every caption is drawn about equally often overall
    assert abs(w.sum(axis=0).mean() - 200) < 1e-9
    with pytest.raises(MetricInputError):
        resample_weights(0, 10)


def test_resamples_equal_pycocoevalcap_on_the_drawn_corpora():
    # resample r = the corpus made of the drawn captions (with repeats), scored from scratch
    hyps, refs = synthetic_corpus(80, 4, seed=2)
    w = resample_weights(80, 5, seed=3)
    for metric, scorer in ((Bleu(), pcc_bleu.Bleu(4)), (RougeL(), pcc_rouge.Rouge())):
        vals = metric.resample(metric.stats(hyps, refs), w)
        for r in range(5):
            idx = [i for i in range(80) for _ in range(int(w[r, i]))]
            gts = {k: refs[i] for k, i in enumerate(idx)}
            res = {k: [hyps[i]] for k, i in enumerate(idx)}
            kw = {"verbose": 0} if metric.key == "bleu" else {}
            want = scorer.compute_score(gts, res, **kw)[0]
            want = want if isinstance(want, list) else [want]
            assert vals[r].tolist() == pytest.approx(want, rel=1e-12)


def test_identical_systems():
    hyps, refs = synthetic_corpus(100, 4, seed=4)
    m = Bleu()
    st = m.stats(hyps, refs)
    res = paired_bootstrap(m, st, st, resamples=300, seed=1)
    for r in res.values():
        assert r.delta == 0.0 and r.ci == (0.0, 0.0)
        assert r.p == 1.0 and r.p_le0 == 1.0 and r.p_ge0 == 1.0


def test_clear_improvement_is_significant_and_interval_brackets_delta():
    hyps, refs = synthetic_corpus(300, 5, seed=5)
    worse = perturb(hyps, 0.5, seed=9)
    for m in (Bleu(), RougeL(), CiderD()):
        prep = m.prepare(refs)
        a, b = m.stats(worse, prep), m.stats(hyps, prep)
        for key, r in paired_bootstrap(m, a, b, resamples=500, seed=2).items():
            assert r.delta > 0, key
            assert r.ci[0] <= r.delta <= r.ci[1], key
            assert r.p_le0 == 0.0 and r.p == 0.0, key
            assert r.p_ge0 == 1.0
        # and the other way round
        for r in paired_bootstrap(m, b, a, resamples=500, seed=2).values():
            assert r.delta < 0 and r.p_ge0 == 0.0 and r.p_le0 == 1.0


def test_p_value_definition_on_known_deltas():
    d_a = np.zeros(10)
    d_b = np.concatenate([np.full(7, 1.0), np.full(3, -1.0)])
    r = compare("x", 0.0, 0.4, d_a, d_b, seed=0)
    assert r.p_le0 == 0.3 and r.p_ge0 == 0.7
    assert r.p == pytest.approx(0.6)
    assert r.delta == pytest.approx(0.4)


def test_same_seed_same_result():
    hyps, refs = synthetic_corpus(120, 4, seed=6)
    other = perturb(hyps, 0.2, seed=3)
    m = Bleu()
    prep = m.prepare(refs)
    a, b = m.stats(hyps, prep), m.stats(other, prep)
    r1 = paired_bootstrap(m, a, b, resamples=200, seed=10)
    r2 = paired_bootstrap(m, a, b, resamples=200, seed=10)
    assert r1 == r2
    with pytest.raises(MetricInputError):
        paired_bootstrap(m, a, b[:-1])
