"""Prediction-powered inference: equal to the reference implementation (ppi_py) and to hand-computed cases."""

from __future__ import annotations

import numpy as np
import ppi_py
import pytest

from annotator.estimate import classical_mean, difference, ppi_mean, ppi_means


def project(seed: int, N: int = 4000, n: int = 250, prevalence: float = 0.3, signal: float = 0.6):
    """Human labels of a random sample and detector scores of every caption."""
    rng = np.random.default_rng(seed)
    y_all = (rng.random(N) < prevalence).astype(float)
    f_all = np.clip(signal * y_all + (1 - signal) * rng.random(N), 0, 1)
    rows = rng.choice(N, n, replace=False)
    return y_all[rows], f_all[rows], f_all, rng


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.35])
def test_point_estimate_and_interval_equal_ppi_py(seed, lam):
    y, f, f_all, _ = project(seed, signal=0.15 + 0.15 * seed)
    for alpha in (0.05, 0.1):
        mine = ppi_mean(y, f, f_all, alpha=alpha, lam=lam)
        assert mine.estimate == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, f, f_all, lam=lam)[0]), abs=1e-12)
        lo, hi = ppi_py.ppi_mean_ci(y, f, f_all, alpha=alpha, lam=lam)
        assert mine.ci == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)
        if lam is not None:
            assert mine.lam == lam


def test_tuned_lambda_is_strictly_inside_for_a_weak_detector_and_still_matches():
    y, f, f_all, _ = project(3, signal=0.2, prevalence=0.4)
    mine = ppi_mean(y, f, f_all)
    assert 0 < mine.lam < 1
    lo, hi = ppi_py.ppi_mean_ci(y, f, f_all, alpha=0.05)
    assert mine.ci == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)


@pytest.mark.parametrize("lam", [None, 1.0, 0.5])
def test_sample_weights_equal_ppi_py(lam):
    y, f, f_all, rng = project(11, signal=0.3)
    w = rng.uniform(0.5, 3.0, len(y))
    w_all = rng.uniform(0.5, 3.0, len(f_all))
    mine = ppi_mean(y, f, f_all, lam=lam, weights=w, weights_all=w_all)
    ref = float(ppi_py.ppi_mean_pointestimate(y, f, f_all, lam=lam, w=w, w_unlabeled=w_all)[0])
    assert mine.estimate == pytest.approx(ref, abs=1e-12)
    lo, hi = ppi_py.ppi_mean_ci(y, f, f_all, alpha=0.05, lam=lam, w=w, w_unlabeled=w_all)
    assert mine.ci == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)


def test_classical_interval_equals_ppi_py():
    y, _, _, rng = project(5)
    mine = classical_mean(y, alpha=0.1)
    assert mine.ci == pytest.approx(ppi_py.classical_mean_ci(y, alpha=0.1), abs=1e-12)
    assert mine.classical_ci == mine.ci
    w = rng.uniform(0.5, 2.0, len(y))
    assert classical_mean(y, alpha=0.1, weights=w).ci == pytest.approx(
        ppi_py.classical_mean_ci(y, w=w, alpha=0.1), abs=1e-12)
    # the classical interval of every estimate is the one of the human sample alone
    y, f, f_all, _ = project(6)
    assert ppi_mean(y, f, f_all, alpha=0.1).classical_ci == pytest.approx(ppi_py.classical_mean_ci(y, alpha=0.1))


def test_columns_are_tuned_one_by_one_like_ppi_py_element_mode():
    y1, f1, a1, _ = project(1, signal=0.2)
    y2, f2, a2, _ = project(2, signal=0.7, prevalence=0.1)
    Y, F, A = np.column_stack([y1, y2]), np.column_stack([f1, f2]), np.column_stack([a1, a2])
    both = ppi_means(Y, F, A)
    lo, hi = ppi_py.ppi_mean_ci(Y, F, A, alpha=0.05, lam_optim_mode="element")
    for j, est in enumerate(both):
        assert est.ci == pytest.approx((lo[j], hi[j]), abs=1e-12)
        single = ppi_mean(Y[:, j], F[:, j], A[:, j])
        assert (est.estimate, *est.ci, est.lam) == pytest.approx((single.estimate, *single.ci, single.lam))


# A case small enough to do by hand: 4 labelled captions out of 8.
Y = np.array([1.0, 1.0, 0.0, 0.0])
F = np.array([1.0, 0.0, 0.0, 0.0])
F_ALL = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0])


