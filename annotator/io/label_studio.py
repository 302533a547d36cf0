"""Label Studio's formats: the labeling config, the task list, and a Label Studio export read back (the codec).

What a project becomes in Label Studio and how it comes back — people, revisions, the store — is the exchange
:mod:`annotator.exchange.label_studio`; this module knows only the files.

*Tasks* (Label Studio's JSON import format): one per caption. ``data`` holds the picture (``image``), the
``caption``, the ``references`` (one per line) and where the caption comes from (``project``, ``system``,
``item``, ``line``). A judgement is an ``annotation`` whose results use the labeling config's names
(:func:`labeling_config`): ``judgement`` (choices: accurate or inaccurate), ``error_types`` (choices: the
caption-level type ids), ``error_span`` (labels over the caption text, one per span, with character offsets),
``fix`` (a text area per span: its suggested fix, under the span's region id) and ``note`` (a text area).

*Reading an export* (:func:`read_tasks`, :func:`read_annotation`): the file goes through the strict JSON reader
(a key given twice, NaN or Infinity, or nesting too deep are refused with the file named); each annotation is
read into a :class:`LabelStudioAnnotation` — what it says (label, types, spans, note), its working time (at most
a day, :func:`annotator.limits.check_seconds`), when it was saved and who made it as Label Studio names them.
Messages name the task and annotation by their ids. :class:`Controls` says which result is which, for a project
not made here whose config uses other names (a mapping file).

Spans: caption spans count whitespace-separated words; Label Studio counts characters and, with word granularity,
leaves the punctuation next to a word out of a selection ("setting" of "setting."). :func:`token_span` maps a
character span onto the words whose letters it covers, forgiving adjacent punctuation and white space; only a
span that cuts inside a word is refused.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterator
from xml.sax.saxutils import quoteattr

from ..errors import InputError
from ..limits import check_free_text, check_seconds, check_text_length
from ..spans import Span, caption_tokens, check_spans
from ..taxonomy import Taxonomy, group_colours, taxonomy
from .judgement_rows import parse_saved_at
from .json_stream import JsonStream
from .textfiles import read_json

#: The names of the labeling config's controls: what the results' ``from_name`` says.
JUDGEMENT, TYPES, SPAN, FIX, NOTE, CAPTION, IMAGE = ("judgement", "error_types", "error_span", "fix", "note",
                                                     "caption", "image")
#: ``model_version`` of the detectors' predictions.
DETECTOR_MODEL = "annotator-detectors"
ACCURATE, INACCURATE = "accurate", "inaccurate"
#: What a result can be to the import: the roles of a mapping file's values ("ignore": read past it).
ROLES = ("judgement", "types", "spans", "fix", "note", "ignore")


# ------------------------------------------------------------------ characters and words

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


def _is_word_character(ch: str) -> bool:
    """Letters, digits and marks make words; punctuation, symbols and white space only stand beside them."""
    return unicodedata.category(ch)[0] in "LNM"


def token_span(text: str, start, end, offsets: list[tuple[int, int]] | None = None) -> tuple[int, int]:
    """The token span (start, end exclusive) whose words the characters ``[start, end)`` of ``text`` select.

    Label Studio keeps what the selection took: white space around it, and with word granularity a word without
    the punctuation beside it ("setting" of "setting.", "red" of "(red"). A selection maps to the words it
    touches as long as what it leaves out of its first and last word is punctuation or symbols only; one that
    starts or ends inside a word, or selects no letter or digit, is refused with InputError.
    """
    offsets = offsets or token_offsets(text)
    if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool) or isinstance(end, bool):
        raise InputError(f"a span's start and end must be character offsets, got {start!r} and {end!r}")
    if not 0 <= start < end <= len(text):
        raise InputError(f"the span of characters {start}-{end} does not lie within the caption "
                         f"({len(text)} characters)")
    picked = text[start:end]
    touched = [k for k, (a, b) in enumerate(offsets) if a < end and b > start]
    if not touched or not any(_is_word_character(ch) for ch in picked):
        raise InputError(f"the span of characters {start}-{end} ({picked!r}) selects no word of the caption")
    first, last = offsets[touched[0]], offsets[touched[-1]]
    left_out = text[first[0]:max(start, first[0])] + text[min(end, last[1]):last[1]]
    inside = (start > first[0] and _is_word_character(text[start - 1]) and _is_word_character(text[start])) or (
        end < last[1] and _is_word_character(text[end - 1]) and _is_word_character(text[end]))
    if inside or any(_is_word_character(ch) for ch in left_out):
        raise InputError(f"the span of characters {start}-{end} ({picked!r}) cuts inside a word of the caption; "
                         "a span counts whole words")
    return touched[0], touched[-1] + 1


# ------------------------------------------------------------------ the labeling config

def labeling_config(tax: Taxonomy | None = None, *, blind: bool = False) -> str:
    """The Label Studio labeling config (XML) that shows a caption task as the annotate page does: the picture,
    the caption with its error types as span labels, accurate/inaccurate (keys y/n), the caption-level types,
    a suggested fix per span, a note, and the references. A type's span label and its checkbox carry the
    annotate page's key for that type. ``blind`` leaves out the header that names the system."""
    tax = tax or taxonomy()
    colour = group_colours(tax)

    def attr(value: str) -> str:
        return quoteattr(str(value))

    labels = "\n".join(f'    <Label value={attr(t.id)} alias={attr(t.id)} hint={attr(t.name)} '
                       f'background={attr(colour[t.id])} hotkey={attr(t.key)}/>' for t in tax.types)
    choices = "\n".join(f'    <Choice value={attr(t.id)} hint={attr(t.name + " (" + t.group + ")")} '
                        f'hotkey={attr(t.key)}/>' for t in tax.types)
    header = "" if blind else '  <Header value="$system"/>\n'
    return f"""<View>
{header}  <Image name={attr(IMAGE)} value="$image" zoom="true"/>
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


# ------------------------------------------------------------------ writing tasks

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


def write_label_studio(tasks, out) -> tuple[int, int]:
    """Write tasks (a list, or an iterator read a task at a time) as Label Studio reads them: one JSON array,
    written a task at a time, the text ``json.dump(tasks, out, ensure_ascii=False, indent=1)`` writes. The number
    of tasks and of annotations written."""
    n_tasks = n_annotations = 0
    for task in tasks:
        # json.dump indents a list's elements one level: each line of the task's own text one space further
        # (a string's newlines are escaped, so every newline of the text is the indent's).
        out.write(("[\n " if n_tasks == 0 else ",\n ")
                  + json.dumps(task, ensure_ascii=False, indent=1).replace("\n", "\n "))
        n_tasks += 1
        n_annotations += len(task.get("annotations") or ())
    out.write("[]\n" if n_tasks == 0 else "\n]\n")
    return n_tasks, n_annotations


# ------------------------------------------------------------------ reading an export

@dataclass(frozen=True)
class Controls:
    """Which result is which: ``results`` maps a result's ``from_name`` to its role (:data:`ROLES`), and the
    task data's ``caption`` and ``image`` fields are named by ``caption_field`` and ``image_field``. The default
    is annotator's own config; a project not made here gives a mapping file (:func:`read_controls`)."""

    results: dict = field(default_factory=lambda: {JUDGEMENT: "judgement", TYPES: "types", SPAN: "spans",
                                                   FIX: "fix", NOTE: "note"})
    caption_field: str = CAPTION
    image_field: str = IMAGE
    mapped: bool = False


