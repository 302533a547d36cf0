"""What a judge says about captions, and the one interface every judge is read through.

A *judge* is anything that gives captions a probability of being inaccurate, and perhaps error-type
probabilities and error spans: a vision-language model asked k times (its vote fractions), an imported file of
another tool's outputs, or the product's own word-list detectors. Two kinds, one interface:

* :class:`JudgeOutputs`: a stored judge (``annotator import judge``, ``annotator judge run``), its
  :class:`JudgeOutput` per caption and its signature (model, prompt version, k, …);
* :class:`DetectorJudge`: the built-in detectors (:mod:`annotator.estimate.detectors`), named ``detectors``.

Both give :meth:`scores_for` (a :class:`JudgeScores` matrix over a system's captions, what prediction-powered
inference reads) and :meth:`outputs_for` (per caption, what calibration against the humans reads).

Types a judge scores: every type that appears in the ``types`` of one of its outputs (the detectors: every type
with a detector). In an output that gives ``types``, a scored type it leaves out has probability 0. A caption
the judge has no output for, or no types for, is *missing* there: its score is the judge's mean score over the
system's other captions, a fixed value that does not read the human labels, so the estimates stay unbiased
(they just gain less from the judge); the report says how many are missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..spans import Span, caption_tokens, decode_spans, encode_spans
from ..taxonomy import taxonomy

#: The built-in detectors' name as a judge; no stored judge may take it.
DETECTORS = "detectors"
#: The overall target: the caption is inaccurate (the detectors' name for it too).
INACCURATE = "inaccurate"
#: A judge flags a caption inaccurate, or a type, at this probability or above.
THRESHOLD = 0.5


def check_judge_name(name, source=None, location=None) -> str:
    """A judge's name as stored (a name like a system's); ``detectors`` is the built-in judge's and refused."""
    from ..names import clean_name
    from ..store.schema import judges
    clean = clean_name(name, "judge name", source, location, max_len=judges.c.name.type.length)
    if clean.casefold() == DETECTORS:
        raise InputError(f"{DETECTORS!r} is the built-in detectors' name; choose another name for this judge",
                         source, location)
    return clean


def signature_text(signature: dict) -> str:
    """A judge's signature in one line: ``model M, prompt P, k 5, temperature 1`` (every setting it has)."""
    order = ["model", "prompt", "k"]
    keys = [k for k in order if k in signature] + sorted(k for k in signature if k not in order)
    return ", ".join(f"{k} {signature[k]}" for k in keys) or "no signature"


@dataclass(frozen=True)
class JudgeOutput:
    """A judge's output for one caption: P(inaccurate), type probabilities (None: none given), spans, replies."""

    caption_id: int
    p_inaccurate: float
    types: dict[str, float] | None = None
    spans: tuple[Span, ...] = ()
    answers: tuple | None = None

    @property
    def inaccurate(self) -> bool:
        """The judge's decision: inaccurate at :data:`THRESHOLD` or above."""
        return self.p_inaccurate >= THRESHOLD

    def flagged(self) -> tuple[str, ...]:
        """The types the judge gives at :data:`THRESHOLD` or above, in taxonomy order."""
        if not self.types:
            return ()
        return taxonomy().in_order(t for t, p in self.types.items() if p >= THRESHOLD)

    def row(self) -> tuple:
        """The stored form (annotator.store.judges.OutputRow)."""
        types = None if self.types is None else json.dumps(
            {t: self.types[t] for t in taxonomy().in_order(self.types)}, separators=(",", ":"), allow_nan=False)
        # escaped: a reply may hold characters (an unpaired surrogate) that no database text column takes raw
        answers = None if self.answers is None else json.dumps(list(self.answers), ensure_ascii=True,
                                                                separators=(",", ":"), allow_nan=False)
        return (self.caption_id, float(self.p_inaccurate), types, encode_spans(self.spans), answers)

    @classmethod
    def from_row(cls, row) -> "JudgeOutput":
        """From the stored form."""
        cid, p, types, spans, answers = row
        return cls(int(cid), float(p), None if types is None else json.loads(types), decode_spans(spans),
                   None if answers is None else tuple(json.loads(answers)))


class _Triggers:
    """The words behind a judge's scores of some captions: its spans' words per flagged type."""

    def __init__(self, per_caption: list[dict[str, list[str]]]):
        self.per_caption = per_caption

    def triggers(self, i: int) -> dict[str, list[str]]:
        return self.per_caption[i]


def span_words(spans, text: str) -> dict[str, list[str]]:
    """Type → the caption words each of its spans covers (``text``: the caption)."""
    words = caption_tokens(text)
    out: dict[str, list[str]] = {}
    for s in sorted(spans or ()):
        out.setdefault(s.type, []).append(" ".join(words[s.start:s.end]))
    return out


