"""Estimates for the systems of a stored project: captions, evidence and a judgement layer from the store.

:func:`project_detections` scores every caption of a project once (all
systems together, they share the images' evidence); :func:`layer_labels`
turns a judgement layer (:mod:`annotator.layers`) into the human labels of a
system's captions; :func:`estimate_project` puts both into one
:class:`EstimateReport` per system and :class:`ProjectEstimates` holds them
side by side with the differences between systems.

Captions of practice items are left out on both sides: they are guideline
examples, chosen by a lead rather than drawn at random, so the estimate is
about the other captions.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import InputError, NotFound
from ..layers import JudgementLayer, Layer, build_layer, masks_to_ids
from .detectors import INACCURATE, SCORE_COLUMNS, SIGNATURE, Detections, detect, evidence_of_item
from .ppi import DifferenceEstimate, SampleDraw, paired_difference
from .report import EstimateReport, HumanLabels, compare, comparison_frame, estimate_report

#: Below this p-value the labelled captions are said not to look like a random sample.
RANDOMNESS_P = 0.001
#: The alphas (1 - confidence) an estimate accepts: beyond them the intervals mean little or the normal
#: quantile leaves floating-point range.
ALPHA_RANGE = (0.001, 0.5)


def check_alpha(alpha: float, source: str = "alpha") -> float:
    """``alpha`` if it lies in :data:`ALPHA_RANGE`, else an :class:`InputError` naming ``source``."""
    lo, hi = ALPHA_RANGE
    if not (isinstance(alpha, (int, float)) and lo <= alpha <= hi):
        raise InputError(f"must be between {lo} and {hi} (confidence {1 - hi:.0%} to {1 - lo:.1%}), got {alpha}",
                         source)
    return float(alpha)


@dataclass(frozen=True)
class SystemCaptions:
    """One system's captions (practice items left out, line order) with their detector scores."""

    system: str
    caption_ids: np.ndarray
    detections: Detections
    practice_left_out: int
    items: np.ndarray | None = None  # the image (item position in the project) of each caption
    item_keys: tuple[str, ...] = ()  # the project's item keys, by position
    texts: tuple[str, ...] = ()  # each caption's text


def project_detections(project) -> dict[str, SystemCaptions]:
    """Score every caption of a :class:`annotator.model.Project` (loaded with captions), per system."""
    evidence, captions, items, ids, systems, practice = [], [], [], [], [], []
    for n, item in enumerate(project.items):
        evidence.append(evidence_of_item(item))
        for c in item.captions:
            captions.append(c.text)
            items.append(n)
            ids.append(c.caption_id if c.caption_id is not None else -1)
            systems.append(c.system)
            practice.append(item.is_practice)
    det = detect(captions, items, evidence)
    systems_arr = np.array(systems, dtype=object)
    practice_arr = np.array(practice, dtype=bool)
    ids_arr = np.array(ids, dtype=np.int64)
    items_arr = np.array(items, dtype=np.int64)
    keys = tuple(item.key for item in project.items)
    out = {}
    for system in project.systems:
        mine = systems_arr == system
        rows = np.flatnonzero(mine & ~practice_arr)
        out[system] = SystemCaptions(system, ids_arr[rows], det.subset(rows), int((mine & practice_arr).sum()),
                                     items_arr[rows], keys, tuple(captions[i] for i in rows.tolist()))
    return out


@dataclass(frozen=True)
class RecordedDraw:
    """A stored sample draw of one system: the captions it took (by id) and their inclusion probabilities."""

    draw_id: int
    system: str
    caption_ids: np.ndarray
    probabilities: np.ndarray


def recorded_draws(store, project: str) -> dict[str, list[RecordedDraw]]:
    """The sample draws of a project per system, in the order they were made."""
    from ..store.assignments import draw_members
    from ..store.projects import project_id
    with store.read() as conn:
        rows = draw_members(conn, project_id(conn, project))
    out: dict[str, list[RecordedDraw]] = {}
    if not rows:
        return out
    frame = pd.DataFrame(rows, columns=["draw_id", "system", "caption_id", "probability"])
    for (draw_id, system), part in frame.groupby(["draw_id", "system"], sort=True):
        out.setdefault(system, []).append(RecordedDraw(int(draw_id), system, part["caption_id"].to_numpy(np.int64),
                                                       part["probability"].to_numpy(float)))
    return out


