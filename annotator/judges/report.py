"""The judges of a project against a human layer: one :class:`JudgeReport`, read by the command line
(``annotator judge report``), its JSON and the Judges page (compute once, derive many).

Over the captions the layer labelled (practice items left out), per judge: accuracy and Cohen's kappa (with its
interval) against the layer and against each annotator, beside the annotators' own kappas; per type precision,
recall, F1 and kappa; the expected calibration error and its reliability bins; the confusion matrix; token-level
span precision, recall and F1 against the layer's spans (as ``annotator detectors evaluate`` counts them);
the captions it disagrees with the humans on most confidently; and, where annotators worked with suggestions,
their agreement with the judge and their seconds per caption with and without one. Between judges: the
agreement of their decisions on every caption both scored. Definitions: :mod:`annotator.judges.calibration`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..layers import Layer, build_layer, masks_to_ids, parse_layer
from ..taxonomy import taxonomy
from .calibration import (BINS, Agreement, Disagreement, ReliabilityBin, SuggestionEffect, TypeScore,
                          decision_agreement, most_confident, reliability, suggestion_effect, type_scores)
from .outputs import DETECTORS, THRESHOLD, JudgeOutput, signature_text

#: How many disagreements each judge lists.
DISAGREEMENTS = 50


@dataclass(frozen=True)
class SpanScores:
    """A judge's spans against the layer's, token level (see annotator.estimate.span_eval)."""

    captions: int
    captions_with_spans: int
    tokens_judge: int
    tokens_human: int
    tokens_both: int
    per_type: dict = field(default_factory=dict)  # type → annotator.estimate.span_eval.TypeScores

    @property
    def precision(self) -> float | None:
        return self.tokens_both / self.tokens_judge if self.tokens_judge else None

    @property
    def recall(self) -> float | None:
        return self.tokens_both / self.tokens_human if self.tokens_human else None

    @property
    def f1(self) -> float | None:
        den = self.tokens_judge + self.tokens_human
        return 2 * self.tokens_both / den if den else None

    def to_dict(self) -> dict:
        """JSON form: totals over every type, then per type."""
        return {"captions": self.captions, "captions_with_spans": self.captions_with_spans,
                "tokens": {"judge": self.tokens_judge, "human": self.tokens_human, "both": self.tokens_both,
                           "precision": self.precision, "recall": self.recall, "f1": self.f1},
                "per_type": {t: s.to_json()["tokens"] | {"not_localised": s.not_localised}
                             for t, s in self.per_type.items()}}


@dataclass(frozen=True)
class JudgeCalibration:
    """One judge against the layer (see the module)."""

    judge: str
    signature: dict
    n: int  # layer captions the judge scored
    unscored: int  # layer captions it has no output for
    vs_layer: Agreement
    ece: float | None
    bins: tuple[ReliabilityBin, ...]
    per_type: dict[str, TypeScore]
    spans: SpanScores
    annotators: tuple[Agreement, ...]  # the judge against each annotator's own labels
    disagreements: tuple[Disagreement, ...]
    suggestions: tuple[SuggestionEffect, ...] = ()

    def to_dict(self) -> dict:
        """JSON form (``annotator judge report --json``)."""
        a = self.vs_layer
        return {"judge": self.judge, "signature": dict(self.signature), "n": self.n, "unscored": self.unscored,
                "accuracy": a.accuracy, "kappa": a.kappa, "kappa_ci": list(a.kappa_ci) if a.kappa_ci else None,
                "confusion": {"rows": "layer", "columns": "judge", "labels": ["accurate", "inaccurate"],
                              "counts": [list(r) for r in a.confusion]},
                "ece": self.ece, "bins": [b.to_dict() for b in self.bins],
                "per_type": {t: s.to_dict() for t, s in self.per_type.items()},
                "spans": self.spans.to_dict(), "annotators": [x.to_dict() for x in self.annotators],
                "disagreements": [d.to_dict() for d in self.disagreements],
                "suggestions": [s.to_dict() for s in self.suggestions]}


@dataclass(frozen=True)
class JudgeReport:
    """Every judge of a project against one layer, the annotators' own agreement and the judges' agreement."""

    project: str
    layer: str
    captions: int  # captions the layer labelled (practice items left out)
    judges: tuple[JudgeCalibration, ...]
    human: tuple[Agreement, ...]  # annotator pairs (the Agreement page's kappas)
    between: tuple[Agreement, ...]  # judge pairs, on every caption both scored
    bins: int = BINS

    def judge(self, name: str) -> JudgeCalibration:
        """One judge's figures (KeyError when the report has none)."""
        for j in self.judges:
            if j.judge == name:
                return j
        raise KeyError(name)

    def summary(self) -> dict:
        """The JSON ``annotator judge report --json`` prints."""
        return {"project": self.project, "layer": self.layer, "captions": self.captions, "bins": self.bins,
                "threshold": THRESHOLD, "judges": [j.to_dict() for j in self.judges],
                "human": [a.to_dict() for a in self.human], "between_judges": [a.to_dict() for a in self.between]}

    def judges_frame(self) -> pd.DataFrame:
        """One row per judge: signature, captions, accuracy, kappa and its interval, ECE, span F1."""
        rows = []
        for j in self.judges:
            lo, hi = j.vs_layer.kappa_ci or (None, None)
            rows.append({"judge": j.judge, "signature": signature_text(j.signature), "captions": j.n,
                         "accuracy": j.vs_layer.accuracy, "kappa": j.vs_layer.kappa, "kappa low": lo,
                         "kappa high": hi, "ECE": j.ece, "span F1": j.spans.f1})
        return pd.DataFrame(rows)

    def kappa_frame(self) -> pd.DataFrame:
        """Every judge against the layer and each annotator, and the annotator pairs: who, with whom, n,
        accuracy, kappa and its interval (a judge reads as good as a second annotator when its kappa with
        each annotator is within their own)."""
        rows = []
        for j in self.judges:
            for a in (j.vs_layer, *j.annotators):
                rows.append(_agreement_row(j.judge, a, a.a))  # each is (the layer or annotator, the judge)
        for a in self.human:
            rows.append(_agreement_row(a.a, a, a.b, kind="annotators"))
        for a in self.between:
            rows.append(_agreement_row(a.a, a, a.b, kind="judges"))
        return pd.DataFrame(rows)

    def types_frame(self) -> pd.DataFrame:
        """Per judge and type: captions, counts, precision, recall, F1, kappa."""
        tax = taxonomy()
        return pd.DataFrame([{"judge": j.judge, "type": t, "name": tax.get(t).name, "layer": s.human,
                              "judge says": s.judge, "both": s.both, "precision": s.precision, "recall": s.recall,
                              "f1": s.f1, "kappa": s.kappa} for j in self.judges for t, s in j.per_type.items()])

    def bins_frame(self) -> pd.DataFrame:
        """The reliability bins of every judge."""
        return pd.DataFrame([{"judge": j.judge, "from": b.lo, "to": b.hi, "captions": b.n, "mean p": b.mean_p,
                              "share inaccurate": b.observed} for j in self.judges for b in j.bins])

    def disagreements_frame(self) -> pd.DataFrame:
        """Every judge's listed disagreements, most confident first."""
        return pd.DataFrame([{"judge": j.judge, **{k: v for k, v in d.to_dict().items()
                                                   if k not in ("human_types", "judge_types")},
                              "human_types": " ".join(d.human_types), "judge_types": " ".join(d.judge_types)}
                             for j in self.judges for d in j.disagreements])

    def to_tables(self) -> dict[str, pd.DataFrame]:
        """Named tables for the CSV/XLSX/LaTeX/Markdown writers."""
        return {"Judges": self.judges_frame(), "Kappa": self.kappa_frame(), "Types": self.types_frame(),
                "Reliability": self.bins_frame(), "Disagreements": self.disagreements_frame()}


