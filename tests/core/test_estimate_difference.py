"""The difference between two systems' error shares: paired when both systems' captions of the same images were
labelled, independent otherwise; equal to a hand computation and to ppi_py on the per-image differences, covering
the truth about 95 % of the time, and narrower than the independent interval when the systems err together."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from annotator.estimate import INACCURATE, difference, paired_difference, ppi_mean
from annotator.estimate.project import estimate_store
from annotator.store.judgements import insert_judgement
from annotator.store.projects import load_project
from annotator.store.users import user_id
from tests.cli_helpers import run_cli as _run
from tests.core.test_estimate_cli import PROJECT, build_street

Z = 1.959963984540054  # the 97.5 % normal quantile


def test_paired_difference_by_hand():
    # Four labelled images out of six; both systems with detector weight 1/2.
    y_a, f_a = [1, 0, 1, 1], [0.8, 0.2, 0.6, 0.4]
    y_b, f_b = [1, 0, 0, 1], [0.6, 0.0, 0.2, 0.4]
    f_a_all = [0.8, 0.2, 0.6, 0.4, 1.0, 0.0]  # mean 0.5
    f_b_all = [0.6, 0.0, 0.2, 0.4, 0.8, 0.0]  # mean 1/3
    d = paired_difference(y_a, f_a, f_a_all, 0.5, y_b, f_b, f_b_all, 0.5, alpha=0.05)
    # residuals y - f/2: A (0.6, -0.1, 0.7, 0.8), B (0.7, 0.0, -0.1, 0.8); their difference (-0.1, -0.1, 0.8, 0.0)
    # estimate = 0.5·0.5 + 0.5 - (0.5·(1/3) + 0.35) = 0.75 - 0.516666… = 0.233333…
    assert d.estimate == pytest.approx(0.25 + 0.5 - (1 / 6 + 0.35), abs=1e-15)
    # variance: (-0.1, -0.1, 0.8, 0) has mean 0.15, deviations (-0.25, -0.25, 0.65, -0.15), squares
    # 0.0625 + 0.0625 + 0.4225 + 0.0225 = 0.57, sample variance 0.57 / 3 = 0.19; fpc = 1 - 4/6 = 1/3
    se = math.sqrt((1 / 3) * 0.19 / 4)
    assert d.se == pytest.approx(se, abs=1e-15)
    assert d.ci == pytest.approx((d.estimate - Z * se, d.estimate + Z * se), abs=1e-12)
    # classical: y_a - y_b = (0, 0, 1, 0): mean 1/4, sample variance 1/4
    assert d.classical == 0.25 and d.classical_ci[1] == pytest.approx(0.25 + Z * math.sqrt((1 / 3) * 0.25 / 4))
    assert d.design == "paired" and d.pairs == 4
    # It is A's estimate minus B's, whatever the pairing.
    a = ppi_mean(y_a, f_a, f_a_all, lam=0.5, finite_population=True)
    b = ppi_mean(y_b, f_b, f_b_all, lam=0.5, finite_population=True)
    assert d.estimate == pytest.approx(a.estimate - b.estimate, abs=1e-15)
    assert difference(a, b).design == "independent"


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_population_mode_equals_ppi_py_on_the_per_image_differences(lam):
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(3)
    N, n = 2000, 150
    f_a_all, f_b_all = rng.random(N), rng.random(N)
    rows = rng.choice(N, n, replace=False)
    y_a = (rng.random(n) < f_a_all[rows]).astype(float)
    y_b = (rng.random(n) < f_b_all[rows]).astype(float)
    d = paired_difference(y_a, f_a_all[rows], f_a_all, lam, y_b, f_b_all[rows], f_b_all, lam, alpha=0.1,
                          finite_population=False)
    yd, fd, fd_all = y_a - y_b, f_a_all[rows] - f_b_all[rows], f_a_all - f_b_all
    assert d.estimate == pytest.approx(float(ppi_py.ppi_mean_pointestimate(yd, fd, fd_all, lam=lam)[0]), abs=1e-12)
    lo, hi = ppi_py.ppi_mean_ci(yd, fd, fd_all, alpha=0.1, lam=lam)
    assert d.ci == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)


def test_paired_intervals_cover_and_are_narrower_when_the_systems_err_together():
    rng = np.random.default_rng(7)
    N, n, repeats = 1000, 120, 300
    covered_paired = covered_independent = 0
    widths_paired, widths_independent = [], []
    hard = rng.random(N) < 0.3  # images both systems tend to get wrong
    y_a_all = ((hard & (rng.random(N) < 0.8)) | (rng.random(N) < 0.05)).astype(float)
    y_b_all = ((hard & (rng.random(N) < 0.6)) | (rng.random(N) < 0.05)).astype(float)
    f_a_all = np.clip(0.6 * y_a_all + 0.2 + 0.2 * rng.standard_normal(N), 0, 1)
    f_b_all = np.clip(0.6 * y_b_all + 0.2 + 0.2 * rng.standard_normal(N), 0, 1)
    truth = y_a_all.mean() - y_b_all.mean()
    for _ in range(repeats):
        rows = rng.choice(N, n, replace=False)
        a = ppi_mean(y_a_all[rows], f_a_all[rows], f_a_all, finite_population=True)
        b = ppi_mean(y_b_all[rows], f_b_all[rows], f_b_all, finite_population=True)
        p = paired_difference(y_a_all[rows], f_a_all[rows], f_a_all, a.lam, y_b_all[rows], f_b_all[rows], f_b_all,
                              b.lam)
        i = difference(a, b)
        assert p.estimate == pytest.approx(i.estimate, abs=1e-12)
        covered_paired += p.ci[0] <= truth <= p.ci[1]
        covered_independent += i.ci[0] <= truth <= i.ci[1]
        widths_paired.append(p.ci[1] - p.ci[0])
        widths_independent.append(i.ci[1] - i.ci[0])
    assert 0.91 <= covered_paired / repeats <= 0.985
    assert covered_independent / repeats >= 0.95  # conservative here: the errors go together
    assert np.mean(widths_paired) < 0.9 * np.mean(widths_independent)  # 0.102 against 0.119 with this seed


def test_stored_systems_labelled_on_the_same_images_are_paired(store, capsys):
    _, _, labelled = build_street(store)  # ann labelled the same 40 % of images for both systems
    result = estimate_store(store, PROJECT, "annotator:ann", pairs=[("poor", "good")])
    diffs = result.difference("poor", "good")
    d = diffs[INACCURATE]
    assert d.design == "paired" and d.pairs == len(labelled) - (1 if 119 in labelled else 0)
    poor, good = result.report("poor").inaccurate, result.report("good").inaccurate
    assert d.estimate == pytest.approx(poor.estimate - good.estimate, abs=1e-12)
    assert d.se != pytest.approx(difference(poor, good).se, rel=1e-6)
    assert all(x.design == "paired" for x in diffs.values())
    code, out, _ = _run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                        "--difference", "poor", "good")
    assert code == 0 and f"paired on {d.pairs} images" in out
    code, out, _ = _run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                        "--difference", "poor", "good", "--json")
    target = json.loads(out)["differences"][0]["targets"]["inaccurate"]
    assert target["design"] == "paired" and target["ci"] == pytest.approx(list(d.ci), abs=1e-12)


def test_systems_labelled_on_different_images_are_independent(store, capsys):
    _, truth, labelled = build_street(store)
    # ann labels three more images of system poor only: the labelled images of the two systems differ.
    project = load_project(store, PROJECT)
    extra = [i for i in range(119) if i not in set(labelled.tolist())][:3]
    ids = [c.caption_id for it in project.items for c in it.captions if c.system == "poor"]
    with store.transaction() as conn:
        uid = user_id(conn, "ann")
        for i in extra:
            types = truth["poor"][i]
            insert_judgement(conn, ids[i], uid, label="inaccurate" if types else "accurate", error_types=types)
    result = estimate_store(store, PROJECT, "annotator:ann", pairs=[("poor", "good")])
    d = result.difference("poor", "good")[INACCURATE]
    poor, good = result.report("poor").inaccurate, result.report("good").inaccurate
    assert d.design == "independent" and d.pairs == 0
    assert d == difference(poor, good)
    code, out, _ = _run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                        "--difference", "poor", "good")
    assert "independent samples" in out
