"""Inter-annotator agreement: one report object, computed once, read by everyone.

:func:`agreement_report` turns a frame of current judgements (from
``annotator.store.analysis_queries.judgement_frame`` or
``annotator.store.judgements.current_frame``) into an :class:`AgreementReport`.
The dashboard, the CLI (``annotator agreement``) and every export read that
object; nothing recomputes figures on its own.

Definitions
-----------
Unit: a caption. Only annotations (kind "annotation") count; adjudications
never enter agreement. Captions of items marked as practice/guideline examples
(``items.is_practice``) are left out of every figure, and the report says how
many items, captions and judgements that removed.

Coarse task, per pair (A, B) on the captions both judged (N of them):
  * raw agreement  share of captions with the same label;
  * Cohen's kappa  (p_o − p_e)/(1 − p_e) from the 2×2 table, with p_e from
    the two annotators' own marginals — equal to
    ``sklearn.metrics.cohen_kappa_score``; undefined (None) when p_e = 1;
  * 95% interval   percentile bootstrap over captions, ``n_resamples`` (default
    2,000) resamples with ``numpy.random.default_rng(seed)`` (default seed 0).
    Resampling N captions with replacement only changes the counts of the
    four cells of the 2×2 table, so each resample is drawn directly as
    Multinomial(N, observed cell shares) — the same distribution as resampling
    captions, in O(resamples) time. Resamples where kappa is undefined
    (all captions in one cell) are dropped;
  * confusion      rows: A's label, columns: B's label, order (accurate, inaccurate);
  * inaccurate     how many captions each judged inaccurate; both_inaccurate.

Error types, per ordered pair (reference A, retrieved B), on the captions
both judged inaccurate and both gave error types for: for each caption
R = A's types, S = B's types. An inaccurate judgement without types is a
fine pass still to come (the staged second pass, or coarse-only imported
judgements), not an empty answer: such captions are left out and counted as
``fine_pending``, since counting them would turn every type of the other
annotator into a miss.
  * micro   TP = Σ|R∩S|, precision = TP/Σ|S|, recall = TP/Σ|R|, F1 = harmonic mean;
  * per type t: TP_t, precision_t = TP_t/#S∋t, recall_t = TP_t/#R∋t, F1_t, and
    Cohen's kappa of "t ticked or not" over those captions;
  * macro   mean of the per-type P/R/F1 over the types at least one of the two
    ticked, an undefined precision or recall counting as 0 (this equals
    scikit-learn's ``precision_recall_fscore_support(average="macro",
    zero_division=0, labels=<those types>)`` on the indicator matrices).
  Swapping reference and retrieved swaps precision and recall.

Several annotators (binary task, all selected annotators):
  * Krippendorff's alpha, nominal, missing judgements allowed: over the captions
    with at least two judgements (equal to the ``krippendorff`` package);
  * Fleiss' kappa: over the captions judged by exactly ``fleiss_m`` of the
    selected annotators (default: all of them), since Fleiss needs the same
    number of ratings per item; the other captions are left out and the report
    gives how many were used (equal to ``statsmodels``' ``fleiss_kappa``).

Judgements are read through annotator.layers (``select_rows``): error-type
sets are integer bit masks over the taxonomy order, which makes set equality,
intersection and counting vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from .errors import InputError
from .layers import ANNOTATION, factorize_sorted, masks_to_ids, recode, select_rows, type_counts
from .model import Label
from .taxonomy import taxonomy

__all__ = ["AgreementReport", "PairAgreement", "FineAgreement", "TypeAgreement", "BootstrapSpec", "agreement_report",
           "cohen_kappa_from_table", "kappa_with_interval", "krippendorff_alpha_nominal", "fleiss_kappa_counts",
           "DEFAULT_RESAMPLES",
           "DEFAULT_SEED", "DEFAULT_CONFIDENCE"]

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0
DEFAULT_CONFIDENCE = 0.95


# ------------------------------------------------------------------ small helpers

def _f(x) -> float | None:
    """A finite float or None (JSON-safe)."""
    if x is None:
        return None
    x = float(x)
    return x if np.isfinite(x) else None


def _kappa_cells(n00, n01, n10, n11):
    """Cohen's kappa from 2×2 cell counts (arrays broadcast); NaN where undefined."""
    n00, n01, n10, n11 = (np.asarray(v, dtype=float) for v in (n00, n01, n10, n11))
    n = n00 + n01 + n10 + n11
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (n00 + n11) / n
        pe = ((n00 + n01) * (n00 + n10) + (n10 + n11) * (n01 + n11)) / (n * n)
        k = (po - pe) / (1.0 - pe)
    return np.where(np.isclose(pe, 1.0) | (n == 0), np.nan, k)


