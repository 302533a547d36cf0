"""Paired bootstrap resampling over captions for the difference of two systems.

Both systems are scored on the same items. One resample draws N captions
with replacement (the same draw for both systems, hence *paired*); its corpus
score is rebuilt from the per-caption statistics rows — summed for BLEU and
METEOR, averaged for ROUGE-L and CIDEr-D — so no text is scored again. The
draws are a count matrix W (resamples × captions) and every metric's
resample is one matrix product, W @ stats, followed by the metric's formula
vectorised over resamples.

Reported per metric value (``Bleu_4``, ``METEOR``, …), with Δ = B − A:

* ``delta``: Δ on the full set (the exact corpus scores);
* ``ci``: the percentile interval of the resampled Δ* (95 % by default);
* ``p``: two-sided p-value, ``min(1, 2·min(p_le0, p_ge0))``;
* ``p_le0``: share of resamples with Δ* ≤ 0 — the one-sided p-value for
  "B is better than A" of the classic paired bootstrap test;
* ``p_ge0``: share of resamples with Δ* ≥ 0.

With R resamples the smallest non-zero share is 1/R; a share of 0 means
"below 1/R". Identical systems give Δ* = 0 everywhere, so p = 1.

Resample values are computed with numpy over all resamples at once; where
the metric's formula has a power or exponential (BLEU, METEOR) numpy may round
the last bit differently from the scalar code (≈1e-16) — irrelevant for
intervals and p-values, and Δ itself always comes from the exact corpus
scores. CIDEr-D resamples keep the document frequencies of the full scored
set (they depend on the references only; re-deriving them per resample would
mean rescoring text). METEOR resamples are scored with the jar's formula
re-implemented in numpy (:func:`meteor.scores_from_stats`); pass
``meteor_exact=True`` to have the jar itself score every resample, all in one
batched EVAL request (about 0.3 ms per resample).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Metric
from ..errors import MetricInputError

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345


@dataclass(frozen=True)
class BootstrapResult:
    """Paired bootstrap outcome for one metric value (see module docs for the fields)."""

    key: str
    a: float
    b: float
    delta: float
    ci: tuple[float, float]
    p: float
    p_le0: float
    p_ge0: float
    resamples: int
    seed: int
    level: float

    def as_dict(self) -> dict:
        """Plain JSON-ready dict."""
        return {"key": self.key, "a": self.a, "b": self.b, "delta": self.delta, "ci": list(self.ci),
                "p": self.p, "p_le0": self.p_le0, "p_ge0": self.p_ge0, "resamples": self.resamples,
                "seed": self.seed, "level": self.level}


def resample_weights(n: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """R × n matrix of draw counts: row r says how often each caption is in resample r.

    Seeded (numpy's default generator), so the same (n, resamples, seed)
    always gives the same resamples.
    """
    if n <= 0:
        raise MetricInputError("nothing to resample")
    if resamples <= 0:
        raise MetricInputError("resamples must be positive")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    idx += (np.arange(resamples, dtype=idx.dtype) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=resamples * n).reshape(resamples, n).astype(np.float64)


def resampled_values(metric: Metric, stats: np.ndarray, weights: np.ndarray, *, meteor_exact: bool = False) -> np.ndarray:
    """R × len(metric.score_keys) corpus values of ``stats`` under each resample.

    A metric whose corpus formula runs in another process (METEOR's jar) is
    resampled with its numpy port unless ``meteor_exact``.
    """
    return metric.resample(stats, weights, exact=meteor_exact)


def compare(key: str, a: float, b: float, va: np.ndarray, vb: np.ndarray, *, seed: int, level: float = 0.95) -> BootstrapResult:
    """Summarise resampled values of two systems for one metric value."""
    d = np.asarray(vb, dtype=np.float64) - np.asarray(va, dtype=np.float64)
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(d, [tail, 100 - tail])
    p_le0 = float(np.mean(d <= 0))
    p_ge0 = float(np.mean(d >= 0))
    return BootstrapResult(key, float(a), float(b), float(b) - float(a), (float(lo), float(hi)),
                           min(1.0, 2 * min(p_le0, p_ge0)), p_le0, p_ge0, len(d), seed, level)


def paired_bootstrap(metric: Metric, stats_a, stats_b, *, resamples: int = DEFAULT_RESAMPLES,
                     seed: int = DEFAULT_SEED, level: float = 0.95, weights: np.ndarray | None = None,
                     meteor_exact: bool = False) -> dict[str, BootstrapResult]:
    """Paired bootstrap of system B against system A for one metric.

    ``stats_a``/``stats_b`` are the metric's statistics rows for the same
    captions in the same order. Returns one result per value the metric
    reports (e.g. Bleu_1…Bleu_4). ``weights`` lets several metrics share one
    set of resamples (see :func:`resample_weights`).
    """
    sa = np.asarray(stats_a, dtype=np.float64).reshape(-1, metric.width)
    sb = np.asarray(stats_b, dtype=np.float64).reshape(-1, metric.width)
    if sa.shape != sb.shape:
        raise MetricInputError(f"the two systems have {len(sa)} and {len(sb)} captions")
    if weights is None:
        weights = resample_weights(len(sa), resamples, seed)
    elif weights.shape[1] != len(sa):
        raise MetricInputError("resample weights do not match the number of captions")
    va = resampled_values(metric, sa, weights, meteor_exact=meteor_exact)
    vb = resampled_values(metric, sb, weights, meteor_exact=meteor_exact)
    score_a = metric.aggregate(sa).values
    score_b = metric.aggregate(sb).values
    return {key: compare(key, score_a[key], score_b[key], va[:, j], vb[:, j], seed=seed, level=level)
            for j, key in enumerate(metric.score_keys)}
