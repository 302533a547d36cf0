"""Error spans: which words of a caption an error type is about.

A span is a taxonomy type on a run of the caption's whitespace-separated tokens, ``end`` exclusive (the
convention of box mentions), with an optional suggested ``fix`` for those tokens::

    {"start": 2, "end": 4, "type": "color", "fix": "red shirt"}

Rules (:func:`check_spans`): a judgement's ``error_types`` stay the caption-level truth, so every span's
type is among them; a type without a span is "not localised" (allowed: "Generally unrelated" has no words
to point at). Accurate and skipped judgements have no spans. Spans of one type do not overlap each other;
spans of different types may. Every span lies within the caption. An error names the span (its number,
tokens and type).

Stored form (:func:`encode_spans` / :func:`decode_spans`): compact JSON of the span objects in order, None
when there are none. Rows of a judgements export carry them as a list (JSONL) or JSON text (CSV, XLSX).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .errors import InputError
from .names import line_problem
from .strict_json import parse_json

#: Longest suggested fix (characters).
MAX_FIX_LENGTH = 500
#: Most spans one judgement may carry.
MAX_SPANS = 500
_FIELDS = ("start", "end", "type", "fix")


@dataclass(frozen=True, order=True)
class Span:
    """Error type ``type`` on caption tokens ``start``..``end`` (end exclusive); ``fix``: suggested words."""

    start: int
    end: int
    type: str
    fix: str | None = None

    def to_json(self) -> dict:
        """The span as a JSON object (``fix`` only when there is one)."""
        obj = {"start": self.start, "end": self.end, "type": self.type}
        if self.fix is not None:
            obj["fix"] = self.fix
        return obj

    def tokens(self) -> range:
        """The token indices the span covers."""
        return range(self.start, self.end)


def caption_tokens(caption: str) -> list[str]:
    """The caption's whitespace-separated tokens: what span indices count."""
    return caption.split()


def describe(span: Span, number: int | None = None) -> str:
    """A span as a message names it: ``span 2 (tokens 3-5, type 'color')``."""
    head = "span" if number is None else f"span {number}"
    return f"{head} (tokens {span.start}-{span.end}, type {span.type!r})"


def _whole(value, what: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > 2**31 - 1:
        raise InputError(f"{where}: {what} must be a whole number from 0, got {value!r}"[:300])
    return value


def parse_span(obj, number: int = 1) -> Span:
    """One span from its JSON object (``number``: its place in the list, 1-based, for messages)."""
    where = f"span {number}"
    if isinstance(obj, Span):
        obj = obj.to_json()
    if not isinstance(obj, dict):
        raise InputError(f"{where} must be an object with start, end, type and optionally fix")
    unknown = sorted(set(obj) - set(_FIELDS))
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r}; a span has start, end, type and fix")
    for field in ("start", "end", "type"):
        if obj.get(field) is None:
            raise InputError(f"{where}: missing field {field!r}")
    start, end = _whole(obj["start"], "start", where), _whole(obj["end"], "end", where)
    if end <= start:
        raise InputError(f"{where}: end ({end}) must be greater than start ({start})")
    type_id = obj["type"]
    if not isinstance(type_id, str):
        raise InputError(f"{where}: type must be an error type id, got {type_id!r}"[:300])
    from .taxonomy import taxonomy
    tax = taxonomy()
    resolved = tax.resolve(type_id)
    if resolved is None:
        raise InputError(f"{where}: unknown error type {type_id!r}"[:300])
    return Span(start, end, resolved, clean_fix(obj.get("fix"), where))


def clean_fix(fix, where: str = "a span") -> str | None:
    """A suggested fix as stored: None, or text of at most :data:`MAX_FIX_LENGTH` characters with its white space
    runs made single spaces. Refused (InputError naming ``where``) as a name's characters are
    (annotator.names.line_problem): control characters, line breaks and tabs, bidirectional controls such as
    U+202E, which would show the fix reversed inside the caption."""
    if fix is None:
        return None
    if not isinstance(fix, str):
        raise InputError(f"{where}: fix must be text, got {type(fix).__name__}")
    if len(fix) > MAX_FIX_LENGTH:
        raise InputError(f"{where}: the fix is longer than {MAX_FIX_LENGTH} characters")
    problem = line_problem(fix)
    if problem:
        raise InputError(f"{where}: the fix cannot contain {problem}")
    return " ".join(fix.split())


