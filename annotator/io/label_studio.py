"""Label Studio in and out: a project's captions as Label Studio tasks, and a Label Studio export read back.

Export (:func:`export_label_studio`): one task per caption. ``data`` holds the picture (``image``: the
item's image path, behind ``--image-prefix`` when given), the ``caption``, the ``references`` (one per
line) and where the caption comes from (``project``, ``system``, ``item``, ``line``). Each current
judgement becomes one ``annotation``:

* ``completed_by``: the annotator, as ``{"email": NAME, "first_name": NAME}``; ``lead_time``: its seconds;
  ``created_at``/``updated_at``: when it was saved; a skipped caption is a cancelled annotation
  (``was_cancelled``), a lead's decision (adjudication) a ``ground_truth`` annotation;
* results, in the labeling config's names (:func:`labeling_config`): ``judgement`` (choices: accurate or
  inaccurate), ``error_types`` (choices: the caption-level type ids), ``error_span`` (labels over the
  caption text, one per span, with character offsets of the span's tokens), ``fix`` (a text area per
  span: its suggested fix, under the span's region id) and ``note`` (a text area).

With ``predictions`` the automatic detectors' flags (annotator.estimate) come as ``predictions``: the
flagged types as choices and their trigger words as spans.

Import (:func:`read_label_studio`, ``annotator import label-studio``): a Label Studio JSON export of such a
project. Every annotation becomes a judgement row (annotator.io.judgement_rows) and goes through the same
checks and the same store step as a judgements export read back, so a round trip gives the same labels,
types, spans, notes and annotators. Whatever cannot be mapped (a task that names no system and item, an
unknown type, a span whose characters do not fall on word boundaries, a result of another tool) is
refused with the file and the task id, and nothing is stored.

Spans are token spans (start, end exclusive, over the caption's whitespace-separated words); Label
Studio counts characters. :func:`token_offsets` maps one to the other.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from xml.sax.saxutils import quoteattr

from ..errors import InputError
from ..spans import Span, caption_tokens
from ..taxonomy import Taxonomy, group_colours, taxonomy
from .judgement_rows import parse_record
from .textfiles import decode_utf8, parse_json, read_bytes, shorten
from .validate import check_name

#: The names of the labeling config's controls: what the results' ``from_name`` says.
JUDGEMENT, TYPES, SPAN, FIX, NOTE, CAPTION, IMAGE = ("judgement", "error_types", "error_span", "fix", "note",
                                                     "caption", "image")
#: ``model_version`` of the detectors' predictions.
DETECTOR_MODEL = "annotator-detectors"
ACCURATE, INACCURATE = "accurate", "inaccurate"
_DATA_FIELDS = ("image", "caption", "references", "project", "system", "item", "line")


# ------------------------------------------------------------------ tokens and characters

def token_offsets(text: str) -> list[tuple[int, int]]:
    """Character (start, end) of each whitespace-separated token of ``text``, in order."""
    out, pos = [], 0
    for tok in caption_tokens(text):
        start = text.index(tok, pos)
        pos = start + len(tok)
        out.append((start, pos))
    return out


def char_span(text: str, span: Span, offsets: list[tuple[int, int]] | None = None) -> tuple[int, int]:
    """The characters ``[start, end)`` of ``text`` that a token span covers."""
    offsets = offsets or token_offsets(text)
    return offsets[span.start][0], offsets[span.end - 1][1]


def token_span(text: str, start: int, end: int, offsets: list[tuple[int, int]] | None = None) -> tuple[int, int]:
    """The token span (start, end exclusive) whose characters are exactly ``[start, end)`` of ``text``.

    Surrounding white space is forgiven (Label Studio keeps what the mouse took); a span that starts or
    ends inside a word is refused with InputError, since a span counts whole words.
    """
    offsets = offsets or token_offsets(text)
    if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool) or isinstance(end, bool):
        raise InputError(f"a span's start and end must be character offsets, got {start!r} and {end!r}")
    while start < end and start < len(text) and text[start].isspace():
        start += 1
    while end > start and end <= len(text) and text[end - 1].isspace():
        end -= 1
    starts = {s: k for k, (s, _) in enumerate(offsets)}
    ends = {e: k for k, (_, e) in enumerate(offsets)}
    if start not in starts or end not in ends or ends[end] < starts[start]:
        raise InputError(f"the span of characters {start}-{end} ({shorten(text[start:end])!r}) does not fall on "
                         "word boundaries of the caption")
    return starts[start], ends[end] + 1


# ------------------------------------------------------------------ the labeling config

def labeling_config(tax: Taxonomy | None = None) -> str:
    """The Label Studio labeling config (XML) that shows a caption task as the annotate page does: the picture,
    the caption with its error types as span labels, accurate/inaccurate (keys y/n), the caption-level types
    with their keys, a suggested fix per span, a note, and the references."""
    tax = tax or taxonomy()
    colour = group_colours(tax)

    def attr(value: str) -> str:
        return quoteattr(str(value))

    labels = "\n".join(f'    <Label value={attr(t.id)} alias={attr(t.id)} hint={attr(t.name)} '
                       f'background={attr(colour[t.id])}/>' for t in tax.types)
    choices = "\n".join(f'    <Choice value={attr(t.id)} hint={attr(t.name + " (" + t.group + ")")} '
                        f'hotkey={attr(t.key)}/>' for t in tax.types)
    return f"""<View>
  <Header value="$system"/>
  <Image name={attr(IMAGE)} value="$image" zoom="true"/>
  <Labels name={attr(SPAN)} toName={attr(CAPTION)}>
{labels}
  </Labels>
  <Text name={attr(CAPTION)} value="$caption" granularity="word"/>
  <TextArea name={attr(FIX)} toName={attr(CAPTION)} perRegion="true" maxSubmissions="1" editable="true"
            placeholder="suggested fix for the marked words"/>
  <Choices name={attr(JUDGEMENT)} toName={attr(CAPTION)} choice="single-radio" showInline="true">
    <Choice value={attr(ACCURATE)} hotkey={attr(tax.accurate_key)}/>
    <Choice value={attr(INACCURATE)} hotkey={attr(tax.inaccurate_key)}/>
  </Choices>
  <Choices name={attr(TYPES)} toName={attr(CAPTION)} choice="multiple" showInline="true">
{choices}
  </Choices>
  <TextArea name={attr(NOTE)} toName={attr(CAPTION)} maxSubmissions="1" editable="true" placeholder="note"/>
  <Header value="References"/>
  <Text name="references" value="$references"/>
