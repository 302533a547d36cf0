"""How far to trust a judge: its figures against human labels, as pure functions of aligned arrays.

Definitions (docs/judges.md states them for readers):

* **decision**: the judge calls a caption inaccurate when its probability is at least
  :data:`~annotator.judges.outputs.THRESHOLD` (0.5), and a type when that type's probability is;
* **accuracy** and **Cohen's kappa** of two yes/no raters over the captions both labelled: the share of equal
  decisions, and (p_o − p_e)/(1 − p_e) from the 2×2 table — equal to scikit-learn's ``accuracy_score`` and
  ``cohen_kappa_score``; the kappa interval is the percentile bootstrap the Agreement page uses
  (:func:`annotator.agreement.kappa_with_interval`);
* **per type**: over the captions whose types the layer knows (accurate ones have none), "the layer has type t"
  against "the judge gives t": precision, recall, F1 (scikit-learn's ``precision_recall_fscore_support`` with
  ``average="binary"``; None where a ratio is 0/0) and kappa;
* **expected calibration error**: the probabilities cut into :data:`BINS` equal-width bins over [0, 1] (bin b
  holds b/10 ≤ p < (b+1)/10, the last one also p = 1), ECE = Σ_b (n_b / n) · |mean p in b − share inaccurate in b|
  over the non-empty bins; the same bins draw the reliability diagram.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Equal-width bins of the reliability diagram and of the expected calibration error.
BINS = 10


def _ratio(num: float, den: float) -> float | None:
    return float(num) / float(den) if den else None


@dataclass(frozen=True)
class Agreement:
    """Two raters' yes/no decisions (inaccurate or not) on the captions both gave one."""

    a: str
    b: str
    n: int
    accuracy: float | None
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    confusion: tuple[tuple[int, int], tuple[int, int]]  # rows: a accurate/inaccurate; columns: b likewise

    def to_dict(self) -> dict:
        """JSON form."""
        return {"a": self.a, "b": self.b, "n": self.n, "accuracy": self.accuracy, "kappa": self.kappa,
                "kappa_ci": list(self.kappa_ci) if self.kappa_ci else None,
                "confusion": [list(r) for r in self.confusion]}


def decision_agreement(a: str, b: str, y_a, y_b, *, n_resamples: int = 2000, seed: int = 0,
                       confidence: float = 0.95) -> Agreement:
    """Accuracy and Cohen's kappa (with its bootstrap interval) of decisions ``y_a`` against ``y_b``."""
    from ..agreement import kappa_with_interval
    y_a, y_b = np.asarray(y_a, dtype=bool), np.asarray(y_b, dtype=bool)
    n = len(y_a)
    kappa, ci, table = kappa_with_interval(y_a, y_b, n_resamples=n_resamples, seed=seed, confidence=confidence)
    return Agreement(a, b, n, _ratio((y_a == y_b).sum(), n), kappa, ci, table)


@dataclass(frozen=True)
class TypeScore:
    """A judge against the layer on one error type (see the module for the definitions)."""

    type: str
    captions: int  # captions compared
    human: int  # captions the layer gives the type
    judge: int  # captions the judge gives it
    both: int
    precision: float | None
    recall: float | None
    f1: float | None
    kappa: float | None

    def to_dict(self) -> dict:
        """JSON form."""
        return {"captions": self.captions, "human": self.human, "judge": self.judge, "both": self.both,
                "precision": self.precision, "recall": self.recall, "f1": self.f1, "kappa": self.kappa}