def _agreement_row(who: str, a: Agreement, against: str, kind: str = "judge") -> dict:
    lo, hi = a.kappa_ci or (None, None)
    return {"kind": kind, "rater": who, "against": against, "captions": a.n, "accuracy": a.accuracy,
            "kappa": a.kappa, "kappa low": lo, "kappa high": hi}


# ------------------------------------------------------------------ computing it

@dataclass(frozen=True)
class _Context:
    """What every judge is measured against, read once."""

    project: str
    layer: Layer
    built: object  # annotator.layers.JudgementLayer without practice captions
    places: dict  # caption id → (system, item key, line, text)
    annotator_layers: dict  # annotator → {caption id: inaccurate}
    human_spans: dict
    annotations: list  # (caption id, user, label, types, seconds, suggested) of the current annotations
    boot: dict
    loaded: list  # [(project, its detections)] once the detectors judge needed them


def judge_report(store, project: str, layer, judges=None, *, limit: int = DISAGREEMENTS, n_resamples: int = 2000,
                 seed: int = 0, loaded=None) -> JudgeReport:
    """Measure ``judges`` (names; default every judge of the project, the detectors first) against ``layer``.

    ``loaded``: ``(project, annotator.estimate.project.project_detections(project))`` when computed already (the
    detectors judge reads them)."""
    from ..agreement import agreement_report
    from ..store.analysis_queries import annotators_in
    from . import judge_names, load_judge
    ctx, frame = _context(store, project, parse_layer(layer), n_resamples, seed, loaded)
    names = list(dict.fromkeys(judges)) if judges else judge_names(store, project)
    outputs = {}
    for name in names:
        judge = load_judge(store, project, name)
        outputs[name] = (judge, _outputs_of(judge, ctx.loaded))
    calibrations = tuple(_calibrate(ctx, judge, found, limit) for judge, found in outputs.values())
    annotators = annotators_in(frame)
    human = agreement_report(frame, annotators, n_resamples=n_resamples, seed=seed).pairs if len(annotators) > 1 else ()
    human = tuple(Agreement(p.a, p.b, p.n, p.agreement, p.kappa, p.kappa_ci, p.confusion) for p in human)
    return JudgeReport(project, ctx.layer.label, len(ctx.built), calibrations, human,
                       _between(outputs, set(ctx.places), ctx.boot))