def cohen_kappa_from_table(table) -> float | None:
    """Cohen's kappa of a 2×2 table [[a0b0, a0b1], [a1b0, a1b1]] (None when undefined)."""
    t = np.asarray(table, dtype=float)
    if t.shape != (2, 2):
        raise InputError(f"a 2×2 table is needed, not shape {t.shape}")
    return _f(_kappa_cells(t[0, 0], t[0, 1], t[1, 0], t[1, 1]))


def krippendorff_alpha_nominal(counts) -> tuple[float | None, int]:
    """Krippendorff's alpha (nominal) from a units × categories count matrix.

    ``counts[u, c]`` = how many coders put unit u in category c. Units with
    fewer than two values are not pairable and are ignored. Returns (alpha,
    number of pairable units); alpha is None when undefined (fewer than two
    pairable values or only one category used).
    """
    c = np.asarray(counts, dtype=float)
    m = c.sum(axis=1)
    c = c[m >= 2]
    m = m[m >= 2]
    if len(m) == 0:
        return None, 0
    # Σ_{c≠k} o_ck = Σ_u (m_u² − Σ_c n_uc²)/(m_u − 1)
    disagree = ((m * m - (c * c).sum(axis=1)) / (m - 1)).sum()
    n_c = c.sum(axis=0)
    n = n_c.sum()
    expected = n * n - (n_c * n_c).sum()
    if expected <= 0:
        return None, int(len(m))
    return _f(1.0 - (n - 1) * disagree / expected), int(len(m))


def fleiss_kappa_counts(counts) -> float | None:
    """Fleiss' kappa from an items × categories count matrix with equal row sums m ≥ 2."""
    c = np.asarray(counts, dtype=float)
    if c.size == 0:
        return None
    m = c.sum(axis=1)
    if not np.allclose(m, m[0]) or m[0] < 2:
        raise InputError("Fleiss' kappa needs the same number (≥ 2) of ratings for every item")
    n_items, m0 = len(c), m[0]
    p_j = c.sum(axis=0) / (n_items * m0)
    p_i = ((c * c).sum(axis=1) - m0) / (m0 * (m0 - 1))
    p_bar, p_e = p_i.mean(), (p_j * p_j).sum()
    if np.isclose(p_e, 1.0):
        return None
    return _f((p_bar - p_e) / (1 - p_e))


# ------------------------------------------------------------------ result objects

@dataclass(frozen=True)
class BootstrapSpec:
    """How the kappa interval was computed (kept in the report for reproducibility)."""

    n_resamples: int
    seed: int
    confidence: float
    method: str = "percentile bootstrap over captions (multinomial resampling of the 2×2 cells)"


@dataclass(frozen=True)
class TypeAgreement:
    """Agreement on one error type over the captions both annotators judged inaccurate."""

    type_id: str
    name: str
    group: str
    reference: int  # captions where the reference annotator ticked it
    retrieved: int  # captions where the other annotator ticked it
    both: int
    precision: float | None
    recall: float | None
    f1: float | None
    kappa: float | None


