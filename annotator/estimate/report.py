"""Error frequencies of a whole system from a human sample and the detectors: one report object.

:func:`estimate_report` combines the human labels of some of a system's
captions with the detector scores of all of them (prediction-powered
inference, :mod:`annotator.estimate.ppi`) into an :class:`EstimateReport`:
for the inaccurate share and for each error type's share of captions, the
estimate, its interval, the classical interval from the human sample alone,
and how well each detector agrees with the humans on the labelled captions.
The CLI, the page and the exports all read this one object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..taxonomy import ERROR_TYPE_IDS
from .detectors import DETECTED_TYPES, INACCURATE, ChairScore, Detections
from .ppi import (MIN_SUPPORT, DifferenceEstimate, DrawUse, MeanEstimate, SampleDraw, difference, draws_means,
                  ppi_means)

#: Fewer human labels than this and the normal approximation behind the intervals is rough.
MIN_LABELS_FOR_CLT = 30


@dataclass(frozen=True)
class HumanLabels:
    """The human judgements of some captions of one system.

    ``rows`` are the captions' positions among the system's captions (the rows
    of its detections); ``inaccurate`` the coarse label; ``types`` the ticked
    error type ids. An inaccurate caption with no types yet (a coarse-only
    import, a pending second pass) counts for the inaccurate share; for the
    type shares it is a missing value, which the typed inaccurate captions
    stand for (see :func:`estimate_report`).

    How the labelled captions were chosen: by default a simple random sample;
    ``weights`` give inverse labelling probabilities of a one-round Poisson
    sample; ``draws`` the recorded rounds of a sample drawn by ``assign
    --active``/``--random`` (:func:`annotator.estimate.ppi.draws_means`), and
    then only captions some draw took count.
    """

    rows: np.ndarray
    inaccurate: np.ndarray
    types: tuple[frozenset, ...]
    weights: np.ndarray | None = None  # inverse labelling probabilities, when the sample was not uniform
    draws: tuple[SampleDraw, ...] = ()

    @classmethod
    def from_lists(cls, rows: Sequence[int], inaccurate: Sequence[bool], types: Sequence[Iterable[str]],
                   weights: Sequence[float] | None = None, draws: Sequence[SampleDraw] = ()) -> "HumanLabels":
        """Build from plain lists; rows must be distinct."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(np.unique(rows)) != len(rows):
            raise ValueError("a caption is labelled twice in one layer")
        if not (len(rows) == len(inaccurate) == len(types)):
            raise ValueError("rows, labels and types differ in length")
        w = None if weights is None else np.asarray(weights, dtype=float)
        if w is not None and draws:
            raise ValueError("give either sampling weights or recorded draws, not both")
        return cls(rows, np.asarray(inaccurate, dtype=bool), tuple(frozenset(t) for t in types), w, tuple(draws))

    @property
    def in_draws(self) -> np.ndarray:
        """Which labelled captions some recorded draw took (all of them when there are no draws)."""
        if not self.draws:
            return np.ones(len(self.rows), dtype=bool)
        return np.isin(self.rows, np.concatenate([d.rows for d in self.draws]))

    @property
    def types_known(self) -> np.ndarray:
        """Captions whose type labels are complete (accurate, or inaccurate with types)."""
        return ~self.inaccurate | np.array([bool(t) for t in self.types], dtype=bool)

    def type_matrix(self, type_ids: Sequence[str]) -> np.ndarray:
        """0/1 matrix (captions x types)."""
        return np.array([[t in ts for t in type_ids] for ts in self.types], dtype=float).reshape(len(self.types),
                                                                                                  len(type_ids))


@dataclass(frozen=True)
class DetectorQuality:
    """How a detector agrees with the human labels of the labelled captions."""

    precision: float | None  # of the flagged captions, the share humans marked (None: nothing flagged)
    recall: float | None  # of the captions humans marked, the share flagged (None: none marked)
    auc: float | None  # ranking quality of the score (None: only one class among the labels)
    flagged: int
    positives: int


