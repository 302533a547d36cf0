"""Human judgements of captions, and how well metrics and lexical diversity agree with them.

Importing human scores
----------------------
Scores are stored per caption under a name (``correctness``, ``quality`` …) in
the ``human_scores`` table. Two file forms are read:

**CSV (or TSV)** with a header row. A caption is named by key columns
(header names are matched case-insensitively):

* ``item`` and ``system``: the item key (as imported, e.g. the image file name)
  and the system name; or
* ``system`` and ``line``: the system name and the 0-based line of the caption
  in that system's captions file (the first caption is line 0).

If both ``item`` and ``line`` are present they must name the same caption.
Every other column is a score column named by its header (or only the columns
given as ``columns``); its cells are numbers, an empty cell means "no score".
Alternatively a *long* file has the key columns plus ``name`` and ``value``
columns, one score per row. A ``.tsv`` file is tab-separated.

**One score per line** (``system`` and ``name`` given): line *i* of the file is
the score of the system's caption on line *i*; the file must have exactly one
line per caption (a trailing newline is fine).

An import is all-or-nothing: the whole file is read and checked first (numbers
finite, keys known, no caption scored twice under one name) and written in one
transaction; any problem raises :class:`~annotator.errors.InputError` naming
the file and line, and the store is left unchanged. A value for a (caption,
name) that is already stored replaces it; ``replace=True`` first removes every
stored score of the names in the file.

Correlation with human judgements
---------------------------------
:func:`correlate` relates each human score to

* every caption metric M (per caption, e.g. BLEU-4, CIDEr-D: given as a mapping
  or computed with :mod:`annotator.metrics`),
* the ratio-weighted metric ``M · ld`` and the gap-weighted metric ``M · Lg``,
* the lexical diversity ratio ld and the lexical gap Lg themselves,

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
than three pairs or a constant variable give NaN.
"""

from __future__ import annotations

import csv
import io
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .errors import InputError
from .io.textfiles import decode_utf8
from .io.validate import parse_float, parse_int
from .metrics.registry import REGISTRY

__all__ = [
    "ScoreRecord", "ImportSummary", "read_scores_csv", "read_score_lines", "import_human_scores",
    "read_metric_scores", "caption_metric_scores", "correlation_frame", "correlate", "CorrelationReport",
    "project_correlations", "METHODS", "VARIANTS",
]

METHODS = ("spearman", "pearson", "kendall")
#: Variants of a metric: as it is, times ld, times Lg.
VARIANTS = ("standard", "ldr", "gap")
VARIANT_LABELS = {"standard": "Standard", "ldr": "M·ld", "gap": "M·Lg"}
METHOD_LABELS = {"spearman": "Spearman", "pearson": "Pearson", "kendall": "Kendall τ"}
DIVERSITY_MEASURES = ("ld", "lexical_gap")
METRIC_LABELS = {**REGISTRY.score_labels(), "ld": "ld", "lexical_gap": "Lg"}
#: Metrics computed per caption when none are named: the default ones that run in this process.
DEFAULT_METRICS = REGISTRY.defaults(in_process_only=True)

_KEY_COLUMNS = ("item", "system", "line")


# --------------------------------------------------------------------------- reading files

@dataclass(frozen=True)
class ScoreRecord:
    """One score from a file, with the key that names its caption and where it was read."""

    line: int
    system: str
    name: str
    value: float
    item: str | None = None
    index: int | None = None


def _number(text: str, source: str, line: int, column: str) -> float | None:
    text = text.strip()
    if text == "":
        return None
    return parse_float(text, column, source, line)


def _source_name(path_or_text, source: str | None) -> str:
    if source:
        return source
    if isinstance(path_or_text, (str, Path)):
        return str(path_or_text)
    return getattr(path_or_text, "name", None) or "input"


def _text_of(path_or_text, source: str | None) -> tuple[str, str]:
    """(text, source name) of a path (str or Path), bytes, or a file object (text or binary)."""
    name = _source_name(path_or_text, source)
    if isinstance(path_or_text, (str, Path)):
        try:
            raw = Path(path_or_text).read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read the file ({exc.strerror or exc})", name) from None
    elif isinstance(path_or_text, bytes):
        raw = path_or_text
    else:
        data = path_or_text.read()
        if isinstance(data, str):
            return data.lstrip("\ufeff"), name
        raw = data
    return decode_utf8(raw, name), name


