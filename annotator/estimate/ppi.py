"""Prediction-powered inference for a share: a small human sample plus detector scores on everything.

The human labels ``y`` (0/1: is caption i inaccurate, does it have error
type t) exist for n captions; a detector score ``f`` exists for all N
captions. Prediction-powered inference (Angelopoulos et al., Science 2023)
estimates the mean of y as

    theta = lam * mean_N(f) + mean_n(y - lam * f)

The first term uses every caption; the second corrects the detector's bias on
the human sample, so the estimate is unbiased however poor the detector. The
power-tuned variant (PPI++, Angelopoulos, Duchi and Zrnic 2023) picks ``lam``
to minimise the variance and clips it to [0, 1]; ``lam = 0`` is the classical
estimate from the human sample alone, so the tuned interval is asymptotically
never wider than the classical one. Intervals come from the central limit
theorem.

Two estimands, chosen by ``finite_population``:

* ``False`` (the reference implementation's setting, ``ppi_py.ppi_mean_ci``):
  the mean of the distribution the captions are drawn from; the variance has a
  term for the N scored captions and one for the n labelled ones. ``weights``
  are the reference implementation's sample weights (normalised to mean 1).
* ``True``: the share among exactly these N captions (the system's output on
  this test set). The n labelled captions are part of the N. Without weights
  they are a simple random sample, and the variance carries the
  finite-population correction (1 - n/N): with every caption labelled the
  interval has width 0. With ``weights`` each caption i was labelled
  independently with known probability ``1 / weights[i]`` (Poisson sampling,
  the design of active sampling) and the Horvitz-Thompson estimator keeps the
  estimate unbiased.

Recorded draws (:func:`draws_means`): a human sample built in rounds, each
round a Poisson draw over all N captions whose probabilities may depend on
everything labelled before (active sampling). Captions labelled before a round
are part of it with probability 1; the others were drawn with the recorded
probability. Each round alone gives an estimate that is unbiased given the
rounds before it, so the rounds' errors are uncorrelated and their weighted
mean (weights fixed by the design, not by the labels) has the variance
``sum(share_k^2 * se_k^2)``. Captions of a round that have no label yet are
missing at random within the round (the round's captions are queued in random
order): the labelled ones stand for them, their weights scaled by the share
labelled.

Sparse targets: the normal approximation needs residuals that vary. When the
labelled captions hold fewer than :data:`MIN_SUPPORT` effective non-zero
residuals (a nearly exact detector) or captions of the rarer label (a rare
type), the interval is the hull of the prediction-powered one and the exact
Clopper-Pearson interval of the human sample on its effective size
(:func:`exact_interval`), and the estimate is flagged ``sparse``; the
classical interval likewise when the rarer label is too rare. Differences
combine intervals by MOVER (:func:`difference`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: An interval resting on fewer than this effective number of non-zero residuals (label minus weighted detector
#: score), or labelled captions with the rarer label, is flagged, and widened to contain the exact
#: (Clopper-Pearson) interval of the human sample: with so few cases the normal approximation collapses.
MIN_SUPPORT = 10


@dataclass(frozen=True)
class MeanEstimate:
    """A prediction-powered estimate of a share, with the classical estimate beside it."""

    estimate: float
    ci: tuple[float, float]
    se: float
    lam: float  # weight of the detector: 0 = human sample alone, 1 = plain PPI
    classical: float
    classical_ci: tuple[float, float]
    classical_se: float
    n: int  # captions with a human label
    N: int  # captions scored by the detector
    alpha: float
    finite_population: bool
    residuals: float = -1.0  # effective number of non-zero residuals y - lam * f (-1: not counted)
    cases: int = -1  # labelled captions with the rarer label (yes or no; -1: not counted)
    sparse: bool = False  # fewer than min_support residuals or cases: the interval was widened (see ppi_ci)
    ppi_ci: tuple[float, float] | None = None  # the normal-approximation interval before widening
    exact_ci: tuple[float, float] | None = None  # the exact interval of the human sample it was widened to contain

    @property
    def zero_width(self) -> bool:
        """True when the interval is a single point although not every caption is labelled."""
        return self.ci[1] - self.ci[0] <= 1e-12 and self.n < self.N

    @property
    def width(self) -> float:
        """Width of the prediction-powered interval."""
        return self.ci[1] - self.ci[0]

    @property
    def classical_width(self) -> float:
        """Width of the classical interval."""
        return self.classical_ci[1] - self.classical_ci[0]

    def labels_to_halve(self) -> int | None:
        """About how many more human labels (drawn the same way) would halve the interval's width.

        The variance shrinks like 1/n (times 1 - n/N for a finite population),
        assuming the detector keeps its quality. None when the interval is
        already of width 0 or cannot be halved within the N captions.
        """
        n, N = self.n, self.N
        if n == 0 or self.se == 0:
            return None
        if not self.finite_population:
            return 3 * n
        target = (1 - n / N) / (4 * n)  # the variance factor a quarter as big
        needed = 1.0 / (target + 1.0 / N)
        more = int(np.ceil(needed - 1e-9)) - n
        return more if n + more <= N else None


@dataclass(frozen=True)
class DifferenceEstimate:
    """The difference of two systems' estimates (system A minus system B).

    ``design`` says how its interval was made: ``"paired"`` (both systems'
    captions of the same images were labelled, :func:`paired_difference`) or
    ``"independent"`` (:func:`difference`); ``pairs`` is the number of
    labelled images in the paired case.
    """

    estimate: float
    ci: tuple[float, float]
    se: float
    classical: float
    classical_ci: tuple[float, float]
    alpha: float
    design: str = "independent"
    pairs: int = 0


def _z(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    from scipy.stats import norm  # here, not at the top: scipy.stats takes about a second to import
    return float(norm.ppf(1 - alpha / 2))


def _as_2d(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x.reshape(-1, 1) if x.ndim == 1 else x


def _normalised(w, n: int) -> np.ndarray:
    if w is None:
        return np.ones((n, 1))
    w = np.asarray(w, dtype=float).reshape(-1, 1)
    if len(w) != n:
        raise ValueError(f"{len(w)} weights for {n} values")
    if np.any(w <= 0):
        raise ValueError("weights must be positive")
    return w / w.sum() * n


def _tuned_lambda_population(y, f, f_all, w, w_all) -> np.ndarray:
    """PPI++ lambda per column for the population mean (as ppi_py computes it, clipped to [0, 1])."""
    n, N = len(y), len(f_all)
    theta = (w_all * f_all).mean(0) + (w * (y - f)).mean(0)
    g = w * (y - theta)
    gh = w * (f - theta)
    gh_all = w_all * (f_all - theta)
    cov = 2.0 / n * ((g - g.mean(0)) * (gh - gh.mean(0))).sum(0)
    both = np.concatenate([gh, gh_all], axis=0)
    var = both.var(0, ddof=1)
    lam = np.divide(cov, 2 * (1 + n / N) * var, out=np.zeros_like(cov), where=var > 0)
    return np.clip(lam, 0.0, 1.0)


def ppi_means(y, f, f_all, *, alpha: float = 0.05, lam=None, weights=None, weights_all=None,
              finite_population: bool = False, min_support: int = MIN_SUPPORT) -> list[MeanEstimate]:
    """Prediction-powered estimates of several shares at once (one per column).

    ``y`` and ``f`` are (n, d): human labels and detector scores of the
    labelled captions; ``f_all`` is (N, d): detector scores of all captions.
    ``lam`` None tunes it per column (PPI++); a number fixes it (1 = plain
    PPI). See the module documentation for ``finite_population`` and
    ``weights``. A column whose labelled captions hold fewer than
    ``min_support`` non-zero residuals or captions of the rarer label gets
    the hull of its normal-approximation interval and the exact interval of
    the human sample (:func:`exact_interval`) and is flagged ``sparse``;
    ``min_support=0`` keeps the plain normal-approximation intervals.
    """
    y, f, f_all = _as_2d(y), _as_2d(f), _as_2d(f_all)
    n, N, d = y.shape[0], f_all.shape[0], y.shape[1]
    if f.shape != y.shape or f_all.shape[1] != d:
        raise ValueError(f"shapes do not match: labels {y.shape}, scores {f.shape}, all scores {f_all.shape}")
    if n < 2:
        raise ValueError("at least two human labels are needed for an interval")
    _z(alpha)
    if finite_population:
        if weights_all is not None:
            raise ValueError("weights_all has no meaning for a finite population; give weights of the labelled captions")
        if n > N:
            raise ValueError(f"{n} labelled captions but only {N} captions in all")
        if weights is None:
            est = _finite_srs(y, f, f_all, lam)
        else:
            est = _finite_poisson(y, f, f_all, np.asarray(weights, dtype=float).reshape(-1, 1), lam)
    else:
        est = _population(y, f, f_all, _normalised(weights, n), _normalised(weights_all, N), lam)
    support = _support(y, f, est[2], est[5], est[3])
    return _estimates(*est[:5], n=n, N=N, alpha=alpha, finite_population=finite_population, support=support,
                      min_support=min_support)


def _support(y, f, lams, n_eff, classical):
    """Per column: the effective number of non-zero residuals, the captions of the rarer label, the effective
    sample size and the share the exact interval is built on.

    The effective number of residuals is ``(sum d^2)^2 / sum d^4`` with ``d`` the residuals ``y - lam * f``
    less their mean: k equal outliers among zeros count k, a spread-out set of n residuals about n / 2 (it is
    n over their kurtosis). It says on how many captions the variance estimate really rests.
    """
    r = y - lams * f
    d2 = (r - r.mean(0)) ** 2
    s4 = (d2 ** 2).sum(0)
    residuals = np.where(s4 > 1e-24, d2.sum(0) ** 2 / np.where(s4 > 1e-24, s4, 1.0), 0.0)
    yes = (y > 0.5).sum(0)
    cases = np.minimum(yes, len(y) - yes)
    return residuals, cases, np.broadcast_to(np.asarray(n_eff, dtype=float), lams.shape), np.clip(classical, 0, 1)


def exact_interval(share, n_eff, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson interval of a share observed on an effective sample of ``n_eff`` captions.

    The counts may be fractional (``share * n_eff`` cases): the beta-quantile
    form of the interval, as Korn and Graubard (1998) use it with an
    effective sample size for weighted samples. ``n_eff`` infinite (every
    caption labelled with certainty) gives the single point ``share``.
    """
    share = np.asarray(share, dtype=float)
    n_eff = np.asarray(n_eff, dtype=float)
    finite = np.isfinite(n_eff) & (n_eff > 0)
    m = np.where(finite, n_eff, 1.0)
    x = share * m
    from scipy.stats import beta
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(x > 0, beta.ppf(alpha / 2, np.maximum(x, 1e-12), m - x + 1), 0.0)
        hi = np.where(x < m, beta.ppf(1 - alpha / 2, x + 1, np.maximum(m - x, 1e-12)), 1.0)
    return np.where(finite, lo, share), np.where(finite, hi, share)