def detector_quality(y: np.ndarray, score: np.ndarray, threshold: float = 0.5) -> DetectorQuality:
    """Precision and recall of ``score >= threshold`` and the ROC AUC of the score against 0/1 labels."""
    from sklearn.metrics import roc_auc_score
    y = np.asarray(y, dtype=bool)
    flagged = np.asarray(score) >= threshold
    tp = int((flagged & y).sum())
    precision = tp / int(flagged.sum()) if flagged.any() else None
    recall = tp / int(y.sum()) if y.any() else None
    auc = float(roc_auc_score(y, score)) if 0 < y.sum() < len(y) else None
    return DetectorQuality(precision, recall, auc, int(flagged.sum()), int(y.sum()))


def _clip(ci: tuple[float, float]) -> list[float]:
    return [float(min(max(ci[0], 0.0), 1.0)), float(min(max(ci[1], 0.0), 1.0))]


@dataclass(frozen=True)
class EstimateReport:
    """Estimated error profile of one system (see the module documentation).

    Intervals in :meth:`to_dict` and :meth:`frame` are clipped to [0, 1] (a
    share cannot leave it); the :class:`MeanEstimate` objects keep the raw ones.
    """

    system: str | None
    n_total: int
    n_human: int
    alpha: float
    finite_population: bool
    inaccurate: MeanEstimate
    types: dict[str, MeanEstimate]
    detectors: dict[str, DetectorQuality]
    chair: ChairScore
    warnings: tuple[str, ...] = field(default=())  # what puts the intervals themselves in doubt
    notes: tuple[str, ...] = field(default=())  # what to know when reading them
    draws: tuple[DrawUse, ...] = field(default=())  # the recorded draws the estimate rests on (none: random sample)
    predictor: str = "detectors"  # the judge whose scores are the predictor (annotator.judges)
    classical_only: tuple[str, ...] = field(default=())  # targets the judge does not score: classical intervals

    @property
    def design(self) -> str:
        """How the human sample is read: ``"draws"`` (recorded probability draws) or ``"random sample"``
        (assumed simple random)."""
        return "draws" if self.draws else "random sample"

    def target(self, name: str) -> MeanEstimate:
        """The estimate of ``"inaccurate"`` or of a type id."""
        return self.inaccurate if name == INACCURATE else self.types[name]

    @staticmethod
    def _entry(e: MeanEstimate) -> dict:
        return {"estimate": e.estimate, "ci": _clip(e.ci), "classical_ci": _clip(e.classical_ci),
                "classical": e.classical, "n_human": e.n, "lambda": e.lam,
                "more_labels_to_halve": e.labels_to_halve(), "sparse": e.sparse,
                "normal_ci": _clip(e.ppi_ci if e.ppi_ci is not None else e.ci),
                "effective_residuals": round(e.residuals, 2), "labelled_cases": e.cases,
                "zero_width": e.zero_width}

    @property
    def sparse_targets(self) -> list[str]:
        """Targets whose interval rests on fewer than :data:`MIN_SUPPORT` residuals or cases (widened)."""
        return [t for t in (INACCURATE, *self.types) if self.target(t).sparse]

    @property
    def zero_width_targets(self) -> list[str]:
        """Targets whose interval is a single point although some captions are unlabelled."""
        return [t for t in (INACCURATE, *self.types) if self.target(t).zero_width]

    def to_dict(self) -> dict:
        """The JSON form: n_total, n_human, inaccurate, types, detectors (and system, alpha, CHAIR, warnings, notes)."""
        return {
            "system": self.system,
            "n_total": self.n_total,
            "n_human": self.n_human,
            "alpha": self.alpha,
            "estimand": "share of these captions" if self.finite_population else "population share",
            "inaccurate": self._entry(self.inaccurate),
            "types": {t: self._entry(e) for t, e in self.types.items()},
            "detectors": {t: {"precision": q.precision, "recall": q.recall, "auc": q.auc}
                          for t, q in self.detectors.items()},
            "chair": {"chair_i": self.chair.chair_i, "chair_s": self.chair.chair_s,
                      "mentions": self.chair.mentions, "hallucinated": self.chair.hallucinated},
            "sampling": {"design": self.design,
                         "draws": [{"draw": u.draw_id, "drawn": u.drawn, "labelled": u.labelled, "share": u.share}
                                   for u in self.draws]},
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "predictor": self.predictor,
            "classical_only": list(self.classical_only),
        }

    def to_tables(self) -> dict[str, pd.DataFrame]:
        """Named tables for the CSV/XLSX/LaTeX/Markdown writers."""
        return {"Estimates": self.frame()}

    def frame(self) -> pd.DataFrame:
        """One row per target (inaccurate first, then the types): estimate, intervals, labels, detector quality."""
        rows = []
        for name in (INACCURATE, *self.types):
            e = self.target(name)
            q = self.detectors.get(name)
            lo, hi = _clip(e.ci)
            clo, chi = _clip(e.classical_ci)
            rows.append({"system": self.system, "target": name, "estimate": e.estimate, "ci_low": lo, "ci_high": hi,
                         "classical": e.classical, "classical_low": clo, "classical_high": chi, "n_human": e.n,
                         "n_total": e.N, "lambda": e.lam, "more_labels_to_halve": e.labels_to_halve(),
                         "sparse": e.sparse, "effective_residuals": e.residuals, "labelled_cases": e.cases,
                         "precision": q.precision if q else None, "recall": q.recall if q else None,
                         "auc": q.auc if q else None})
        return pd.DataFrame(rows)