def read_scores_csv(path_or_text, *, source: str | None = None, columns: Sequence[str] | None = None,
                    delimiter: str | None = None) -> list[ScoreRecord]:
    """Parse a CSV/TSV of human scores (see the module documentation) into records.

    ``path_or_text``: a path, the file's bytes, or a file object.
    ``columns``: read only these score columns (others are ignored).
    Raises InputError (file and line) for anything malformed.
    """
    text, name = _text_of(path_or_text, source)
    if delimiter is None:
        delimiter = "\t" if name.lower().endswith(".tsv") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("the file is empty; expected a header row", name, 1) from None
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc})", name, 1) from None
    cols = [h.strip() for h in header]
    lower = [c.lower() for c in cols]
    if len(set(lower)) != len(lower):
        dup = next(c for c in lower if lower.count(c) > 1)
        raise InputError(f"column {dup!r} appears twice in the header", name, 1)
    pos = {c: i for i, c in enumerate(lower)}
    if "system" not in pos or not ("item" in pos or "line" in pos):
        raise InputError("the header needs a 'system' column and an 'item' or 'line' column to name each caption "
                         f"(found: {', '.join(cols) or 'nothing'})", name, 1)
    long_form = "name" in pos and "value" in pos
    if long_form:
        score_cols: list[tuple[int, str]] = []
    else:
        candidates = [(i, c) for i, c in enumerate(cols) if lower[i] not in _KEY_COLUMNS]
        if columns is not None:
            wanted = {c.strip().lower(): c for c in columns}
            missing = [c for k, c in wanted.items() if k not in pos]
            if missing:
                raise InputError(f"no score column called {missing[0]!r} (found: {', '.join(cols)})", name, 1)
            candidates = [(i, c) for i, c in candidates if c.lower() in wanted]
        score_cols = candidates
        for i, c in score_cols:
            if c == "":
                raise InputError(f"score column {i + 1} has no name in the header", name, 1)
        if not score_cols:
            raise InputError("no score column: give score columns next to the key columns, or 'name' and 'value'", name, 1)
    records: list[ScoreRecord] = []
    line = reader.line_num
    while True:
        start = line + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(f"malformed CSV ({exc})", name, start) from None
        line = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(cols):
            raise InputError(f"{len(row)} fields but the header has {len(cols)}", name, start)
        system = row[pos["system"]].strip()
        if not system:
            raise InputError("the system is empty", name, start)
        item = row[pos["item"]].strip() if "item" in pos else None
        index = None
        if "line" in pos:
            index = parse_int(row[pos["line"]].strip(), "line (the 0-based caption line)", name, start)
            if index < 0:
                raise InputError(f"line: {index} is negative; caption lines count from 0", name, start)
        if item is not None and item == "" and index is None:
            raise InputError("the item is empty", name, start)
        if item == "":
            item = None
        if long_form:
            score_name = row[pos["name"]].strip()
            if not score_name:
                raise InputError("the score name is empty", name, start)
            if columns is not None and score_name.lower() not in {c.strip().lower() for c in columns}:
                continue
            value = _number(row[pos["value"]], name, start, "value")
            if value is not None:
                records.append(ScoreRecord(start, system, score_name, value, item, index))
        else:
            for i, c in score_cols:
                value = _number(row[i], name, start, c)
                if value is not None:
                    records.append(ScoreRecord(start, system, c, value, item, index))
    if not records:
        raise InputError("the file holds no score", name)
    return records


def read_score_lines(path_or_text, system: str, name: str, *, source: str | None = None) -> list[ScoreRecord]:
    """Parse a one-score-per-line file for ``system``: line i scores the caption on line i (0-based)."""
    text, src = _text_of(path_or_text, source)
    if not name or not name.strip():
        raise InputError("a score name is needed for a one-score-per-line file", src)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    for i, raw in enumerate(lines):
        raw = raw.rstrip("\r")
        if raw.strip() == "":
            raise InputError("the line is empty; every caption needs a score", src, i + 1)
        value = _number(raw, src, i + 1, name)
        out.append(ScoreRecord(i + 1, system, name.strip(), value, None, i))
    if not out:
        raise InputError("the file holds no score", src)
    return out