@dataclass(frozen=True)
class FineAgreement:
    """Error-type agreement of one ordered pair: ``reference``'s types vs ``retrieved``'s."""

    reference: str
    retrieved: str
    n: int  # captions both judged inaccurate
    tp: int
    fp: int
    fn: int
    precision: float | None
    recall: float | None
    f1: float | None
    macro_precision: float | None
    macro_recall: float | None
    macro_f1: float | None
    exact_match: float | None  # share of those captions with identical type sets
    per_type: tuple[TypeAgreement, ...]

    def swapped(self) -> "FineAgreement":
        """The same figures with reference and retrieved exchanged (P↔R)."""
        per = tuple(TypeAgreement(t.type_id, t.name, t.group, t.retrieved, t.reference, t.both, t.recall, t.precision,
                                  t.f1, t.kappa) for t in self.per_type)
        return FineAgreement(self.retrieved, self.reference, self.n, self.tp, self.fn, self.fp, self.recall,
                             self.precision, self.f1, self.macro_recall, self.macro_precision, self.macro_f1,
                             self.exact_match, per)

    def type_frame(self) -> pd.DataFrame:
        """Per-type figures as a table (taxonomy order)."""
        return pd.DataFrame([{
            "type": t.type_id, "name": t.name, "group": t.group, f"{self.reference} (reference)": t.reference,
            f"{self.retrieved}": t.retrieved, "both": t.both, "precision": t.precision, "recall": t.recall,
            "f1": t.f1, "kappa": t.kappa} for t in self.per_type])


@dataclass(frozen=True)
class PairAgreement:
    """Coarse and fine agreement of annotators ``a`` and ``b`` on the captions both judged."""

    a: str
    b: str
    n: int
    agreement: float | None
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    confusion: tuple[tuple[int, int], tuple[int, int]]  # [a accurate/inaccurate][b accurate/inaccurate]
    inaccurate: dict
    both_inaccurate: int
    fine: FineAgreement
    fine_pending: int = 0  # both inaccurate, but at least one has not given error types yet

    @property
    def disagreements(self) -> int:
        """Captions where the two labels differ."""
        return int(self.confusion[0][1] + self.confusion[1][0])

    def swapped(self) -> "PairAgreement":
        """The pair seen from ``b``: confusion transposed, fine-grained P and R exchanged."""
        c = self.confusion
        return PairAgreement(self.b, self.a, self.n, self.agreement, self.kappa, self.kappa_ci,
                             ((c[0][0], c[1][0]), (c[0][1], c[1][1])), dict(self.inaccurate), self.both_inaccurate,
                             self.fine.swapped(), self.fine_pending)

    def confusion_frame(self) -> pd.DataFrame:
        """The 2×2 table with labelled rows (``a``) and columns (``b``)."""
        labels = [Label.ACCURATE.value, Label.INACCURATE.value]
        return pd.DataFrame({f"{self.a} \\ {self.b}": labels,
                             labels[0]: [self.confusion[0][0], self.confusion[1][0]],
                             labels[1]: [self.confusion[0][1], self.confusion[1][1]]})

    def summary(self) -> dict:
        """The flat figures (what ``annotator agreement --json`` prints for this pair)."""
        return {
            "annotators": [self.a, self.b], "n": self.n, "accuracy": self.agreement, "kappa": self.kappa,
            "kappa_ci": list(self.kappa_ci) if self.kappa_ci else None,
            "confusion": {"labels": [Label.ACCURATE.value, Label.INACCURATE.value], "rows": self.a, "columns": self.b,
                          "counts": [list(r) for r in self.confusion]},
            "inaccurate": dict(self.inaccurate), "both_inaccurate": self.both_inaccurate,
            "disagreements": self.disagreements,
            "fine_reference": self.fine.reference, "fine_n": self.fine.n, "fine_pending": self.fine_pending,
            "fine_precision": self.fine.precision, "fine_recall": self.fine.recall, "fine_f1": self.fine.f1,
            "fine_macro_precision": self.fine.macro_precision, "fine_macro_recall": self.fine.macro_recall,
            "fine_macro_f1": self.fine.macro_f1, "fine_exact_match": self.fine.exact_match,
            "per_type": {t.type_id: {"reference": t.reference, "retrieved": t.retrieved, "both": t.both,
                                     "precision": t.precision, "recall": t.recall, "f1": t.f1, "kappa": t.kappa}
                         for t in self.fine.per_type},
        }


@dataclass(frozen=True)
class _Aligned:
    """Judgements of k annotators aligned on captions (row = caption, column = annotator)."""

    annotators: tuple[str, ...]
    caption_ids: np.ndarray  # (n,) sorted
    present: np.ndarray      # (n, k) bool
    inaccurate: np.ndarray   # (n, k) bool
    types: np.ndarray        # (n, k) int64 masks
    item_ids: np.ndarray     # (n,)
    systems: pd.Categorical  # (n,)