def draws_as_rows(caption_ids: np.ndarray, draws: list[RecordedDraw]) -> tuple[SampleDraw, ...]:
    """The draws in terms of rows among ``caption_ids`` (a system's captions without practice items); captions
    no longer among them (an item marked practice since) are dropped from the draw."""
    order = np.argsort(caption_ids, kind="stable")
    sorted_ids = caption_ids[order]
    out = []
    for d in draws:
        pos = np.minimum(np.searchsorted(sorted_ids, d.caption_ids), max(len(sorted_ids) - 1, 0))
        hit = sorted_ids[pos] == d.caption_ids if len(sorted_ids) else np.zeros(len(d.caption_ids), dtype=bool)
        out.append(SampleDraw(d.draw_id, order[pos[hit]], d.probabilities[hit]))
    return tuple(out)


def layer_labels(layer: JudgementLayer, caption_ids: np.ndarray) -> HumanLabels:
    """The labels a layer gives a system's captions, as rows among ``caption_ids``.

    Captions the layer does not have (not judged yet, unresolved, or of
    another system) are unlabelled; captions whose types the layer leaves
    open count as inaccurate with types pending.
    """
    order = np.argsort(caption_ids, kind="stable")
    sorted_ids = caption_ids[order]
    pos = np.searchsorted(sorted_ids, layer.caption_ids)
    pos = np.minimum(pos, max(len(sorted_ids) - 1, 0))
    hit = (sorted_ids[pos] == layer.caption_ids) if len(sorted_ids) else np.zeros(len(layer), dtype=bool)
    rows = order[pos[hit]]
    keep = np.flatnonzero(hit)
    types = [masks_to_ids(m, layer.type_ids) if known else ()
             for m, known in zip(layer.types[keep].tolist(), layer.types_known[keep].tolist())]
    by_row = np.argsort(rows, kind="stable")
    return HumanLabels.from_lists(rows[by_row], layer.inaccurate[keep][by_row], [types[i] for i in by_row])


def sample_warning(human: HumanLabels, n_total: int) -> str | None:
    """A warning when the labelled captions cluster in the system's line order rather than being spread
    like a random sample (a queue worked through from the top, for example)."""
    n = len(human.rows)
    if n < 10 or n >= n_total:
        return None
    from scipy.stats import kstest  # here: scipy.stats takes about a second to import
    p = kstest((human.rows + 0.5) / n_total, "uniform").pvalue
    if p >= RANDOMNESS_P:
        return None
    return (f"the {n} labelled captions are not spread over the system's captions like a random sample "
            f"(Kolmogorov-Smirnov p = {p:.1g}); the intervals assume a random sample, so annotate a random "
            "sample (or all captions) before trusting them")