def _estimates(theta, se, lams, classical, classical_se, *, n: int, N: int, alpha: float,
               finite_population: bool, support=None, min_support: int = MIN_SUPPORT) -> list[MeanEstimate]:
    z = _z(alpha)
    d = len(theta)
    residuals, cases, n_eff, share = support if support is not None else (np.full(d, -1), np.full(d, -1), None, None)
    sparse = (np.minimum(residuals, cases) < min_support) if support is not None else np.zeros(d, dtype=bool)
    # the classical interval rests on the labels alone: widened when their rarer label is too rare
    few_cases = (cases < min_support) if support is not None else np.zeros(d, dtype=bool)
    if sparse.any():
        ex_lo, ex_hi = exact_interval(share, n_eff, alpha)
    out = []
    for j in range(d):
        ci = (float(theta[j] - z * se[j]), float(theta[j] + z * se[j]))
        classical_ci = (float(classical[j] - z * classical_se[j]), float(classical[j] + z * classical_se[j]))
        extra = {}
        if sparse[j]:
            exact = (float(ex_lo[j]), float(ex_hi[j]))
            extra = dict(sparse=True, ppi_ci=ci, exact_ci=exact)
            ci = _hull(ci, exact)
            if few_cases[j]:
                classical_ci = _hull(classical_ci, exact)
        out.append(MeanEstimate(
            estimate=float(theta[j]), ci=ci, se=float(se[j]), lam=float(lams[j]), classical=float(classical[j]),
            classical_ci=classical_ci, classical_se=float(classical_se[j]), n=n, N=N, alpha=alpha,
            finite_population=finite_population, residuals=float(residuals[j]), cases=int(cases[j]), **extra))
    return out