def estimate_report(detections: Detections, human: HumanLabels, *, system: str | None = None,
                    alpha: float = 0.05, types: str | Sequence[str] = "all", finite_population: bool = True,
                    threshold: float = 0.5, min_support: int = MIN_SUPPORT, predictor=None) -> EstimateReport:
    """Estimate one system's inaccurate share and error-type shares.

    ``detections`` holds the scores of all of the system's captions;
    ``human`` the labels of some of them. ``types`` is ``"all"``, ``"top5"``
    (the five types with the highest estimates) or a list of type ids. With
    ``finite_population`` (the default) the targets are the shares among
    exactly these captions; see :mod:`annotator.estimate.ppi`, also for
    ``min_support`` (0: plain normal-approximation intervals, never widened).
    Inaccurate captions with types pending are missing values for the type
    shares: without recorded draws the typed inaccurate captions are
    weighted up to stand for them; with draws (or none typed) the type
    shares are left out, and a note says which and why.

    ``predictor`` (an :class:`annotator.judges.JudgeScores` of the same
    captions) is the judge whose scores enter prediction-powered inference
    instead of the detectors'; a type it does not score has a column of
    zeros, which gives exactly the classical estimate and interval there
    (named in ``classical_only``). ``detections`` still give CHAIR.
    """
    N = len(detections)
    if predictor is not None and len(predictor) != N:
        raise ValueError(f"the judge scores {len(predictor)} captions, the detectors {N}")
    source = detections if predictor is None else predictor
    if len(human.rows) and (human.rows.min() < 0 or human.rows.max() >= N):
        raise ValueError("a labelled caption is outside the system's captions")
    if len(human.rows) < 2:
        raise ValueError(f"at least two human-labelled captions are needed, got {len(human.rows)}")
    weights = human.weights
    kw = dict(alpha=alpha, finite_population=finite_population, min_support=min_support)
    warnings, notes = [], []
    uses: list[DrawUse] = []

    def means(mask: np.ndarray, Y: np.ndarray, F_all: np.ndarray, w=weights) -> list[MeanEstimate]:
        """Estimates of the means of ``Y``'s columns over the captions, from the labelled rows ``mask`` picks:
        prediction-powered with the weights ``w``, or from the recorded draws (whose use is kept in ``uses``)."""
        rows = human.rows[mask]
        if not human.draws:
            return ppi_means(Y, F_all[rows], F_all, weights=None if w is None else w[mask], **kw)
        found, used = draws_means(rows, Y, F_all, human.draws, **kw)
        uses[:] = uses or used
        return found

    y = human.inaccurate.astype(float)
    f_all = source.score(INACCURATE)
    everyone = np.ones(len(human.rows), dtype=bool)
    try:
        (inacc,) = means(everyone, y, f_all)
    except ValueError as exc:
        if not human.draws:
            raise
        raise ValueError(f"the recorded sample draws cannot give an estimate yet: {exc}") from None
    quality = {INACCURATE: detector_quality(y, f_all[human.rows], threshold)}

    results = _type_shares(source, human, means, finite_population, threshold, quality, notes)
    if human.draws:
        notes.extend(_draw_notes(human, uses))
    if inacc.n < MIN_LABELS_FOR_CLT:
        warnings.append(f"only {inacc.n} human labels: the intervals rest on a normal approximation "
                        f"that needs about {MIN_LABELS_FOR_CLT} or more")
    results = _chosen_types(results, types)
    _interval_notes(inacc, results, notes, warnings)
    quality = {t: q for t, q in quality.items() if t == INACCURATE or t in results}
    fields = _predictor_fields(predictor, results, notes)
    return EstimateReport(system=system, n_total=N, n_human=inacc.n, alpha=alpha,
                          finite_population=finite_population, inaccurate=inacc, types=results,
                          detectors=quality, chair=detections.chair(), warnings=tuple(warnings), notes=tuple(notes),
                          draws=tuple(uses), **fields)