def _context(store, project: str, layer: Layer, n_resamples: int, seed: int, loaded) -> tuple[_Context, pd.DataFrame]:
    from ..correction.span_rule import layer_spans
    from ..store.analysis_queries import annotators_in, judgement_frame
    from ..store.judges import annotation_rows
    from ..store.projects import load_project, project_id
    frame = judgement_frame(store, project, kinds=("annotation", "adjudication"))
    built = build_layer(frame, layer)
    keep = np.flatnonzero(~built.is_practice)
    built = _rows(built, keep)
    proj = loaded[0] if loaded is not None else load_project(store, project)
    places = {c.caption_id: (c.system, it.key, c.line, c.text) for it in proj.items if not it.is_practice
              for c in it.captions}
    per_annotator = {}
    for name in annotators_in(frame):
        own = build_layer(frame, Layer.annotator(name))
        per_annotator[name] = {int(c): bool(i) for c, i, p in zip(own.caption_ids.tolist(), own.inaccurate.tolist(),
                                                                   own.is_practice.tolist()) if not p}
    with store.read() as conn:
        rows = [r for r in annotation_rows(conn, project_id(conn, project)) if r[0] in places]
    ctx = _Context(project, layer, built, places, per_annotator, layer_spans(store, project, None, layer, frame=frame),
                   rows, {"n_resamples": n_resamples, "seed": seed}, [loaded or (proj, None)])
    return ctx, frame


def _rows(built, keep: np.ndarray):
    """The layer without the given rows' complement (practice captions out)."""
    from dataclasses import replace
    return replace(built, caption_ids=built.caption_ids[keep], item_ids=built.item_ids[keep],
                   is_practice=built.is_practice[keep], systems=built.systems[keep],
                   inaccurate=built.inaccurate[keep], types=built.types[keep], types_known=built.types_known[keep],
                   status=built.status[keep])


def _outputs_of(judge, loaded: list) -> dict[int, JudgeOutput]:
    """Caption id → the judge's output, over the project's captions. ``loaded``: ``[(project, its detections or
    None)]``; the detectors run when first needed and are kept there."""
    if judge.name != DETECTORS:
        return judge.outputs
    from ..estimate.project import project_detections
    proj, scored = loaded[0]
    if scored is None:
        scored = project_detections(proj)
        loaded[0] = (proj, scored)
    texts = {c.caption_id: c.text for it in proj.items for c in it.captions}
    out = {}
    for sc in scored.values():
        out.update(judge.outputs_for(sc, texts))
    return out


def _calibrate(ctx: _Context, judge, outputs: dict[int, JudgeOutput], limit: int) -> JudgeCalibration:
    """One judge's figures against the context's layer."""
    built = ctx.built
    ids = built.caption_ids.tolist()
    have = np.array([c in outputs for c in ids], dtype=bool)
    sel = np.flatnonzero(have)
    y = built.inaccurate[sel]
    p = np.array([outputs[ids[i]].p_inaccurate for i in sel], dtype=float)
    vs_layer = decision_agreement(ctx.layer.label, judge.name, y, p >= THRESHOLD, **ctx.boot)
    ece, bins = reliability(p, y)
    per_type = _per_type(built, sel, [outputs[ids[i]] for i in sel], judge.scored_types)
    annotators = []
    for name, own in ctx.annotator_layers.items():
        both = [c for c in own if c in outputs]
        annotators.append(decision_agreement(name, judge.name, [own[c] for c in both],
                                             [outputs[c].inaccurate for c in both], **ctx.boot))
    return JudgeCalibration(
        judge.name, dict(judge.signature), len(sel), int((~have).sum()), vs_layer, ece, bins, per_type,
        _spans(ctx, outputs), tuple(annotators), _disagreements(ctx, outputs, sel, limit),
        suggestion_effect(judge.name, ctx.annotations, outputs, **ctx.boot) if ctx.annotations else ())


