"""Judge files: a judge's outputs as data, in and out (``annotator import judge``, ``annotator judge export``).

One JSON object per line. The first is the header, the judge's signature::

    {"format": "annotator-judge", "version": 1, "judge": "qwen-vl", "model": "Qwen2.5-VL-7B", "prompt": "1", "k": 5}

``model`` and ``prompt`` (the prompt's version) are required, ``k`` (samples per caption) is a whole number from
1 when given, and any other field is a setting of the judge (a text, number, true/false or null), kept with
the signature. ``judge`` names it unless the import names it (``--judge``). Every other line is one caption::

    {"item": "astronaut.jpg", "system": "sat-attn", "p_inaccurate": 0.8,
     "types": {"gender": 0.8, "type of clothing": 0.4},
     "spans": [{"start": 1, "end": 2, "type": "gender", "fix": "woman"}], "answers": ["...", "..."]}

A row names its caption by ``item`` and ``system``, or by ``system`` and ``line`` (the caption's 0-based line),
and ``n`` (the sample index) where a system has several descriptions per image (default: the sample the project
annotates); ``caption``, when given, must be the stored text. ``p_inaccurate`` is a probability (0 to 1);
``types`` an object of probabilities keyed by type id or by any name the taxonomy knows for it (the study's
names too); ``spans`` error spans as judgement rows carry them (token offsets, type, optional fix), checked
against the caption; ``answers`` the judge's raw replies (a list).

Every line is read with the strict JSON reader (:func:`annotator.io.textfiles.parse_json`). A bad line stops the
import with the file and line, and nothing is stored. Importing a judge whose name the project has already
replaces all its outputs, and the result says how many captions change.
"""

from __future__ import annotations

import json
import math
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ..errors import InputError
from ..io.importers import in_batches
from ..io.options import Example, ImportFormat, ReaderOption
from ..io.textfiles import file_lines, parse_json, shorten
from ..io.validate import check_name, check_text
from ..judges.outputs import JudgeOutput, JudgeOutputs, check_judge_name
from ..spans import check_spans, parse_spans, spans_json
from ..store.spool import Spool
from ..taxonomy import taxonomy

FORMAT_NAME = "annotator-judge"
FORMAT_VERSION = 1
_HEADER_REQUIRED = ("format", "version", "model", "prompt")
_ROW_FIELDS = ("item", "system", "n", "line", "caption", "p_inaccurate", "types", "spans", "answers")
#: How many raw replies one row may keep.
MAX_ANSWERS = 100
#: Rows resolved and written at a time by an import (memory holds a batch; the checked rows wait in a spool).
BATCH = 2000


@dataclass(frozen=True)
class JudgeRow:
    """One checked row of a judge file (``line_no``: where it is)."""

    line_no: int
    system: str
    item: str | None
    n: int | None
    line: int | None
    caption: str | None
    p_inaccurate: float
    types: dict[str, float] | None
    spans: tuple
    answers: tuple | None


@dataclass(frozen=True)
class JudgeFile:
    """A judge file as read: the judge's name, its signature and its rows."""

    name: str
    signature: dict
    rows: tuple[JudgeRow, ...]
    source: str = ""


def _probability(value, what: str, src: str, n: int) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise InputError(f"{what} must be a probability from 0 to 1, got {shorten(repr(value))}", src, n)
    return float(value)