@dataclass(frozen=True)
class AgreementReport:
    """Every agreement figure of a set of annotators on a project (optionally one system)."""

    annotators: tuple[str, ...]
    system: str | None
    type_ids: tuple[str, ...]
    judged: dict                     # captions judged per annotator (practice left out)
    captions: int                    # captions judged by at least one of them
    multiply_judged: int             # captions judged by two or more
    practice_items_excluded: int
    practice_captions_excluded: int
    practice_judgements_excluded: int
    pairs: tuple[PairAgreement, ...]
    alpha: float | None
    alpha_units: int
    fleiss_kappa: float | None
    fleiss_items: int
    fleiss_m: int
    bootstrap: BootstrapSpec
    unknown_types: tuple[str, ...] = ()
    _data: _Aligned | None = field(default=None, repr=False, compare=False)

    def pair(self, a: str, b: str) -> PairAgreement:
        """Figures of pair (a, b); with ``a`` as the fine-grained reference."""
        for p in self.pairs:
            if (p.a, p.b) == (a, b):
                return p
            if (p.a, p.b) == (b, a):
                return p.swapped()
        raise InputError(f"no agreement figures for {a!r} and {b!r}; annotators: {', '.join(self.annotators)}")

    @property
    def first(self) -> PairAgreement | None:
        """The pair of the first two annotators (None with fewer than two)."""
        return self.pairs[0] if self.pairs else None

    def summary(self, a: str | None = None, b: str | None = None) -> dict:
        """One flat JSON-ready dict: the figures of pair (a, b) (default: the first two
        annotators) at top level, every pair under ``pairs``, plus alpha/Fleiss and exclusions."""
        out: dict = {"annotators": list(self.annotators), "system": self.system}
        if self.pairs:
            p = self.pair(a, b) if a and b else self.first
            out.update(p.summary())
            out["annotators"] = list(self.annotators)
            out["pair"] = [p.a, p.b]
        out.update({
            "alpha": self.alpha, "alpha_units": self.alpha_units, "fleiss_kappa": self.fleiss_kappa,
            "fleiss_items": self.fleiss_items, "fleiss_m": self.fleiss_m, "judged": dict(self.judged),
            "captions": self.captions, "multiply_judged": self.multiply_judged,
            "practice_excluded": {"items": self.practice_items_excluded, "captions": self.practice_captions_excluded,
                                  "judgements": self.practice_judgements_excluded},
            "bootstrap": {"n_resamples": self.bootstrap.n_resamples, "seed": self.bootstrap.seed,
                          "confidence": self.bootstrap.confidence, "method": self.bootstrap.method},
            "pairs": [p.summary() for p in self.pairs],
        })
        if self.unknown_types:
            out["unknown_types"] = list(self.unknown_types)
        return out

    def pairs_frame(self) -> pd.DataFrame:
        """One row per pair: coarse and fine figures."""
        rows = []
        for p in self.pairs:
            lo, hi = p.kappa_ci if p.kappa_ci else (None, None)
            rows.append({"annotator A": p.a, "annotator B": p.b, "captions": p.n, "agreement": p.agreement,
                         "kappa": p.kappa, "kappa CI low": lo, "kappa CI high": hi,
                         "A inaccurate": p.inaccurate[p.a], "B inaccurate": p.inaccurate[p.b],
                         "both inaccurate": p.both_inaccurate, "types compared": p.fine.n,
                         "types pending": p.fine_pending, "type precision": p.fine.precision,
                         "type recall": p.fine.recall, "type F1": p.fine.f1, "type macro F1": p.fine.macro_f1})
        return pd.DataFrame(rows)

    def overall_frame(self) -> pd.DataFrame:
        """Alpha, Fleiss and the exclusion counts as a two-column table."""
        rows = [("annotators", ", ".join(self.annotators)), ("system", self.system or "all"),
                ("captions judged", self.captions), ("captions judged by two or more", self.multiply_judged),
                ("Krippendorff's alpha (nominal)", self.alpha), ("alpha: captions used", self.alpha_units),
                ("Fleiss' kappa", self.fleiss_kappa), (f"Fleiss: captions with {self.fleiss_m} judgements", self.fleiss_items),
                ("practice items left out", self.practice_items_excluded),
                ("practice captions left out", self.practice_captions_excluded)]
        return pd.DataFrame({"figure": [r[0] for r in rows], "value": [r[1] for r in rows]}).astype({"value": object})

    def to_tables(self) -> dict[str, pd.DataFrame]:
        """Named tables for annotator.io.tables.write_table (pairs, overall, confusion and types per pair)."""
        out = {"Pairwise agreement": self.pairs_frame(), "Overall": self.overall_frame()}
        for p in self.pairs:
            out[f"Confusion {p.a} vs {p.b}"] = p.confusion_frame()
            out[f"Types {p.a} vs {p.b}"] = p.fine.type_frame()
        return out

    def disagreements(self, a: str, b: str, *, types: bool = True) -> pd.DataFrame:
        """Captions both judged where the labels differ (and, with ``types``, where both said
        inaccurate but ticked different types). Columns: caption_id, item_id, system,
        disagreement ("label"/"types"), label_<a>, label_<b>, types_<a>, types_<b>."""
        d = self._data
        if d is None:
            raise InputError("this report was built without its data")
        ia, ib = d.annotators.index(a), d.annotators.index(b)
        both = d.present[:, ia] & d.present[:, ib]
        la, lb = d.inaccurate[:, ia], d.inaccurate[:, ib]
        label_diff = both & (la != lb)
        type_diff = both & la & lb & (d.types[:, ia] != d.types[:, ib]) if types else np.zeros_like(both)
        sel = np.flatnonzero(label_diff | type_diff)
        labels = [Label.ACCURATE.value, Label.INACCURATE.value]
        ids = self.type_ids

        def _types(masks: np.ndarray) -> pd.Categorical:
            uniq, inv = np.unique(masks, return_inverse=True)
            return pd.Categorical.from_codes(inv, categories=pd.Index([" ".join(masks_to_ids(m, ids)) for m in uniq.tolist()],
                                                                      dtype=object))

        return pd.DataFrame({
            "caption_id": d.caption_ids[sel], "item_id": d.item_ids[sel], "system": d.systems[sel],
            "disagreement": pd.Categorical.from_codes(np.where(label_diff[sel], 0, 1).astype(np.int8),
                                                      categories=["label", "types"]),
            f"label_{a}": pd.Categorical.from_codes(la[sel].astype(np.int8), categories=labels),
            f"label_{b}": pd.Categorical.from_codes(lb[sel].astype(np.int8), categories=labels),
            f"types_{a}": _types(np.where(la[sel], d.types[sel, ia], 0)),
            f"types_{b}": _types(np.where(lb[sel], d.types[sel, ib], 0)),
        })