# --------------------------------------------------------------------------- resolving and importing

def _resolve(records: Sequence[ScoreRecord], keys, source: str, *, whole_system: bool = False) -> list[tuple[int, str, float]]:
    """Caption ids for records; InputError for unknown keys or a caption scored twice under one name."""
    rows = []
    seen: dict[tuple[int, str], int] = {}
    for r in records:
        if r.system not in keys.lines:
            known = ", ".join(sorted(keys.lines)) or "none"
            raise InputError(f"the project has no system called {r.system!r} (systems: {known})", source, r.line)
        cid = None
        if r.index is not None:
            cid = keys.by_system_line.get((r.system, r.index))
            if cid is None:
                n = keys.lines[r.system]
                raise InputError(f"caption line {r.index} is out of range: system {r.system!r} has {n} captions "
                                 f"(lines 0..{n - 1})", source, r.line)
        if r.item is not None:
            if r.item not in keys.item_keys:
                raise InputError(f"the project has no item {r.item!r}", source, r.line)
            by_item = keys.by_item_system.get((r.item, r.system))
            if by_item is None:
                raise InputError(f"system {r.system!r} has no caption for item {r.item!r}", source, r.line)
            if cid is not None and cid != by_item:
                raise InputError(f"item {r.item!r} and line {r.index} name different captions of {r.system!r}",
                                 source, r.line)
            cid = by_item
        key = (cid, r.name)
        if key in seen:
            raise InputError(f"this caption already has a {r.name!r} score on line {seen[key]}", source, r.line)
        seen[key] = r.line
        rows.append((cid, r.name, r.value))
    if whole_system and records:
        system = records[0].system
        n = keys.lines.get(system, 0)
        if len(records) != n:
            raise InputError(f"{len(records)} scores but system {system!r} has {n} captions; "
                             "a one-score-per-line file needs exactly one line per caption", source, len(records))
    return rows


@dataclass(frozen=True)
class ImportSummary:
    """What a human-score import wrote."""

    source: str
    project: str
    names: tuple[str, ...]
    systems: tuple[str, ...]
    captions: int
    values: int
    replaced: int = 0


def import_human_scores(store, project: str, path_or_text, *, system: str | None = None, name: str | None = None,
                        columns: Sequence[str] | None = None, replace: bool = False,
                        source: str | None = None) -> ImportSummary:
    """Read a human-score file and store its scores in one transaction (see the module documentation).

    With ``system`` (and ``name``) the file is one score per line for that
    system; otherwise it is a CSV/TSV with key columns. ``replace`` deletes the
    project's stored scores of the imported names first. Nothing is written if
    anything is wrong.
    """
    from .store.human_scores import caption_keys, delete_scores, write_scores
    from .store.projects import project_id
    if system is not None:
        records = read_score_lines(path_or_text, system, name or "", source=source)
    else:
        records = read_scores_csv(path_or_text, source=source, columns=columns)
    src = _source_name(path_or_text, source)
    with store.transaction() as conn:
        pid = project_id(conn, project)
        keys = caption_keys(conn, pid)
        rows = _resolve(records, keys, src, whole_system=system is not None)
        names = tuple(dict.fromkeys(r[1] for r in rows))
        removed = delete_scores(conn, pid, list(names)) if replace else 0
        write_scores(conn, rows)
    return ImportSummary(src, project, names, tuple(dict.fromkeys(r.system for r in records)),
                         len({r[0] for r in rows}), len(rows), removed)


