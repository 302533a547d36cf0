"""Where to annotate next: draw the next human sample of a system where labels shrink the widest intervals.

A draw is a Poisson sample: caption i is taken on its own coin with
probability ``pi_i``, and that probability is recorded, so the estimate
(:func:`annotator.estimate.ppi.draws_means`) weights it by ``1 / pi_i`` and
stays unbiased whatever the probabilities were. The number drawn is therefore
about, not exactly, the size asked for (the probabilities add up to it).
Captions labelled before the draw are part of it for certain (probability 1):
their labels are known already and cost nothing.

Active design (:func:`allocate`). The prediction-powered estimate of a share
has, under Poisson sampling, the variance ``sum_i (1/pi_i - 1) r_i^2 / N^2``
with the rectifier ``r_i = y_i - lam * f_i`` (human label minus the weighted
detector score). For a fixed expected size it is smallest when ``pi_i`` is
proportional to the expected size of ``|r_i|`` (Neyman allocation); for
several targets at once, to the square root of the sum of their expected
``r_i^2``. Its parts:

* ``P(y = 1 | score)`` per target, from the labels so far: the share of
  labelled captions that have the error among those whose detector score
  falls in the same band (0; below 0.5; 0.5 to 0.75; 0.75 and above), shrunk
  towards a prior (the band's mean score averaged with the overall share) by
  two pseudo-labels, so a band with few labels leans on the prior and the
  first draw, without labels, on the scores alone;
* ``lam`` per target, the weight that minimises the expected squared
  rectifier over all captions;
* the targets: by default the widest intervals of the current estimate (or,
  before any label, the targets with the largest expected variance).

So captions whose detector is unsure, or flags a type whose interval is wide,
get a higher probability. A floor keeps every caption drawable: the
probabilities are a mixture, ``floor`` of the uniform draw and ``1 - floor``
of the Neyman allocation, capped at 1 (the excess spread over the others), so
no caption has less than ``floor`` times the uniform chance and no weight is
more than ``1 / floor`` times the uniform one.

The uniform design gives every caption not yet labelled the same probability.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..taxonomy import ERROR_TYPE_IDS
from .detectors import INACCURATE
from .report import EstimateReport, HumanLabels

DESIGNS = ("active", "uniform")
#: Share of the uniform draw mixed into every active draw (each caption keeps at least this share of its chance).
DEFAULT_FLOOR = 0.2
#: How many of the widest intervals an active draw aims at when no targets are named.
DEFAULT_WIDEST = 3
#: Detector score bands for P(label | score): 0, (0, 0.5), [0.5, 0.75), [0.75, 1].
SCORE_BANDS = (1e-9, 0.5, 0.75)
#: Pseudo-labels that pull a band's observed share towards its prior.
PRIOR_WEIGHT = 2.0
TARGETS = (INACCURATE, *ERROR_TYPE_IDS)


@dataclass(frozen=True)
class Allocation:
    """The inclusion probabilities of one draw over a system's N captions, and what they aim at."""

    probabilities: np.ndarray  # (N,): 1 for captions labelled already, the drawing chance for the others
    labelled: np.ndarray  # (N,) bool: labelled before the draw (taken for certain)
    design: str
    targets: tuple[str, ...]
    size: int  # expected number of new captions (the sum of the other captions' probabilities)
    floor: float
    lam: dict[str, float]  # the detector weight each target's allocation assumed
    widths: dict[str, float | None]  # each target's current interval width (None: no estimate yet)

    @property
    def candidates(self) -> int:
        """Captions not labelled yet (those the draw may take)."""
        return int(self.labelled.size - np.count_nonzero(self.labelled))

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """Rows taken (sorted): those labelled already, and each other caption on its own coin."""
        return np.flatnonzero(rng.random(self.probabilities.size) < self.probabilities)


def score_band(f: np.ndarray) -> np.ndarray:
    """Band index (0..3) of each detector score (see :data:`SCORE_BANDS`)."""
    return np.digitize(f, SCORE_BANDS)