@dataclass(frozen=True)
class ProjectEstimates:
    """Estimates of several systems from one layer, side by side (compute once, derive many)."""

    project: str
    layer: str
    reports: tuple[EstimateReport, ...]
    differences: dict[tuple[str, str], dict[str, DifferenceEstimate]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # systems left out of an all-systems run, and why
    # Each system's captions and human labels, for paired differences (not part of the output).
    inputs: dict[str, tuple[SystemCaptions, HumanLabels]] = field(default_factory=dict, compare=False, repr=False)
    # The judge whose scores are the predictor (annotator.judges; the detectors by default) and its signature,
    # and its scores of each system's captions (None: the detectors').
    judge: str = "detectors"
    signature: dict = field(default_factory=dict)
    predictors: dict = field(default_factory=dict, compare=False, repr=False)

    def scores_of(self, system: str):
        """The predictor's scores of a system's captions: the judge's, or the detections."""
        return self.predictors[system] if system in self.predictors else self.inputs[system][0].detections

    def report(self, system: str) -> EstimateReport:
        """The report of one system."""
        for r in self.reports:
            if r.system == system:
                return r
        raise NotFound(f"no estimate for system {system!r}")

    def difference(self, a: str, b: str) -> dict[str, DifferenceEstimate]:
        """System ``a`` minus system ``b`` for every target (computed on first use).

        Paired (:func:`~annotator.estimate.ppi.paired_difference`) for a target
        whose labelled captions of both systems are on the same images, both
        systems captioning the same images and both samples simple random
        ones; independent otherwise (:func:`~annotator.estimate.ppi.difference`,
        whose interval is then conservative when the two systems' errors go
        together). Each estimate's ``design`` says which.
        """
        if (a, b) not in self.differences:
            out = compare(self.reports, a, b)
            if a in self.inputs and b in self.inputs:
                for target in out:
                    paired = _paired(self.report(a), self.report(b), self.inputs[a], self.inputs[b], target,
                                     (self.scores_of(a), self.scores_of(b)))
                    if paired is not None:
                        out[target] = paired
            self.differences[(a, b)] = out
        return self.differences[(a, b)]

    def frame(self) -> pd.DataFrame:
        """One row per system and target."""
        return comparison_frame(list(self.reports))

    def differences_frame(self) -> pd.DataFrame:
        """One row per compared pair and target: difference, interval, classical difference and interval, design
        (paired or independent) and the number of labelled images paired."""
        rows = []
        for (a, b), diffs in self.differences.items():
            for target, d in diffs.items():
                rows.append({"system_a": a, "system_b": b, "target": target, "difference": d.estimate,
                             "ci_low": d.ci[0], "ci_high": d.ci[1], "classical": d.classical,
                             "classical_low": d.classical_ci[0], "classical_high": d.classical_ci[1],
                             "design": d.design, "pairs": d.pairs})
        return pd.DataFrame(rows)

    def scores_frame(self) -> pd.DataFrame:
        """The detector scores behind the estimates, one row per caption of the estimated systems (practice items
        left out): caption_id, image, system, the layer's human label and types (empty when unlabelled), one
        column per score (every type, then ``inaccurate``) and ``triggers``, the words behind each score
        (``{type id: [words, ...]}``)."""
        parts = []
        for system, (sc, human) in self.inputs.items():
            n = len(sc.caption_ids)
            label = np.full(n, "", dtype=object)
            types = np.full(n, "", dtype=object)
            label[human.rows] = np.where(human.inaccurate, "inaccurate", "accurate")
            known = human.types_known
            types[human.rows] = [" ".join(sorted(t)) if k else "" for t, k in zip(human.types, known)]
            frame = pd.DataFrame({"caption_id": sc.caption_ids, "image": [sc.item_keys[i] for i in sc.items]
                                  if sc.items is not None and sc.item_keys else [""] * n,
                                  "system": system, "human_label": label, "human_types": types})
            source = self.scores_of(system)
            scores = pd.DataFrame(source.scores, columns=list(SCORE_COLUMNS))
            if system in self.predictors:  # a type the judge does not score has no score, not 0
                for col in SCORE_COLUMNS:
                    if not source.scores_column(col):
                        scores[col] = None
            frame = pd.concat([frame, scores], axis=1)
            frame["triggers"] = [source.triggers(i) for i in range(n)]
            parts.append(frame)
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def to_tables(self) -> dict[str, pd.DataFrame]:
        """Named tables for the CSV/XLSX/LaTeX/Markdown writers."""
        tables = {"Estimates": self.frame()}
        if self.differences:
            tables["Differences"] = self.differences_frame()
        return tables

    def to_dict(self) -> dict:
        """JSON: one system gives its report's object; several give ``systems`` and ``differences``."""
        skipped = {"skipped": dict(self.skipped)} if self.skipped else {}
        judge = {"judge": self.judge, "signature": dict(self.signature)}
        if len(self.reports) == 1 and not self.differences:
            return {"project": self.project, "layer": self.layer, **self.reports[0].to_dict(), **judge, **skipped}
        return {"project": self.project, "layer": self.layer, **judge, **skipped,
                "systems": {r.system: r.to_dict() for r in self.reports},
                "differences": [{"a": a, "b": b, "targets": {t: {"estimate": d.estimate, "ci": list(d.ci),
                                                                 "classical_ci": list(d.classical_ci),
                                                                 "design": d.design, "pairs": d.pairs}
                                                             for t, d in diffs.items()}}
                                for (a, b), diffs in self.differences.items()]}


def estimate_project(project, layer: JudgementLayer, *, systems: list[str] | None = None, alpha: float = 0.05,
                     types="all", finite_population: bool = True, pairs: list[tuple[str, str]] = (),
                     scored: dict[str, SystemCaptions] | None = None,
                     draws: dict[str, list[RecordedDraw]] | None = None,
                     skip_unlabelled: bool | None = None, judge=None) -> ProjectEstimates:
    """Estimate every (or the given) system of a loaded project from a built layer.

    ``pairs`` lists (A, B) system pairs whose differences A - B are computed.
    ``scored`` is :func:`project_detections` of the project when it was computed
    before (the detectors depend on the captions and references only).
    ``draws`` (:func:`recorded_draws`) are the systems' recorded sample draws:
    a system that has any is estimated from them, weighted by the inverse
    inclusion probabilities; the others as a random sample.
    ``skip_unlabelled`` (default: when ``systems`` is not given) leaves out a
    system that cannot be estimated yet (fewer than two labels, draws without
    labels) instead of stopping, and names it in ``skipped``; a system of a
    pair is never skipped. ``judge`` (annotator.judges: a stored judge or the
    detectors) gives the predictor's scores; default the detectors.
    """
    check_alpha(alpha)
    for a, b in pairs:
        if a == b:
            raise InputError(f"compare two different systems, not {a!r} with itself", "--difference")
    skip = not systems if skip_unlabelled is None else skip_unlabelled
    known = project.systems
    chosen = list(dict.fromkeys(systems)) if systems else list(known)
    for s in chosen + [x for p in pairs for x in p]:
        if s not in known:
            raise NotFound(f"project {project.name!r} has no system {s!r}; systems: {', '.join(known) or 'none'}")
    scored = scored if scored is not None else project_detections(project)
    reports = []
    inputs: dict[str, tuple[SystemCaptions, HumanLabels]] = {}
    paired = {x for p in pairs for x in p}
    skipped: dict[str, str] = {}
    predictors = {}
    for s in dict.fromkeys(chosen + [x for p in pairs for x in p]):
        sc = scored[s]
        human = layer_labels(layer, sc.caption_ids)
        predictor = None if judge is None or judge.name == "detectors" else judge.scores_for(sc)
        try:
            if len(human.rows) < 2:
                raise InputError(f"layer {layer.name!r} labels {len(human.rows)} of the {len(sc.caption_ids)} "
                                 f"captions of system {s!r}; at least two are needed")
            if (draws or {}).get(s):
                human = replace(human, draws=draws_as_rows(sc.caption_ids, draws[s]))
            try:
                report = estimate_report(sc.detections, human, system=s, alpha=alpha, types=types,
                                         finite_population=finite_population, predictor=predictor)
            except ValueError as exc:
                if not human.draws:
                    raise
                raise InputError(f"system {s!r}, layer {layer.name!r}: {exc}") from None
        except InputError as exc:
            if not skip or s in paired:
                raise
            skipped[s] = exc.detail
            continue
        warning = None if human.draws else sample_warning(human, len(sc.caption_ids))
        note = f"{sc.practice_left_out} captions of practice items left out" if sc.practice_left_out else None
        reports.append(replace(report, warnings=report.warnings + ((warning,) if warning else ()),
                               notes=report.notes + ((note,) if note else ())))
        inputs[s] = (sc, human)
        if predictor is not None:
            predictors[s] = predictor
    if not reports:
        raise InputError(f"no system can be estimated from layer {layer.name!r}: "
                         + "; ".join(skipped.values()))
    out = ProjectEstimates(project.name, layer.name, tuple(reports), skipped=skipped, inputs=inputs,
                           judge="detectors" if judge is None else judge.name,
                           signature=dict(SIGNATURE if judge is None else judge.signature), predictors=predictors)
    for a, b in pairs:
        out.difference(a, b)
    return out


def _paired(ra: EstimateReport, rb: EstimateReport, ia: tuple[SystemCaptions, HumanLabels],
            ib: tuple[SystemCaptions, HumanLabels], target: str, sources) -> DifferenceEstimate | None:
    """The paired difference of one target, or None when the two samples are not on the same images."""
    (sa, ha), (sb, hb) = ia, ib
    if sa.items is None or sb.items is None or ha.draws or hb.draws or ha.weights is not None or hb.weights is not None:
        return None
    if len(sa.items) != len(sb.items) or len(np.unique(sa.items)) != len(sa.items) or \
            not np.array_equal(np.sort(sa.items), np.sort(sb.items)):
        return None  # not one caption per image of the same images

    def labelled(h: HumanLabels) -> np.ndarray:
        return np.ones(len(h.rows), dtype=bool) if target == INACCURATE else h.types_known

    ma, mb = labelled(ha), labelled(hb)
    if target != INACCURATE and not (ma.all() and mb.all()):
        return None  # types pending on one side: the type estimates are reweighted, the pairs would not be
    items_a, items_b = sa.items[ha.rows[ma]], sb.items[hb.rows[mb]]
    if len(items_a) < 2 or not np.array_equal(np.sort(items_a), np.sort(items_b)):
        return None
    oa, ob = np.argsort(items_a, kind="stable"), np.argsort(items_b, kind="stable")

    def labels(h: HumanLabels, mask: np.ndarray, order: np.ndarray) -> np.ndarray:
        y = h.inaccurate.astype(float) if target == INACCURATE else h.type_matrix([target])[:, 0]
        return y[mask][order]

    fa_all, fb_all = sources[0].score(target), sources[1].score(target)
    ea, eb = ra.target(target), rb.target(target)
    return paired_difference(labels(ha, ma, oa), fa_all[ha.rows[ma][oa]], fa_all[np.argsort(sa.items, kind="stable")],
                             ea.lam, labels(hb, mb, ob), fb_all[hb.rows[mb][ob]],
                             fb_all[np.argsort(sb.items, kind="stable")], eb.lam, alpha=ea.alpha,
                             finite_population=ea.finite_population,
                             sparse_of=(ea, eb) if ea.sparse or eb.sparse else None)


SCORE_FORMATS = {".csv": "csv", ".jsonl": "jsonl"}


def scores_file(frame: pd.DataFrame, fmt: str) -> bytes:
    """:meth:`ProjectEstimates.scores_frame` as a file: ``csv`` (the words as ``type: words | words; ...``, cells
    that a spreadsheet would run as formulas neutralised) or ``jsonl`` (one strict JSON object per caption, the
    words as an object of lists)."""
    import json

    from ..io.tables import write_table
    if fmt == "csv":
        flat = frame.assign(triggers=[
            "; ".join(f"{t}: {' | '.join(words)}" for t, words in trig.items()) for trig in frame["triggers"]])
        return write_table({"Scores": flat}, "csv")
    if fmt == "jsonl":
        lines = []
        for row in frame.to_dict(orient="records"):
            obj = {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
            lines.append(json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":")))
        return ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8", errors="replace")
    raise InputError(f"unknown scores format {fmt!r}; choose one of {', '.join(SCORE_FORMATS.values())}")


