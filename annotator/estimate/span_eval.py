"""The detectors checked word by word: their trigger words as error spans, scored against the human spans.

The automatic detectors (:mod:`annotator.estimate.detectors`) name the words behind each score. Here
those words become token spans of the caption (whitespace-separated tokens, ``end`` exclusive, the
convention of :mod:`annotator.spans`), and :func:`evaluate_detectors` compares them with the spans of
one judgement layer (``annotator detectors evaluate``):

* token level, per type T over the captions the layer judged, except those where the layer gives T without
  marking its words (not localised: which words are wrong is unknown there, not "none"): ``tp`` = tokens both the detector and the
  layer mark with T, ``det`` = tokens the detector marks with T, ``human`` = tokens the layer marks with T;
  precision = tp / det, recall = tp / human, F1 = 2·tp / (det + human). Only the detector's flagged types
  (score ≥ the threshold) count, and only captions whose types the layer knows.
* caption level, per type T: a caption is predicted when the detector flags T and positive when the
  layer's judgement has T; precision and recall over the same captions.

An undefined ratio (nothing predicted, nothing to find) is None, shown as "—".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..spans import Span, caption_tokens, merge_spans
from ..taxonomy import taxonomy
from .detectors import INACCURATE, SCORE_COLUMNS, Detections
from .tokens import tokenise

#: A type is flagged when its score reaches this (what the Error estimates page and --scores call a flag).
FLAG_THRESHOLD = 0.5


def word_pieces(text: str) -> list[int]:
    """For each of the detectors' tokens of ``text`` (lower-cased, split at punctuation), the index of the
    whitespace-separated caption token it comes from."""
    owners: list[int] = []
    words = caption_tokens(text)
    if not words:
        return owners
    pieces = tokenise(words)
    counts = np.diff(pieces.start)
    for k, n in enumerate(counts.tolist()):
        owners.extend([k] * n)
    return owners


def trigger_spans(det: Detections, row: int, text: str, *, threshold: float = FLAG_THRESHOLD) -> tuple[Span, ...]:
    """The detector's trigger words of caption ``row`` (``text``: its caption) as token spans of the flagged
    types, merged per type."""
    owners = word_pieces(text)
    found = []
    for column, lo, hi in det.trigger_positions(row):
        if column == INACCURATE or det.scores[row, SCORE_COLUMNS.index(column)] < threshold:
            continue
        if hi <= lo or hi > len(owners):
            continue
        found.append(Span(owners[lo], owners[hi - 1] + 1, column))
    return merge_spans(found)


def flagged_types(det: Detections, row: int, *, threshold: float = FLAG_THRESHOLD) -> tuple[str, ...]:
    """The type ids the detectors flag on caption ``row``, in taxonomy order."""
    return tuple(t for j, t in enumerate(SCORE_COLUMNS) if t != INACCURATE and det.scores[row, j] >= threshold)


def detector_spans(store, project: str, *, systems=None, threshold: float = FLAG_THRESHOLD,
                   loaded=None) -> dict[str, list[tuple]]:
    """system → [(caption id, caption text, flagged types, trigger spans, inaccurate score), …] for every caption
    that is not a practice item. ``loaded``: the project and its detections already computed (what the Error
    estimates page keeps), as ``(project, annotator.estimate.project.project_detections(project))``."""
    from ..store.projects import load_project
    from .project import project_detections
    if loaded is None:
        proj = load_project(store, project)
        loaded = (proj, project_detections(proj))
    proj, scored = loaded
    texts = {c.caption_id: c.text for item in proj.items for c in item.captions}
    out: dict[str, list[tuple]] = {}
    for system, found in scored.items():
        if systems is not None and system not in systems:
            continue
        det = found.detections
        rows = []
        for row, cid in enumerate(found.caption_ids.tolist()):
            text = texts[cid]
            rows.append((cid, text, flagged_types(det, row, threshold=threshold),
                         trigger_spans(det, row, text, threshold=threshold), float(det.score(INACCURATE)[row])))
        out[system] = rows
    return out


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass(frozen=True)
class TypeScores:
    """One type's word-level and caption-level agreement of the detector with the layer."""

    type: str
    tokens_detector: int
    tokens_human: int
    tokens_both: int
    captions_detector: int
    captions_human: int
    captions_both: int
    not_localised: int = 0  # captions the layer gives this type without a span (left out of the token counts)

    @property
    def token_precision(self) -> float | None:
        return _ratio(self.tokens_both, self.tokens_detector)

    @property
    def token_recall(self) -> float | None:
        return _ratio(self.tokens_both, self.tokens_human)

    @property
    def token_f1(self) -> float | None:
        return _ratio(2 * self.tokens_both, self.tokens_detector + self.tokens_human)

    @property
    def caption_precision(self) -> float | None:
        return _ratio(self.captions_both, self.captions_detector)

    @property
    def caption_recall(self) -> float | None:
        return _ratio(self.captions_both, self.captions_human)

    def to_json(self) -> dict:
        return {"tokens": {"detector": self.tokens_detector, "human": self.tokens_human, "both": self.tokens_both,
                           "precision": self.token_precision, "recall": self.token_recall, "f1": self.token_f1},
                "captions": {"detector": self.captions_detector, "human": self.captions_human,
                             "both": self.captions_both, "precision": self.caption_precision,
                             "recall": self.caption_recall},
                "not_localised": self.not_localised}