# ------------------------------------------------------------------ computation

def _prepare(frame: pd.DataFrame, annotators, system, type_ids):
    """Select the annotators' annotations and align them into arrays; count what practice marks removed."""
    rows = select_rows(frame, ANNOTATION, system=system, type_ids=type_ids)
    if annotators is None:
        annotators = sorted(str(u) for u in pd.unique(np.asarray(rows.user, dtype=object)))
    annotators = tuple(annotators)
    if len(set(annotators)) != len(annotators):
        raise InputError("an annotator is named twice")
    user_codes = recode(rows.user, annotators)
    keep = user_codes >= 0
    practice = rows.is_practice & keep
    prac_items = int(pd.unique(rows.item_id[practice]).size) if practice.any() else 0
    prac_caps = int(pd.unique(rows.caption_id[practice]).size) if practice.any() else 0
    prac_judgements = int(practice.sum())
    keep &= ~rows.is_practice
    rows, user_codes = rows.take(keep), user_codes[keep]

    caption_ids, row = factorize_sorted(rows.caption_id)
    n, k = len(caption_ids), len(annotators)
    if len(rows) and (np.bincount(row * k + user_codes, minlength=n * k) > 1).any():
        raise InputError("a user has more than one current judgement of the same kind for a caption")
    present = np.zeros((n, k), dtype=bool)
    inacc = np.zeros((n, k), dtype=bool)
    types = np.zeros((n, k), dtype=np.int64)
    present[row, user_codes] = True
    inacc[row, user_codes] = rows.inaccurate
    types[row, user_codes] = rows.types
    item_ids = np.zeros(n, dtype=np.int64)
    item_ids[row] = rows.item_id
    codes = np.full(n, -1, dtype=np.int32)
    codes[row] = rows.system.codes
    systems = pd.Categorical.from_codes(codes, categories=rows.system.categories)
    data = _Aligned(annotators, caption_ids, present, inacc, types, item_ids, systems)
    return data, (prac_items, prac_caps, prac_judgements), set(rows.unknown_types)


