"""Active sampling: the inclusion probabilities of a draw, the estimate from recorded draws (hand-computed and
against the one-round estimator) and, on simulated systems where the truth is known, coverage and width of
active against uniform draws of the same size."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.estimate import HumanLabels, ppi_mean
from annotator.estimate.ppi import SampleDraw, draws_means
from annotator.estimate.sampling import (allocate, capped_probabilities, draw_seed, error_rates, expected_rectifier,
                                         widest_targets)

TYPES = {"gender": 0.15, "scene": 0.10, "clothing_color": 0.07}
NAMES = ["inaccurate", *TYPES]


def simulate(rng, N: int, recall: float = 0.9, false_alarm: float = 0.03, other: float = 0.02):
    """A system's true labels and detector scores. A detector flags a caption that has its error with
    probability ``recall`` (score uniform in [0.5, 1]) and one without it with probability ``false_alarm``
    (score in [0.5, 0.8]); its score is 0 otherwise. Some errors ("other") no detector sees; the inaccurate
    score is the largest type score, as in the product's detectors."""
    truth = {t: rng.random(N) < p for t, p in TYPES.items()}
    labels = {"inaccurate": (rng.random(N) < other) | np.any(np.column_stack(list(truth.values())), axis=1), **truth}
    scores = {}
    for t, y in truth.items():
        flagged = np.where(y, rng.random(N) < recall, rng.random(N) < false_alarm)
        scores[t] = np.where(flagged, np.where(y, rng.uniform(0.5, 1.0, N), rng.uniform(0.5, 0.8, N)), 0.0)
    scores["inaccurate"] = np.max(np.column_stack([scores[t] for t in TYPES]), axis=1)
    return labels, scores


def human(rows, labels, draws=()) -> HumanLabels:
    rows = np.sort(np.asarray(rows, dtype=np.int64))
    return HumanLabels.from_lists(rows, labels["inaccurate"][rows],
                                  [frozenset(t for t in TYPES if labels[t][r]) for r in rows], draws=draws)


def estimates(h: HumanLabels, labels, scores) -> dict:
    Y = np.column_stack([labels[t][h.rows] for t in NAMES]).astype(float)
    F = np.column_stack([scores[t] for t in NAMES])
    found, _ = draws_means(h.rows, Y, F, h.draws)
    return dict(zip(NAMES, found))


# ---------------------------------------------------------------------------------------------- probabilities

def test_probabilities_add_up_to_the_size_keep_the_floor_and_take_labelled_captions_for_certain():
    rng = np.random.default_rng(0)
    labels, scores = simulate(rng, 2000)
    pilot = human(rng.choice(2000, 150, replace=False), labels)
    a = allocate(scores, pilot, 300, floor=0.2, widths={"inaccurate": 0.1, "gender": 0.08, "scene": 0.05,
                                                        "clothing_color": 0.04})
    others = ~a.labelled
    assert a.labelled.sum() == 150 and np.all(a.probabilities[a.labelled] == 1.0)
    assert a.probabilities[others].sum() == pytest.approx(300)
    assert a.probabilities[others].min() >= 0.2 * 300 / 1850 - 1e-12
    assert a.probabilities.max() <= 1.0
    assert a.targets == ("inaccurate", "gender", "scene")  # the three widest intervals
    # captions a detector flags for an aimed-at type are drawn more often than those nothing flags
    flagged = others & (scores["gender"] > 0)
    quiet = others & (scores["inaccurate"] == 0)
    assert a.probabilities[flagged].mean() > 1.5 * a.probabilities[quiet].mean()
    uniform = allocate(scores, pilot, 300, design="uniform")
    assert np.allclose(uniform.probabilities[others], 300 / 1850)


def test_a_size_beyond_the_unlabelled_captions_takes_them_all():
    rng = np.random.default_rng(1)
    labels, scores = simulate(rng, 50)
    a = allocate(scores, human([0, 1, 2], labels), 60)
    assert np.all(a.probabilities == 1.0) and a.size == 47


def test_capped_probabilities_spread_the_excess():
    pi = capped_probabilities(np.array([10.0, 1, 1, 1, 1]), 3.0)
    assert pi[0] == 1.0 and pi[1:] == pytest.approx([0.5] * 4) and pi.sum() == pytest.approx(3.0)


def test_error_rates_shrink_a_band_towards_its_prior():
    f = np.array([[0.0], [0.0], [0.0], [0.0], [0.9], [0.9]])
    rates = error_rates(f, np.array([0, 1, 4]), np.array([[0.0], [0.0], [1.0]]))
    overall = 1 / 3
    # band 0: no error among 2 labels, prior (mean score 0 + overall) / 2, two pseudo-labels
    assert rates[0, 0] == pytest.approx((0 + 2 * (0 + overall) / 2) / (2 + 2))
    assert rates[5, 0] == pytest.approx((1 + 2 * (0.9 + overall) / 2) / (1 + 2))
    r2, lam = expected_rectifier(f, rates)
    assert lam[0] == pytest.approx(min(1.0, (rates[:, 0] * f[:, 0]).sum() / (f[:, 0] ** 2).sum()))
    g = lam[0] * f[:, 0]
    assert r2[:, 0] == pytest.approx(rates[:, 0] * (1 - g) ** 2 + (1 - rates[:, 0]) * g ** 2)