def read_controls(path: Path | str) -> Controls:
    """A mapping file: a JSON object from each result's ``from_name`` to its role (judgement, types, spans, fix,
    note or ignore), plus ``"$caption"`` and ``"$image"``, the task data fields holding the caption text and the
    picture (default ``caption``, falling back to ``text``, and ``image``). InputError naming the file and key."""
    src = str(path)
    obj = read_json(path)
    if not isinstance(obj, dict) or not obj:
        raise InputError('a mapping file is a JSON object such as {"verdict": "judgement", "errors": "types", '
                         '"$caption": "text"}', src)
    results, data = {}, {}
    for key, value in obj.items():
        if not isinstance(value, str) or not value:
            raise InputError(f"the value of {key!r} must be a name", src, f"key {key!r}")
        if key in ("$caption", "$image"):
            data[key[1:]] = value
        elif value in ROLES:
            results[key] = value
        else:
            raise InputError(f"{key!r} maps to {value!r}; a result's role is one of {', '.join(ROLES)} (data "
                             "fields: \"$caption\", \"$image\")", src, f"key {key!r}")
    missing = [r for r in ("judgement",) if r not in results.values()]
    if missing:
        raise InputError("the mapping names no result as the judgement (accurate or inaccurate)", src)
    return Controls(results, data.get("caption", CAPTION), data.get("image", IMAGE), mapped=True)