def parse_spans(value) -> tuple[Span, ...]:
    """Spans from a list of JSON objects, JSON text of one, Span objects, or None/"" (no spans); in order.

    Only the form of each span is checked here; :func:`check_spans` applies the rules against a judgement.
    """
    if value is None or value == "" or (isinstance(value, float) and value != value):  # NaN: an empty cell
        return ()
    if isinstance(value, str):
        try:
            value = parse_json(value)
        except InputError as e:
            raise InputError(f"spans must be a JSON list of span objects ({e.detail})") from None
    if not isinstance(value, (list, tuple)):
        raise InputError(f"spans must be a list of span objects, got {type(value).__name__}")
    if len(value) > MAX_SPANS:
        raise InputError(f"a judgement carries at most {MAX_SPANS} spans, got {len(value)}")
    return tuple(sorted(parse_span(obj, n) for n, obj in enumerate(value, start=1)))


def check_spans(spans, *, label, error_types, caption: str | None = None) -> tuple[Span, ...]:
    """Spans checked against their judgement: returned in order, or InputError naming the offending span.

    ``label``: "accurate", "inaccurate" or None (skipped); ``error_types``: the judgement's type ids;
    ``caption``: its text (bounds are checked when given).
    """
    spans = parse_spans(spans)  # Span objects too: a fix handed in through the Python API is checked as well
    if not spans:
        return ()
    label = getattr(label, "value", label)
    if label != "inaccurate":
        raise InputError(f"{'a skipped' if label is None else 'an accurate'} caption has no error spans; "
                         f"remove {describe(spans[0], 1)}")
    chosen = set(error_types or ())
    n_tokens = len(caption_tokens(caption)) if caption is not None else None
    last_end: dict[str, tuple[int, Span]] = {}
    for number, span in enumerate(spans, start=1):
        if span.type not in chosen:
            raise InputError(f"{describe(span, number)}: its type is not among the caption's error types; tick it "
                             "or remove the span")
        if n_tokens is not None and span.end > n_tokens:
            raise InputError(f"{describe(span, number)} ends beyond the caption, which has {n_tokens} tokens")
        before = last_end.get(span.type)
        if before is not None and span.start < before[1].end:
            raise InputError(f"{describe(span, number)} overlaps {describe(before[1], before[0])} of the same type")
        if before is None or span.end > before[1].end:
            last_end[span.type] = (number, span)
    return spans


def encode_spans(spans) -> str | None:
    """Spans → the compact JSON stored with a revision (None when there are none)."""
    if not spans:
        return None
    return json.dumps([s.to_json() for s in sorted(spans)], ensure_ascii=False, separators=(",", ":"))


def decode_spans(raw: str | None) -> tuple[Span, ...]:
    """Stored JSON from :func:`encode_spans` → spans."""
    if not raw:
        return ()
    return tuple(Span(int(o["start"]), int(o["end"]), o["type"], o.get("fix")) for o in json.loads(raw))


def spans_json(spans) -> list[dict]:
    """Spans as a list of JSON objects (what JSONL rows carry)."""
    return [s.to_json() for s in sorted(spans or ())]


def marked_tokens(spans, type_id: str | None = None) -> dict[str, set[int]]:
    """Type → token indices its spans cover (only ``type_id`` when given)."""
    out: dict[str, set[int]] = {}
    for s in spans or ():
        if type_id is None or s.type == type_id:
            out.setdefault(s.type, set()).update(s.tokens())
    return out


def spans_of_type(spans, type_id: str) -> tuple[Span, ...]:
    """The spans of one type, in order."""
    return tuple(s for s in sorted(spans or ()) if s.type == type_id)


def not_localised(spans, error_types) -> tuple[str, ...]:
    """The judgement's error types no span points at (in the order given)."""
    have = {s.type for s in spans or ()}
    return tuple(t for t in error_types or () if t not in have)


def merge_spans(spans) -> tuple[Span, ...]:
    """Spans of one or more judgements as one set per type: overlapping spans of a type joined into one run
    (keeping a fix only when all the joined spans that have one agree and one covers the whole run)."""
    out: list[Span] = []
    for type_id in dict.fromkeys(s.type for s in sorted(spans or ())):
        run: list[Span] = []
        for s in sorted(x for x in spans if x.type == type_id):
            if run and s.start < max(r.end for r in run):
                run.append(s)
                continue
            if run:
                out.append(_joined(run))
            run = [s]
        if run:
            out.append(_joined(run))
    return tuple(sorted(out))


def _joined(run: list[Span]) -> Span:
    start, end = min(s.start for s in run), max(s.end for s in run)
    fixes = {s.fix for s in run if s.fix is not None and (s.start, s.end) == (start, end)}
    return Span(start, end, run[0].type, fixes.pop() if len(fixes) == 1 else None)
