"""Correlations of metric scores, gap-weighted metric scores, ld and Lg with human judgements.

:func:`correlate` relates each human score to

* every caption metric M (per caption, e.g. BLEU-4, CIDEr-D: given as a mapping
  or computed with :mod:`annotator.metrics`),
* the ratio-weighted metric ``M · ld`` and the gap-weighted metric ``M · Lg``,
* the lexical diversity ratio ld and the lexical gap Lg themselves,
* the readability measures the lexical-gap study tested and found wanting
  (Flesch–Kincaid, Coleman–Liau, Dale–Chall, ARI; its Section 3.4), per system
  like ld (:mod:`annotator.diversity.readability`),

with Spearman's ρ, Pearson's r and Kendall's τ-b and their two-sided p-values
(``scipy.stats``). ld and Lg describe a system's whole output (its corpus
diversity against the references), so every caption carries the values of its
system; the weighted metrics are per caption. Scopes:

``overall``       all captions of all systems pooled — the lexical-gap study's
                  setting: its ld/Lg correlations compare a system-level value
                  with caption-level judgements, so with k systems ld takes only
                  k distinct values (many ties), and Spearman's ρ of ld and of
                  Lg coincide because Lg is an increasing function of ld;
``system means``  one point per system: the mean human score against ld, Lg and
                  the mean metric (n = number of systems, so p-values are weak
                  unless there are many systems);
a system name     the captions of that system alone: ld and Lg are constant
                  there (no correlation, reported as NaN) and weighting by a
                  constant leaves every coefficient unchanged, so only the plain
                  metrics are informative.

Pairs with a missing value are left out (``n`` says how many were used); fewer
than three pairs or a constant variable give NaN. Human scores are imported
with :func:`annotator.io.human_scores.import_human_scores` (format:
:mod:`annotator.io.human_scores`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..io.human_scores import read_scores_csv, resolve_scores, source_name
from ..metrics.registry import REGISTRY
from .readability import READABILITY, READABILITY_LABELS
from .report import project_diversity

__all__ = ["METHODS", "VARIANTS", "read_metric_scores", "caption_metric_scores", "correlation_frame", "correlate",
           "CorrelationReport", "project_correlations"]

METHODS = ("spearman", "pearson", "kendall")
#: Variants of a metric: as it is, times ld, times Lg.
VARIANTS = ("standard", "ldr", "gap")
VARIANT_LABELS = {"standard": "Standard", "ldr": "M·ld", "gap": "M·Lg"}
METHOD_LABELS = {"spearman": "Spearman", "pearson": "Pearson", "kendall": "Kendall τ"}
DIVERSITY_MEASURES = ("ld", "lexical_gap")
METRIC_LABELS = {**REGISTRY.score_labels(), "ld": "ld", "lexical_gap": "Lg", **READABILITY_LABELS}
#: Metrics computed per caption when none are named: the default ones that run in this process.
DEFAULT_METRICS = REGISTRY.defaults(in_process_only=True)


def read_metric_scores(store, project: str, path_or_text, *, source: str | None = None,
                       columns: Sequence[str] | None = None) -> dict[str, dict[int, float]]:
    """Per-caption metric scores from a CSV keyed like human scores: metric name → {caption id: value}.

    Nothing is stored; use it to correlate metrics computed elsewhere.
    """
    from ..store.human_scores import caption_keys
    from ..store.projects import project_id
    records = read_scores_csv(path_or_text, source=source, columns=columns)
    src = source_name(path_or_text, source)
    with store.read() as conn:
        keys = caption_keys(conn, project_id(conn, project))
    out: dict[str, dict[int, float]] = {}
    for cid, metric, value in resolve_scores(records, keys, src):
        out.setdefault(metric, {})[cid] = value
    return out


# --------------------------------------------------------------------------- metric scores per caption

def caption_metric_scores(store, project: str, systems: Sequence[str] | None = None,
                          metrics: Sequence[str] = DEFAULT_METRICS, tokenize: str | None = None,
                          ) -> tuple[dict[str, dict[int, float]], list[str]]:
    """Per-caption scores of the project's captions with :mod:`annotator.metrics` (coco-caption values).

    Returns ``({key: {caption id: value}}, notes)`` with coco-caption's keys
    (``Bleu_1`` … ``Bleu_4``, ``METEOR``, ``ROUGE_L``, ``CIDEr``). Each system
    is scored as one corpus against its items' references (CIDEr-D's document
    frequencies come from those references); captions of items without
    references are left out and counted in a note.
    """
    from ..metrics import rescore
    from ..store.diversity import caption_texts, references_by_item
    refs_of = references_by_item(store, project)
    out: dict[str, dict[int, float]] = {}
    notes: list[str] = []
    for system, caps in caption_texts(store, project, systems, annotated_only=True).items():
        scored = [c for c in caps if refs_of.get(c.item_key)]
        if len(scored) < len(caps):
            notes.append(f"{system}: {len(caps) - len(scored)} caption(s) without references were not scored")
        if not scored:
            continue
        result = rescore([c.text for c in scored], [refs_of[c.item_key] for c in scored], metrics=list(metrics),
                         tokenize=tokenize, per_segment=True)
        notes.extend(n for n in result.get("notes", []) if n not in notes)
        for key, values in (result.get("per_segment") or {}).items():
            if values is None:
                continue
            target = out.setdefault(key, {})
            for c, v in zip(scored, values):
                target[c.caption_id] = float(v)
    return out, notes


# --------------------------------------------------------------------------- correlation

def correlation_frame(human: pd.DataFrame, metrics: Mapping[str, Mapping[int, float]] | None = None,
                      diversity=None) -> pd.DataFrame:
    """One row per scored caption: keys, one column per human score, metrics, ld and Lg.

    ``human``: long rows with columns caption_id, system, name, value (as from
    :func:`annotator.store.human_scores.scores_frame`; item_key and line_no are
    kept when present). ``metrics``: metric name → {caption id: value}.
    ``diversity``: a DiversityReport (its systems' readability measures become
    columns too), or a mapping system → (ld, Lg). Human score columns are
    called ``human:<name>``.
    """
    if human.empty:
        raise InputError("there are no human scores to correlate with")
    keys = [c for c in ("caption_id", "system", "item_key", "line_no") if c in human.columns]
    wide = human.pivot_table(index=keys, columns="name", values="value", aggfunc="first").reset_index()
    wide.columns = [c if c in keys else f"human:{c}" for c in wide.columns]
    for metric, values in (metrics or {}).items():
        wide[metric] = wide["caption_id"].map(lambda cid, v=values: v.get(int(cid), np.nan)).astype(float)
    if diversity is not None:
        per_system = _diversity_by_system(diversity)
        wide["ld"] = wide["system"].map(lambda s: per_system.get(s, (np.nan, np.nan))[0]).astype(float)
        wide["lexical_gap"] = wide["system"].map(lambda s: per_system.get(s, (np.nan, np.nan))[1]).astype(float)
        readable = _readability_by_system(diversity)
        for key in READABILITY:
            if any(key in r for r in readable.values()):
                wide[key] = wide["system"].map(lambda s, k=key: readable.get(s, {}).get(k, np.nan)).astype(float)
    return wide


def _diversity_by_system(diversity) -> dict[str, tuple[float, float]]:
    if hasattr(diversity, "systems"):
        return {name: (_f(c.ld), _f(c.lexical_gap)) for name, c in diversity.systems.items()}
    return {name: (_f(v[0]), _f(v[1])) for name, v in diversity.items()}


def _readability_by_system(diversity) -> dict[str, dict[str, float]]:
    if hasattr(diversity, "systems"):
        return {name: dict(c.readability) for name, c in diversity.systems.items() if c.readability}
    return {}


def _f(v) -> float:
    return math.nan if v is None else float(v)


def _coefficients(x: np.ndarray, y: np.ndarray) -> dict:
    from scipy import stats
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    out = {"n": int(ok.sum())}
    for m in METHODS:
        out[m] = math.nan
        out[f"{m}_p"] = math.nan
    if out["n"] < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m, fn in (("spearman", stats.spearmanr), ("pearson", stats.pearsonr), ("kendall", stats.kendalltau)):
            res = fn(x, y)
            out[m] = float(res.statistic)
            out[f"{m}_p"] = float(res.pvalue)
    return out


@dataclass
class CorrelationReport:
    """Correlations of metrics, weighted metrics, ld and Lg with human scores.

    ``rows``: one row per (scope, human score, measure, variant) with n and
    each method's coefficient and p-value. ``metrics`` lists the metric
    columns, ``humans`` the human score names, ``systems`` the per-system ld and
    Lg used, ``notes`` anything left out, ``reference`` what the reference
    corpus cr of ld and Lg was, ``readability`` each system's readability
    measures (correlated like ld when present).
    """

    rows: pd.DataFrame
    metrics: list[str]
    humans: list[str]
    systems: dict[str, tuple[float, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    reference: str | None = None
    readability: dict[str, dict[str, float]] = field(default_factory=dict)

    def table(self, scope: str = "overall", human: str | None = None, methods: Sequence[str] = METHODS) -> pd.DataFrame:
        """The study-style table for one scope and human score.

        Rows: each metric, then ld, Lg and the readability measures; columns: (method, variant) with
        variants Standard, M·ld, M·Lg (ld and Lg only have Standard).
        """
        human = human or (self.humans[0] if self.humans else None)
        sub = self.rows[(self.rows["scope"] == scope) & (self.rows["human"] == human)]
        measures = list(dict.fromkeys(sub["measure"]))
        columns = pd.MultiIndex.from_tuples([(METHOD_LABELS[m], VARIANT_LABELS[v]) for m in methods for v in VARIANTS])
        data = []
        for meas in measures:
            r = []
            for m in methods:
                for v in VARIANTS:
                    hit = sub[(sub["measure"] == meas) & (sub["variant"] == v)]
                    r.append(float(hit[m].iloc[0]) if len(hit) else math.nan)
            data.append(r)
        return pd.DataFrame(data, index=[METRIC_LABELS.get(m, m) for m in measures], columns=columns)

    def scopes(self) -> list[str]:
        """The scopes present: overall, system means, then each system."""
        return list(dict.fromkeys(self.rows["scope"]))

    def to_dict(self) -> dict:
        """JSON-ready form: rows (NaN → None), systems, metrics, human score names, notes."""
        rows = []
        for rec in self.rows.to_dict("records"):
            rows.append({k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in rec.items()})
        return {"correlations": rows,
                "systems": {s: {"ld": _none(ld), "lexical_gap": _none(lg),
                                **{k: _none(v) for k, v in self.readability.get(s, {}).items()}}
                            for s, (ld, lg) in self.systems.items()},
                "metrics": self.metrics, "human_scores": self.humans, "notes": self.notes,
                **({"reference_corpus": self.reference} if self.reference else {})}

    def to_tables(self) -> dict:
        """Named tables for annotator.io.tables: the long table and one study-style table per human score."""
        tables = {"Correlations": self.rows}
        for h in self.humans:
            t = self.table("overall", h)
            t.columns = [" ".join(c) for c in t.columns]
            tables[f"Overall ({h})"] = t.reset_index(names="measure")
        return tables


def _none(v):
    return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v


def correlate(human: pd.DataFrame, metrics: Mapping[str, Mapping[int, float]] | None = None, diversity=None, *,
              humans: Sequence[str] | None = None, per_system: bool = True, system_means: bool = True,
              notes: Iterable[str] = ()) -> CorrelationReport:
    """Correlate human scores with metrics, ld·/Lg·-weighted metrics, ld and Lg (see the module docs)."""
    wide = correlation_frame(human, metrics, diversity)
    human_names = [c[len("human:"):] for c in wide.columns if c.startswith("human:")]
    if humans:
        unknown = [h for h in humans if h not in human_names]
        if unknown:
            raise InputError(f"no human score called {unknown[0]!r} (stored: {', '.join(human_names)})")
        human_names = list(humans)
    metric_names = list(metrics or {})
    has_div = diversity is not None
    div_measures = [*DIVERSITY_MEASURES, *(k for k in READABILITY if k in wide.columns)] if has_div else []
    rows = []

    def block(scope: str, df: pd.DataFrame) -> None:
        for h in human_names:
            y = df[f"human:{h}"].to_numpy(dtype=float)
            for m in metric_names:
                base = df[m].to_numpy(dtype=float)
                variants = {"standard": base}
                if has_div:
                    variants["ldr"] = base * df["ld"].to_numpy(dtype=float)
                    variants["gap"] = base * df["lexical_gap"].to_numpy(dtype=float)
                for v, x in variants.items():
                    rows.append({"scope": scope, "human": h, "measure": m, "variant": v, **_coefficients(x, y)})
            if has_div:
                for d in div_measures:
                    rows.append({"scope": scope, "human": h, "measure": d, "variant": "standard",
                                 **_coefficients(df[d].to_numpy(dtype=float), y)})

    block("overall", wide)
    if system_means and wide["system"].nunique() > 1:
        cols = [f"human:{h}" for h in human_names] + metric_names + div_measures
        means = wide.groupby("system", sort=False)[cols].mean().reset_index()
        block("system means", means)
    if per_system:
        for system, df in wide.groupby("system", sort=False):
            block(str(system), df)
    cols = ["scope", "human", "measure", "variant", "n"] + [c for m in METHODS for c in (m, f"{m}_p")]
    frame = pd.DataFrame(rows, columns=cols)
    return CorrelationReport(frame, metric_names, human_names,
                             _diversity_by_system(diversity) if has_div else {}, list(notes),
                             readability=_readability_by_system(diversity) if has_div else {})


def project_correlations(store, project: str, *, metrics: Mapping[str, Mapping[int, float]] | None = None,
                         compute_metrics: Sequence[str] | None = DEFAULT_METRICS,
                         humans: Sequence[str] | None = None, settings=None, gap=None, per_system: bool = True,
                         system_means: bool = True, tokenize: str | None = None,
                         reference=None) -> CorrelationReport:
    """:func:`correlate` for a stored project: its human scores, per-caption metrics, ld and Lg.

    ``metrics`` gives per-caption metric values directly; otherwise the
    ``compute_metrics`` are computed with :mod:`annotator.metrics` (None or an
    empty list: no metrics, only ld and Lg). ld and Lg come from
    :func:`annotator.diversity.project_diversity` with ``settings``/``gap``
    and the reference corpus ``reference`` (default: the training corpus the
    project's settings name, else its references).
    """
    from ..store.human_scores import scores_frame
    from ..metric_settings import paper_tokenize_note, resolve_tokenize, tokenize_header
    human = scores_frame(store, project)
    if human.empty:
        raise InputError(f"project {project!r} has no human scores yet; import some first")
    systems = list(dict.fromkeys(human["system"]))
    notes: list[str] = []
    if metrics is None and compute_metrics:
        tokenize = resolve_tokenize(store, project, tokenize)
        metrics, notes = caption_metric_scores(store, project, systems, compute_metrics, tokenize)
        notes = [f"metrics computed here: {tokenize_header(tokenize)}; "
                 f"{paper_tokenize_note(tokenize, 'lexical-gap')}"] + notes
    report = project_diversity(store, project, systems=systems, settings=settings, gap=gap, reference=reference)
    out = correlate(human, metrics, report, humans=humans, per_system=per_system, system_means=system_means,
                    notes=notes)
    out.reference = report.describe_reference()
    if report.reference is not None and report.reference.note:
        out.notes.append(report.reference.note)
    return out
