"""The content-selection score of one selection, and summaries over images.

Definitions (the conventions every other part of the package follows):

* A *gold set* G_m is the set of the item's boxes that gold description m
  mentions. Ids of boxes the item does not have are ignored.
* M, the gold descriptions of an image: by default (``count``: evaluate(),
  the command line and the page) every description is one of the M, as
  equations 1 and 2 are written: an empty G_m adds 0 to the sum of P and to
  the sum of R (its R term 0/0 is taken as 0), which pulls both down by the
  share of such descriptions. With ``drop`` only those that mention at least
  one box: a description that mentions no box says nothing about which boxes
  to choose, so it is left out of both averages, and the report says how many
  were left out. (:func:`score_selection`, the one-image reference, drops
  them unless told ``count``.)
* An image is *evaluable* when it has at least one box and at least one
  non-empty gold set; the evaluation of a project also needs two gold
  descriptions in M, so that the upper bound (one description against the
  others) is defined on every image every row is averaged over. Other images
  are skipped and counted, with the reason, in the report.
* For a selection S:  P_m = |G_m ∩ S| / |S|,  R_m = |G_m ∩ S| / |G_m|;
  the image's P and R are the means over its M gold sets (macro),
  and F is the harmonic mean of the image's P and R (0 when both are 0).
* An empty selection (|S| = 0: a caption without correspondences, a missing
  caption) scores P = R = F = 0: saying nothing is not rewarded.
* Final P, R, F are means over evaluable images; the spread is the
  *population* standard deviation (ddof = 0) over the same images. With
  hundreds of images the sample sd differs by well under 1 %.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from .data import EMPTY_DESCRIPTIONS

__all__ = ["Scores", "score_selection", "summarise", "harmonic"]


@dataclass(frozen=True)
class Scores:
    """Mean P, R, F over images with their population standard deviations."""

    P: float
    R: float
    F: float
    P_sd: float
    R_sd: float
    F_sd: float
    n: int = 0

    def as_dict(self) -> dict[str, float]:
        """The six numbers as a plain dict (keys P, R, F, P_sd, R_sd, F_sd)."""
        return {"P": self.P, "R": self.R, "F": self.F, "P_sd": self.P_sd, "R_sd": self.R_sd, "F_sd": self.F_sd}


def harmonic(p, r):
    """Elementwise harmonic mean 2pr/(p+r), 0 where p + r = 0 (floats or arrays)."""
    p = np.asarray(p, dtype=float)
    r = np.asarray(r, dtype=float)
    s = p + r
    out = np.divide(2.0 * p * r, s, out=np.zeros(np.broadcast(p, r).shape), where=s > 0)
    return out if out.ndim else float(out)


def score_selection(selection: Iterable[str], gold_sets: Sequence[Iterable[str]], *,
                    empty_descriptions: str = "drop") -> tuple[float, float, float] | None:
    """P, R, F of one image's selection against its gold sets (equations 1–3).

    Returns None when no gold set is non-empty (the image is not evaluable).
    Empty gold sets are left out of M (``drop``) or counted in M with a 0
    term in both sums (``count``). This is the plain-Python reference; the
    baselines use a vectorised form that must agree with it.
    """
    if empty_descriptions not in EMPTY_DESCRIPTIONS:
        raise ValueError(f"empty_descriptions must be one of {EMPTY_DESCRIPTIONS}, not {empty_descriptions!r}")
    s = set(selection)
    golds = [set(g) for g in gold_sets]
    if not any(golds):
        return None
    if empty_descriptions == "drop":
        golds = [g for g in golds if g]
    if not s:
        return 0.0, 0.0, 0.0
    p = sum(len(g & s) / len(s) for g in golds) / len(golds)
    r = sum(len(g & s) / len(g) for g in golds if g) / len(golds)
    return p, r, harmonic(p, r)


def summarise(p, r, f) -> Scores:
    """Scores from per-image (or pooled per-observation) P, R, F arrays."""
    p, r, f = (np.asarray(a, dtype=float).ravel() for a in (p, r, f))
    if p.size == 0:
        nan = float("nan")
        return Scores(nan, nan, nan, nan, nan, nan, 0)
    return Scores(float(p.mean()), float(r.mean()), float(f.mean()),
                  float(p.std()), float(r.std()), float(f.std()), int(p.size))
