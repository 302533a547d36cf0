"""The lexical diversity ratio, the lexical gap and gap-weighted metric scores.

For a measure L (HD-D by default), a system corpus c_s and a reference corpus
c_r, the lexical diversity ratio is ``ld = L(c_s) / L(c_r)``: 1 means the
system is as diverse as the references. The lexical gap squashes it into
(0, 1) with a logistic curve ``Lg = 1 / (1 + exp(−α (ld − µ)))``, µ = 0.81 and
α = 5 by default (the values of the lexical-gap study), so Lg = 0.5 at
ld = µ. A caption metric M becomes gap-weighted as ``M · Lg`` and
ratio-weighted as ``M · ld``, where ld and Lg are those of the caption's
system (see :mod:`annotator.diversity.correlation`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

__all__ = ["RATIO_MEASURES", "GAP_PRESETS", "GapSettings", "gap_preset", "lexical_diversity_ratio", "lexical_gap",
           "weighted"]

#: Measures that can serve as L in the lexical diversity ratio (a ratio of counts would be meaningless).
RATIO_MEASURES = ("hdd", "mtld", "mattr", "ttr", "rttr", "logttr")


#: Named (µ, α) pairs of the lexical gap. The study's text gives µ = 0.81 and α = 5, but its own Table 3 does not
#: follow from them (ld 1.03 gives Lg 0.75 with them, the table prints 0.98); a least-squares fit of the logistic
#: curve to Table 3's eleven (ld, Lg) rows gives α ≈ 20.4, µ ≈ 0.82, which reproduces every row to the table's
#: two decimals (within 0.01). docs/lexical_gap.md, "Errata".
GAP_PRESETS = {
    "text": {"mu": 0.81, "alpha": 5.0, "about": "the lexical-gap study's text (µ = 0.81, α = 5)"},
    "table3": {"mu": 0.82, "alpha": 20.4, "about": "fitted to the lexical-gap study's Table 3 (µ = 0.82, α = 20.4)"},
}


def gap_preset(name: str) -> tuple[float, float]:
    """(µ, α) of a named preset (:data:`GAP_PRESETS`); ValueError naming the presets otherwise."""
    if name not in GAP_PRESETS:
        raise ValueError(f"unknown lexical-gap preset {name!r}; choose one of {', '.join(GAP_PRESETS)}")
    return GAP_PRESETS[name]["mu"], GAP_PRESETS[name]["alpha"]


@dataclass(frozen=True)
class GapSettings:
    """Which measure the lexical diversity ratio uses and the constants of the lexical gap."""

    measure: str = "hdd"
    mu: float = 0.81
    alpha: float = 5.0

    def __post_init__(self):
        if self.measure not in RATIO_MEASURES:
            raise ValueError(f"the diversity ratio can use {', '.join(RATIO_MEASURES)}, not {self.measure!r}")
        if not (math.isfinite(self.mu) and math.isfinite(self.alpha)):
            raise ValueError("µ and α must be finite numbers")


def lexical_diversity_ratio(system_value: float, reference_value: float) -> float:
    """ld = L(system) / L(references); NaN when either is missing or the reference value is 0."""
    try:
        s, r = float(system_value), float(reference_value)
    except (TypeError, ValueError):
        return math.nan
    if not (math.isfinite(s) and math.isfinite(r)) or r == 0:
        return math.nan
    return s / r


def lexical_gap(ld, mu: float = 0.81, alpha: float = 5.0):
    """Lg = 1 / (1 + exp(−α (ld − µ))) for a number or an array (NaN stays NaN)."""
    from scipy.special import expit
    out = expit(alpha * (np.asarray(ld, dtype=np.float64) - mu))
    return float(out) if np.ndim(out) == 0 else out


def weighted(scores, weight):
    """A metric's scores times a weight (ld or Lg): a number, an array, or a mapping key → score."""
    if isinstance(scores, Mapping):
        return {k: (float(v) * weight if v is not None else math.nan) for k, v in scores.items()}
    return np.asarray(scores, dtype=np.float64) * weight if np.ndim(scores) else float(scores) * weight