def _fine(ref: np.ndarray, ret: np.ndarray, a: str, b: str, type_ids) -> FineAgreement:
    """Error-type agreement on aligned masks of captions both judged inaccurate."""
    tax = taxonomy()
    n_types = len(type_ids)
    n = len(ref)
    tp_t = type_counts(ref & ret, n_types)
    nref_t = type_counts(ref, n_types)
    nret_t = type_counts(ret, n_types)
    tp, nref, nret = int(tp_t.sum()), int(nref_t.sum()), int(nret_t.sum())
    p = tp / nret if nret else None
    r = tp / nref if nref else None
    f1 = 2 * p * r / (p + r) if p is not None and r is not None and (p + r) > 0 else (0.0 if p == 0 or r == 0 else None)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_t = np.where(nret_t > 0, tp_t / np.maximum(nret_t, 1), np.nan)
        r_t = np.where(nref_t > 0, tp_t / np.maximum(nref_t, 1), np.nan)
        f_t = np.where(nref_t + nret_t > 0, 2 * tp_t / np.maximum(nref_t + nret_t, 1), np.nan)
    kappa_t = _kappa_cells(n - nref_t - nret_t + tp_t, nret_t - tp_t, nref_t - tp_t, tp_t)
    used = (nref_t + nret_t) > 0
    if used.any():
        macro_p = float(np.nan_to_num(p_t[used]).mean())
        macro_r = float(np.nan_to_num(r_t[used]).mean())
        macro_f = float(np.nan_to_num(f_t[used]).mean())
    else:
        macro_p = macro_r = macro_f = None
    per = []
    for i, tid in enumerate(type_ids):
        try:
            et = tax.get(tid)
            name, group = et.name, et.group
        except InputError:
            name, group = tid, ""
        per.append(TypeAgreement(tid, name, group, int(nref_t[i]), int(nret_t[i]), int(tp_t[i]), _f(p_t[i]),
                                 _f(r_t[i]), _f(f_t[i]), _f(kappa_t[i])))
    return FineAgreement(a, b, n, tp, nret - tp, nref - tp, _f(p), _f(r), _f(f1), _f(macro_p), _f(macro_r), _f(macro_f),
                         _f((ref == ret).mean()) if n else None, tuple(per))


def _bootstrap_ci(cells: np.ndarray, spec: BootstrapSpec, rng: np.random.Generator):
    n = int(cells.sum())
    if n == 0:
        return None
    draws = rng.multinomial(n, cells / n, size=spec.n_resamples)
    k = _kappa_cells(draws[:, 0], draws[:, 1], draws[:, 2], draws[:, 3])
    k = k[np.isfinite(k)]
    if len(k) == 0:
        return None
    alpha = (1 - spec.confidence) / 2
    lo, hi = np.quantile(k, [alpha, 1 - alpha])
    return (float(lo), float(hi))


