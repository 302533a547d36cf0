"""Error-frequency analysis: the tables of an error-analysis study, per system and layer.

Input is a :class:`annotator.layers.JudgementLayer` (one judgement per
caption: one annotator's, the adjudicated or the consensus layer). :func:`error_tables`
gives an :class:`ErrorTables` report:

* share of captions judged accurate / inaccurate;
* errors per inaccurate description: how many inaccurate captions carry 1, 2,
  3, or 4 and more error types. Inaccurate captions whose types are not known
  (no type ticked, or types still open in the adjudicated layer) are counted
  apart as ``untyped`` and are not in these buckets;
* how often each error type was annotated (every type of the taxonomy, zeros
  included), grouped by the taxonomy's four groups; within the table groups
  are ordered by their total and types by their count (largest first, ties in
  taxonomy order). Each type has two shares, labelled apart because they
  answer different questions: the **share of errors** (its count over all
  error types ticked: what the type weighs among the errors) and the **share
  of descriptions** (captions carrying it over the captions whose types are
  known, accurate ones included: how often a description has it; the
  study's 26 % of unrelated descriptions is this share, 264 of 1,014, while
  the type's share of errors is 264 of 1,265). Captions whose types are
  not known (``untyped``) are left out of that denominator, not counted as
  free of the type.

:func:`compare_systems` puts the same tables side by side for several systems.
:func:`examples` lists the captions behind any cell, for click-through.
Every report has ``summary()`` (JSON for the CLI) and ``to_tables()`` (named
DataFrames for annotator.io.tables.write_table).

Practice items stay in the analysis unless ``exclude_practice`` is set: their
captions are ordinary system output that happens to also serve as guideline
examples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import InputError
from .layers import JudgementLayer, type_counts
from .taxonomy import taxonomy

__all__ = ["ErrorTables", "SystemComparison", "error_tables", "compare_systems", "examples", "BUCKETS",
           "SHARE_OF_ERRORS", "SHARE_OF_DESCRIPTIONS"]

#: Keys of the errors-per-description table.
BUCKETS = ("1", "2", "3", "4+")
#: Column labels of the two shares of a type (the type and group tables, every export).
SHARE_OF_ERRORS = "share of errors"
SHARE_OF_DESCRIPTIONS = "share of descriptions"


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True)
class ErrorTables:
    """Error frequencies of one layer (optionally one system)."""

    layer: str
    system: str | None
    total: int                       # captions with a judgement in the layer
    accurate: int
    inaccurate: int
    untyped: int                     # inaccurate, types unknown
    errors_per_description: dict     # "1", "2", "3", "4+" → inaccurate captions
    type_counts: dict                # type id → count (taxonomy order, zeros included)
    unresolved: int                  # captions the layer leaves out (labels differ, not adjudicated)
    practice_excluded: int
    status_counts: dict

    @property
    def share_accurate(self) -> float | None:
        """Accurate captions / captions judged."""
        return _share(self.accurate, self.total)

    @property
    def share_inaccurate(self) -> float | None:
        """Inaccurate captions / captions judged."""
        return _share(self.inaccurate, self.total)

    @property
    def total_errors(self) -> int:
        """Sum of the type counts (each type ticked on a caption counts once)."""
        return int(sum(self.type_counts.values()))

    @property
    def typed(self) -> int:
        """Inaccurate captions whose types are known."""
        return int(sum(self.errors_per_description.values()))

    @property
    def known_descriptions(self) -> int:
        """Captions whose error types are known: the accurate ones and the typed inaccurate ones
        (the denominator of a type's share of descriptions)."""
        return self.total - self.untyped

    def type_share_of_errors(self) -> dict:
        """Type id → its count over all error types ticked (None when there are none)."""
        return {t: _share(c, self.total_errors) for t, c in self.type_counts.items()}

    def type_share_of_descriptions(self) -> dict:
        """Type id → captions carrying it over :attr:`known_descriptions` (None when there are none)."""
        return {t: _share(c, self.known_descriptions) for t, c in self.type_counts.items()}

    @property
    def errors_per_inaccurate(self) -> float | None:
        """Mean number of error types per inaccurate caption with known types."""
        return _share(self.total_errors, self.typed)

    def group_counts(self) -> dict[str, int]:
        """Total count per taxonomy group (taxonomy group order)."""
        tax = taxonomy()
        return {g: int(sum(self.type_counts.get(t.id, 0) for t in tax.by_group(g))) for g in tax.groups}

    def summary(self) -> dict:
        """JSON-ready figures (what ``annotator tables --json`` prints)."""
        return {
            "layer": self.layer, "system": self.system, "total": self.total, "accurate": self.accurate,
            "inaccurate": self.inaccurate, "share_accurate": self.share_accurate,
            "share_inaccurate": self.share_inaccurate, "untyped": self.untyped,
            "errors_per_description": dict(self.errors_per_description), "total_errors": self.total_errors,
            "errors_per_inaccurate": self.errors_per_inaccurate, "type_counts": dict(self.type_counts),
            "known_descriptions": self.known_descriptions,
            "type_share_of_errors": self.type_share_of_errors(),
            "type_share_of_descriptions": self.type_share_of_descriptions(),
            "group_counts": self.group_counts(), "unresolved": self.unresolved,
            "practice_excluded": self.practice_excluded, "status_counts": dict(self.status_counts),
        }

    def share_frame(self) -> pd.DataFrame:
        """Accurate / inaccurate: count and share."""
        return pd.DataFrame({"judgement": ["accurate", "inaccurate", "total"],
                             "captions": [self.accurate, self.inaccurate, self.total],
                             "share": [self.share_accurate, self.share_inaccurate, 1.0 if self.total else None]})

    def errors_frame(self) -> pd.DataFrame:
        """Errors per inaccurate description (1, 2, 3, 4+) with shares of the typed captions."""
        return pd.DataFrame({"errors": list(BUCKETS),
                             "descriptions": [self.errors_per_description[b] for b in BUCKETS],
                             "share": [_share(self.errors_per_description[b], self.typed) for b in BUCKETS]})

    def types_frame(self, order: str = "grouped") -> pd.DataFrame:
        """One row per error type: group, type, name, count, share of errors, share of descriptions.

        ``order``: "grouped" (groups by total, types by count within a group),
        "count" (by count overall) or "taxonomy" (taxonomy order).
        """
        return _types_frame({None: self}, order)

    def groups_frame(self) -> pd.DataFrame:
        """One row per group: count and share of errors (a group's types summed, so no share of descriptions)."""
        gc = self.group_counts()
        total = sum(gc.values())
        return pd.DataFrame({"group": list(gc), "count": list(gc.values()),
                             SHARE_OF_ERRORS: [_share(v, total) for v in gc.values()]})

    def to_tables(self) -> dict[str, pd.DataFrame]:
        """Named tables: accuracy, errors per description, error types (grouped), error groups."""
        return {"Accuracy": self.share_frame(), "Errors per description": self.errors_frame(),
                "Error types": self.types_frame(), "Error groups": self.groups_frame()}


def _types_frame(tables: dict, order: str) -> pd.DataFrame:
    """Type table for one (key None) or several (key = system) :class:`ErrorTables`."""
    tax = taxonomy()
    counts_by_col = {c: t.type_counts for c, t in tables.items()}
    cols = list(counts_by_col)
    overall = {t.id: sum(counts_by_col[c].get(t.id, 0) for c in cols) for t in tax.types}
    pos = {t.id: i for i, t in enumerate(tax.types)}
    group_total = {g: sum(overall[t.id] for t in tax.by_group(g)) for g in tax.groups}
    if order == "grouped":
        gpos = {g: i for i, g in enumerate(tax.groups)}
        key = lambda t: (-group_total[t.group], gpos[t.group], -overall[t.id], pos[t.id])  # noqa: E731
    elif order == "count":
        key = lambda t: (-overall[t.id], pos[t.id])  # noqa: E731
    elif order == "taxonomy":
        key = lambda t: pos[t.id]  # noqa: E731
    else:
        raise InputError(f"unknown order {order!r}; use grouped, count or taxonomy")
    rows = []
    for t in sorted(tax.types, key=key):
        row = {"group": t.group, "type": t.id, "name": t.name}
        if cols == [None]:
            row["count"] = counts_by_col[None].get(t.id, 0)
            row[SHARE_OF_ERRORS] = _share(row["count"], tables[None].total_errors)
            row[SHARE_OF_DESCRIPTIONS] = _share(row["count"], tables[None].known_descriptions)
        else:
            for c in cols:
                row[c] = counts_by_col[c].get(t.id, 0)
            for c in cols:
                row[f"{c} {SHARE_OF_ERRORS}"] = _share(counts_by_col[c].get(t.id, 0), tables[c].total_errors)
            for c in cols:
                row[f"{c} {SHARE_OF_DESCRIPTIONS}"] = _share(counts_by_col[c].get(t.id, 0), tables[c].known_descriptions)
        rows.append(row)
    return pd.DataFrame(rows)


def error_tables(layer: JudgementLayer, *, system: str | None = None, exclude_practice: bool = False) -> ErrorTables:
    """Count accuracy, errors per description and error types in ``layer`` (optionally one system)."""
    sel = np.ones(len(layer), dtype=bool)
    if system is not None:
        sel &= np.asarray(layer.systems == system)
    practice = 0
    if exclude_practice:
        practice = int((sel & layer.is_practice).sum())
        sel &= ~layer.is_practice
    inacc = layer.inaccurate[sel]
    known = layer.types_known[sel]
    masks = layer.types[sel]
    typed = inacc & known & (masks != 0)
    n_err = np.bitwise_count(masks[typed]).astype(np.int64)
    buckets = np.bincount(np.minimum(n_err, 4), minlength=5)
    counts = type_counts(masks[typed], len(layer.type_ids))
    tax_ids = taxonomy().ids
    by_type = {t: 0 for t in tax_ids}
    for t, c in zip(layer.type_ids, counts.tolist()):
        if t in by_type:
            by_type[t] = int(c)
    status = pd.Series(layer.status[sel]).value_counts()
    return ErrorTables(
        layer=layer.name, system=system, total=int(sel.sum()), accurate=int((~inacc).sum()), inaccurate=int(inacc.sum()),
        untyped=int((inacc & ~typed).sum()), errors_per_description=dict(zip(BUCKETS, (int(v) for v in buckets[1:]))),
        type_counts=by_type, unresolved=layer.unresolved_in(system), practice_excluded=practice,
        status_counts={str(k): int(v) for k, v in status.items() if v})


@dataclass(frozen=True)
class SystemComparison:
    """The error tables of several systems side by side."""

    layer: str
    tables: dict  # system → ErrorTables

    def summary(self) -> dict:
        """JSON-ready: the summary of each system."""
        return {"layer": self.layer, "systems": {s: t.summary() for s, t in self.tables.items()}}

    def share_frame(self) -> pd.DataFrame:
        """Rows: accurate/inaccurate/total; columns: count and share per system."""
        rows = []
        for what in ("accurate", "inaccurate", "total"):
            row = {"judgement": what}
            for s, t in self.tables.items():
                row[s] = getattr(t, what)
            for s, t in self.tables.items():
                row[f"{s} share"] = _share(getattr(t, what), t.total)
            rows.append(row)
        return pd.DataFrame(rows)

    def errors_frame(self) -> pd.DataFrame:
        """Rows: 1, 2, 3, 4+ errors; columns: descriptions per system."""
        rows = []
        for b in BUCKETS:
            row = {"errors": b}
            for s, t in self.tables.items():
                row[s] = t.errors_per_description[b]
            for s, t in self.tables.items():
                row[f"{s} share"] = _share(t.errors_per_description[b], t.typed)
            rows.append(row)
        return pd.DataFrame(rows)

    def types_frame(self, order: str = "grouped") -> pd.DataFrame:
        """Rows: error types (ordered by the total over the systems); columns: count, share of errors and
        share of descriptions per system."""
        return _types_frame(self.tables, order)

    def groups_frame(self) -> pd.DataFrame:
        """Rows: groups; columns: count per system."""
        tax = taxonomy()
        return pd.DataFrame([{"group": g, **{s: t.group_counts()[g] for s, t in self.tables.items()}} for g in tax.groups])

    def to_tables(self) -> dict[str, pd.DataFrame]:
        """Named side-by-side tables."""
        return {"Accuracy": self.share_frame(), "Errors per description": self.errors_frame(),
                "Error types": self.types_frame(), "Error groups": self.groups_frame()}


def compare_systems(layer: JudgementLayer, systems=None, *, exclude_practice: bool = False) -> SystemComparison:
    """Error tables for each of ``systems`` (default: every system in the layer, in category order)."""
    if systems is None:
        present = set(pd.unique(np.asarray(layer.systems, dtype=object)))
        systems = [s for s in layer.systems.categories if s in present]
    return SystemComparison(layer.name, {s: error_tables(layer, system=s, exclude_practice=exclude_practice)
                                         for s in systems})


def examples(layer: JudgementLayer, *, type_id: str | None = None, errors: str | None = None,
             label: str | None = None, system: str | None = None, status: str | None = None,
             limit: int | None = 50, exclude_practice: bool = False) -> pd.DataFrame:
    """Captions behind a table cell: with error type ``type_id``, with ``errors`` types
    ("1", "2", "3", "4+", or "untyped"), with ``label`` ("accurate"/"inaccurate"), in ``system``,
    with ``status``. Returns :meth:`JudgementLayer.frame` rows (caption order), at most ``limit``."""
    sel = np.ones(len(layer), dtype=bool)
    if system is not None:
        sel &= np.asarray(layer.systems == system)
    if exclude_practice:
        sel &= ~layer.is_practice
    if label is not None:
        if label not in ("accurate", "inaccurate"):
            raise InputError(f"unknown label {label!r}")
        sel &= layer.inaccurate if label == "inaccurate" else ~layer.inaccurate
    if status is not None:
        sel &= np.asarray(layer.status == status)
    if type_id is not None:
        if type_id not in layer.type_ids:
            raise InputError(f"unknown error type id {type_id!r}")
        bit = np.int64(1) << np.int64(layer.type_ids.index(type_id))
        sel &= layer.inaccurate & layer.types_known & ((layer.types & bit) != 0)
    if errors is not None:
        n = np.bitwise_count(layer.types)
        typed = layer.inaccurate & layer.types_known & (layer.types != 0)
        if errors == "untyped":
            sel &= layer.inaccurate & ~typed
        elif errors in BUCKETS:
            sel &= typed & ((n >= 4) if errors == "4+" else (n == int(errors)))
        else:
            raise InputError(f"errors must be one of {', '.join(BUCKETS)} or 'untyped', not {errors!r}")
    rows = np.flatnonzero(sel)
    if limit is not None:
        rows = rows[:limit]
    return layer.frame(rows)