def _hull(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return (min(a[0], b[0]), max(a[1], b[1]))


def _mover(est: float, a: float, a_ci, b: float, b_ci, phi: float = 0.0) -> tuple[float, float]:
    """The interval of ``est = a - b`` from the intervals of a and b (MOVER; ``phi`` their correlation)."""
    def spread(da: float, db: float) -> float:
        return float(np.sqrt(max(da * da - 2 * phi * da * db + db * db, 0.0)))
    return est - spread(a - a_ci[0], b_ci[1] - b), est + spread(a_ci[1] - a, b - b_ci[0])


def _population(y, f, f_all, w, w_all, lam):
    n, N = len(y), len(f_all)
    lams = _tuned_lambda_population(y, f, f_all, w, w_all) if lam is None else np.full(y.shape[1], float(lam))
    theta = (w_all * lams * f_all).mean(0) + (w * (y - lams * f)).mean(0)
    se = np.sqrt((w_all * lams * f_all).std(0) ** 2 / N + (w * (y - lams * f)).std(0) ** 2 / n)
    classical = (w * y).mean(0)
    classical_se = (w * y).std(0) / np.sqrt(n)
    return theta, se, lams, classical, classical_se, n / float((w ** 2).mean())  # Kish's effective size


def _finite_srs(y, f, f_all, lam):
    """Simple random sample of n out of N: regression estimator with the finite-population correction."""
    n, N = len(y), len(f_all)
    fpc = 1.0 - n / N
    if lam is None:
        fc = f - f.mean(0)
        var_f = (fc ** 2).sum(0)
        cov = (fc * (y - y.mean(0))).sum(0)
        lams = np.clip(np.divide(cov, var_f, out=np.zeros_like(cov), where=var_f > 0), 0.0, 1.0)
    else:
        lams = np.full(y.shape[1], float(lam))
    r = y - lams * f
    theta = lams * f_all.mean(0) + r.mean(0)
    se = np.sqrt(fpc * r.var(0, ddof=1) / n)
    classical = y.mean(0)
    classical_se = np.sqrt(fpc * y.var(0, ddof=1) / n)
    return theta, se, lams, classical, classical_se, (n / fpc if fpc > 0 else np.inf)  # the variance's n / (1 - n/N)


def _finite_poisson(y, f, f_all, w, lam):
    """Each caption labelled independently with probability 1/w: Horvitz-Thompson estimator and variance."""
    N = len(f_all)
    if len(w) != len(y):
        raise ValueError(f"{len(w)} weights for {len(y)} labels")
    if np.any(w < 1):
        raise ValueError("weights are inverse labelling probabilities and must be at least 1")
    a = w * (w - 1)  # (1 - pi) / pi^2
    if lam is None:
        num = (a * y * f).sum(0)
        den = (a * f * f).sum(0)
        lams = np.clip(np.divide(num, den, out=np.zeros_like(num), where=den > 0), 0.0, 1.0)
    else:
        lams = np.full(y.shape[1], float(lam))
    r = y - lams * f
    theta = lams * f_all.mean(0) + (w * r).sum(0) / N
    se = np.sqrt((a * r ** 2).sum(0)) / N
    classical = (w * y).sum(0) / N
    classical_se = np.sqrt((a * y ** 2).sum(0)) / N
    return theta, se, lams, classical, classical_se, _poisson_n_eff(w)


def _poisson_n_eff(w) -> float:
    """Effective sample size of a Poisson sample with inverse probabilities ``w``: (sum w)^2 / sum w(w - 1), which
    is n / (1 - n/N) for equal probabilities n/N and infinite when every caption was taken for certain."""
    spread = float((w * (w - 1)).sum())
    return float(w.sum()) ** 2 / spread if spread > 1e-12 else np.inf


@dataclass(frozen=True)
class SampleDraw:
    """One recorded round of a human sample: the captions it took (rows among the N) and each one's
    inclusion probability (1 for captions labelled before the round, taken for certain)."""

    draw_id: int
    rows: np.ndarray
    probabilities: np.ndarray

    def __post_init__(self):
        rows = np.asarray(self.rows, dtype=np.int64)
        pi = np.asarray(self.probabilities, dtype=float)
        if rows.shape != pi.shape or rows.ndim != 1:
            raise ValueError(f"draw {self.draw_id}: {len(rows)} captions but {len(pi)} probabilities")
        if len(np.unique(rows)) != len(rows):
            raise ValueError(f"draw {self.draw_id} takes a caption twice")
        if np.any(~(pi > 0)) or np.any(pi > 1):
            raise ValueError(f"draw {self.draw_id}: inclusion probabilities must lie in (0, 1]")
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "probabilities", pi)