</View>
"""


# ------------------------------------------------------------------ export

def _time(value) -> str | None:
    return value if value is None or isinstance(value, str) else value.isoformat()


def annotation_results(caption: str, label: str | None, error_types, spans, note: str, *,
                       prefix: str = "r") -> list[dict]:
    """The Label Studio results of one judgement (``prefix`` makes the region ids unique in the task)."""
    if label is None:
        return []
    results = [{"id": f"{prefix}-judgement", "from_name": JUDGEMENT, "to_name": CAPTION, "type": "choices",
                "value": {"choices": [label]}}]
    if error_types:
        results.append({"id": f"{prefix}-types", "from_name": TYPES, "to_name": CAPTION, "type": "choices",
                        "value": {"choices": list(error_types)}})
    offsets = token_offsets(caption)
    for k, span in enumerate(spans or ()):
        start, end = char_span(caption, span, offsets)
        region = {"start": start, "end": end, "text": caption[start:end]}
        rid = f"{prefix}-span{k + 1}"
        results.append({"id": rid, "from_name": SPAN, "to_name": CAPTION, "type": "labels",
                        "value": {**region, "labels": [span.type]}})
        if span.fix is not None:
            results.append({"id": rid, "from_name": FIX, "to_name": CAPTION, "type": "textarea",
                            "value": {**region, "text": [span.fix]}})
    if note:
        results.append({"id": f"{prefix}-note", "from_name": NOTE, "to_name": CAPTION, "type": "textarea",
                        "value": {"text": [note]}})
    return results


def write_label_studio(tasks: list[dict], out) -> None:
    """Write a task list as Label Studio reads it (one JSON array)."""
    json.dump(tasks, out, ensure_ascii=False, indent=1)
    out.write("\n")


# ------------------------------------------------------------------ import

def _annotator_name(completed_by, src: str, where: str) -> str:
    """Who made an annotation: the export's e-mail (its part before '@'), else its first name."""
    if isinstance(completed_by, dict):
        email = completed_by.get("email") or ""
        name = email.split("@")[0] if email else (completed_by.get("first_name") or "")
        if name:
            return check_name(name, "user", src, where)
        if completed_by.get("id") is not None:
            completed_by = completed_by["id"]
    if isinstance(completed_by, int) and not isinstance(completed_by, bool):
        return f"label-studio-{completed_by}"
    raise InputError("the annotation does not say who made it (completed_by)", src, where)


def _choices(result: dict, src: str, where: str) -> list[str]:
    value = result.get("value") or {}
    choices = value.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise InputError(f"the {result.get('from_name')!r} result has no list of choices", src, where)
    return choices


def _texts(result: dict, what: str, src: str, where: str, *, empty: bool) -> list[str]:
    """The lines of a text-area result (``empty``: whether it may hold none)."""
    text = (result.get("value") or {}).get("text")
    if not isinstance(text, list) or not all(isinstance(t, str) for t in text) or (not text and not empty):
        raise InputError(f"{what} result carries its text as a list", src, where)
    return text