def _whole(value, what: str, src: str, n: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**31 - 1:
        raise InputError(f"{what} must be a whole number from 0, got {shorten(repr(value))}", src, n)
    return value


def parse_header(obj, src: str, n: int, judge: str | None = None) -> tuple[str, dict]:
    """(judge name, signature) from the header line; ``judge`` (the import's ``--judge``) wins over its name."""
    if not isinstance(obj, dict) or obj.get("format") != FORMAT_NAME:
        raise InputError(f"the first line must be the header {{\"format\": \"{FORMAT_NAME}\", \"version\": "
                         f"{FORMAT_VERSION}, \"judge\": …, \"model\": …, \"prompt\": …}}", src, n)
    for key in _HEADER_REQUIRED:
        if obj.get(key) is None:
            raise InputError(f"the header has no {key!r}", src, n)
    if obj["version"] != FORMAT_VERSION or isinstance(obj["version"], bool):
        raise InputError(f"version {shorten(repr(obj['version']))} of the judge format is not known; this reads "
                         f"version {FORMAT_VERSION}", src, n)
    name = judge if judge is not None else obj.get("judge")
    if name is None:
        raise InputError("the header names no judge ('judge'); give one with --judge", src, n)
    name = check_judge_name(name, "--judge" if judge is not None else src, None if judge is not None else n)
    signature = {}
    for key, value in obj.items():
        if key in ("format", "version", "judge"):
            continue
        check_text(key, "a header field's name", src, n, max_len=100)
        if isinstance(value, str):
            check_text(value, f"header field {key!r}", src, n, max_len=1000)
        elif not (value is None or isinstance(value, (bool, int, float))):
            raise InputError(f"header field {key!r} must be a text, a number, true/false or null (a setting of the "
                             "judge)", src, n)
        signature[key] = value
    for key in ("model", "prompt"):
        if not isinstance(signature[key], str) or not signature[key].strip():
            raise InputError(f"the header's {key!r} must be a non-empty text", src, n)
    if "k" in signature and (isinstance(signature["k"], bool) or not isinstance(signature["k"], int)
                             or signature["k"] < 1):
        raise InputError(f"the header's 'k' (samples per caption) must be a whole number from 1, got "
                         f"{shorten(repr(signature['k']))}", src, n)
    return name, signature


def _types(value, src: str, n: int) -> dict[str, float] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InputError(f"types must be an object {{type: probability}}, got {shorten(repr(value))}", src, n)
    tax = taxonomy()
    out: dict[str, float] = {}
    for label, p in value.items():
        type_id = tax.resolve_strict(label, src, n)
        if type_id in out:
            raise InputError(f"types names {type_id!r} twice", src, n)
        out[type_id] = _probability(p, f"the probability of {label!r}", src, n)
    return {t: out[t] for t in tax.in_order(out)}


def parse_row(obj, src: str, n: int) -> JudgeRow:
    """Check one decoded row (line ``n`` of ``src``)."""
    if not isinstance(obj, dict):
        raise InputError("each line must be a JSON object", src, n)
    unknown = sorted(set(obj) - set(_ROW_FIELDS))
    if unknown:
        raise InputError(f"unknown field {unknown[0]!r}; a judge row has {', '.join(_ROW_FIELDS)}", src, n)
    if obj.get("system") is None:
        raise InputError("missing field 'system'", src, n)
    if obj.get("item") is None and obj.get("line") is None:
        raise InputError("a row names its caption by 'item' (or by 'line')", src, n)
    if "p_inaccurate" not in obj:
        raise InputError("missing field 'p_inaccurate'", src, n)
    answers = obj.get("answers")
    if answers is not None:
        if not isinstance(answers, list):
            raise InputError(f"answers must be a list of the judge's replies, got {shorten(repr(answers))}", src, n)
        if len(answers) > MAX_ANSWERS:
            raise InputError(f"a row keeps at most {MAX_ANSWERS} answers, got {len(answers)}", src, n)
    try:
        spans = parse_spans(obj.get("spans"))
    except InputError as e:
        raise InputError(e.detail, src, n) from None
    caption = obj.get("caption")
    return JudgeRow(
        line_no=n, system=check_name(obj["system"], "system", src, n),
        item=None if obj.get("item") is None else check_name(obj["item"], "key", src, n),
        n=_whole(obj.get("n"), "n", src, n), line=_whole(obj.get("line"), "line", src, n),
        caption=None if caption is None else check_text(caption, "caption", src, n),
        p_inaccurate=_probability(obj["p_inaccurate"], "p_inaccurate", src, n), types=_types(obj.get("types"), src, n),
        spans=spans, answers=None if answers is None else tuple(answers))


def read_judge_file(path: Path | str, *, judge: str | None = None, source: str | None = None) -> JudgeFile:
    """Read and check a judge file (nothing stored): the header, then one row per caption; the file is read a
    line at a time (memory holds the checked rows, not the file's text)."""
    src = source or str(path)
    rows: list[JudgeRow] = []
    name, signature = _read_rows(path, src, judge, rows.append)
    return JudgeFile(name, signature, tuple(rows), src)


def _read_rows(path: Path | str, src: str, judge: str | None, keep) -> tuple[str, dict]:
    """Read and check a judge file a line at a time, handing each checked row to ``keep``; (judge name,
    signature) from its header."""
    name = signature = None
    count = 0
    for n, raw in file_lines(path, src):
        if not raw.strip():
            continue
        obj = parse_json(raw, src, n)
        if name is None:
            name, signature = parse_header(obj, src, n, judge)
            continue
        if isinstance(obj, dict) and "format" in obj:
            raise InputError("a second header; a judge file has one, on its first line", src, n)
        keep(parse_row(obj, src, n))
        count += 1
    if name is None:
        raise InputError("the file is empty; a judge file starts with its header line", src)
    if not count:
        raise InputError("the file holds a header but no outputs", src)
    return name, signature


def resolve_rows(conn, pid: int, jf: JudgeFile) -> list[JudgeOutput]:
    """The rows as outputs of the project's captions (see :class:`_Resolver`)."""
    with Spool() as spool:
        return _Resolver(conn, pid, jf.source, spool).resolve(jf.rows)


class _Resolver:
    """Rows as outputs of the project's captions, a batch at a time (:meth:`resolve`): each caption found by
    (system, item, n) or (system, n, line), its text compared, its spans checked against it; InputError with the
    line otherwise. A caption given a row before (in any batch) is refused: the lines of the captions resolved
    wait in ``spool``'s bag ``seen``, not in memory."""

    def __init__(self, conn, pid: int, src: str, spool: Spool):
        from ..store.projects import project_system_names
        from ..store.samples import annotated_index
        self.conn, self.pid, self.src, self.spool = conn, pid, src, spool
        self.systems = set(project_system_names(conn, pid))
        self.annotated = annotated_index(conn, pid)
        spool.bag("seen", 1, indexed=True)

    def resolve(self, rows) -> list[JudgeOutput]:
        """The outputs of a batch of rows, in their order."""
        from ..store.judges import caption_index_at
        annotated, src = self.annotated, self.src
        index, by_line = caption_index_at(
            self.conn, self.pid, {(r.system, r.item, self._n(r)) for r in rows if r.item is not None},
            {(r.system, self._n(r), r.line) for r in rows if r.item is None})
        found_cids = [f[0] for f in (*index.values(), *by_line.values())]
        seen = {cid: records[0][1] for cid, records in self.spool.of_keys("seen", found_cids).items()}
        out = []
        for row in rows:
            n = annotated if row.n is None else row.n
            if row.system not in self.systems:
                raise InputError(f"the project has no system {row.system!r}", src, row.line_no)
            if row.item is not None:
                found = index.get((row.system, row.item, n))
                where = f"item {row.item!r}" + (f", sample {n}" if row.n is not None else "")
            else:
                found = by_line.get((row.system, n, row.line))
                where = f"line {row.line}" + (f" of sample {n}" if row.n is not None else "")
            if found is None:
                raise InputError(f"the project has no caption of system {row.system!r} for {where}", src, row.line_no)
            cid, _, text = found
            if row.caption is not None and row.caption != text:
                raise InputError(f"the caption differs from the stored one: {shorten(row.caption)!r} vs "
                                 f"{shorten(text)!r}", src, row.line_no)
            if cid in seen:
                raise InputError(f"this caption has an output on line {seen[cid]} already", src, row.line_no)
            seen[cid] = row.line_no
            self.spool.add("seen", cid, row.line_no)
            try:
                spans = check_spans(row.spans, label="inaccurate", error_types={s.type for s in row.spans},
                                    caption=text)
            except InputError as e:
                raise InputError(e.detail, src, row.line_no) from None
            out.append(JudgeOutput(cid, row.p_inaccurate, row.types, spans, row.answers))
        return out

    def _n(self, row: JudgeRow) -> int:
        return self.annotated if row.n is None else row.n


@dataclass
class JudgeImport:
    """What an import of a judge file stored, and what it replaced."""

    project: str
    judge: str
    signature: dict
    outputs: int
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    replaced: bool = False  # the project had a judge of this name before
    scored_types: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One readable line for the command line and the Data page."""
        from ..judges.outputs import signature_text
        head = (f"judge {self.judge!r} ({signature_text(self.signature)}) in {self.project!r}: "
                f"{self.outputs} captions with outputs, {len(self.scored_types)} error types scored")
        if not self.replaced:
            return head
        return (head + f"; replaced its earlier outputs: {self.added + self.changed + self.removed} captions change "
                f"({self.added} new, {self.changed} changed, {self.removed} removed, {self.unchanged} unchanged)")


def import_judge(store, project: str, path: Path | str, *, judge: str | None = None,
                 source: str | None = None) -> JudgeImport:
    """Import a judge file into ``project``: read and check every line, then replace the judge's outputs in one
    transaction (InputError naming the file and line, and nothing stored, on a bad row). The checked rows wait in
    a spool (a scratch file apart from the store) and are resolved and written a batch at a time: memory holds a
    batch, not the file."""
    from ..store.judges import JudgeWriter, project_judges
    from ..store.projects import project_id
    project = check_name(project, "project", "--project")
    src = source or str(path)
    with Spool() as spool:
        spool.bag("rows", 1)
        name, signature = _read_rows(path, src, judge,
                                     lambda row: spool.add("rows", row.line_no, pickle.dumps(row)))
        types: set[str] = set()
        with store.transaction() as conn:
            pid = project_id(conn, project)
            existed = any(j.name == name for j in project_judges(conn, pid))
            resolver, writer = _Resolver(conn, pid, src, spool), JudgeWriter(conn, pid, name)
            for batch in in_batches((pickle.loads(r[2]) for r in spool.records("rows")), BATCH):
                outputs = resolver.resolve(batch)
                writer.write([o.row() for o in outputs])
                types.update(t for o in outputs if o.types for t in o.types)
            diff = writer.finish(signature, Path(src).name)
    return JudgeImport(project, name, signature, writer.outputs, diff.added, diff.changed, diff.removed,
                       diff.unchanged, existed, list(taxonomy().in_order(types)))


def write_judge_file(judge: JudgeOutputs, places: dict[int, tuple[str, str, int]], out: IO[str]) -> int:
    """Write a judge as a judge file (``places``: caption id → (system, item key, sample n)); returns the rows
    written. What it writes reads back with :func:`import_judge`."""
    header = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "judge": judge.name, **judge.signature}
    out.write(_line(header))
    n = 0
    for cid in sorted(judge.outputs, key=lambda c: places.get(c, ("", "", 0))):
        if cid not in places:
            continue
        o = judge.outputs[cid]
        system, item, sample = places[cid]
        row = {"item": item, "system": system, "n": sample, "p_inaccurate": o.p_inaccurate}
        if o.types is not None:
            row["types"] = o.types
        if o.spans:
            row["spans"] = spans_json(o.spans)
        if o.answers is not None:
            row["answers"] = list(o.answers)
        out.write(_line(row))
        n += 1
    return n


def _line(obj) -> str:
    """One strict JSON line; text with an unpaired surrogate (which no UTF-8 file holds) as escapes."""
    try:
        line = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return line + "\n"


def _run(store, project: str, *, command_line: bool, file, judge=None) -> JudgeImport:
    return import_judge(store, project, file, judge=judge)


def _read(path, judge=None, **_):
    """Read a judge file without storing it (the catalog's reader)."""
    return read_judge_file(path, judge=judge)


FORMAT = ImportFormat(
    name="judge",
    help="an AI judge's outputs per caption (JSONL with a header line; docs/judges.md)",
    title="AI judge outputs (JSONL: a header with the judge's signature, then one caption per line)",
    description="Import an AI judge's outputs: a header line with its signature, then one caption per line with "
                "p_inaccurate, optionally types, spans and answers. A judge of the same name is replaced (the "
                "result says how many captions change). Bad lines are refused with file and line; nothing is "
                "stored then. Judge outputs are stored apart from the human judgements.",
    options=(
        ReaderOption("file", None, "the judge file (.jsonl)", metavar="FILE", kind="file", required=True,
                     label="Judge file", types=("jsonl",)),
        ReaderOption("judge", "--judge", "store it under this name (default: the name in its header)", metavar="NAME",
                     label="Judge name (default: the name in the file's header)"),
    ),
    read=_read,
    run=_run,
    example=Example(files={"file": "judge.jsonl"}, into_sample=True,
                    expect={"judge": "example-vlm", "outputs": 4, "scored_types": ["gender", "clothing_type",
                                                                                 "subject_similar", "number",
                                                                                 "color"]}),
)