@dataclass(frozen=True)
class DrawUse:
    """How one recorded draw entered an estimate."""

    draw_id: int
    drawn: int  # captions the draw took (among the N)
    labelled: int  # of them with a label
    share: float  # its weight in the combined estimate (0: not usable)
    reason: str = ""  # why it is not usable


def _draw_weights(pi: np.ndarray, hit: np.ndarray) -> np.ndarray | None:
    """Inverse inclusion probabilities of a draw's labelled captions, scaled for the unlabelled ones: within the
    captions taken for certain and within the drawn ones, the labelled stand for all. None when a group that
    the draw holds has no label at all (it could not be stood for)."""
    w = np.zeros(len(pi))
    for group in (pi >= 1.0, pi < 1.0):
        total, labelled = int(group.sum()), int((group & hit).sum())
        if total and not labelled:
            return None
        if total:
            w[group] = total / (labelled * pi[group])
    return w[hit]


def draws_means(rows, y, f_all, draws, *, alpha: float = 0.05, lam=None, finite_population: bool = True,
                min_support: int = MIN_SUPPORT) -> tuple[list[MeanEstimate], list[DrawUse]]:
    """Prediction-powered estimates from a human sample drawn in recorded rounds (see the module documentation).

    ``rows`` are the labelled captions (positions among the N), ``y`` their
    labels (n, d), ``f_all`` the detector scores of all N captions (N, d) and
    ``draws`` the :class:`SampleDraw` rounds. Labelled captions that no draw
    took do not enter. Each usable round gives a Horvitz-Thompson
    prediction-powered estimate; the rounds are averaged with shares
    proportional to ``1 / sum(w * (w - 1))`` over their labelled captions, a
    measure of the round's spread that does not read the labels. Without
    ``finite_population`` the variance of the captions' share around the rate
    of the process, ``theta * (1 - theta) / N``, is added. Sparse targets
    are widened as in :func:`ppi_means`, with the effective sample size of
    the combined rounds.
    """
    y, f_all = _as_2d(y), _as_2d(f_all)
    rows = np.asarray(rows, dtype=np.int64)
    N, d = f_all.shape
    if y.shape != (len(rows), d):
        raise ValueError(f"shapes do not match: {len(rows)} labelled rows, labels {y.shape}, all scores {f_all.shape}")
    _z(alpha)
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    parts, uses = [], []
    for draw in draws:
        members, pi = draw.rows, draw.probabilities
        if len(members) and (members.min() < 0 or members.max() >= N):
            raise ValueError(f"draw {draw.draw_id} takes a caption outside the {N}")
        pos = np.minimum(np.searchsorted(sorted_rows, members), max(len(rows) - 1, 0))
        hit = (sorted_rows[pos] == members) if len(rows) else np.zeros(len(members), dtype=bool)
        labelled = int(hit.sum())
        w = _draw_weights(pi, hit) if labelled >= 2 else None
        if w is None:
            reason = ("fewer than two of its captions are labelled" if labelled < 2 else
                      "none of its captions of one kind (labelled before it, or drawn) is labelled")
            uses.append(DrawUse(draw.draw_id, len(members), labelled, 0.0, reason))
            continue
        idx = order[pos[hit]]
        est = _finite_poisson(y[idx], f_all[members[hit]], f_all, w.reshape(-1, 1), lam)
        n_eff = est[5] if finite_population else float(w.sum()) ** 2 / float((w ** 2).sum())
        parts.append((draw, labelled, est, float((w * (w - 1)).sum()), set(idx.tolist()), n_eff))
    if not parts:
        raise ValueError("no recorded draw has two labelled captions")
    spread = np.array([p[3] for p in parts])
    exact = spread <= 1e-12
    inverse = exact.astype(float) if exact.any() else 1.0 / spread
    share = inverse / inverse.sum()
    stacked = [np.stack([p[2][k] for p in parts]) for k in range(5)]  # theta, se, lam, classical, classical_se
    theta, lams, classical = (share @ stacked[k] for k in (0, 2, 3))
    se = np.sqrt((share ** 2) @ stacked[1] ** 2)
    classical_se = np.sqrt((share ** 2) @ stacked[4] ** 2)
    if not finite_population:
        se = np.sqrt(se ** 2 + np.clip(theta, 0, 1) * (1 - np.clip(theta, 0, 1)) / N)
        classical_se = np.sqrt(classical_se ** 2 + np.clip(classical, 0, 1) * (1 - np.clip(classical, 0, 1)) / N)
    used = set().union(*(p[4] for p in parts))
    # the rounds' shares combine their effective sizes like their variances: 1 / sum(share_k^2 / n_k)
    inv = sum(s ** 2 / p[5] for p, s in zip(parts, share) if s > 0)
    idx = np.array(sorted(used), dtype=np.int64)
    support = _support(y[idx], f_all[rows[idx]], lams, 1.0 / inv if inv > 0 else np.inf, classical)
    shares = {p[0].draw_id: float(s) for p, s in zip(parts, share)}
    uses = [DrawUse(p[0].draw_id, len(p[0].rows), p[1], shares[p[0].draw_id]) for p in parts] + uses
    uses.sort(key=lambda u: [d.draw_id for d in draws].index(u.draw_id))
    return _estimates(theta, se, lams, classical, classical_se, n=len(used), N=N, alpha=alpha,
                      finite_population=finite_population, support=support, min_support=min_support), uses


