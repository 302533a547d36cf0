"""Rescoring glue: a project's references, a system's captions and its corrections → score tables.

This module joins the store, the correction sets of :mod:`annotator.correction`
and the metrics of :mod:`annotator.metrics`:

* :func:`by_type_table` — the error-analysis study's Table 3 for one system:
  the baseline scores, then one row per corrected error type with only that
  type's corrections applied (every other caption as generated), then one row
  with all corrections merged (see :func:`annotator.correction.merge_corrections`).
  That last row (:data:`ALL_CORRECTIONS_ROW`) is an addition of this tool, not
  a row of the study, and is labelled so wherever it appears
  (:data:`ALL_CORRECTIONS_NOTE`).
  Every Δ comes with a paired-bootstrap 95% interval and p-value. It is the
  core of ``annotator rescore --by-type`` and of the rescoring page.
* :func:`rescore_lines` — score any line-aligned caption file against the
  project's references (line *i* is a system's caption line *i*, or the
  project's *i*-th item) and compare it with that system (same bootstrap).
* :class:`LiveDelta` — the running score change of one type's corrections on
  the correction page, kept up to date with the metrics' incremental scorer
  instead of a full rescore per save.

Scores are the metrics' own values (BLEU, METEOR, ROUGE-L in [0, 1], CIDEr-D
in [0, 10]), under their score keys (coco-caption's names ``Bleu_1`` …
``Bleu_4``, ``METEOR``, ``ROUGE_L``, ``CIDEr``), which, with their labels and
order, come from :data:`annotator.metrics.REGISTRY`; pages and exported
tables multiply by 100. Captions of items without references cannot be
scored; they are left out and counted in ``meta.skipped_lines``. A metric
that cannot run here (METEOR without Java) is left out and
``meta.unavailable`` says why; the other metrics are reported.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pandas as pd

from .correction import CorrectionSet, correction_set
from .errors import InputError
from .layers import optional_layer
from .metrics.bootstrap import DEFAULT_RESAMPLES
from .metrics.registry import REGISTRY
from .model import FieldAccess
from .taxonomy import taxonomy

#: Label of the by-type table's last row: every type's corrections applied together.
ALL_CORRECTIONS_ROW = "All corrections (tool's addition)"
#: The footnote that goes with it (text output, JSON ``meta.all_corrections``, page, export captions).
ALL_CORRECTIONS_NOTE = (
    "All corrections (tool's addition): not a row of the error-analysis study, which corrects one error type at "
    "a time and leaves the combined effect open, because fixing every error of a caption drifts from correcting "
    "the model towards rewriting it. Here every type's corrections are applied together; where two types change "
    "the same words, the type first in the taxonomy is kept.")


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class DeltaRow(FieldAccess):
    """One row of a Δ table: scores of the corrected captions, Δ against the baseline, how many
    captions changed, each Δ's paired-bootstrap 95% interval ``ci[m] = [low, high]`` and p-value."""

    scores: dict[str, float]
    delta: dict[str, float]
    changed: int
    ci: dict[str, list[float]]
    p: dict[str, float]


@dataclass(frozen=True)
class ByTypeMeta(FieldAccess):
    """How a by-type table was made: options, what was left out and why."""

    all_corrections: str
    project: str
    system: str
    layer: str | None
    correctors: list[str] | None
    resamples: int
    seed: int
    tokenize: str
    signatures: dict[str, str]
    metrics: list[str]
    unavailable: str | None
    scored: int
    skipped_lines: list[int]
    untouched: dict[str, int]
    conflicts: list[dict]
    overrides: list[dict]
    dropped: int
    #: How many counted corrections of each type passed only by override (a reason), taxonomy order.
    overrides_by_type: dict[str, int]
    #: Which corrections the table counts, in one sentence (the layer that decided, or none).
    layer_note: str

    def overrides_note(self) -> str | None:
        """One sentence on the corrections saved past a guard, per type (None when there are none)."""
        if not self.overrides:
            return None
        per = ", ".join(f"{taxonomy().get(t).name} {n}" for t, n in self.overrides_by_type.items())
        return f"{len(self.overrides)} correction(s) were saved past a guard, with a reason ({per})."

    def notes(self) -> list[str]:
        """Sentences on what the table settled or left out: corrections of several types on one caption, corrections
        saved past a guard, captions without references (none when there is nothing to say)."""
        notes = []
        if self.conflicts:
            notes.append(f"{len(self.conflicts)} caption(s) had overlapping corrections of several types; "
                         "'All corrections' keeps the type that comes first in the taxonomy.")
        if self.overrides:
            notes.append(self.overrides_note())
        if self.skipped_lines:
            notes.append(f"{len(self.skipped_lines)} caption(s) have no references and were not scored.")
        return notes