def read_tasks(path: Path | str, *, source: str | None = None) -> list[dict]:
    """The tasks of a Label Studio JSON export, read by the strict JSON reader (a single task object counts as
    a list of one); InputError naming the file when it is not a list of task objects. An import reads them one
    at a time instead (:func:`iter_tasks`)."""
    return list(iter_tasks(path, source=source))


def iter_tasks(path: Path | str, *, source: str | None = None) -> Iterator[dict]:
    """The tasks of a Label Studio JSON export one at a time, as :func:`read_tasks` gives them, the file read a
    task at a time (:class:`~annotator.io.json_stream.JsonStream`: memory holds one task, not the file);
    InputError naming the file and line of a task that is not an object or of invalid JSON."""
    src = source or str(path)
    doc = JsonStream(path, src)
    first = doc.opens()
    if first == "{":
        task = doc.value()
        doc.close()
        yield task
        return
    if first != "[":
        raise InputError("a Label Studio export is a list of tasks", src)
    for k, (task, line) in enumerate(doc.elements(), start=1):
        if not isinstance(task, dict):
            raise InputError("a task must be an object", src, f"task {k} of the list (line {line})")
        yield task
    doc.close()


@dataclass(frozen=True)
class LabelStudioAnnotation:
    """One Label Studio annotation, read: where it is, who made it as Label Studio names them (``author``: the
    ``completed_by`` e-mail, or the Label Studio user id), what it says and when it was saved."""

    where: str
    author: str | int
    label: str | None
    error_types: tuple[str, ...]
    spans: tuple[Span, ...]
    note: str
    seconds: float
    saved_at: datetime | None
    ground_truth: bool

    @property
    def content(self) -> tuple:
        """What the person said: label, types, spans and note (the working time is not a judgement)."""
        return (self.label, self.error_types, self.spans, self.note)


def place(task: dict, k: int, entry, j: int, what: str = "annotation") -> str:
    """How messages name an annotation: ``task ID, annotation ID`` (positions in the file when ids are missing)."""
    tid = task.get("id", f"#{k}")
    aid = entry.get("id", f"#{j}") if isinstance(entry, dict) else f"#{j}"
    return f"task {tid}, {what} {aid}"


def author_of(completed_by, src: str, where: str) -> str | int:
    """Who made an annotation, as Label Studio names them: the e-mail of ``completed_by`` (an object, as the
    snapshot export with ``completed_by`` expanded and annotator's own export write it), else its Label Studio
    user id (an integer, as the plain JSON export writes it)."""
    if isinstance(completed_by, dict):
        email = completed_by.get("email")
        if isinstance(email, str) and email.strip():
            return email
        completed_by = completed_by.get("id")
    if isinstance(completed_by, int) and not isinstance(completed_by, bool):
        return completed_by
    raise InputError("the annotation does not say who made it (completed_by: an e-mail or a Label Studio user id)",
                     src, where)


def _choices(result: dict, src: str, where: str) -> list[str]:
    choices = (result.get("value") or {}).get("choices") if isinstance(result.get("value"), dict) else None
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise InputError(f"the {result.get('from_name')!r} result has no list of choices", src, where)
    return choices


def _texts(result: dict, what: str, src: str, where: str, *, empty: bool) -> list[str]:
    """The lines of a text-area result (``empty``: whether it may hold none)."""
    value = result.get("value")
    text = value.get("text") if isinstance(value, dict) else None
    if not isinstance(text, list) or not all(isinstance(t, str) for t in text) or (not text and not empty):
        raise InputError(f"{what} result carries its text as a list", src, where)
    return text


def caption_of(task: dict, controls: Controls, src: str, where: str) -> str:
    """The caption text of a task (its data's caption field)."""
    data = task.get("data")
    if not isinstance(data, dict):
        raise InputError("the task has no data", src, where)
    names = [controls.caption_field] + (["text"] if controls.caption_field == CAPTION else [])
    for name in names:
        if isinstance(data.get(name), str):
            return check_text_length(data[name], "caption", src, where)
    raise InputError(f"the task's data has no caption text ({' or '.join(map(repr, names))})", src, where)