def error_rates(f_all: np.ndarray, rows: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(label = 1 | score band) for every caption and target column, from labels ``y`` (n, d) of ``rows``.

    The observed share in a band is shrunk towards the band's prior — its mean
    score averaged with the overall share of the labels (before any label, with
    the mean score of all captions) — by :data:`PRIOR_WEIGHT` pseudo-labels.
    """
    f_all = np.asarray(f_all, dtype=float)
    N, d = f_all.shape
    y = np.asarray(y, dtype=float).reshape(len(rows), d)
    bands = score_band(f_all)
    out = np.empty((N, d))
    for j in range(d):
        b = bands[:, j]
        overall = y[:, j].mean() if len(rows) else f_all[:, j].mean()
        count = np.bincount(b[rows], minlength=4).astype(float)
        hits = np.bincount(b[rows], weights=y[:, j], minlength=4)
        mean_score = np.bincount(b, weights=f_all[:, j], minlength=4) / np.maximum(np.bincount(b, minlength=4), 1)
        prior = (mean_score + overall) / 2
        out[:, j] = ((hits + PRIOR_WEIGHT * prior) / (count + PRIOR_WEIGHT))[b]
    return out


def expected_rectifier(f_all: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E[(y - lam f)^2] per caption and target for 0/1 labels with P(y = 1) = ``rates``, and the ``lam``
    per target (clipped to [0, 1]) that makes its sum over the captions smallest."""
    ff = (f_all ** 2).sum(0)
    lam = np.clip(np.divide((rates * f_all).sum(0), ff, out=np.zeros(f_all.shape[1]), where=ff > 0), 0.0, 1.0)
    g = lam * f_all
    return rates * (1 - g) ** 2 + (1 - rates) * g ** 2, lam


def capped_probabilities(weight: np.ndarray, size: float) -> np.ndarray:
    """Probabilities proportional to ``weight`` (positive) that add up to ``size`` (< len), none above 1."""
    pi = np.zeros(len(weight))
    free = np.ones(len(weight), dtype=bool)
    while True:
        budget = size - np.count_nonzero(~free)
        pi[free] = budget * weight[free] / weight[free].sum()
        over = free & (pi > 1.0)
        if not over.any():
            return pi
        pi[over] = 1.0
        free &= ~over


def interval_widths(report: EstimateReport) -> dict[str, float]:
    """The width of each target's interval in an estimate (clipped to [0, 1], as shown)."""
    out = {}
    for t in (INACCURATE, *report.types):
        e = report.target(t)
        out[t] = float(min(e.ci[1], 1.0) - max(e.ci[0], 0.0))
    return out


def widest_targets(widths: dict[str, float], k: int) -> list[str]:
    """The ``k`` targets with the largest values in ``widths`` (ties: taxonomy order)."""
    order = {t: i for i, t in enumerate(TARGETS)}
    return sorted(widths, key=lambda t: (-widths[t], order.get(t, len(order)), t))[:k]


def allocate(scores: dict[str, np.ndarray], human: HumanLabels, size: int, *, design: str = "active",
             targets: Sequence[str] | None = None, widest: int = DEFAULT_WIDEST, floor: float = DEFAULT_FLOOR,
             widths: dict[str, float] | None = None) -> Allocation:
    """Inclusion probabilities of the next draw of a system (see the module documentation).

    ``scores`` maps each target (``"inaccurate"`` and the type ids) to its
    detector scores over the system's N captions; ``human`` holds the labels so
    far (rows among the N); ``size`` is the expected number of new captions;
    ``widths`` the current intervals' widths (:func:`interval_widths`), whose
    widest ``widest`` are aimed at when ``targets`` is not given (without
    them, the targets of largest expected variance).
    """
    if design not in DESIGNS:
        raise ValueError(f"unknown design {design!r}; choose one of {', '.join(DESIGNS)}")
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"the floor must be between 0 and 1, not {floor}")
    if size < 1:
        raise ValueError(f"the size of a draw must be at least 1, not {size}")
    names = list(scores)
    N = len(next(iter(scores.values())))
    labelled = np.zeros(N, dtype=bool)
    labelled[human.rows] = True
    candidates = np.flatnonzero(~labelled)
    pi = labelled.astype(float)
    if targets:
        unknown = [t for t in targets if t not in scores]
        if unknown:
            raise ValueError(f"unknown targets: {', '.join(unknown)}; choose among {', '.join(names)}")
    f_all = np.column_stack([scores[t] for t in names]) if names else np.zeros((N, 0))
    y = np.column_stack([human.inaccurate if t == INACCURATE else human.type_matrix([t])[:, 0] for t in names]) \
        if names else np.zeros((len(human.rows), 0))
    # type labels count only where the types are known; the inaccurate label wherever there is one
    known = human.types_known
    rates = np.empty_like(f_all)
    for j, t in enumerate(names):
        keep = np.ones(len(human.rows), dtype=bool) if t == INACCURATE else known
        rates[:, j] = error_rates(f_all[:, [j]], human.rows[keep], y[keep][:, [j]])[:, 0]
    r2, lam = expected_rectifier(f_all, rates)
    expected = {t: float(r2[candidates, j].sum()) for j, t in enumerate(names)}
    known_widths = {t: w for t, w in (widths or {}).items() if t in scores}
    chosen = list(dict.fromkeys(targets)) if targets else widest_targets(known_widths or expected, widest)
    if len(candidates) <= size:
        pi[candidates] = 1.0
    else:
        need = np.sqrt(r2[candidates][:, [names.index(t) for t in chosen]].sum(1)) if design == "active" else None
        uniform = np.full(len(candidates), 1.0 / len(candidates))
        if need is not None and np.ptp(need) <= 1e-12 * max(1.0, float(need.max())):
            # nothing tells the captions apart: an "active" draw would be a uniform one under another name
            raise ValueError(f"the detectors give every caption not labelled yet the same expected error for "
                             f"{', '.join(chosen)} (no detector evidence: no references or box labels to compare "
                             "with), so an active draw would be uniform; draw a uniform sample instead (--random N)")
        if need is None or need.sum() <= 0:
            share = uniform
        else:
            share = floor * uniform + (1 - floor) * need / need.sum()
        pi[candidates] = capped_probabilities(share, float(size))
    return Allocation(pi, labelled, design, tuple(chosen), int(min(size, len(candidates))), floor,
                      {t: float(lam[names.index(t)]) for t in chosen}, {t: known_widths.get(t) for t in chosen})


def draw_seed(seed: int, system_id: int, draw_number: int) -> np.random.Generator:
    """The generator of a system's ``draw_number``-th draw: the same seed gives the same draw, and the rounds
    of one system get independent coins."""
    if seed < 0:
        raise ValueError(f"the seed must be 0 or more, not {seed}")
    return np.random.default_rng([seed, system_id, draw_number])