def _per_type(built, sel: np.ndarray, outs: list[JudgeOutput], scored) -> dict[str, TypeScore]:
    """Per scored type over the captions whose types the layer knows and the judge typed."""
    known = [k for k, i in enumerate(sel) if built.types_known[i] and outs[k].types is not None]
    type_ids = list(scored)
    human = np.array([[t in masks_to_ids(int(built.types[sel[k]]), built.type_ids) for t in type_ids]
                      for k in known], dtype=bool).reshape(len(known), len(type_ids))
    judge = np.array([[outs[k].types.get(t, 0.0) >= THRESHOLD for t in type_ids] for k in known],
                     dtype=bool).reshape(len(known), len(type_ids))
    return type_scores(human, judge, type_ids)


def _spans(ctx: _Context, outputs: dict[int, JudgeOutput]) -> SpanScores:
    """The judge's spans of its flagged types against the layer's spans (span_eval.tally's counts)."""
    from ..estimate.span_eval import tally
    from ..spans import merge_spans
    built = ctx.built
    human_types = {int(c): (masks_to_ids(int(m), built.type_ids) if inacc else ())
                   for c, m, inacc, known in zip(built.caption_ids.tolist(), built.types.tolist(),
                                                 built.inaccurate.tolist(), built.types_known.tolist()) if known}
    rows = []
    for cid, out in outputs.items():
        if cid not in human_types or cid not in ctx.places:
            continue
        flagged = out.flagged() if out.types is not None else tuple({s.type for s in out.spans})
        spans = merge_spans([s for s in out.spans if s.type in flagged])
        rows.append((cid, ctx.places[cid][3], flagged, spans, out.p_inaccurate))
    judged, with_spans, per_type = tally(rows, human_types, ctx.human_spans)
    sums = [sum(getattr(s, f) for s in per_type.values()) for f in ("tokens_detector", "tokens_human", "tokens_both")]
    return SpanScores(judged, with_spans, *sums, per_type)


def _disagreements(ctx: _Context, outputs: dict[int, JudgeOutput], sel: np.ndarray, limit: int):
    built = ctx.built
    found = []
    for i in sel.tolist():
        cid = int(built.caption_ids[i])
        out = outputs[cid]
        human = bool(built.inaccurate[i])
        if out.inaccurate == human or cid not in ctx.places:
            continue
        system, item, line, text = ctx.places[cid]
        types = masks_to_ids(int(built.types[i]), built.type_ids) if built.types_known[i] else ()
        found.append(Disagreement(cid, system, item, int(line if line is not None else -1), text,
                                  "inaccurate" if human else "accurate", types, out.p_inaccurate, out.flagged()))
    return most_confident(found, limit)


def _between(outputs: dict, captions: set, boot: dict) -> tuple[Agreement, ...]:
    """Every pair of judges' decisions on the (non-practice) captions both scored."""
    names = list(outputs)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            oa, ob = outputs[a][1], outputs[b][1]
            both = sorted(c for c in oa if c in ob and c in captions)
            out.append(decision_agreement(a, b, [oa[c].inaccurate for c in both], [ob[c].inaccurate for c in both],
                                          **boot))
    return tuple(out)


def suggestion_figures(store, project: str, judge: str | None = None) -> tuple[str | None, tuple[SuggestionEffect, ...]]:
    """The human judgements made with a suggestion and without, against ``judge`` (default: the judge the project's
    suggestions come from): (its name, the two groups' agreement and seconds); (None, ()) without such a judge.
    The Agreement page shows it; :class:`JudgeCalibration` carries the same figures for every judge."""
    from ..store.judges import annotation_rows
    from ..store.projects import project_id
    from . import load_judge
    from .suggestions import suggestion_judge
    name = judge or suggestion_judge(store, project)
    if name is None:
        return None, ()
    with store.read() as conn:
        rows = annotation_rows(conn, project_id(conn, project))
    from ..store.projects import load_project
    proj = load_project(store, project)
    outputs = _outputs_of(load_judge(store, project, name), [(proj, None)])
    practice = {c.caption_id for it in proj.items if it.is_practice for c in it.captions}
    return name, suggestion_effect(name, [r for r in rows if r[0] not in practice], outputs)
