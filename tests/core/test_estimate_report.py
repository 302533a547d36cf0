"""The estimate report: JSON shape, type selection, incomplete type labels, system comparison."""

from __future__ import annotations

import json

import numpy as np
import ppi_py
import pytest

from annotator.config import SAMPLE_DIR
from annotator.estimate import (INACCURATE, Evidence, HumanLabels, compare, comparison_frame, detect,
                                estimate_report, evidence_of_item)
from annotator.io.jsonl import read_jsonl_project
from annotator.sample import answer_key
from annotator.taxonomy import ERROR_TYPE_IDS


@pytest.fixture(scope="module")
def sample():
    """Detections per system of the sample project and the answer key as human labels of every caption."""
    project = read_jsonl_project("sample", SAMPLE_DIR / "sample.jsonl").project
    evidence = [evidence_of_item(i) for i in project.items]
    key = answer_key()
    out = {}
    for system in project.systems:
        captions = [c.text for item in project.items for c in item.captions if c.system == system]
        det = detect(captions, list(range(len(project.items))), evidence)
        types = [key[system][n] for n in range(len(captions))]
        out[system] = (det, types)
    return out


def labels(types, rows):
    return HumanLabels.from_lists(rows, [bool(types[r]) for r in rows], [types[r] for r in rows])


def test_json_shape_and_numbers(sample):
    det, types = sample["nic-beam"]
    human = labels(types, [0, 1, 3, 4, 5, 7])
    report = estimate_report(det, human, system="nic-beam")
    data = json.loads(json.dumps(report.to_dict()))
    assert {"n_total", "n_human", "inaccurate", "types", "detectors"} <= set(data)
    assert (data["n_total"], data["n_human"]) == (8, 6)
    assert set(data["inaccurate"]) >= {"estimate", "ci", "classical_ci"}
    assert set(data["types"]) == set(ERROR_TYPE_IDS)
    for entry in [data["inaccurate"], *data["types"].values()]:
        lo, hi = entry["ci"]
        assert 0 <= lo <= hi <= 1 and 0 <= entry["classical_ci"][0] <= entry["classical_ci"][1] <= 1
    assert set(data["detectors"]["gender"]) == {"precision", "recall", "auc"}
    assert "other" not in data["detectors"]  # no detector, no quality
    assert data["chair"]["mentions"] == det.chair().mentions
    assert any("30" in w for w in data["warnings"])  # few labels: the normal approximation is rough
    # the classical interval is the human sample's: 5 of 6 labelled captions are inaccurate
    y = np.array([bool(types[r]) for r in [0, 1, 3, 4, 5, 7]], dtype=float)
    assert report.inaccurate.classical == pytest.approx(5 / 6)
    # the population estimand reproduces the reference implementation
    pop = estimate_report(det, human, finite_population=False)
    f = det.score(INACCURATE)
    lo, hi = ppi_py.ppi_mean_ci(y, f[[0, 1, 3, 4, 5, 7]], f, alpha=0.05)
    # (six labels are sparse: the printed interval is widened to hold the exact one, ppi_ci keeps the reference's)
    assert pop.inaccurate.sparse and pop.inaccurate.ppi_ci == pytest.approx((float(lo[0]), float(hi[0])))
    assert pop.inaccurate.ci[0] <= lo[0] and pop.inaccurate.ci[1] >= hi[0]
    frame = report.frame()
    assert list(frame["target"]) == [INACCURATE, *ERROR_TYPE_IDS]
    assert frame.loc[0, "estimate"] == pytest.approx(report.inaccurate.estimate)


def test_every_caption_labelled_gives_the_exact_shares(sample):
    det, types = sample["sat-attn"]
    report = estimate_report(det, labels(types, list(range(8))))
    assert report.inaccurate.estimate == pytest.approx(6 / 8)
    assert report.inaccurate.ci == pytest.approx((6 / 8, 6 / 8))
    assert report.types["gender"].estimate == pytest.approx(1 / 8)
    assert report.types["age"].estimate == pytest.approx(0.0)


def test_type_selection(sample):
    det, types = sample["sat-attn"]
    human = labels(types, list(range(8)))
    top = estimate_report(det, human, types="top5")
    assert len(top.types) == 5
    assert min(e.estimate for e in top.types.values()) >= max(
        e.estimate for t, e in estimate_report(det, human).types.items() if t not in top.types)
    some = estimate_report(det, human, types=["scene", "gender"])
    assert list(some.types) == ["gender", "scene"]  # taxonomy order
    assert set(some.detectors) == {INACCURATE, "gender", "scene"}
    with pytest.raises(ValueError, match="unknown error type ids: colour"):
        estimate_report(det, human, types=["colour"])


def test_inaccurate_captions_without_types_count_only_for_the_inaccurate_share(sample):
    det, types = sample["nic-beam"]
    rows = list(range(8))
    pending = [() if r == 2 else types[r] for r in rows]  # caption 2 judged inaccurate, types not yet ticked
    human = HumanLabels.from_lists(rows, [bool(types[r]) for r in rows], pending)
    report = estimate_report(det, human)
    assert report.inaccurate.n == 8 and report.types["color"].n == 7
    assert report.types["object_extra"].estimate == pytest.approx(0.0)  # its one case is the pending caption
    assert any("1 labelled inaccurate caption has error types pending" in n and "weighted" in n
               for n in report.notes)


def _scored(scores: np.ndarray):
    """Detections with the given score matrix (captions x SCORE_COLUMNS) and no words behind them."""
    from annotator.estimate.detectors import Detections
    none = np.array([], dtype=np.int64)
    N = len(scores)
    return Detections(scores, np.zeros(N), np.zeros(N), np.zeros(N), (), none, none, none, none, none)