def test_widest_targets_and_unknown_targets():
    assert widest_targets({"gender": 0.1, "inaccurate": 0.1, "scene": 0.3}, 2) == ["scene", "inaccurate"]
    rng = np.random.default_rng(2)
    labels, scores = simulate(rng, 100)
    with pytest.raises(ValueError, match="unknown targets"):
        allocate(scores, human([0, 1], labels), 10, targets=["colour"])


def test_the_same_seed_gives_the_same_draw_and_rounds_get_fresh_coins():
    rng = np.random.default_rng(3)
    labels, scores = simulate(rng, 3000)
    a = allocate(scores, human([], labels), 200)
    first = a.draw(draw_seed(7, 1, 1))
    assert np.array_equal(first, a.draw(draw_seed(7, 1, 1)))
    assert not np.array_equal(first, a.draw(draw_seed(7, 1, 2)))
    assert not np.array_equal(first, a.draw(draw_seed(7, 2, 1)))
    with pytest.raises(ValueError):
        draw_seed(-1, 1, 1)


# ---------------------------------------------------------------------------------------------- the estimator

def test_one_draw_is_the_one_round_poisson_estimate():
    rng = np.random.default_rng(4)
    labels, scores = simulate(rng, 3000)
    a = allocate(scores, human([], labels), 250)
    rows = a.draw(draw_seed(0, 1, 1))
    pi = a.probabilities[rows]
    y, f = labels["inaccurate"].astype(float), scores["inaccurate"]
    (mine,), (use,) = draws_means(rows, y[rows], f, [SampleDraw(1, rows, pi)])
    one = ppi_mean(y[rows], f[rows], f, weights=1 / pi, finite_population=True)
    assert (mine.estimate, *mine.ci, *mine.classical_ci) == pytest.approx((one.estimate, *one.ci, *one.classical_ci))
    assert (use.drawn, use.labelled, use.share) == (len(rows), len(rows), 1.0)


