"""``annotator judge report``: a judge of known quality on a project of known truth, against scikit-learn, a hand
computation of the calibration error, and the agreement report's own kappas."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import (accuracy_score, cohen_kappa_score, confusion_matrix, f1_score, precision_score,
                             recall_score)

from annotator.agreement import agreement_report
from annotator.judges.calibration import reliability
from annotator.judges.report import judge_report
from annotator.store.analysis_queries import judgement_frame
from tests.cli_helpers import run_cli as run
from tests.judge_helpers import PROJECT, RATES, synthetic


@pytest.fixture
def synth(store, tmp_path):
    return synthetic(store, tmp_path)


def layer_arrays(synth, judge: str):
    """The annotator layer's labels and types and the judge's outputs on the same captions, caption id order."""
    pairs = sorted((synth.ids[s][r], synth.truth[s][r]) for s in ("a", "b") for r in synth.labelled.tolist())
    out = synth.judges[judge]
    return [c for c, _ in pairs], [t for _, t in pairs], [out[c] for c, _ in pairs]


def test_accuracy_kappa_and_types_equal_scikit_learn(store, synth):
    report = judge_report(store, PROJECT, "annotator:ann", ["good", "poor"])
    for name in ("good", "poor"):
        _, truth, outs = layer_arrays(synth, name)
        y = np.array([bool(t) for t in truth])
        pred = np.array([o["p_inaccurate"] >= 0.5 for o in outs])
        got = report.judge(name)
        assert got.n == len(y) == 300 and got.unscored == 0
        assert got.vs_layer.accuracy == pytest.approx(accuracy_score(y, pred), abs=1e-12)
        assert got.vs_layer.kappa == pytest.approx(cohen_kappa_score(y, pred), abs=1e-12)
        assert np.array_equal(np.array(got.vs_layer.confusion), confusion_matrix(y, pred, labels=[False, True]))
        lo, hi = got.vs_layer.kappa_ci
        assert lo <= got.vs_layer.kappa <= hi
        for t in RATES:
            yt = np.array([t in tr for tr in truth])
            pt = np.array([o["types"][t] >= 0.5 for o in outs])
            s = got.per_type[t]
            assert pt.any() and yt.any()  # every ratio is defined on these labels
            assert s.precision == pytest.approx(precision_score(yt, pt), abs=1e-12)
            assert s.recall == pytest.approx(recall_score(yt, pt), abs=1e-12)
            assert s.f1 == pytest.approx(f1_score(yt, pt), abs=1e-12)
            assert s.kappa == pytest.approx(cohen_kappa_score(yt, pt), abs=1e-12)
        assert set(got.per_type) == set(RATES)  # only the types it scores
    good, poor = report.judge("good"), report.judge("poor")
    assert good.vs_layer.kappa > poor.vs_layer.kappa  # the better judge reads as better


def test_expected_calibration_error_by_hand(store, synth):
    report = judge_report(store, PROJECT, "annotator:ann", ["poor"])
    _, truth, outs = layer_arrays(synth, "poor")
    p = np.array([o["p_inaccurate"] for o in outs])
    y = np.array([bool(t) for t in truth], dtype=float)
    # docs/judges.md: ten equal-width bins [b/10, (b+1)/10), the last closed at 1; ECE = sum n_b/n |mean p - share|
    ece = 0.0
    for b in range(10):
        lo, hi = b / 10, (b + 1) / 10
        mine = (p >= lo) & ((p < hi) if b < 9 else (p <= 1.0))
        if mine.any():
            ece += mine.sum() / len(p) * abs(p[mine].mean() - y[mine].mean())
    got = report.judge("poor")
    assert got.ece == pytest.approx(ece, abs=1e-12)
    assert sum(b.n for b in got.bins) == len(p)
    # votes of k = 3: p takes 0, 1/3, 2/3, 1 and fills bins 0, 3, 6, 9
    assert [b.n > 0 for b in got.bins] == [b in (0, 3, 6, 9) for b in range(10)]


def test_hand_made_calibration_error():
    p = [0.0, 0.05, 0.1, 0.5, 0.95, 1.0, 1.0]
    y = [0, 0, 1, 1, 1, 1, 0]
    # bins: [0,.1): 0, .05 (mean .025, share 0); [.1,.2): .1 (.1, 1); [.5,.6): .5 (.5, 1); [.9,1]: .95, 1, 1 (.9833, 2/3)
    expected = (2 * 0.025 + 1 * 0.9 + 1 * 0.5 + 3 * abs(2.95 / 3 - 2 / 3)) / 7
    ece, bins = reliability(p, y)
    assert ece == pytest.approx(expected, abs=1e-12)
    assert [b.n for b in bins] == [2, 1, 0, 0, 0, 1, 0, 0, 0, 3]


def test_against_each_annotator_beside_the_annotators_own_kappa(store, synth):
    report = judge_report(store, PROJECT, "annotator:ann", ["good"])
    got = {a.a: a for a in report.judge("good").annotators}
    out = synth.judges["good"]
    ben_ids = [synth.ids["a"][r] for r in synth.ben_rows.tolist()]
    pred = [out[c]["p_inaccurate"] >= 0.5 for c in ben_ids]
    assert got["ben"].n == 60
    assert got["ben"].kappa == pytest.approx(cohen_kappa_score(synth.ben_labels, pred), abs=1e-12)
    assert got["ann"].n == 300
    pair = agreement_report(judgement_frame(store, PROJECT), ["ann", "ben"]).pairs[0]
    (human,) = report.human
    assert (human.a, human.b, human.n, human.kappa, human.kappa_ci) == ("ann", "ben", pair.n, pair.kappa, pair.kappa_ci)


def test_judges_against_each_other(store, synth):
    report = judge_report(store, PROJECT, "annotator:ann", ["good", "poor"])
    (between,) = report.between
    ids = sorted(synth.judges["good"])
    a = [synth.judges["good"][c]["p_inaccurate"] >= 0.5 for c in ids]
    b = [synth.judges["poor"][c]["p_inaccurate"] >= 0.5 for c in ids]
    assert (between.a, between.b, between.n) == ("good", "poor", 600)  # every caption both scored
    assert between.kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_disagreements_most_confident_first(store, synth):
    report = judge_report(store, PROJECT, "annotator:ann", ["poor"], limit=20)
    found = report.judge("poor").disagreements
    assert len(found) == 20
    assert [d.confidence for d in found] == sorted((d.confidence for d in found), reverse=True)
    _, truth, outs = layer_arrays(synth, "poor")
    wrong = [max(o["p_inaccurate"], 1 - o["p_inaccurate"]) for t, o in zip(truth, outs)
             if (o["p_inaccurate"] >= 0.5) != bool(t)]
    assert found[0].confidence == pytest.approx(max(wrong))
    for d in found:
        assert (d.p_inaccurate >= 0.5) != (d.human == "inaccurate")


def test_the_detectors_are_one_judge_among_them(store, synth, capsys):
    code, out, err = run(capsys, "--db", store.url, "judge", "report", "--project", PROJECT, "--annotator", "ann",
                         "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [j["judge"] for j in data["judges"]] == ["detectors", "good", "poor"]
    for j in data["judges"]:
        assert {"judge", "signature", "n", "accuracy", "kappa", "kappa_ci", "ece", "per_type", "spans"} <= set(j)
    good = data["judges"][1]
    core = judge_report(store, PROJECT, "annotator:ann", ["good"]).judge("good")
    assert good["kappa"] == core.vs_layer.kappa and good["signature"]["model"] == "stand-in"
    assert set(good["per_type"]["gender"]) >= {"precision", "recall", "f1", "kappa"}
    code, out, _ = run(capsys, "--db", store.url, "judge", "report", "--project", PROJECT, "--annotator", "ann",
                       "--judge", "good")
    assert code == 0 and "judge good (model stand-in, prompt 1, k 5)" in out and "annotators: ann vs ben" in out


def test_unknown_judge_is_named(store, synth, capsys):
    code, _, err = run(capsys, "--db", store.url, "judge", "report", "--project", PROJECT, "--annotator", "ann",
                       "--judge", "nope")
    assert code == 2 and "no judge called 'nope'" in err and "good, poor" in err