def _listed_objects(values, what_list: str, what_one: str, place, src: str, where: str):
    """The objects of a list in an export (None: an empty one) as (k, where it stands, object): k counts from 1, the
    place is ``place(k, value)`` after ``where``. InputError when it is not a list or one of them is not an
    object."""
    values = values or []
    if not isinstance(values, list):
        raise InputError(f"{what_list} must be a list", src, where)
    for k, value in enumerate(values, start=1):
        at = f"{where}, {place(k, value)}"
        if not isinstance(value, dict):
            raise InputError(f"{what_one} must be an object", src, at)
        yield k, at, value


def annotation_row(task: dict, annotation: dict, src: str, where: str, tax: Taxonomy | None = None) -> dict:
    """One Label Studio annotation of a task as a judgement row (the form annotator.io.judgement_rows reads)."""
    tax = tax or taxonomy()
    data = task.get("data")
    if not isinstance(data, dict):
        raise InputError("the task has no data", src, where)
    for field in ("system", "caption"):
        if not isinstance(data.get(field), str):
            raise InputError(f"the task's data has no {field!r} (was it exported by annotator?)", src, where)
    if data.get("item") is None and data.get("line") is None:
        raise InputError("the task's data names no item (or line)", src, where)
    caption = data["caption"]
    offsets = token_offsets(caption)
    label, types, note = None, [], ""
    spans: dict[str, dict] = {}
    fixes: dict[str, str] = {}
    for k, at, result in _listed_objects(annotation.get("result"), "an annotation's result", "a result",
                                         lambda k, r: f"result {k}", src, where):
        name = result.get("from_name")
        if name == JUDGEMENT:
            chosen = _choices(result, src, at)
            if len(chosen) != 1 or chosen[0] not in (ACCURATE, INACCURATE):
                raise InputError(f"the judgement must be 'accurate' or 'inaccurate', got {shorten(repr(chosen))}",
                                 src, at)
            label = chosen[0]
        elif name == TYPES:
            for c in _choices(result, src, at):
                types.append(tax.resolve_strict(c, src, at))
        elif name == SPAN:
            value = result.get("value") or {}
            names = value.get("labels")
            if not isinstance(names, list) or len(names) != 1:
                raise InputError("a span result carries exactly one label", src, at)
            try:
                start, end = token_span(caption, value.get("start"), value.get("end"), offsets)
            except InputError as e:
                raise InputError(e.detail, src, at) from None
            spans[str(result.get("id", k))] = {"start": start, "end": end, "type": tax.resolve_strict(names[0], src, at)}
        elif name == FIX:
            fixes[str(result.get("id"))] = " ".join(_texts(result, "a fix", src, at, empty=False))
        elif name == NOTE:
            note = "\n".join(_texts(result, "a note", src, at, empty=True))
        else:
            raise InputError(f"a result of {shorten(repr(name))} is not part of annotator's labeling config "
                             f"({', '.join((JUDGEMENT, TYPES, SPAN, FIX, NOTE))})", src, at)
    for rid, fix in fixes.items():
        if rid not in spans:
            raise InputError(f"a suggested fix belongs to no span (region {shorten(rid)!r})", src, where)
        spans[rid]["fix"] = fix
    cancelled = bool(annotation.get("was_cancelled"))
    if cancelled:
        label, types, spans = None, [], {}
    elif label is None:
        raise InputError("the annotation says neither accurate nor inaccurate (and was not cancelled)", src, where)
    seconds = annotation.get("lead_time") or 0.0
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds):
        seconds = round(float(seconds), 3)
    row = {"system": data["system"], "item": data.get("item"), "line": data.get("line"), "caption": caption,
           "annotator": _annotator_name(annotation.get("completed_by"), src, where),
           "kind": "adjudication" if annotation.get("ground_truth") else "annotation",
           "label": label, "error_types": list(tax.in_order(dict.fromkeys(types))), "spans": list(spans.values()),
           "note": note, "seconds": seconds}
    saved = annotation.get("updated_at") or annotation.get("created_at")
    if saved:
        row["saved_at"] = saved
    return row


def read_label_studio(path: Path | str, *, source: str | None = None) -> list:
    """Read a Label Studio JSON export (a list of tasks) into checked judgement rows; nothing is stored."""
    src = source or str(path)
    tasks = parse_json(decode_utf8(read_bytes(path), src), src)
    if isinstance(tasks, dict):
        tasks = [tasks]
    if not isinstance(tasks, list):
        raise InputError("a Label Studio export is a list of tasks", src)
    tax = taxonomy()
    records = []
    for k, task in enumerate(tasks, start=1):
        if not isinstance(task, dict):
            raise InputError("a task must be an object", src, f"task {k}")
        where = f"task {task.get('id', k)}"
        for _, at, ann in _listed_objects(task.get("annotations"), "a task's annotations", "an annotation",
                                          lambda j, a: f"annotation {a.get('id', j) if isinstance(a, dict) else j}",
                                          src, where):
            row = annotation_row(task, ann, src, at, tax)
            try:
                records.append(parse_record(row, src, len(records) + 1))
            except InputError as e:
                raise InputError(e.detail, src, at) from None
    if not records:
        raise InputError("no annotations in the file", src)
    return records