def ppi_mean(y, f, f_all, *, alpha: float = 0.05, lam=None, weights=None, weights_all=None,
             finite_population: bool = False, min_support: int = MIN_SUPPORT) -> MeanEstimate:
    """Prediction-powered estimate of one share (see :func:`ppi_means`)."""
    return ppi_means(y, f, f_all, alpha=alpha, lam=lam, weights=weights, weights_all=weights_all,
                     finite_population=finite_population, min_support=min_support)[0]


def classical_mean(y, *, alpha: float = 0.05, weights=None, N: int | None = None) -> MeanEstimate:
    """The estimate from the human sample alone (``N`` given: a share of those N captions)."""
    y = np.asarray(y, dtype=float)
    n = len(y)
    return ppi_mean(y, np.zeros(n), np.zeros(N if N is not None else n), alpha=alpha, lam=0.0, weights=weights,
                    finite_population=N is not None, min_support=0)


def difference(a: MeanEstimate, b: MeanEstimate) -> DifferenceEstimate:
    """A minus B for estimates from independent human samples (two systems' captions).

    The interval combines the two estimates' own intervals by the method of
    variance estimates recovery (Newcombe 1998; Zou and Donner 2008): the
    lower end is ``d - sqrt((a - a_low)^2 + (b_high - b)^2)``, the upper
    one alike. For two normal-approximation intervals that is the usual
    ``d -/+ z * sqrt(se_a^2 + se_b^2)``; an interval widened for a sparse
    target (see :func:`ppi_means`) widens the difference with it. When the
    same images were labelled for both systems their errors tend to go
    together, which makes this interval conservative.
    """
    if a.alpha != b.alpha:
        raise ValueError("the two estimates use different alphas")
    _z(a.alpha)
    est = a.estimate - b.estimate
    se = float(np.hypot(a.se, b.se))
    cl = a.classical - b.classical
    cl_se = float(np.hypot(a.classical_se, b.classical_se))
    return DifferenceEstimate(est, _mover(est, a.estimate, a.ci, b.estimate, b.ci), se, cl,
                              _mover(cl, a.classical, a.classical_ci, b.classical, b.classical_ci), a.alpha)