def read_metric_scores(store, project: str, path_or_text, *, source: str | None = None,
                       columns: Sequence[str] | None = None) -> dict[str, dict[int, float]]:
    """Per-caption metric scores from a CSV keyed like human scores: metric name → {caption id: value}.

    Nothing is stored; use it to correlate metrics computed elsewhere.
    """
    from .store.human_scores import caption_keys
    from .store.projects import project_id
    records = read_scores_csv(path_or_text, source=source, columns=columns)
    src = _source_name(path_or_text, source)
    with store.read() as conn:
        keys = caption_keys(conn, project_id(conn, project))
    out: dict[str, dict[int, float]] = {}
    for cid, metric, value in _resolve(records, keys, src):
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
    from .metrics import rescore
    from .store.diversity import caption_texts, references_by_item
    refs_of = references_by_item(store, project)
    out: dict[str, dict[int, float]] = {}
    notes: list[str] = []
    for system, caps in caption_texts(store, project, systems).items():
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
    ``diversity``: a DiversityReport, or a mapping system → (ld, Lg).
    Human score columns are called ``human:<name>``.
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
    return wide


def _diversity_by_system(diversity) -> dict[str, tuple[float, float]]:
    if hasattr(diversity, "systems"):
        return {name: (_f(c.ld), _f(c.lexical_gap)) for name, c in diversity.systems.items()}
    return {name: (_f(v[0]), _f(v[1])) for name, v in diversity.items()}


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
    Lg used, ``notes`` anything left out.
    """

    rows: pd.DataFrame
    metrics: list[str]
    humans: list[str]
    systems: dict[str, tuple[float, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def table(self, scope: str = "overall", human: str | None = None, methods: Sequence[str] = METHODS) -> pd.DataFrame:
        """The study-style table for one scope and human score.

        Rows: each metric, then ld and Lg; columns: (method, variant) with
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
                "systems": {s: {"ld": _none(ld), "lexical_gap": _none(lg)} for s, (ld, lg) in self.systems.items()},
                "metrics": self.metrics, "human_scores": self.humans, "notes": self.notes}

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
                for d in DIVERSITY_MEASURES:
                    rows.append({"scope": scope, "human": h, "measure": d, "variant": "standard",
                                 **_coefficients(df[d].to_numpy(dtype=float), y)})

    block("overall", wide)
    if system_means and wide["system"].nunique() > 1:
        cols = [f"human:{h}" for h in human_names] + metric_names + (list(DIVERSITY_MEASURES) if has_div else [])
        means = wide.groupby("system", sort=False)[cols].mean().reset_index()
        block("system means", means)
    if per_system:
        for system, df in wide.groupby("system", sort=False):
            block(str(system), df)
    cols = ["scope", "human", "measure", "variant", "n"] + [c for m in METHODS for c in (m, f"{m}_p")]
    frame = pd.DataFrame(rows, columns=cols)
    return CorrelationReport(frame, metric_names, human_names,
                             _diversity_by_system(diversity) if has_div else {}, list(notes))


def project_correlations(store, project: str, *, metrics: Mapping[str, Mapping[int, float]] | None = None,
                         compute_metrics: Sequence[str] | None = DEFAULT_METRICS,
                         humans: Sequence[str] | None = None, settings=None, gap=None, per_system: bool = True,
                         system_means: bool = True, tokenize: str | None = None) -> CorrelationReport:
    """:func:`correlate` for a stored project: its human scores, per-caption metrics, ld and Lg.

    ``metrics`` gives per-caption metric values directly; otherwise the
    ``compute_metrics`` are computed with :mod:`annotator.metrics` (None or an
    empty list: no metrics, only ld and Lg). ld and Lg come from
    :func:`annotator.diversity.project_diversity` with ``settings``/``gap``.
    """
    from .diversity import project_diversity
    from .store.human_scores import scores_frame
    human = scores_frame(store, project)
    if human.empty:
        raise InputError(f"project {project!r} has no human scores yet; import some first")
    systems = list(dict.fromkeys(human["system"]))
    notes: list[str] = []
    if metrics is None and compute_metrics:
        metrics, notes = caption_metric_scores(store, project, systems, compute_metrics, tokenize)
    report = project_diversity(store, project, systems=systems, settings=settings, gap=gap)
    return correlate(human, metrics, report, humans=humans, per_system=per_system, system_means=system_means,
                     notes=notes)