def _predictor_fields(predictor, results: dict, notes: list[str]) -> dict:
    """The report's ``predictor`` and ``classical_only`` fields for the judge used (None: the detectors), and a
    note naming the types a judge does not score and how many captions it has no score for."""
    scored = DETECTED_TYPES if predictor is None else tuple(t for t in results if predictor.scores_column(t))
    unscored = tuple(t for t in results if t not in scored)
    if predictor is None or predictor.name == "detectors":
        return {"classical_only": unscored}
    if unscored:
        notes.append(f"judge {predictor.name!r} does not score {len(unscored)} error type"
                     f"{'s' if len(unscored) > 1 else ''} ({', '.join(unscored)}): "
                     f"{'their intervals are' if len(unscored) > 1 else 'its interval is'} the classical "
                     "one from the human labels alone")
    missing = predictor.missing_count(INACCURATE)
    if missing:
        notes.append(f"judge {predictor.name!r} has no output for {missing} of these {len(predictor)} captions: "
                     "each is scored with the judge's mean score, which keeps the estimate unbiased and gains less "
                     "from the judge")
    return {"predictor": predictor.name, "classical_only": unscored}


def _type_shares(detections, human: HumanLabels, means, finite_population: bool, threshold: float,
                 quality: dict, notes: list[str]) -> dict[str, MeanEstimate]:
    """Every error type's estimated share (none when fewer than two labelled captions have complete types), with
    the detectors' quality into ``quality`` and what the estimate assumed into ``notes``."""
    type_ids = list(ERROR_TYPE_IDS)
    F_all = np.column_stack([detections.score(t) for t in type_ids])
    pending = int((~human.types_known).sum())
    known, type_weights, scale = _pending_types(human, len(detections), finite_population, notes)
    rows = human.rows[known]
    Y = human.type_matrix(type_ids)[known]
    type_estimates = None
    if int((known & human.in_draws).sum()) >= 2:
        try:
            type_estimates = means(known, Y, F_all, type_weights)
        except ValueError:
            if not human.draws:
                raise  # without draws, two captions with complete types always give an estimate
    if type_estimates is None:
        if not (pending and scale is None):  # types pending and refused: the note says so already
            notes.append("fewer than two labelled captions have complete error types; no type shares")
        return {}
    scores = getattr(detections, "scores_column", lambda t: t in DETECTED_TYPES)
    for j, t in enumerate(type_ids):
        if scores(t):
            quality[t] = detector_quality(Y[:, j], F_all[rows, j], threshold)
    if pending:
        notes.append(f"{pending} labelled inaccurate caption{'s have' if pending > 1 else ' has'} error types "
                     f"pending: the type shares are estimated from the {int(known.sum())} fully typed "
                     f"captions, each typed inaccurate one weighted {scale:.2f}x to stand for the pending ones "
                     "(read as missing at random among the inaccurate captions)")
    return dict(zip(type_ids, type_estimates))


def _pending_types(human: HumanLabels, N: int, finite_population: bool, notes: list[str]):
    """Which labelled captions the type shares use, their weights, and the factor the typed inaccurate ones are
    weighted up by (None where no caption's types are pending, or where pending types refuse the shares, which
    ``notes`` then says).

    Types pending are missing values, not zeros: the typed inaccurate captions stand for all inaccurate ones
    (two-phase sampling, types missing at random among the labelled inaccurate captions)."""
    known, weights = human.types_known, human.weights
    pending = int((~known).sum())
    if not pending:
        return known, weights, None
    base = np.ones(len(human.rows)) if weights is None else np.asarray(weights, dtype=float)
    inacc_rows = human.inaccurate
    typed = float(base[inacc_rows & known].sum()) / float(base[inacc_rows].sum())
    if human.draws or typed == 0:
        why = ("recorded draws cannot reweight them" if human.draws else "no inaccurate caption has its types")
        notes.append(f"{pending} labelled inaccurate caption{'s have' if pending > 1 else ' has'} error types "
                     f"pending: no type shares until {'they are' if pending > 1 else 'it is'} typed ({why})")
        return np.zeros(len(human.rows), dtype=bool), weights, None
    scale = 1.0 / typed
    if finite_population and weights is None:
        base = np.full(len(human.rows), N / len(human.rows))  # a simple random sample: n of N
    return known, np.where(inacc_rows, base * scale, base), scale