def type_scores(human: np.ndarray, judge: np.ndarray, type_ids) -> dict[str, TypeScore]:
    """Per type (a column of the 0/1 matrices ``human`` and ``judge``, captions × types) its precision, recall,
    F1 and kappa."""
    from ..agreement import cohen_kappa_from_table
    human, judge = np.asarray(human, dtype=bool), np.asarray(judge, dtype=bool)
    out = {}
    for j, t in enumerate(type_ids):
        h, g = human[:, j], judge[:, j]
        both, nh, ng, n = int((h & g).sum()), int(h.sum()), int(g.sum()), len(h)
        table = [[n - nh - ng + both, ng - both], [nh - both, both]]
        out[t] = TypeScore(t, n, nh, ng, both, _ratio(both, ng), _ratio(both, nh), _ratio(2 * both, nh + ng),
                           cohen_kappa_from_table(table) if n else None)
    return out


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of the reliability diagram: its range, how many captions, their mean probability and the share
    the humans call inaccurate."""

    lo: float
    hi: float
    n: int
    mean_p: float | None
    observed: float | None

    def to_dict(self) -> dict:
        """JSON form."""
        return {"lo": self.lo, "hi": self.hi, "n": self.n, "mean_p": self.mean_p, "observed": self.observed}


def reliability(p, y, bins: int = BINS) -> tuple[float | None, tuple[ReliabilityBin, ...]]:
    """The expected calibration error of probabilities ``p`` against 0/1 labels ``y`` and the bins behind it
    (``bins`` equal-width bins over [0, 1], the last one closed); None for no captions."""
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    out, ece = [], 0.0
    for b in range(bins):
        mine = which == b
        k = int(mine.sum())
        mean_p = float(p[mine].mean()) if k else None
        observed = float(y[mine].mean()) if k else None
        if k:
            ece += k / len(p) * abs(mean_p - observed)
        out.append(ReliabilityBin(b / bins, (b + 1) / bins, k, mean_p, observed))
    return (float(ece) if len(p) else None), tuple(out)


@dataclass(frozen=True)
class Disagreement:
    """A caption where the judge's decision differs from the layer's, and how confidently."""

    caption_id: int
    system: str
    item: str
    line: int
    caption: str
    human: str  # the layer's label
    human_types: tuple[str, ...]
    p_inaccurate: float
    judge_types: tuple[str, ...]

    @property
    def confidence(self) -> float:
        """The judge's probability of its own (wrong, as the humans say) decision."""
        return self.p_inaccurate if self.human == "accurate" else 1.0 - self.p_inaccurate

    def to_dict(self) -> dict:
        """JSON form."""
        return {"caption_id": self.caption_id, "system": self.system, "item": self.item, "line": self.line,
                "caption": self.caption, "human": self.human, "human_types": list(self.human_types),
                "p_inaccurate": self.p_inaccurate, "judge_types": list(self.judge_types),
                "confidence": self.confidence}


def most_confident(found: list[Disagreement], limit: int) -> tuple[Disagreement, ...]:
    """The ``limit`` disagreements the judge was most sure of (then by caption id)."""
    return tuple(sorted(found, key=lambda d: (-d.confidence, d.caption_id))[:limit])


@dataclass(frozen=True)
class SuggestionEffect:
    """Judgements made with or without a judge's suggestion: how often they agree with the judge, and how long
    they took."""

    group: str  # "with a suggestion" or "without a suggestion"
    judgements: int
    agreement: Agreement | None  # the human's label against the judge's decision (captions the judge scored)
    median_seconds: float | None
    mean_seconds: float | None

    def to_dict(self) -> dict:
        """JSON form."""
        return {"group": self.group, "judgements": self.judgements,
                "agreement": self.agreement.to_dict() if self.agreement else None,
                "median_seconds": self.median_seconds, "mean_seconds": self.mean_seconds}


#: The two groups of judgements the suggestion figures compare.
SUGGESTED, UNSUGGESTED = "with a suggestion", "without a suggestion"


def suggestion_effect(judge: str, rows, outputs: dict, **boot) -> tuple[SuggestionEffect, ...]:
    """Per group (made with the panel pre-filled from a judge, or not; not recorded counts as not) the human
    judgements' agreement with ``judge``'s decisions and their working time. ``rows``: (caption id, user, label,
    types, seconds, suggested) of the current annotations; ``outputs``: the judge's outputs by caption id."""
    out = []
    for group, wanted in ((SUGGESTED, True), (UNSUGGESTED, False)):
        mine = [r for r in rows if bool(r[5]) == wanted]
        seconds = np.array([float(r[4] or 0.0) for r in mine if (r[4] or 0.0) > 0])
        scored = [r for r in mine if r[0] in outputs]
        agreement = decision_agreement("human", judge, [r[2] == "inaccurate" for r in scored],
                                       [outputs[r[0]].inaccurate for r in scored], **boot) if scored else None
        out.append(SuggestionEffect(group, len(mine), agreement,
                                    float(np.median(seconds)) if len(seconds) else None,
                                    float(seconds.mean()) if len(seconds) else None))
    return tuple(out)