def test_hand_computed_two_draws_with_missing_labels():
    f = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    y_all = np.array([0.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    first = SampleDraw(1, np.array([0, 2, 3]), np.array([0.5, 0.5, 0.5]))
    second = SampleDraw(2, np.array([0, 2, 3, 5]), np.array([1.0, 1.0, 1.0, 0.25]))  # 0, 2, 3 labelled before it
    labelled = np.array([0, 2, 5])  # caption 3 of the first draw has no label yet
    (e,), uses = draws_means(labelled, y_all[labelled], f, [first, second], lam=1.0)
    N = 6
    # first draw: two of its three drawn captions labelled, so each stands for 3/2 of them: w = 1 / (0.5 * 2/3) = 3
    w1 = np.array([3.0, 3.0])
    r1 = y_all[[0, 2]] - f[[0, 2]]
    theta1 = f.mean() + (w1 * r1).sum() / N
    se1 = np.sqrt((w1 * (w1 - 1) * r1 ** 2).sum()) / N
    # second draw: of the three taken for certain two are labelled (w = 3/2), the drawn one has w = 4
    w2 = np.array([1.5, 1.5, 4.0])
    r2 = y_all[[0, 2, 5]] - f[[0, 2, 5]]
    theta2 = f.mean() + (w2 * r2).sum() / N
    se2 = np.sqrt((w2 * (w2 - 1) * r2 ** 2).sum()) / N
    s1, s2 = 1 / (w1 * (w1 - 1)).sum(), 1 / (w2 * (w2 - 1)).sum()
    share = np.array([s1, s2]) / (s1 + s2)
    assert e.estimate == pytest.approx(share @ [theta1, theta2])
    assert e.se == pytest.approx(np.sqrt(share[0] ** 2 * se1 ** 2 + share[1] ** 2 * se2 ** 2))
    assert [u.share for u in uses] == pytest.approx(list(share))
    assert [(u.drawn, u.labelled) for u in uses] == [(3, 2), (4, 3)]
    assert e.n == 3


def test_a_labelled_census_is_exact_and_unusable_draws_are_named():
    y = np.array([1.0, 0.0, 1.0, 0.0])
    census = SampleDraw(1, np.arange(4), np.ones(4))
    (e,), (use,) = draws_means(np.arange(4), y, np.zeros(4), [census])
    assert e.estimate == 0.5 and e.se == 0.0
    lonely = SampleDraw(2, np.array([0, 3]), np.array([0.3, 0.3]))
    (e,), uses = draws_means(np.array([0, 1, 2]), y[:3], np.zeros(4), [lonely, census])
    assert uses[0].share == 0.0 and "fewer than two" in uses[0].reason
    with pytest.raises(ValueError, match="no recorded draw"):
        draws_means(np.array([0]), y[:1], np.zeros(4), [lonely])
    with pytest.raises(ValueError, match="probabilities"):
        SampleDraw(3, np.array([0, 1]), np.array([0.0, 0.5]))


def test_labels_outside_the_draws_do_not_enter():
    rng = np.random.default_rng(5)
    labels, scores = simulate(rng, 1000)
    rows = np.arange(0, 1000, 10)
    draw = SampleDraw(1, rows, np.full(len(rows), 0.1))
    extra = np.union1d(rows, np.arange(1, 200))  # a queue worked through from the top: no recorded chance
    assert estimates(human(extra, labels, (draw,)), labels, scores)["inaccurate"] == \
        estimates(human(rows, labels, (draw,)), labels, scores)["inaccurate"]


# ---------------------------------------------------------------------------------------------- simulation

REPEATS = 400
NOMINAL = 0.95
TOLERANCE = 3.5 * np.sqrt(NOMINAL * (1 - NOMINAL) / REPEATS)  # about 0.038
N, PILOT, SIZE = 3000, 150, 250


def one_repeat(rng, design: str, pilot: bool, answered: float = 1.0):
    """Draw (after a uniform pilot, or from scratch), label the drawn captions (a random ``answered`` share of
    the last draw), estimate; returns per target (covered, width) and the targets aimed at."""
    labels, scores = simulate(rng, N)
    draws, h, widths = [], human([], labels), None
    if pilot:
        a = allocate(scores, h, PILOT, design="uniform")
        rows = a.draw(rng)
        draws.append(SampleDraw(1, rows, a.probabilities[rows]))
        h = human(rows, labels, tuple(draws))
        widths = {t: e.width for t, e in estimates(h, labels, scores).items()}
    a = allocate(scores, h, SIZE, design=design, widths=widths)
    rows = a.draw(rng)
    draws.append(SampleDraw(2, rows, a.probabilities[rows]))
    fresh = rows[~a.labelled[rows]]
    answered_rows = fresh[rng.random(len(fresh)) < answered]
    found = estimates(human(np.union1d(h.rows, answered_rows), labels, tuple(draws)), labels, scores)
    return {t: (found[t].ci[0] <= labels[t].mean() <= found[t].ci[1], found[t].width) for t in NAMES}, a.targets


def simulate_design(design: str, pilot: bool, seed: int, answered: float = 1.0):
    rng = np.random.default_rng(seed)
    covered = {t: 0 for t in NAMES}
    widths = {t: 0.0 for t in NAMES}
    aimed = set()
    for _ in range(REPEATS):
        result, targets = one_repeat(rng, design, pilot, answered)
        aimed.update(targets)
        for t, (c, w) in result.items():
            covered[t] += c
            widths[t] += w / REPEATS
    return {t: c / REPEATS for t, c in covered.items()}, widths, aimed


@pytest.mark.slow  # Monte Carlo coverage: make check leaves it out
@pytest.mark.parametrize("pilot", [False, True], ids=["from scratch", "after a uniform pilot"])
def test_active_draws_cover_the_truth_and_are_narrower_than_uniform_draws(pilot):
    active, active_width, aimed = simulate_design("active", pilot, seed=11)
    uniform, uniform_width, _ = simulate_design("uniform", pilot, seed=11)
    for t in NAMES:
        assert abs(active[t] - NOMINAL) <= TOLERANCE, (t, active[t])
        assert abs(uniform[t] - NOMINAL) <= TOLERANCE, (t, uniform[t])
    # narrower on average for every interval aimed at, and not wider for the others
    assert aimed
    for t in NAMES:
        ratio = active_width[t] / uniform_width[t]
        assert ratio < (0.985 if t in aimed else 1.01), (t, ratio, active_width, uniform_width)


@pytest.mark.slow  # Monte Carlo coverage: make check leaves it out
def test_coverage_holds_when_a_fifth_of_the_draw_is_not_labelled_yet():
    covered, _, _ = simulate_design("active", True, seed=12, answered=0.8)
    for t in NAMES:
        assert abs(covered[t] - NOMINAL) <= TOLERANCE, (t, covered[t])


def test_reading_an_active_draw_as_a_random_sample_would_be_biased():
    """Why the probabilities are stored: the same draw without its weights misses the truth far more often."""
    rng = np.random.default_rng(13)
    covered = 0
    for _ in range(200):
        labels, scores = simulate(rng, N)
        a = allocate(scores, human([], labels), SIZE, floor=0.05, targets=["inaccurate"])
        rows = a.draw(rng)
        y, f = labels["inaccurate"].astype(float), np.zeros(N)
        e = ppi_mean(y[rows], f[rows], f, finite_population=True)  # the classical interval, weights ignored
        covered += e.ci[0] <= y.mean() <= e.ci[1]
    assert covered / 200 < 0.6
