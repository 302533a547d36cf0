"""Agreement on *where*: how far two annotators mark the same caption words with the same error type.

:func:`span_agreement` reads the current annotations of a project with their spans (annotator.spans) and
returns a :class:`SpanAgreementReport`, which the CLI (``annotator agreement --spans``) prints and the
Agreement page shows. Nothing else computes these figures.

Definitions, per pair of annotators (A, B), over the captions both judged (skips and practice items left
out; accurate judgements count, with no marks):

* a token is *marked with T* by A when one of A's spans of type T covers it;
* per type T: ``a`` = tokens A marks with T, ``b`` = tokens B marks with T, ``both`` = tokens both mark
  with T (summed over the captions); token F1 = 2·both / (a + b). Types neither marked are left out;
* ``micro_f1`` = 2·Σ both / Σ (a + b) over the types;
* ``exact_f1`` = 2·|SA ∩ SB| / (|SA| + |SB|), S being the set of (caption, start, end, type) of one
  annotator's spans (the fix is not compared);
* ``tokens``: the caption tokens of those captions; ``not_localised``: per annotator, how many of its
  caption-level error types (caption, type) have no span of that type.

An F1 with nothing to compare (no marks at all) is None.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import pandas as pd

from .errors import InputError, NotFound
from .spans import caption_tokens, decode_spans, marked_tokens, not_localised
from .taxonomy import taxonomy


@dataclass(frozen=True)
class TypeSpanAgreement:
    """Token counts of one type for a pair."""

    a: int
    b: int
    both: int

    @property
    def f1(self) -> float | None:
        """Token F1 = 2·both / (a + b)."""
        return 2 * self.both / (self.a + self.b) if self.a + self.b else None


@dataclass(frozen=True)
class PairSpanAgreement:
    """Span agreement of annotators ``a`` and ``b``."""

    a: str
    b: str
    captions: int
    tokens: int
    per_type: dict            # type id → TypeSpanAgreement, taxonomy order, types someone marked
    exact_both: int           # |SA ∩ SB|
    exact_a: int              # |SA|
    exact_b: int              # |SB|
    not_localised: dict       # annotator → typed errors without a span

    @property
    def micro_f1(self) -> float | None:
        """2·Σ both / Σ (a + b) over the types."""
        total = sum(t.a + t.b for t in self.per_type.values())
        return 2 * sum(t.both for t in self.per_type.values()) / total if total else None

    @property
    def exact_f1(self) -> float | None:
        """2·|SA ∩ SB| / (|SA| + |SB|)."""
        total = self.exact_a + self.exact_b
        return 2 * self.exact_both / total if total else None

    def summary(self) -> dict:
        """The pair as JSON."""
        return {"annotators": [self.a, self.b], "captions": self.captions, "tokens": self.tokens,
                "micro_f1": self.micro_f1, "exact_f1": self.exact_f1,
                "per_type": {t: {"a": s.a, "b": s.b, "both": s.both, "f1": s.f1} for t, s in self.per_type.items()},
                "not_localised": dict(self.not_localised)}


@dataclass(frozen=True)
class SpanAgreementReport:
    """Span agreement of every pair of the chosen annotators on a project (optionally one system)."""

    project: str
    annotators: tuple[str, ...]
    system: str | None
    pairs: tuple[PairSpanAgreement, ...]

    def summary(self) -> dict:
        """``{"spans": {"pairs": [...]}}``, what ``annotator agreement --spans --json`` prints."""
        return {"spans": {"pairs": [p.summary() for p in self.pairs]}}

    def pairs_frame(self) -> pd.DataFrame:
        """One row per pair."""
        return pd.DataFrame([{"annotator A": p.a, "annotator B": p.b, "captions": p.captions, "tokens": p.tokens,
                              "token micro F1": p.micro_f1, "exact span F1": p.exact_f1,
                              "A not localised": p.not_localised[p.a], "B not localised": p.not_localised[p.b]}
                             for p in self.pairs],
                            columns=["annotator A", "annotator B", "captions", "tokens", "token micro F1",
                                     "exact span F1", "A not localised", "B not localised"])

    def type_frame(self, pair: PairSpanAgreement) -> pd.DataFrame:
        """One row per type a pair marked: a, b, both, token F1."""
        tax = taxonomy()
        return pd.DataFrame([{"type": t, "name": tax.get(t).name, "A tokens": s.a, "B tokens": s.b,
                              "both": s.both, "token F1": s.f1} for t, s in pair.per_type.items()],
                            columns=["type", "name", "A tokens", "B tokens", "both", "token F1"])

    def to_tables(self) -> dict[str, pd.DataFrame]:
        """Named tables for annotator.io.tables.write_table."""
        out = {"Span agreement": self.pairs_frame()}
        for p in self.pairs:
            out[f"Span types {p.a} vs {p.b}"] = self.type_frame(p)
        return out


@dataclass(frozen=True)
class _Judged:
    label: str
    error_types: tuple[str, ...]
    spans: tuple


def pair_span_agreement(a: str, b: str, judged_a: dict, judged_b: dict, n_tokens: dict) -> PairSpanAgreement:
    """Span figures of one pair from caption id → judgement (label, error_types, spans) of each, and caption id →
    token count. Only captions both judged (with a label) count."""
    tax = taxonomy()
    shared = sorted(c for c in judged_a.keys() & judged_b.keys()
                    if judged_a[c].label is not None and judged_b[c].label is not None)
    counts: dict[str, list[int]] = {}
    sa: set = set()
    sb: set = set()
    missing = {a: 0, b: 0}
    for c in shared:
        ja, jb = judged_a[c], judged_b[c]
        ma, mb = marked_tokens(ja.spans), marked_tokens(jb.spans)
        for t in ma.keys() | mb.keys():
            ta, tb = ma.get(t, set()), mb.get(t, set())
            row = counts.setdefault(t, [0, 0, 0])
            row[0] += len(ta)
            row[1] += len(tb)
            row[2] += len(ta & tb)
        sa |= {(c, s.start, s.end, s.type) for s in ja.spans}
        sb |= {(c, s.start, s.end, s.type) for s in jb.spans}
        missing[a] += len(not_localised(ja.spans, ja.error_types))
        missing[b] += len(not_localised(jb.spans, jb.error_types))
    per_type = {t: TypeSpanAgreement(*counts[t]) for t in tax.in_order(counts)}
    return PairSpanAgreement(a, b, len(shared), sum(n_tokens[c] for c in shared), per_type,
                             len(sa & sb), len(sa), len(sb), missing)


def span_agreement(store, project: str, annotators=None, *, system: str | None = None) -> SpanAgreementReport:
    """Span agreement of ``annotators`` (default: everyone with an annotation in the project, by name) on
    ``project``'s captions (``system``: one system's); every pair, in the order given."""
    from .store.caption_queries import practice_items
    from .store.exchange import judgement_records
    from .store.projects import project_id, system_id
    practice = set(practice_items(store, project))
    with store.read() as conn:
        pid = project_id(conn, project)
        if system is not None:
            system_id(conn, pid, system)
        rows = judgement_records(conn, pid, system=system, kinds=("annotation",))
    by_user: dict[str, dict] = {}
    n_tokens: dict[int, int] = {}
    for r in rows:
        if r.item in practice or r.label is None:
            continue
        by_user.setdefault(r.annotator, {})[r.caption_id] = _Judged(r.label, tuple((r.error_types or "").split()),
                                                                     decode_spans(r.spans))
        if r.caption_id not in n_tokens:
            n_tokens[r.caption_id] = len(caption_tokens(r.caption))
    if annotators is None:
        annotators = sorted(by_user)
        if len(annotators) < 2:
            raise InputError(f"project {project!r} has fewer than two annotators with judgements")
    annotators = tuple(annotators)
    if len(annotators) < 2:
        raise InputError("agreement needs at least two annotators", "--annotators")
    if len(set(annotators)) != len(annotators):
        raise InputError("an annotator is named twice", "--annotators")
    for name in annotators:
        if name not in by_user:
            raise NotFound(f"{name!r} has no judgements in project {project!r}"
                           + (f" for system {system!r}" if system else ""))
    pairs = tuple(pair_span_agreement(a, b, by_user[a], by_user[b], n_tokens) for a, b in combinations(annotators, 2))
    return SpanAgreementReport(project, annotators, system, pairs)


def readable(report: SpanAgreementReport) -> str:
    """The report as the CLI prints it without --json."""
    def num(x):
        return "—" if x is None else f"{x:.3f}"
    lines = [f"span agreement: {', '.join(report.annotators)}" + (f"; system {report.system}" if report.system else "")]
    for p in report.pairs:
        lines.append(f"{p.a} vs {p.b}: {p.captions} shared captions, {p.tokens} tokens, token micro F1 {num(p.micro_f1)}, "
                     f"exact span F1 {num(p.exact_f1)}; typed errors not localised: {p.a} {p.not_localised[p.a]}, "
                     f"{p.b} {p.not_localised[p.b]}")
        for t, s in p.per_type.items():
            lines.append(f"  {t}: {p.a} {s.a}, {p.b} {s.b}, both {s.both}, F1 {num(s.f1)}")
    return "\n".join(lines)