def kappa_with_interval(a, b, *, n_resamples: int = DEFAULT_RESAMPLES, seed=DEFAULT_SEED,
                        confidence: float = DEFAULT_CONFIDENCE) -> tuple[float | None, tuple[float, float] | None, tuple]:
    """Cohen's kappa of two raters' yes/no decisions ``a`` and ``b`` (aligned), its percentile-bootstrap interval
    as :func:`agreement_report` computes it for a pair of annotators (multinomial resampling of the 2×2 cells,
    ``numpy.random.default_rng(seed)``), and the 2×2 table [[a0b0, a0b1], [a1b0, a1b1]]."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    cells = np.bincount(a.astype(np.int64) * 2 + b, minlength=4)
    kappa = _f(_kappa_cells(*cells))
    spec = BootstrapSpec(int(n_resamples), 0, float(confidence))
    ci = _bootstrap_ci(cells, spec, np.random.default_rng(seed)) if kappa is not None else None
    return kappa, ci, ((int(cells[0]), int(cells[1])), (int(cells[2]), int(cells[3])))


def agreement_report(frame: pd.DataFrame, annotators=None, *, system: str | None = None,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                     confidence: float = DEFAULT_CONFIDENCE, fleiss_m: int | None = None,
                     type_ids=None) -> AgreementReport:
    """Compute every agreement figure for ``annotators`` (default: every user in the frame).

    ``frame``: current judgements with at least caption_id, user, label, error_types
    (plus kind, system, item_id, is_practice when available). ``system`` restricts to one
    system's captions. The bootstrap is seeded (``seed``) so the interval is reproducible;
    each pair uses its own generator seeded with (seed, pair index).
    """
    if not 0 < confidence < 1:
        raise InputError(f"confidence must be between 0 and 1, not {confidence}")
    if n_resamples < 1:
        raise InputError("the bootstrap needs at least one resample")
    type_ids = tuple(type_ids or taxonomy().ids)
    data, (prac_items, prac_caps, prac_j), unknown = _prepare(frame, annotators, system, type_ids)
    k = len(data.annotators)
    spec = BootstrapSpec(int(n_resamples), int(seed), float(confidence))
    pairs = []
    for idx, (i, j) in enumerate(combinations(range(k), 2)):
        a, b = data.annotators[i], data.annotators[j]
        both = data.present[:, i] & data.present[:, j]
        la, lb = data.inaccurate[both, i], data.inaccurate[both, j]
        cells = np.bincount(la.astype(np.int64) * 2 + lb, minlength=4)
        n = int(both.sum())
        kappa = _f(_kappa_cells(*cells))
        rng = np.random.default_rng([int(seed), idx])
        ci = _bootstrap_ci(cells, spec, rng) if kappa is not None else None
        bi = la & lb
        ta, tb = data.types[both, i], data.types[both, j]
        typed = bi & (ta != 0) & (tb != 0)
        fine = _fine(ta[typed], tb[typed], a, b, type_ids)
        pairs.append(PairAgreement(
            a, b, n, _f((cells[0] + cells[3]) / n) if n else None, kappa, ci,
            ((int(cells[0]), int(cells[1])), (int(cells[2]), int(cells[3]))),
            {a: int(la.sum()), b: int(lb.sum())}, int(bi.sum()), fine, int((bi & ~typed).sum())))

    # Several annotators, binary task.
    m_u = data.present.sum(axis=1)
    ones = (data.inaccurate & data.present).sum(axis=1)
    counts = np.stack([m_u - ones, ones], axis=1)
    alpha, alpha_units = krippendorff_alpha_nominal(counts) if k >= 2 else (None, 0)
    fm = int(fleiss_m or max(k, 2))
    if fleiss_m is not None and not 2 <= fm <= k:
        raise InputError(f"fleiss_m must be between 2 and the number of annotators ({k}), not {fleiss_m}")
    rows = counts[m_u == fm]
    fleiss = fleiss_kappa_counts(rows) if len(rows) else None
    return AgreementReport(
        annotators=data.annotators, system=system, type_ids=type_ids,
        judged={a: int(data.present[:, i].sum()) for i, a in enumerate(data.annotators)},
        captions=int((m_u >= 1).sum()), multiply_judged=int((m_u >= 2).sum()),
        practice_items_excluded=prac_items, practice_captions_excluded=prac_caps,
        practice_judgements_excluded=prac_j, pairs=tuple(pairs), alpha=alpha, alpha_units=alpha_units,
        fleiss_kappa=fleiss, fleiss_items=int(len(rows)), fleiss_m=fm, bootstrap=spec,
        unknown_types=tuple(sorted(unknown)), _data=data)