def score_format(path: str, source: str = "--scores") -> str:
    """The scores format a file name asks for (by its extension), or an :class:`InputError` naming ``source``."""
    import os
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in SCORE_FORMATS:
        raise InputError(f"the file name must end in {' or '.join(SCORE_FORMATS)}, got {path!r}", source)
    return SCORE_FORMATS[ext]


def estimate_store(store, project: str, layer: Layer | str, **kw) -> ProjectEstimates:
    """:func:`estimate_project` on a project read from the store, with the layer built from its judgements
    (``judge``: a judge object, annotator.judges.load_judge)."""
    from ..store.analysis_queries import judgement_frame
    from ..store.projects import load_project
    frame = judgement_frame(store, project, kinds=("annotation", "adjudication"))
    built = build_layer(frame, layer)
    if built.name.startswith("annotator:") and len(built) == 0:
        raise NotFound(f"{built.name.split(':', 1)[1]!r} has no judgements in project {project!r}")
    kw.setdefault("draws", recorded_draws(store, project))
    return estimate_project(load_project(store, project), built, **kw)


__all__ = ["ALPHA_RANGE", "check_alpha", "SCORE_FORMATS", "scores_file", "score_format", "SystemCaptions", "ProjectEstimates", "RecordedDraw", "project_detections", "recorded_draws", "draws_as_rows",
           "layer_labels", "sample_warning", "estimate_project", "estimate_store", "INACCURATE"]