@dataclass(frozen=True)
class ByTypeTable(FieldAccess):
    """The study's Table 3 for one system (see :func:`by_type_table`): baseline scores, one
    :class:`DeltaRow` per corrected type (taxonomy order), the all-corrections row and the settings."""

    baseline: dict[str, float]
    types: dict[str, DeltaRow]
    all: DeltaRow
    meta: ByTypeMeta


@dataclass(frozen=True)
class LiveScores(FieldAccess):
    """The live Δ of one type's corrections: score keys shown, the metric tokenisation, baseline and current scores,
    Δ = current − baseline, captions changed, and a note on metrics that cannot run (or None)."""

    metrics: list[str]
    tokenize: str
    baseline: dict[str, float]
    scores: dict[str, float]
    delta: dict[str, float]
    changed: int
    unavailable: str | None


# --------------------------------------------------------------------------- data

@dataclass
class ScoringData:
    """Captions of one system lined up with their references.

    ``lines[k]`` is the system line scored at position k; lines whose item has
    no reference are in ``skipped_lines`` and not scored.
    """

    project: str
    system: str
    refs: list[list[str]]
    lines: list[int]
    skipped_lines: list[int] = field(default_factory=list)

    def pick(self, hyps_by_line: list[str]) -> list[str]:
        """The scored subset of a full caption list (indexed by line)."""
        return [hyps_by_line[line] for line in self.lines]


def scoring_data(store, project: str, system: str) -> ScoringData:
    """References of every caption of ``system`` (line order)."""
    from .store.correction_queries import project_references
    from .store.projects import captions_of_system, project_id
    with store.read() as conn:
        pid = project_id(conn, project)
        caps = captions_of_system(conn, pid, system)
        refs = project_references(conn, pid)
    data = ScoringData(project, system, [], [])
    for c in caps:
        r = refs.get(c.item_id)
        if r:
            data.refs.append(r)
            data.lines.append(c.line_no)
        else:
            data.skipped_lines.append(c.line_no)
    if not data.lines:
        raise InputError(f"no caption of system {system!r} in project {project!r} has references to score against")
    return data


def available_metrics(keys=None) -> tuple[tuple[str, ...], str | None]:
    """The requested score keys that can be computed here, and a note on the metrics that cannot run.

    ``keys`` are score keys (default: those of the default metrics, in table
    order); an unknown one is an InputError. A metric that cannot run here
    (METEOR without Java) is dropped with its reason in the note.
    """
    keys = tuple(keys or REGISTRY.score_keys(REGISTRY.defaults()))
    missing = REGISTRY.unavailable(REGISTRY.metrics_of_scores(keys))
    if not missing:
        return keys, None
    dropped = set(REGISTRY.score_keys(missing))
    note = "; ".join(missing.values()) + f"; the other metrics are reported without {'it' if len(missing) == 1 else 'them'}."
    return tuple(k for k in keys if k not in dropped), note


def _metric_names(keys) -> list[str]:
    return list(REGISTRY.metrics_of_scores(keys))


def _settle(keys, values: dict, notes, note: str | None) -> tuple[tuple[str, ...], str | None]:
    """Drop keys the metrics could not compute (value None) and gather the reason."""
    missing = [k for k in keys if values.get(k) is None]
    if missing:
        extra = "; ".join(notes) if notes else f"{', '.join(missing)} could not be computed"
        note = f"{note} {extra}".strip() if note else extra
    return tuple(k for k in keys if k not in missing), note