def test_hand_computed_population_estimate():
    # theta = mean(F_ALL) + mean(Y - F) = 3/8 + 1/4 (min_support=0: the plain normal approximation)
    est = ppi_mean(Y, F, F_ALL, lam=1.0, min_support=0)
    assert est.estimate == pytest.approx(0.625)
    # se^2 = var(F_ALL)/8 + var(Y - F)/4 with population variances (3/8 * 5/8) and (1/4 * 3/4)
    se = np.sqrt((3 / 8 * 5 / 8) / 8 + (1 / 4 * 3 / 4) / 4)
    assert est.se == pytest.approx(se)
    assert est.ci == pytest.approx((0.625 - 1.959963984540054 * se, 0.625 + 1.959963984540054 * se))
    assert est.classical == pytest.approx(0.5) and est.classical_se == pytest.approx(0.5 / 2)


def test_hand_computed_finite_population_estimate():
    est = ppi_mean(Y, F, F_ALL, lam=1.0, finite_population=True)
    assert est.estimate == pytest.approx(0.625)
    # (1 - 4/8) * sample variance of Y - F = (0, 1, 0, 0), which is 1/4, over n = 4
    assert est.se == pytest.approx(np.sqrt(0.5 * 0.25 / 4))
    # classical: (1 - 1/2) * sample variance of Y (1/3) / 4
    assert est.classical_se == pytest.approx(np.sqrt(0.5 * (1 / 3) / 4))
    # tuned: lam = cov(Y, F) / var(F) = 0.5 / 0.75 over the labelled captions
    tuned = ppi_mean(Y, F, F_ALL, finite_population=True)
    assert tuned.lam == pytest.approx(2 / 3)
    assert tuned.estimate == pytest.approx(2 / 3 * 3 / 8 + np.mean(Y - 2 / 3 * F))
    # every caption labelled: the share is known exactly
    full = ppi_mean(F_ALL, F_ALL, F_ALL, finite_population=True)
    assert full.estimate == pytest.approx(3 / 8) and full.se == 0 and full.ci == (full.estimate, full.estimate)


def test_hand_computed_poisson_sampling_weights():
    # captions labelled with probabilities 1/2, 1/2, 1/4, 1/4: Horvitz-Thompson over N = 8
    w = np.array([2.0, 2.0, 4.0, 4.0])
    est = ppi_mean(Y, F, F_ALL, lam=1.0, weights=w, finite_population=True)
    assert est.estimate == pytest.approx(3 / 8 + (2 * 0 + 2 * 1 + 0 + 0) / 8)
    assert est.se == pytest.approx(np.sqrt(2 * 1 * 1) / 8)
    assert est.classical == pytest.approx((2 + 2) / 8)
    with pytest.raises(ValueError, match="at least 1"):
        ppi_mean(Y, F, F_ALL, weights=np.array([0.5, 2, 2, 2]), finite_population=True)


def test_constant_detector_falls_back_to_the_classical_estimate():
    y, _, f_all, _ = project(4)
    est = ppi_mean(y, np.zeros(len(y)), np.zeros(len(f_all)))
    assert est.lam == 0 and est.ci == pytest.approx(est.classical_ci)
    est = ppi_mean(y, np.zeros(len(y)), np.zeros(len(f_all)), finite_population=True)
    assert est.lam == 0 and est.ci == pytest.approx(est.classical_ci)


def test_difference_of_two_systems():
    ya, fa, aa, _ = project(7, prevalence=0.4)
    yb, fb, ab, _ = project(8, prevalence=0.2)
    a, b = ppi_mean(ya, fa, aa), ppi_mean(yb, fb, ab)
    d = difference(a, b)
    assert d.estimate == pytest.approx(a.estimate - b.estimate)
    assert d.se == pytest.approx(np.sqrt(a.se ** 2 + b.se ** 2))
    assert d.ci[0] > 0  # 40 % against 20 %: clearly different
    assert d.classical == pytest.approx(a.classical - b.classical)


def test_labels_needed_to_halve_an_interval():
    y, f, f_all, _ = project(9, N=10000, n=100)
    est = ppi_mean(y, f, f_all, finite_population=True)
    # (1 - n/N)/n shrinks by 4 at n' = 1 / ((1 - 0.01)/400 + 1/10000) = 388.3...
    assert est.labels_to_halve() == 389 - 100
    assert ppi_mean(y, f, f_all).labels_to_halve() == 300


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="at least two"):
        ppi_mean([1.0], [1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="shapes"):
        ppi_mean([1.0, 0.0], [1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="alpha"):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [1.0, 0.0], alpha=1.5)
    with pytest.raises(ValueError, match="only 2 captions"):
        ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 0.0], finite_population=True)