@dataclass(frozen=True)
class DetectorEvaluation:
    """The detectors against one layer's spans: per type, word level and caption level (compute once, read many:
    the command line and the Error estimates page print this object)."""

    project: str
    layer: str
    systems: tuple[str, ...]
    captions: int                   # captions the layer judged with known types (skips and open types left out)
    captions_with_spans: int        # of those, captions the layer marked any span on
    threshold: float
    per_type: dict[str, TypeScores] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"detectors": {"project": self.project, "layer": self.layer, "systems": list(self.systems),
                              "captions": self.captions, "captions_with_spans": self.captions_with_spans,
                              "threshold": self.threshold,
                              "per_type": {t: s.to_json() for t, s in self.per_type.items()}}}

    def summary(self) -> dict:
        """What ``--json`` prints (:meth:`to_json`)."""
        return self.to_json()

    def to_tables(self) -> dict:
        """One table, "Detectors" (for annotator.io.tables.write_table)."""
        return {"Detectors": self.table()}

    def table(self):
        """One row per type: tokens and captions with precision, recall, F1 (None where undefined)."""
        import pandas as pd
        tax = taxonomy()
        rows = [{"type": t, "name": tax.get(t).name, "detector tokens": s.tokens_detector,
                 "human tokens": s.tokens_human, "both": s.tokens_both, "token P": s.token_precision,
                 "token R": s.token_recall, "token F1": s.token_f1, "caption P": s.caption_precision,
                 "caption R": s.caption_recall, "not localised": s.not_localised}
                for t, s in self.per_type.items()]
        return pd.DataFrame(rows, columns=["type", "name", "detector tokens", "human tokens", "both", "token P",
                                           "token R", "token F1", "caption P", "caption R",
                                           "not localised"])


def tally(rows, human_types: dict[int, tuple[str, ...]], human_spans: dict[int, tuple[Span, ...]],
          type_ids=None) -> tuple[int, int, dict[str, TypeScores]]:
    """Count the detector's flags and spans against a layer's types and spans (see the module's rules).

    ``rows``: (caption id, text, flagged types, trigger spans, score) as :func:`detector_spans` gives them;
    ``human_types``: caption id → the layer's types (captions it did not judge, or left open, are absent);
    ``human_spans``: caption id → the layer's spans. Returns (captions judged, of them with spans, per type).
    """
    ids = tuple(type_ids or taxonomy().ids)
    counts = {t: [0, 0, 0, 0, 0, 0, 0] for t in ids}
    judged = with_spans = 0
    for cid, _text, flagged, det_spans, _score in rows:
        if cid not in human_types:
            continue
        judged += 1
        spans = human_spans.get(cid, ())
        with_spans += bool(spans)
        det_tokens = {t: set() for t in ids}
        for s in det_spans:
            det_tokens[s.type].update(s.tokens())
        hum_tokens = {t: set() for t in ids}
        for s in spans:
            if s.type in hum_tokens:
                hum_tokens[s.type].update(s.tokens())
        for t in ids:
            c = counts[t]
            predicted, positive = t in flagged, t in human_types[cid]
            c[3] += predicted
            c[4] += positive
            c[5] += predicted and positive
            if positive and not hum_tokens[t]:
                c[6] += 1  # the layer says T without pointing at words: its tokens are unknown, not none
                continue
            c[0] += len(det_tokens[t])
            c[1] += len(hum_tokens[t])
            c[2] += len(det_tokens[t] & hum_tokens[t])
    return judged, with_spans, {t: TypeScores(t, *c) for t, c in counts.items() if any(c)}


def evaluate_detectors(store, project: str, layer, *, systems=None, threshold: float = FLAG_THRESHOLD,
                       loaded=None) -> DetectorEvaluation:
    """Score the detectors' trigger spans and flags against ``layer``'s spans and types (see the module)."""
    from ..correction.span_rule import layer_spans
    from ..layers import build_layer, masks_to_ids, parse_layer
    from ..store.analysis_queries import judgement_frame
    layer = parse_layer(layer)
    frame = judgement_frame(store, project, kinds=("annotation", "adjudication"))
    built = build_layer(frame, layer)
    human_types = {int(c): (masks_to_ids(int(m), built.type_ids) if inacc else ())
                   for c, m, inacc, known in zip(built.caption_ids.tolist(), built.types.tolist(),
                                                 built.inaccurate.tolist(), built.types_known.tolist()) if known}
    human_spans = layer_spans(store, project, None, layer, frame=frame)
    found = detector_spans(store, project, systems=systems, threshold=threshold, loaded=loaded)
    judged, with_spans, per_type = tally([row for rows in found.values() for row in rows], human_types, human_spans)
    return DetectorEvaluation(project, layer.label, tuple(found), judged, with_spans, threshold, per_type)