class _Reading:
    """The results of one annotation, read one after another (:func:`read_annotation`)."""

    def __init__(self, caption: str, tax: Taxonomy, src: str):
        self.caption, self.tax, self.src = caption, tax, src
        self.offsets = token_offsets(caption)
        self.label, self.types, self.note = None, [], ""
        self.spans: dict[str, dict] = {}
        self.fixes: dict[str, str] = {}

    def judgement(self, result, k, at):
        given = _choices(result, self.src, at)
        chosen = [c.strip().casefold() for c in given]
        if len(chosen) != 1 or chosen[0] not in (ACCURATE, INACCURATE):
            raise InputError(f"the judgement must be 'accurate' or 'inaccurate', got {repr(given)[:80]}", self.src, at)
        self.label = chosen[0]

    def types_(self, result, k, at):
        self.types += [self.tax.resolve_strict(c, self.src, at) for c in _choices(result, self.src, at)]

    def span(self, result, k, at):
        value = result.get("value") if isinstance(result.get("value"), dict) else {}
        names = value.get("labels")
        if not isinstance(names, list) or len(names) != 1 or not isinstance(names[0], str):
            raise InputError("a span result carries exactly one label", self.src, at)
        try:
            start, end = token_span(self.caption, value.get("start"), value.get("end"), self.offsets)
        except InputError as e:
            raise InputError(e.detail, self.src, at) from None
        self.spans[str(result.get("id", k))] = {"start": start, "end": end,
                                                "type": self.tax.resolve_strict(names[0], self.src, at)}

    def fix(self, result, k, at):
        self.fixes[str(result.get("id"))] = " ".join(_texts(result, "a fix", self.src, at, empty=False))

    def note_(self, result, k, at):
        self.note = check_free_text("\n".join(_texts(result, "a note", self.src, at, empty=True)), "note", self.src, at)

    def step(self, role: str):
        return {"judgement": self.judgement, "types": self.types_, "spans": self.span, "fix": self.fix,
                "note": self.note_, "ignore": lambda *a: None}[role]


def read_annotation(task: dict, annotation: dict, controls: Controls, src: str, where: str,
                    tax: Taxonomy | None = None) -> LabelStudioAnnotation:
    """Read one annotation of ``task`` (InputError naming ``where``: the task and annotation ids)."""
    tax = tax or taxonomy()
    reading = _Reading(caption_of(task, controls, src, where), tax, src)
    results = annotation.get("result") or []
    if not isinstance(results, list):
        raise InputError("an annotation's result must be a list", src, where)
    for k, result in enumerate(results, start=1):
        at = f"{where}, result {k}"
        if not isinstance(result, dict):
            raise InputError("a result must be an object", src, at)
        name = result.get("from_name")
        role = controls.results.get(name) if isinstance(name, str) else None
        if role is None:
            hint = ("" if controls.mapped else "; a project not made by annotator names its results in a mapping "
                    "file (--mapping)")
            raise InputError(f"a result of {str(name)[:60]!r} is not part of the labeling config "
                             f"({', '.join(controls.results)}){hint}", src, at)
        reading.step(role)(result, k, at)
    return _finish(reading, annotation, src, where, tax)


def _finish(reading: _Reading, annotation: dict, src: str, where: str, tax: Taxonomy) -> LabelStudioAnnotation:
    spans = reading.spans
    for rid, fix in reading.fixes.items():
        if rid not in spans:
            raise InputError(f"a suggested fix belongs to no span (region {rid[:60]!r})", src, where)
        spans[rid]["fix"] = fix
    label, types = reading.label, list(tax.in_order(dict.fromkeys(reading.types)))
    if annotation.get("was_cancelled"):
        label, types, spans = None, [], {}
    elif label is None:
        raise InputError("the annotation says neither accurate nor inaccurate (and was not skipped)", src, where)
    if types and label != INACCURATE:
        raise InputError("an accurate caption has no error types", src, where)
    try:
        checked = check_spans(list(spans.values()), label=label, error_types=tuple(types), caption=reading.caption)
    except InputError as e:
        raise InputError(e.detail, src, where) from None
    saved = annotation.get("updated_at") or annotation.get("created_at")
    return LabelStudioAnnotation(
        where=where, author=author_of(annotation.get("completed_by"), src, where), label=label,
        error_types=tuple(types), spans=checked, note=reading.note,
        seconds=round(check_seconds(annotation.get("lead_time"), "lead_time", src, where), 3),
        saved_at=None if saved is None else parse_saved_at(saved, src, where),
        ground_truth=annotation.get("ground_truth") is True)