def paired_difference(y_a, f_a, f_a_all, lam_a: float, y_b, f_b, f_b_all, lam_b: float, *, alpha: float = 0.05,
                      finite_population: bool = True, sparse_of: tuple[MeanEstimate, MeanEstimate] | None = None
                      ) -> DifferenceEstimate:
    """A minus B when the captions of both systems were labelled on the same images, a simple random sample.

    Position i of ``y_a``, ``f_a``, ``y_b``, ``f_b`` is one labelled image
    (labels and detector scores of its caption by A and by B); position j of
    ``f_a_all`` and ``f_b_all`` is one of the N images both systems
    captioned. ``lam_a`` and ``lam_b`` are the detector weights of the two
    systems' own estimates, so the difference is exactly A's estimate minus
    B's. Its variance is that of the per-image difference of the residuals
    ``(y_a - lam_a f_a) - (y_b - lam_b f_b)``: errors the two systems make on
    the same images cancel, and the interval is narrower than the independent
    one when they go together. ``finite_population`` as in
    :func:`ppi_means` (the share among these N images' captions, with the
    finite-population correction; otherwise the population mean, plus the
    variance of the detector term over the N images).

    ``sparse_of`` gives the two systems' own estimates when one of them was
    widened for sparse residuals (:func:`ppi_means`): each interval (and the
    classical one) is then also the hull with Newcombe's (1998) paired
    combination of the two estimates' intervals,
    ``d - sqrt(da^2 - 2 phi da db + db^2)`` with ``phi`` the correlation of
    the two systems' labels on the labelled images (0 when one of them does
    not vary).
    """
    y_a, f_a, y_b, f_b = (np.asarray(v, dtype=float).reshape(-1) for v in (y_a, f_a, y_b, f_b))
    f_a_all, f_b_all = np.asarray(f_a_all, dtype=float).reshape(-1), np.asarray(f_b_all, dtype=float).reshape(-1)
    n, N = len(y_a), len(f_a_all)
    if not (len(f_a) == len(y_b) == len(f_b) == n) or len(f_b_all) != N:
        raise ValueError(f"paired arrays differ in length: {n} labelled images, {len(f_a)}, {len(y_b)}, {len(f_b)}; "
                         f"{N} and {len(f_b_all)} images in all")
    if n < 2 or n > N:
        raise ValueError(f"a paired difference needs between 2 and {N} labelled images, got {n}")
    z = _z(alpha)
    r = (y_a - lam_a * f_a) - (y_b - lam_b * f_b)
    d = y_a - y_b
    est = float(lam_a * f_a_all.mean() + (y_a - lam_a * f_a).mean() - lam_b * f_b_all.mean() - (y_b - lam_b * f_b).mean())
    cl = float(d.mean())
    if finite_population:
        fpc = 1.0 - n / N
        se = float(np.sqrt(fpc * r.var(ddof=1) / n))
        cl_se = float(np.sqrt(fpc * d.var(ddof=1) / n))
    else:  # as _population with unit weights: spreads over the N images and the n labelled ones
        se = float(np.sqrt((lam_a * f_a_all - lam_b * f_b_all).var() / N + r.var() / n))
        cl_se = float(d.std() / np.sqrt(n))
    ci, cl_ci = (est - z * se, est + z * se), (cl - z * cl_se, cl + z * cl_se)
    if sparse_of is not None:
        a, b = sparse_of
        phi = float(np.corrcoef(y_a, y_b)[0, 1]) if y_a.std() > 0 and y_b.std() > 0 else 0.0
        ci = _hull(ci, _mover(est, a.estimate, a.ci, b.estimate, b.ci, phi))
        cl_ci = _hull(cl_ci, _mover(cl, a.classical, a.classical_ci, b.classical, b.classical_ci, phi))
    return DifferenceEstimate(est, ci, se, cl, cl_ci, alpha, "paired", n)