# --------------------------------------------------------------------------- the by-type table

def by_type_table(store, project: str, system: str, *, layer=None, correctors: list[str] | None = None,
                  resamples: int = DEFAULT_RESAMPLES, seed: int = 0, metrics=None, tokenize: str | None = None,
                  corrections: CorrectionSet | None = None) -> ByTypeTable:
    """Table 3 for one system, as a :class:`ByTypeTable` (its JSON form has the same field names).

    ``baseline`` {metric: score}; ``types`` {type_id: :class:`DeltaRow`};
    ``all`` a DeltaRow with every type's corrections merged; ``meta`` a
    :class:`ByTypeMeta` (project, system, layer, correctors, resamples, seed,
    metrics, unavailable, skipped_lines, untouched, conflicts, overrides, dropped).

    Types appear in taxonomy order and only when they have at least one
    correction that changes a caption. ``layer`` ('adjudicated' or
    'annotator:NAME') keeps only corrections whose type that layer gives the
    caption; without one, :func:`annotator.correction.default_layer` chooses
    (adjudicated, else the one annotator; InputError with several annotators
    and no adjudication; every correction counts when nobody judged the
    system); ``correctors`` keeps only these users' corrections (when
    several users corrected one caption for one type, the latest counts).
    The bootstrap resamples captions with replacement (``resamples`` times,
    ``seed``ed) and re-aggregates corpus scores for baseline and variant on
    the same resample; see :func:`annotator.metrics.delta_table`. ``metrics``
    limits the score keys (default: the default metrics'); ``tokenize``
    is passed to the metrics ("none": raw text, "ptb": coco-caption's
    tokenizer; None: the project's setting, see :mod:`annotator.metric_settings`);
    ``meta`` records the mode and every metric's signature.
    """
    from .metric_settings import resolve_tokenize
    from .metrics import delta_table
    if resamples < 1:
        raise InputError("the bootstrap needs at least one resample")
    from .correction import default_layer
    layer = optional_layer(layer)
    if layer is None and corrections is None:
        # Corrections count only for captions the layer tags with their type (the study corrects only those).
        layer = default_layer(store, project, system)
    tokenize = resolve_tokenize(store, project, tokenize)
    data = scoring_data(store, project, system)
    cs = corrections if corrections is not None else correction_set(store, project, system, layer=layer, correctors=correctors)
    keys, note = available_metrics(metrics)
    variants = {t: data.pick(cs.variant(t)) for t in cs.types}
    base = data.pick(cs.baseline)
    variants = {t: v for t, v in variants.items() if v != base}  # corrections only on unscored lines
    all_hyps = data.pick(cs.all_variant())
    table = delta_table(base, data.refs, variants, seed=seed, resamples=resamples, metrics=_metric_names(keys),
                        combined=all_hyps, tokenize=tokenize)
    keys, note = _settle(keys, table["baseline"], table.get("notes"), note)
    return ByTypeTable(
        baseline={m: float(table["baseline"][m]) for m in keys},
        types={t: _row(table["types"][t], keys) for t in variants},
        all=_row(table["all"], keys),
        meta=ByTypeMeta(all_corrections=ALL_CORRECTIONS_NOTE, project=project, system=system,
                        layer=layer.label if layer else None, correctors=list(correctors) if correctors else None,
                        resamples=resamples, seed=seed, tokenize=tokenize, signatures=table["signatures"],
                        metrics=list(keys), unavailable=note, scored=len(data.lines), skipped_lines=data.skipped_lines,
                        untouched=dict(cs.untouched), conflicts=cs.conflicts, overrides=cs.overrides,
                        dropped=cs.dropped, overrides_by_type=_overrides_by_type(cs.overrides),
                        layer_note=_layer_note(layer.label if layer else None, cs.dropped)),
    )