@dataclass(frozen=True)
class JudgeScores:
    """A judge's scores of one system's captions, one row per caption (compute once, read many times).

    ``scores[i, j]`` is caption ``i``'s probability for column ``columns[j]`` (the taxonomy's types, then
    ``inaccurate``): a column the judge does not score is all zeros, which makes prediction-powered
    inference give exactly the classical interval there; a missing value is the judge's mean over the captions
    it scored (``missing`` marks them). ``triggers(i)`` gives the words behind caption i's scores.
    """

    name: str
    columns: tuple[str, ...]
    scores: np.ndarray
    scored: frozenset
    missing: np.ndarray
    _words: object = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return self.scores.shape[0]

    def score(self, column: str) -> np.ndarray:
        """Scores of every caption for one type id (or ``"inaccurate"``)."""
        return self.scores[:, self.columns.index(column)]

    def scores_column(self, column: str) -> bool:
        """True when the judge scores ``column`` (otherwise its estimate is the classical one)."""
        return column in self.scored

    def missing_count(self, column: str) -> int:
        """Captions the judge gave no score for ``column`` (scored with its mean instead)."""
        return int(self.missing[:, self.columns.index(column)].sum()) if column in self.scored else 0

    def triggers(self, i: int) -> dict[str, list[str]]:
        """The words behind caption ``i``'s scores: ``{type id: [words, ...]}``."""
        return self._words.triggers(i) if self._words is not None else {}


def score_columns() -> tuple[str, ...]:
    """The score columns of every judge: the taxonomy's types, then ``inaccurate``."""
    return tuple(taxonomy().ids) + (INACCURATE,)


@dataclass(frozen=True)
class JudgeOutputs:
    """A stored judge: its name, signature, where its outputs came from and its outputs by caption id."""

    name: str
    signature: dict
    outputs: dict[int, JudgeOutput]
    source: str = ""

    @property
    def scored_types(self) -> tuple[str, ...]:
        """The types the judge scores (in any of its outputs), taxonomy order."""
        seen = {t for o in self.outputs.values() if o.types for t in o.types}
        return taxonomy().in_order(seen)

    def scores_for(self, captions) -> JudgeScores:
        """:class:`JudgeScores` over a system's captions (an ``annotator.estimate.project.SystemCaptions``, or
        anything with ``caption_ids`` and ``texts``)."""
        ids = np.asarray(captions.caption_ids, dtype=np.int64)
        cols = score_columns()
        scored = set(self.scored_types) | {INACCURATE}
        values = np.full((len(ids), len(cols)), np.nan)
        words = []
        texts = getattr(captions, "texts", None)
        for i, cid in enumerate(ids.tolist()):
            out = self.outputs.get(cid)
            if out is None:
                words.append({})
                continue
            values[i, -1] = out.p_inaccurate
            if out.types is not None:
                for j, t in enumerate(cols[:-1]):
                    if t in scored:
                        values[i, j] = out.types.get(t, 0.0)
            flagged = set(out.flagged())
            words.append({t: w for t, w in span_words(out.spans, texts[i]).items() if t in flagged}
                         if texts is not None else {})
        return _filled(self.name, cols, values, scored, _Triggers(words))

    def outputs_for(self, captions, texts: dict[int, str] | None = None) -> dict[int, JudgeOutput]:
        """The outputs the judge has of a system's captions (``captions.caption_ids``): caption id → output."""
        return {int(c): self.outputs[int(c)] for c in np.asarray(captions.caption_ids).tolist()
                if int(c) in self.outputs}


def _filled(name: str, cols, values: np.ndarray, scored: set, words) -> JudgeScores:
    """Scores with each scored column's missing values set to the column's mean (0 when nothing is scored) and
    every column the judge does not score set to 0."""
    missing = np.isnan(values)
    out = np.zeros_like(values)
    for j, col in enumerate(cols):
        if col not in scored:
            continue
        have = ~missing[:, j]
        mean = float(values[have, j].mean()) if have.any() else 0.0
        out[:, j] = np.where(have, values[:, j], mean)
    missing &= np.array([c in scored for c in cols])[None, :]
    return JudgeScores(name, tuple(cols), out, frozenset(scored), missing, words)


@dataclass(frozen=True)
class DetectorJudge:
    """The built-in word-list detectors as a judge (:mod:`annotator.estimate.detectors`)."""

    name: str = DETECTORS

    @property
    def signature(self) -> dict:
        """The detectors' signature: what they are and where their words come from."""
        from ..estimate.detectors import SIGNATURE
        return dict(SIGNATURE)

    @property
    def scored_types(self) -> tuple[str, ...]:
        """Every type with a detector ("other" has none)."""
        from ..estimate.detectors import DETECTED_TYPES
        return tuple(DETECTED_TYPES)

    def scores_for(self, captions) -> JudgeScores:
        """The detections of a system's captions (``captions.detections``) as :class:`JudgeScores`."""
        from ..estimate.detectors import SCORE_COLUMNS
        det = captions.detections
        if tuple(SCORE_COLUMNS) != score_columns():
            raise AssertionError("the detectors' columns differ from the judges'")
        scored = frozenset(self.scored_types) | {INACCURATE}
        return JudgeScores(self.name, tuple(SCORE_COLUMNS), det.scores, scored,
                           np.zeros(det.scores.shape, dtype=bool), det)

    def outputs_for(self, captions, texts: dict[int, str]) -> dict[int, JudgeOutput]:
        """The detectors' scores, flagged types and trigger spans of a system's captions as outputs."""
        from ..estimate.span_eval import trigger_spans
        det = captions.detections
        types = self.scored_types
        cols = [self.scores_for(captions).columns.index(t) for t in types]
        out = {}
        for row, cid in enumerate(np.asarray(captions.caption_ids).tolist()):
            scores = det.scores[row]
            out[int(cid)] = JudgeOutput(int(cid), float(det.score(INACCURATE)[row]),
                                        {t: float(scores[j]) for t, j in zip(types, cols)},
                                        trigger_spans(det, row, texts[int(cid)]))
        return out