def _chosen_types(results: dict[str, MeanEstimate], types: str | Sequence[str]) -> dict[str, MeanEstimate]:
    """The type estimates asked for: all, the five highest (``"top5"``) or the listed ids, in taxonomy order."""
    type_ids = list(ERROR_TYPE_IDS)
    if types == "top5":
        chosen = sorted(results, key=lambda t: (-results[t].estimate, type_ids.index(t)))[:5]
        return {t: results[t] for t in type_ids if t in chosen}
    if types != "all":
        wanted = list(types)
        unknown = [t for t in wanted if t not in type_ids]
        if unknown:
            raise ValueError(f"unknown error type ids: {', '.join(unknown)}")
        return {t: results[t] for t in type_ids if t in wanted and t in results}
    return results


def _interval_notes(inacc: MeanEstimate, results: dict[str, MeanEstimate], notes: list[str],
                    warnings: list[str]) -> None:
    """Say which intervals rest on too few labels (widened) and which have a width of zero they cannot claim."""
    sparse = [t for t, e in ((INACCURATE, inacc), *results.items()) if e.sparse]
    if sparse:
        notes.append(f"{len(sparse)} target{'s rest' if len(sparse) > 1 else ' rests'} on fewer than {MIN_SUPPORT} "
                     "labelled captions of the rarer label or effective non-zero residuals (the detector almost "
                     f"always right, or the type almost never labelled): {', '.join(sparse)}; "
                     f"{'their intervals are' if len(sparse) > 1 else 'its interval is'} widened to hold the exact "
                     "interval of the human labels (marked * in the table, sparse in the JSON)")
    zero = [t for t, e in ((INACCURATE, inacc), *results.items()) if e.zero_width]
    if zero:
        warnings.append(f"{len(zero)} interval{'s have' if len(zero) > 1 else ' has'} zero width although not every "
                        f"caption is labelled ({', '.join(zero)}): {'they claim' if len(zero) > 1 else 'it claims'} "
                        "an exactness the human labels cannot give")


def _draw_notes(human: HumanLabels, uses: Sequence[DrawUse]) -> list[str]:
    """What a reader of an estimate from recorded draws should know: which draws count, what is missing."""
    used = [u for u in uses if u.share > 0]
    notes = [f"the human sample was drawn in {len(uses)} recorded draw{'s' if len(uses) > 1 else ''}; each "
             "labelled caption is weighted by the inverse of its chance of being drawn"]
    for u in uses:
        if u.share > 0 and u.labelled < u.drawn:
            notes.append(f"draw {u.draw_id}: {u.drawn - u.labelled} of its {u.drawn} captions have no label in this "
                         "layer yet; the labelled ones stand for them")
        elif u.share == 0:
            notes.append(f"draw {u.draw_id} is left out: {u.reason}")
    outside = int((~human.in_draws).sum())
    if outside:
        notes.append(f"{outside} labelled captions are in no draw and are left out (nothing records how they "
                     "were chosen)")
    if len(used) > 1:
        notes.append("draws combined with shares " + ", ".join(f"{u.draw_id}: {u.share:.2f}" for u in used))
    return notes


def compare(reports: Sequence[EstimateReport], a: str, b: str) -> dict[str, DifferenceEstimate]:
    """System ``a`` minus system ``b`` for every target both reports have."""
    by_system = {r.system: r for r in reports}
    ra, rb = by_system[a], by_system[b]
    out = {INACCURATE: difference(ra.inaccurate, rb.inaccurate)}
    for t in ra.types:
        if t in rb.types:
            out[t] = difference(ra.types[t], rb.types[t])
    return out


def comparison_frame(reports: Sequence[EstimateReport]) -> pd.DataFrame:
    """All systems side by side: one row per system and target (the rows of each report's frame)."""
    return pd.concat([r.frame() for r in reports], ignore_index=True) if reports else pd.DataFrame()