def test_types_pending_are_missing_values_not_zeros():
    """Known truth: 40 % of 3,000 captions inaccurate, 30 % of those with gender; of 300 labelled captions, half of
    the inaccurate ones have types pending (at random). The gender share must come out unbiased and covered."""
    from annotator.estimate.detectors import SCORE_COLUMNS
    col = {c: i for i, c in enumerate(SCORE_COLUMNS)}
    rng = np.random.default_rng(11)
    N, n, repeats = 3000, 300, 200
    covered, errors = 0, []
    for _ in range(repeats):
        inaccurate = rng.random(N) < 0.4
        gender = inaccurate & (rng.random(N) < 0.3)
        scores = np.zeros((N, len(SCORE_COLUMNS)))
        scores[:, col["gender"]] = 0.6 * gender + 0.4 * rng.random(N)
        scores[:, col[INACCURATE]] = 0.6 * inaccurate + 0.4 * rng.random(N)
        rows = np.sort(rng.choice(N, n, replace=False))
        pending = inaccurate[rows] & (rng.random(n) < 0.5)
        types = [() if p else ("gender",) if g else ("color",) if i else ()
                 for p, g, i in zip(pending, gender[rows], inaccurate[rows])]
        report = estimate_report(_scored(scores), HumanLabels.from_lists(rows, inaccurate[rows], types))
        e, truth = report.types["gender"], gender.mean()
        covered += e.ci[0] <= truth <= e.ci[1]
        errors.append(e.estimate - truth)
    # dropping the pending captions as if they had no types gives about 0.09 for a truth of 0.12 and covers ~0.3
    assert abs(np.mean(errors)) < 0.003, np.mean(errors)
    assert covered / repeats >= 0.93, covered / repeats
    assert any("pending" in n and "fully typed" in n for n in report.notes)


def test_type_shares_are_refused_when_pending_types_cannot_be_reweighted(sample):
    from annotator.estimate import SampleDraw
    det, types = sample["nic-beam"]
    rows = list(range(8))
    inaccurate = [bool(types[r]) for r in rows]
    untyped = HumanLabels.from_lists(rows, inaccurate, [()] * 8)  # no inaccurate caption typed yet
    report = estimate_report(det, untyped)
    assert report.types == {} and any(f"{sum(inaccurate)} labelled inaccurate captions have error types pending: "
                                      "no type shares" in n for n in report.notes)
    drawn = HumanLabels.from_lists(rows, inaccurate, [() if r == 2 else types[r] for r in rows],
                                   draws=[SampleDraw(1, np.arange(8), np.full(8, 0.5))])
    report = estimate_report(det, drawn)
    assert report.types == {} and any("1 labelled inaccurate caption has error types pending: no type shares until it "
                                      "is typed" in n for n in report.notes)


def test_bad_labels_are_refused(sample):
    det, types = sample["nic-beam"]
    with pytest.raises(ValueError, match="labelled twice"):
        HumanLabels.from_lists([1, 1], [True, True], [("age",), ("age",)])
    with pytest.raises(ValueError, match="outside"):
        estimate_report(det, labels(types + [()], [0, 8]))
    with pytest.raises(ValueError, match="at least two"):
        estimate_report(det, labels(types, [0]))


def test_systems_side_by_side_and_their_difference():
    rng = np.random.default_rng(0)
    evidence = [Evidence(("A dog runs on the grass", "A brown dog running in a field", "A dog on a lawn",
                          "A happy dog outside", "A dog plays on the grass"), ("dog",))] * 400
    good = ["A brown dog runs on the grass"] * 400
    bad = [("A cat sleeps on a sofa" if rng.random() < 0.5 else "A brown dog runs on the grass") for _ in range(400)]
    reports = []
    for name, captions in (("good", good), ("bad", bad)):
        det = detect(captions, list(range(400)), evidence)
        rows = rng.choice(400, 60, replace=False)
        truth = [("unrelated",) if c.startswith("A cat") else () for c in captions]
        reports.append(estimate_report(det, labels(truth, list(rows)), system=name))
    diff = compare(reports, "bad", "good")
    assert diff[INACCURATE].estimate == pytest.approx(np.mean([c.startswith("A cat") for c in bad]), abs=0.01)
    assert diff[INACCURATE].ci[0] > 0.3
    frame = comparison_frame(reports)
    assert set(frame["system"]) == {"good", "bad"} and len(frame) == 2 * (1 + len(ERROR_TYPE_IDS))


def test_zero_width_intervals_are_warned_about_and_widened_by_default(sample):
    det, types = sample["nic-beam"]
    human = labels(types, [0, 1, 3, 4, 5, 7])  # six of eight captions: types never labelled have no spread
    plain = estimate_report(det, human, min_support=0)
    assert plain.zero_width_targets and any("zero width although not every caption is labelled" in w
                                            for w in plain.warnings)
    assert json.loads(json.dumps(plain.to_dict()))["types"][plain.zero_width_targets[-1]]["zero_width"] is True
    report = estimate_report(det, human)  # the default: sparse targets widened to the exact interval
    assert report.zero_width_targets == [] and not any("zero width" in w for w in report.warnings)
    assert set(plain.zero_width_targets) <= set(report.sparse_targets)
    for t in plain.zero_width_targets:
        e = report.target(t)
        assert e.ci[0] <= e.estimate <= e.ci[1] and e.ci[1] - e.ci[0] > 0.1  # at most 6 labels: wide
        assert e.classical_ci[1] - e.classical_ci[0] > 0.1  # the classical interval of 0 cases in 6 is not [0, 0]
