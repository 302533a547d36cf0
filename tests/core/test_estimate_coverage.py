"""Coverage of the intervals on simulated projects where the truth is known.

Every caption of a simulated system carries a true 0/1 label and a detector
score; a random sample of labels is revealed, the estimate is computed, and
the repeat counts as covered when the interval holds the true share of all
captions. Over R repeats the coverage of a 95 % interval should be 0.95 up
to binomial noise (standard deviation sqrt(0.95 * 0.05 / R)); the bounds
below allow 3.5 standard deviations either side, so a method that is
miscalibrated by a few points fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from annotator.estimate import ppi_mean

REPEATS = 1000
NOMINAL = 0.95
TOLERANCE = 3.5 * np.sqrt(NOMINAL * (1 - NOMINAL) / REPEATS)  # about 0.024


def simulate(rng, N: int, prevalence: float, signal: float):
    """True labels and detector scores: with signal s the score is s * label + (1 - s) * uniform noise."""
    y = (rng.random(N) < prevalence).astype(float)
    f = signal * y + (1 - signal) * rng.random(N)
    return y, f


def run(setting: dict, seed: int):
    rng = np.random.default_rng(seed)
    N, n = setting["N"], setting["n"]
    covered = covered_classical = 0
    widths, classical_widths = [], []
    for _ in range(REPEATS):
        y_all, f_all = simulate(rng, N, setting["prevalence"], setting["signal"])
        truth = y_all.mean()
        if setting.get("poisson"):
            # active-sampling design: uncertain captions (score near the middle) are labelled more often
            pi = np.clip(n / N * (0.5 + 2.0 * (1 - np.abs(2 * f_all - 1))), 0.005, 1.0)
            rows = np.flatnonzero(rng.random(N) < pi)
            est = ppi_mean(y_all[rows], f_all[rows], f_all, weights=1 / pi[rows], finite_population=True)
        else:
            rows = rng.choice(N, n, replace=False)
            est = ppi_mean(y_all[rows], f_all[rows], f_all, finite_population=True)
        covered += est.ci[0] <= truth <= est.ci[1]
        covered_classical += est.classical_ci[0] <= truth <= est.classical_ci[1]
        widths.append(est.width)
        classical_widths.append(est.classical_width)
    return covered / REPEATS, covered_classical / REPEATS, float(np.mean(widths)), float(np.mean(classical_widths))


SETTINGS = {
    # name: setting, the largest allowed ratio of mean widths (prediction-powered / classical)
    "strong detector": ({"N": 3000, "n": 200, "prevalence": 0.3, "signal": 0.7}, 0.45),
    "moderate detector, rare type": ({"N": 5000, "n": 300, "prevalence": 0.15, "signal": 0.4}, 0.85),
    "half the captions labelled": ({"N": 1000, "n": 500, "prevalence": 0.4, "signal": 0.5}, 0.7),
    "detector without signal": ({"N": 3000, "n": 200, "prevalence": 0.3, "signal": 0.0}, 1.01),
    "active sampling weights": ({"N": 4000, "n": 250, "prevalence": 0.3, "signal": 0.5, "poisson": True}, None),
}


@pytest.mark.parametrize("name", list(SETTINGS))
def test_intervals_cover_the_true_share(name):
    setting, max_ratio = SETTINGS[name]
    coverage, coverage_classical, width, classical_width = run(setting, seed=len(name))
    assert abs(coverage - NOMINAL) <= TOLERANCE, (name, coverage)
    if not setting.get("poisson"):
        assert abs(coverage_classical - NOMINAL) <= TOLERANCE, (name, coverage_classical)
    if max_ratio is not None:
        assert width / classical_width <= max_ratio, (name, width, classical_width)


def test_population_intervals_cover_the_generating_rate():
    """The reference implementation's estimand: the rate of the process the captions come from."""
    rng = np.random.default_rng(1)
    N, n, p = 3000, 200, 0.3
    covered = 0
    for _ in range(REPEATS):
        y_all, f_all = simulate(rng, N, p, 0.6)
        rows = rng.choice(N, n, replace=False)
        est = ppi_mean(y_all[rows], f_all[rows], f_all)
        covered += est.ci[0] <= p <= est.ci[1]
    assert abs(covered / REPEATS - NOMINAL) <= TOLERANCE


def test_ignoring_the_sampling_weights_would_be_biased():
    """Why the weights matter: the same non-uniform sample read as a uniform one misses the truth."""
    rng = np.random.default_rng(2)
    N, n = 4000, 250
    covered = 0
    for _ in range(200):
        y_all, f_all = simulate(rng, N, 0.3, 0.0)
        pi = np.where(y_all == 1, 3 * n / N, n / N)  # errors three times as likely to be labelled
        rows = np.flatnonzero(rng.random(N) < pi)
        est = ppi_mean(y_all[rows], f_all[rows], f_all, finite_population=True)
        covered += est.ci[0] <= y_all.mean() <= est.ci[1]
    assert covered / 200 < 0.2
