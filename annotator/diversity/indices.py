"""The lexical-diversity measures of one corpus, all read from the same token ids.

Measures (keys of :func:`measures`)
-----------------------------------
``tokens``  number of tokens N
``types``   vocabulary size V (distinct tokens)
``ttr``     type-token ratio V / N
``rttr``    root TTR (Guiraud) V / sqrt(N)
``logttr``  log TTR (Herdan's C) log V / log N
``hdd``     HD-D: for every type, the probability that a random draw of
            ``hdd_draws`` (42) tokens without replacement contains it at least
            once, summed and divided by the draw size. Undefined (NaN) when the
            corpus has fewer tokens than draws.
``mtld``    MTLD (:mod:`annotator.diversity.mtld_variants`, with its variants)
``mattr``   moving-average TTR: mean TTR of every window of ``mattr_window``
            (50) consecutive tokens. A corpus shorter than the window gets its
            plain TTR.

All values equal those of the ``lexicalrichness`` package on the same token
list (``LexicalRichness(tokens, preprocessor=None, tokenizer=None)``), with
``hdd(draws=42)``, ``mtld(threshold=0.72)`` and ``mattr(window_size=…)``.
Where that package raises (empty text, too few tokens), the measures here
return NaN. MATTR's window is a setting: 50 here (taaled, lexical-diversity),
100 in lexicalrichness.

HD-D uses the closed form of the hypergeometric probability of zero hits,
evaluated once per distinct frequency (and more precisely than scipy's pmf);
MATTR a sliding distinct-count built from previous/next-occurrence arrays (a
radix sort of the token ids). ``bench/diversity_bench.py`` prints times
against lexicalrichness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..tokenize.words import DEFAULT_TOKEN_SETTINGS, TokenSettings
from .mtld_variants import MTLD_LEXICALRICHNESS, MTLDOptions, mtld
from .profile import Profile

__all__ = ["MEASURES", "MEASURE_LABELS", "DiversitySettings", "ttr", "root_ttr", "log_ttr", "hdd", "mattr",
           "measures", "measure"]

#: Measure keys in display order.
MEASURES = ("tokens", "types", "ttr", "rttr", "logttr", "hdd", "mtld", "mattr")

#: Column headings for tables.
MEASURE_LABELS = {
    "texts": "Texts", "tokens": "Tokens", "types": "Types", "ttr": "TTR", "rttr": "Root TTR", "logttr": "Log TTR",
    "hdd": "HD-D", "mtld": "MTLD", "mattr": "MATTR", "ld": "LDR (ld)", "lexical_gap": "Lexical gap (Lg)",
}


@dataclass(frozen=True)
class DiversitySettings:
    """Tokenisation and measure parameters, shared by every corpus of a comparison."""

    tokens: TokenSettings = DEFAULT_TOKEN_SETTINGS
    hdd_draws: int = 42
    mattr_window: int = 50
    mtld: MTLDOptions = MTLD_LEXICALRICHNESS

    def __post_init__(self):
        if int(self.hdd_draws) < 1:
            raise ValueError("the HD-D draw size must be at least 1")
        if int(self.mattr_window) < 1:
            raise ValueError("the MATTR window must be at least 1 token")

    def to_dict(self) -> dict:
        """Plain-dict form (for JSON output and exports)."""
        return {"tokens": self.tokens.to_dict(), "hdd_draws": self.hdd_draws, "mattr_window": self.mattr_window,
                "mtld": {"threshold": self.mtld.threshold, "strict": self.mtld.strict,
                         "min_factor_length": self.mtld.min_factor_length,
                         "last_token_closes": self.mtld.last_token_closes, "no_factor": self.mtld.no_factor,
                         "aggregate": self.mtld.aggregate}}


def ttr(data) -> float:
    """Type-token ratio V / N (NaN for an empty corpus)."""
    p = Profile.of(data)
    return p.n_types / p.n if p.n else math.nan


def root_ttr(data) -> float:
    """Root TTR (Guiraud's R) V / √N (NaN for an empty corpus)."""
    p = Profile.of(data)
    return p.n_types / math.sqrt(p.n) if p.n else math.nan


def log_ttr(data) -> float:
    """Log TTR (Herdan's C) log V / log N (NaN when N < 2, where it is 0/0 or undefined)."""
    p = Profile.of(data)
    if p.n < 2:
        return math.nan
    return math.log(p.n_types) / math.log(p.n)


def hdd(data, draws: int = 42) -> float:
    """HD-D with samples of ``draws`` tokens (NaN when the corpus has fewer tokens than that).

    P(type with frequency f absent from a sample) = C(N−f, d) / C(N, d)
    = ∏_{k<d} (1 − f/(N−k)); computed once per distinct frequency, in logs so
    that the result is accurate to a few units in the last place (scipy's
    hypergeometric pmf, which lexicalrichness sums, drifts by ~1e-8 relative on
    a million tokens).
    """
    p = Profile.of(data)
    n, d = p.n, int(draws)
    if d < 1:
        raise ValueError("the HD-D draw size must be at least 1")
    if n < d or n == 0:
        return math.nan
    freqs, n_with = np.unique(p.counts, return_counts=True)
    k = np.arange(d, dtype=np.float64)
    # P(absent) = ∏ (1 − f/(N−k)); 1 − P(absent) via log1p/expm1 keeps full precision for rare
    # types, where P(absent) is close to 1 and a plain subtraction would cancel.
    share = np.minimum(freqs[:, None].astype(np.float64) / (float(n) - k), 1.0)
    with np.errstate(divide="ignore"):
        present = -np.expm1(np.log1p(-share).sum(axis=1))
    return float(np.dot(n_with, present) / d)


def mattr(data, window: int = 50) -> float:
    """Moving-average TTR over windows of ``window`` tokens (plain TTR when the corpus is shorter)."""
    p = Profile.of(data)
    w = int(window)
    if w < 1:
        raise ValueError("the MATTR window must be at least 1 token")
    n = p.n
    if n == 0:
        return math.nan
    if n <= w:
        return ttr(p)
    prev, nxt = p.prev, p.next
    n_windows = n - w + 1
    first = int(np.count_nonzero(prev[:w] < 0))
    i = np.arange(n_windows - 1)
    # Sliding one step: the token entering is new unless it occurred in the overlap;
    # the token leaving is lost unless it occurs again in the overlap.
    enters = prev[w:] <= i
    leaves = nxt[: n_windows - 1] >= i + w
    distinct = np.empty(n_windows, np.int64)
    distinct[0] = first
    np.cumsum(enters.astype(np.int64) - leaves, out=distinct[1:])
    distinct[1:] += first
    distinct_sum = int(distinct.sum())
    return distinct_sum / (w * n_windows)


def measures(data, settings: DiversitySettings | None = None) -> dict[str, float]:
    """Every measure of :data:`MEASURES` for one corpus, from one tokenisation.

    ``data``: a TokenCorpus (from :func:`annotator.tokenize.words.tokenize_corpus`),
    a Profile, or a flat list of tokens. ``settings.tokens`` is not applied
    here: tokenisation happened when the corpus was made.
    """
    settings = settings or DiversitySettings()
    p = Profile.of(data)
    return {key: measure(p, key, settings) for key in MEASURES}


def measure(data, key: str, settings: DiversitySettings | None = None) -> float:
    """One measure of :data:`MEASURES` (by key) for one corpus, with the parameters of ``settings``."""
    settings = settings or DiversitySettings()
    p = Profile.of(data)
    compute = {"tokens": lambda: p.n, "types": lambda: p.n_types, "ttr": lambda: ttr(p), "rttr": lambda: root_ttr(p),
               "logttr": lambda: log_ttr(p), "hdd": lambda: hdd(p, settings.hdd_draws),
               "mtld": lambda: mtld(p, settings.mtld), "mattr": lambda: mattr(p, settings.mattr_window)}
    if key not in compute:
        raise ValueError(f"unknown measure {key!r}; choose from {', '.join(MEASURES)}")
    return compute[key]()