def _overrides_by_type(overrides: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for o in overrides:
        counts[o["error_type"]] = counts.get(o["error_type"], 0) + 1
    order = {t: k for k, t in enumerate(taxonomy().ids)}
    return dict(sorted(counts.items(), key=lambda kv: order.get(kv[0], len(order))))


def _layer_note(layer: str | None, dropped: int) -> str:
    if layer is None:
        return "Nobody judged these captions: every stored correction counts."
    return f"Corrections count only for captions whose judgement in the layer '{layer}' carries their type ({dropped} left out)."


def _row(block: dict, keys) -> DeltaRow:
    return DeltaRow(scores={m: float(block["scores"][m]) for m in keys},
                    delta={m: float(block["delta"][m]) for m in keys},
                    changed=int(block["changed"]),
                    ci={m: [float(block["ci"][m][0]), float(block["ci"][m][1])] for m in keys},
                    p={m: float(block["p"][m]) for m in keys})


def table_frame(result: ByTypeTable, *, scale: float = 100.0, with_ci: bool = True) -> pd.DataFrame:
    """The by-type result as a display/export table: one row per baseline / type / all.

    Columns: ``row``, ``error_type`` (id; empty for baseline and all),
    ``changed``, then per metric ``<label>``, ``<label> Δ`` and (with
    ``with_ci``) ``<label> Δ low``, ``<label> Δ high``, ``<label> p``. Scores,
    Δs and intervals are multiplied by ``scale`` (×100 like published tables).
    """
    metrics = [m for m in REGISTRY.score_keys() if m in result.baseline]
    labels = REGISTRY.score_labels()
    rows = []
    base = {"row": "Baseline", "error_type": "", "changed": 0}
    nan = float("nan")  # no Δ for the baseline: an empty cell in every export
    for m in metrics:
        lab = labels[m]
        base[lab] = result.baseline[m] * scale
        base[f"{lab} Δ"] = nan
        if with_ci:
            base[f"{lab} Δ low"] = base[f"{lab} Δ high"] = base[f"{lab} p"] = nan
    rows.append(base)
    named = [(taxonomy().get(t).name, t, r) for t, r in result.types.items()]
    named.append((ALL_CORRECTIONS_ROW, "", result.all))
    for name, tid, r in named:
        row = {"row": name, "error_type": tid, "changed": int(r.changed)}
        for m in metrics:
            lab = labels[m]
            row[lab] = r.scores[m] * scale
            row[f"{lab} Δ"] = r.delta[m] * scale
            if with_ci:
                row[f"{lab} Δ low"] = r.ci[m][0] * scale
                row[f"{lab} Δ high"] = r.ci[m][1] * scale
                row[f"{lab} p"] = r.p[m]
        rows.append(row)
    return pd.DataFrame(rows)


def format_by_type(result: ByTypeTable) -> str:
    """A readable text form of :func:`by_type_table`: scores ×100 with Δ, then each Δ's 95% interval and p."""
    metrics = [m for m in REGISTRY.score_keys() if m in result.baseline]
    labels = REGISTRY.score_labels()
    from .metric_settings import tokenize_header
    rows = [(taxonomy().get(t).name, r) for t, r in result.types.items()] + [(ALL_CORRECTIONS_ROW, result.all)]
    w = max(len(n) for n, _ in rows + [("Baseline", None)]) + 2
    meta = result.meta
    lines = [f"{meta.project} / {meta.system}; {tokenize_header(meta.tokenize)}",
             f"{'':{w}}{'changed':>8}" + "".join(f"{labels[m]:>16}" for m in metrics),
             f"{'Baseline':{w}}{'':>8}" + "".join(f"{100 * result.baseline[m]:>16.2f}" for m in metrics)]
    for name, r in rows:
        cells = ["{:.2f} ({:+.2f})".format(100 * r.scores[m], 100 * r.delta[m]) for m in metrics]
        lines.append(f"{name:{w}}{r.changed:>8}" + "".join(f"{c:>16}" for c in cells))
    lines.append(ALL_CORRECTIONS_NOTE)
    lines.append(result.meta.layer_note)
    lines.append("")
    lines.append(f"Paired bootstrap ({meta.resamples} resamples, seed {meta.seed}): Δ ×100 [95% interval] p")
    for name, r in rows:
        cells = [f"{labels[m]} {100 * r.delta[m]:+.2f} [{100 * r.ci[m][0]:+.2f}, {100 * r.ci[m][1]:+.2f}] p={r.p[m]:.3f}"
                 for m in metrics]
        lines.append(f"  {name}: " + "; ".join(cells))
    if meta.unavailable:
        lines.append(meta.unavailable)
    lines += meta.notes()
    lines += [f"  {sig}" for sig in meta.signatures.values()]
    return "\n".join(lines)


# --------------------------------------------------------------------------- any caption file

def rescore_lines(store, project: str, captions: list[str], *, system: str | None = None, compare: bool = True,
                  source: str = "captions", resamples: int = DEFAULT_RESAMPLES, seed: int = 0, metrics=None,
                  tokenize: str | None = None) -> dict:
    """Score a line-aligned caption list against the project's references.

    With ``system``, line *i* stands for that system's caption line *i* (as in
    ``annotator rescore --captions``) and, with ``compare``, the file is also
    compared with the system's own captions (paired bootstrap, Δ = file −
    system). Without ``system``, line *i* is the project's *i*-th item
    (import order). The list must have exactly one line per caption/item
    (InputError naming ``source`` otherwise); blank lines are refused with
    their line number. Items without references are left out.

    Returns ``{"scores": {m: s}, "n": scored, "skipped": [0-based lines],
    "aligned_to": system or None, "compare": None | {"system", "baseline",
    "delta", "ci", "p", "changed"}, "unavailable": note, "tokenize": mode,
    "signatures": {metric: signature}}``; ``tokenize`` None is the project's
    setting.
    """
    from .metric_settings import resolve_tokenize
    from .metrics import delta_table, rescore
    tokenize = resolve_tokenize(store, project, tokenize)
    from .store.correction_queries import project_items_in_order, project_references
    from .store.projects import captions_of_system, project_id
    with store.read() as conn:
        pid = project_id(conn, project)
        refs = project_references(conn, pid)
        if system is not None:
            rows = captions_of_system(conn, pid, system)
            slots = [(r.item_id, r.text) for r in rows]
            what = f"system {system!r} has {len(rows)} captions"
        else:
            slots = [(r.id, None) for r in project_items_in_order(conn, pid)]
            what = f"project {project!r} has {len(slots)} items"
    if len(captions) != len(slots):
        raise InputError(f"{len(captions)} lines but {what}; give exactly one caption per line, in that order",
                         source, min(len(captions), len(slots)) + 1)
    for n, text in enumerate(captions, start=1):
        if not text.strip():
            raise InputError("empty caption", source, n)
    keep = [k for k, (item_id, _) in enumerate(slots) if refs.get(item_id)]
    skipped = [k for k, (item_id, _) in enumerate(slots) if not refs.get(item_id)]
    if not keep:
        raise InputError(f"no item of project {project!r} has references to score against", source)
    hyps = [captions[k] for k in keep]
    rr = [refs[slots[k][0]] for k in keep]
    keys, note = available_metrics(metrics)
    out = {"n": len(keep), "skipped": skipped, "aligned_to": system, "compare": None, "tokenize": tokenize}
    if system is None or not compare:
        scores = rescore(hyps, rr, metrics=_metric_names(keys), tokenize=tokenize)
        keys, note = _settle(keys, scores, scores.get("notes"), note)
        return {"scores": {m: float(scores[m]) for m in keys}, **out, "unavailable": note,
                "signatures": scores["signatures"]}
    base = [slots[k][1] for k in keep]
    table = delta_table(base, rr, {"file": hyps}, seed=seed, resamples=resamples, metrics=_metric_names(keys),
                        combined=False, tokenize=tokenize)
    keys, note = _settle(keys, table["baseline"], table.get("notes"), note)
    row = _row(table["types"]["file"], keys)
    out["compare"] = {"system": system, "baseline": {m: float(table["baseline"][m]) for m in keys},
                      "delta": row.delta, "ci": row.ci, "p": row.p, "changed": row.changed}
    return {"scores": row.scores, **out, "unavailable": note, "signatures": table["signatures"]}


# --------------------------------------------------------------------------- live Δ while correcting

class LiveDelta:
    """Running score change of one error type's corrections of one system.

    Built once (a full score of the system), then kept current by
    :meth:`apply` after each save and :meth:`sync` against the store, both of
    which rescore only the captions that changed (the metrics' incremental
    scorer). The corrections counted are the current ones of the type (the
    latest per caption across users), restricted to ``layer`` when given —
    the same set the rescoring table uses with those options. ``metrics``
    are score keys (default: each default metric's headline, e.g. BLEU-4); ``tokenize``
    None is the project's metric tokenisation.
    """

    def __init__(self, store, project: str, system: str, error_type: str, *, layer=None,
                 correctors: list[str] | None = None, metrics=None, tokenize: str | None = None):
        from .metric_settings import resolve_tokenize
        from .metrics import IncrementalScorer
        taxonomy().get(error_type)
        self.project, self.system, self.error_type = project, system, error_type
        self.layer = optional_layer(layer)
        self.correctors = correctors
        self.tokenize = resolve_tokenize(store, project, tokenize)
        self.data = scoring_data(store, project, system)
        keys, note = available_metrics(metrics or REGISTRY.headline_keys(REGISTRY.defaults()))
        cs = correction_set(store, project, system, types=[error_type])
        self._baseline_text = list(cs.baseline)
        self._index = {line: k for k, line in enumerate(self.data.lines)}
        self._scorer = IncrementalScorer(self.data.pick(cs.baseline), self.data.refs, metrics=_metric_names(keys),
                                         tokenize=self.tokenize)
        base = self._scorer.scores()
        self.metrics, self.unavailable = _settle(keys, base, self._scorer.notes, note)
        self.baseline = {m: float(base[m]) for m in self.metrics}
        self._applied: dict[int, str] = {}
        self._lock = threading.Lock()
        self._version = None
        self.sync(store)

    def apply(self, line_no: int, text: str | None) -> None:
        """Use ``text`` for caption ``line_no`` (None: back to the generated caption)."""
        with self._lock:
            self._apply(line_no, text)

    def _apply(self, line_no: int, text: str | None) -> None:
        k = self._index.get(line_no)
        if k is None:
            return  # no references: not scored
        if text is None or text == self._baseline_text[line_no]:
            if line_no in self._applied:
                self._scorer.revert(k)
                del self._applied[line_no]
            return
        if self._applied.get(line_no) != text:
            self._scorer.replace(k, text)
            self._applied[line_no] = text

    def sync(self, store, *, force: bool = False) -> None:
        """Bring the scorer in line with the stored corrections (rescoring only what differs).

        Skipped when no judgement or correction of the project was saved since the last sync.
        """
        from .correction import state_version
        version = state_version(store, self.project)
        if version == self._version and not force:
            return
        cs = correction_set(store, self.project, self.system, layer=self.layer, correctors=self.correctors,
                            types=[self.error_type])
        wanted = cs.by_type.get(self.error_type, {})
        with self._lock:
            self._version = version
            for line in list(self._applied):
                if line not in wanted:
                    self._apply(line, None)
            for line, text in wanted.items():
                self._apply(line, text)

    def delta(self) -> LiveScores:
        """The :class:`LiveScores` of the current state."""
        with self._lock:
            raw = self._scorer.scores()
            scores = {m: float(raw[m]) for m in self.metrics if raw.get(m) is not None}
            changed = len(self._applied)
        return LiveScores(metrics=list(self.metrics), tokenize=self.tokenize, baseline=dict(self.baseline), scores=scores,
                          delta={m: scores[m] - self.baseline[m] for m in scores}, changed=changed,
                          unavailable=self.unavailable)
