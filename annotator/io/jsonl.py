"""The native JSONL format: one item per line, round-trippable (see docs/formats.md).

An optional first line is a header::

    {"format": "annotator-jsonl", "version": 1, "image_root": "images"}

Every other line is one item::

    {"key": "astronaut.jpg", "image": "astronaut.jpg", "width": 512, "height": 512, "is_practice": false,
     "boxes": [{"id": "1", "label": "woman", "synset": "woman.n.01", "x": 140, "y": 12, "w": 170, "h": 180}],
     "references": [{"text": "A smiling woman …", "mentions": [{"start": 0, "end": 3, "boxes": ["1"], "type": "people"}]}],
     "captions": [{"system": "sat-attn", "line": 0, "n": 0, "text": "…", "mentions": []}]}

A relative ``image_root`` in the header is taken relative to the JSONL file's
directory. ``line`` orders a system's captions (the 0-based caption index that
judgement files refer to); when given for one caption of a system it must be
given for all of them, and the captions are stored in that order. ``n`` (optional,
default 0) is the caption's sample or beam index: a system may give several
captions of one item, each with its own ``n`` (annotation works on ``n`` = 0 unless the project chose another index);
each sample of a system counts its own lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable, Iterator

from ..errors import InputError
from ..images import image_size, is_inside, resolve_image_path
from ..limits import check_text_length
from ..model import Box, Caption, Item, Mention, Project, Reference
from ..names import LONE_SURROGATE
from ..store import Store
from ..store.exchange import project_caption_lines
from ..store.imports import write_item_batches
from ..store.projects import ImportSummary, ProjectWriter, load_project
from .importers import ImportResult, import_guard
from .judgement_rows import first_object, import_judgement_rows, is_judgement_row
from .options import Example, ImportFormat, ReaderOption, image_root_option
from .textfiles import file_lines, parse_json
from .validate import (
    LIMITS, check_coordinate, check_dimension, check_name, check_project, check_text, clean_image_path, resolve_root,
)

FORMAT_NAME = "annotator-jsonl"
FORMAT_VERSION = 1

#: Items read and written at a time by an import (memory holds one batch).
BATCH = 2000

_ITEM_FIELDS = {"key", "image", "width", "height", "is_practice", "boxes", "references", "captions"}


@dataclass
class JsonlProject:
    """What a JSONL file holds: the project, and each system's caption order when ``line`` was given."""

    project: Project
    # system -> (item key, sample index n) -> line
    caption_lines: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)


def _str(value, what: str, src: str, where, *, allow_none: bool = False, allow_empty: bool = True):
    if value is None and allow_none:
        return None
    return check_text(value, what, src, where, allow_empty=allow_empty)


def _text(value, field: str, src: str, where: str) -> str:
    """The text of a reference or caption (``field``): free text within its length limit."""
    return check_text_length(check_text(value, "text", src, where), field, src, where)


def _entries(obj: dict, field: str, src: str, line_no: int, where: str,
             message: str | None = None) -> list[tuple[str, object]]:
    """The entries of the item's list ``field`` (missing or null: none), each with where it stands
    (``{where}, {field}[k]``, k counted from 0 as in the JSON: never to be read as a caption's ``line``);
    InputError ``message`` (default: "``field`` must be a list") for anything else."""
    raw = obj.get(field) or []
    if not isinstance(raw, list):
        raise InputError(message or f"{field} must be a list", src, line_no)
    return [(f"{where}, {field}[{k}]", entry) for k, entry in enumerate(raw)]


def _mentions(raw, text: str, box_ids: set[str] | None, src: str, where: str) -> tuple[Mention, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InputError("mentions must be a list", src, where)
    n_tokens = len(text.split())
    out = []
    for k, m in enumerate(raw):
        w = f"{where}.mentions[{k}]"
        if not isinstance(m, dict):
            raise InputError("a mention must be an object {start, end, boxes, type}", src, w)
        start, end = m.get("start"), m.get("end")
        if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool) or isinstance(end, bool):
            raise InputError("mention start and end must be integers", src, w)
        if not 0 <= start < end <= n_tokens:
            raise InputError(f"mention span {start}..{end} is outside the text's {n_tokens} tokens", src, w)
        boxes = m.get("boxes", [])
        if not isinstance(boxes, list) or not all(isinstance(b, str) for b in boxes):
            raise InputError("mention boxes must be a list of box id strings", src, w)
        for b in boxes:
            check_text(b, "mention box id", src, w)
        if box_ids is not None:
            unknown = [b for b in boxes if b not in box_ids]
            if unknown:
                raise InputError(f"mention points at unknown box {unknown[0]!r}", src, w)
        ptype = m.get("type")
        if ptype is not None:
            check_text(ptype, "mention type", src, w)
        out.append(Mention(start, end, tuple(boxes), ptype))
    return tuple(out)


def parse_item(obj, src: str, line_no: int) -> tuple[Item, dict[tuple[str, int], int]]:
    """Validate one decoded item line; return the Item and its captions' ``line`` values by (system, n)."""
    where = f"line {line_no}"
    if not isinstance(obj, dict):
        raise InputError("each line must be a JSON object", src, line_no)
    unknown = set(obj) - _ITEM_FIELDS
    if unknown:
        raise InputError(f"unknown field {sorted(unknown)[0]!r}", src, line_no)
    if "key" not in obj:
        raise InputError("missing field 'key'", src, line_no)
    key = check_name(obj["key"], "key", src, line_no)
    image = obj.get("image")
    if image is not None:
        image = clean_image_path(image, src, line_no)
    width = check_dimension(obj.get("width"), "width", src, line_no)
    height = check_dimension(obj.get("height"), "height", src, line_no)
    practice = obj.get("is_practice", False)
    if not isinstance(practice, bool):
        raise InputError("is_practice must be true or false", src, line_no)

    boxes = []
    for w, b in _entries(obj, "boxes", src, line_no, where):
        if not isinstance(b, dict):
            raise InputError("a box must be an object {id, label, x, y, w, h}", src, w)
        for f in ("id", "label", "x", "y", "w", "h"):
            if f not in b:
                raise InputError(f"missing field {f!r}", src, w)
        bid = check_name(b["id"], "box id", src, w)
        x, y = check_coordinate(b["x"], "x", src, w), check_coordinate(b["y"], "y", src, w)
        bw, bh = check_coordinate(b["w"], "w", src, w), check_coordinate(b["h"], "h", src, w)
        if bw < 0 or bh < 0:
            raise InputError("box width and height must not be negative", src, w)
        boxes.append(Box(bid, check_text(b["label"], "label", src, w, max_len=LIMITS["label"]), x, y, bw, bh,
                         None if b.get("synset") is None else check_text(b["synset"], "synset", src, w, max_len=LIMITS["synset"])))
    ids = [b.box_id for b in boxes]
    if len(ids) != len(set(ids)):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InputError(f"box id {dup!r} is used twice", src, line_no)
    box_ids = set(ids) if boxes else None

    refs = []
    for w, r in _entries(obj, "references", src, line_no, where):
        if isinstance(r, str):
            refs.append(Reference(_text(r, "reference", src, w)))
            continue
        if not isinstance(r, dict) or "text" not in r:
            raise InputError("a reference must be a string or an object {text, mentions}", src, w)
        text = _text(r["text"], "reference", src, w)
        refs.append(Reference(text, _mentions(r.get("mentions"), text, box_ids, src, w)))

    caps = []
    lines: dict[tuple[str, int], int] = {}
    for w, c in _entries(obj, "captions", src, line_no, where,
                         "captions must be a list of objects {system, text, line, n, mentions}"):
        if not isinstance(c, dict) or "system" not in c or "text" not in c:
            raise InputError("a caption must be an object {system, text, line, n, mentions}", src, w)
        system = check_name(c["system"], "system", src, w)
        sample = c.get("n")
        if sample is None:
            sample = 0
        elif not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
            raise InputError(f"n (the sample index) must be a non-negative integer, got {sample!r}", src, w)
        if any(cap.system == system and cap.n == sample for cap in caps):
            raise InputError(f"system {system!r} has two captions with n = {sample} for this item", src, w)
        text = _text(c["text"], "caption", src, w)
        if "line" in c and c["line"] is not None:
            ln = c["line"]
            if not isinstance(ln, int) or isinstance(ln, bool) or ln < 0:
                raise InputError(f"line must be a non-negative integer, got {ln!r}", src, w)
            lines[(system, sample)] = ln
        caps.append(Caption(system, text, _mentions(c.get("mentions"), text, box_ids, src, w), n=sample))
    item = Item(key=key, image=image, width=int(width) if width is not None else None,
                height=int(height) if height is not None else None, boxes=boxes, references=refs, captions=caps,
                is_practice=practice)
    return item, lines


class JsonlStream:
    """A native JSONL file read a batch of items at a time (the reader every JSONL import and
    :func:`read_jsonl_project` share): memory holds one batch, not the file.

    Opening reads the header (the first line, if it is one) and settles the image root (see
    :func:`read_jsonl_project` for the arguments); :meth:`batches` then checks each item line as
    :func:`parse_item` and :func:`~annotator.io.validate.check_project` do and yields ``(items, their line
    numbers, their captions' given lines by (item key, system, n))``. An item key, or a caption line of a system
    and sample, given twice is refused by the writer (:class:`~annotator.store.projects.ProjectWriter`), which
    finds the earlier one in the store: nothing is kept from one batch to the next, so memory is flat in the
    file's length."""

    def __init__(self, project: str, path: Path | str, *, image_root: Path | str | None = None,
                 relative_header_root: bool = True, trust_root: bool = False):
        self.project, self.src, self.path = project, str(path), Path(path)
        self.items_read = 0
        self.systems: dict[str, None] = {}
        self._lines = file_lines(path)
        self._first = None  # the first item line, read while looking for the header: (n, object)
        header_root = None
        for n, raw in self._lines:
            if not raw.strip():
                continue
            obj = parse_json(raw, self.src, n)
            if not (isinstance(obj, dict) and "format" in obj):
                self._first = (n, obj)
            elif n != 1:
                raise InputError("a header is only allowed on the first line", self.src, n)
            else:
                header_root = _header_root(obj, self.src, n)
            break
        self.root, self.trusted = self._root(image_root, header_root, relative_header_root, trust_root)

    def _root(self, image_root, header_root, relative_header_root: bool, trust_root: bool):
        if image_root is not None:
            root = resolve_root(image_root, trusted=trust_root)
            return root, (root if trust_root else None)
        if header_root and (relative_header_root or Path(header_root).is_absolute()):
            root_path = Path(header_root)
            folder = self.path.resolve().parent
            root = resolve_root(root_path if root_path.is_absolute() else folder / root_path, self.src,
                                trusted=folder if trust_root else False)
            return root, (root if trust_root and is_inside(Path(root), folder) else None)
        return None, None

    def _objects(self):
        if self._first is not None:
            yield self._first
        for n, raw in self._lines:
            if raw.strip():
                obj = parse_json(raw, self.src, n)
                if isinstance(obj, dict) and "format" in obj:
                    raise InputError("a header is only allowed on the first line", self.src, n)
                yield n, obj

    def batches(self, size: int | None = None) -> Iterator[tuple[list[Item], list[int], dict]]:
        """The file's items, ``size`` (default :data:`BATCH`) at a time (see the class); InputError "no items"
        for a file without one."""
        src, size = self.src, size or BATCH
        has_line: dict[str, bool] = {}
        batch: list[Item] = []
        locations: list[int] = []
        given: dict[tuple[str, str, int], int] = {}
        for n, obj in self._objects():
            item, lines = parse_item(obj, src, n)
            for cap in item.captions:
                self.systems.setdefault(cap.system, None)
                present = (cap.system, cap.n) in lines
                if has_line.setdefault(cap.system, present) != present:
                    raise InputError(f"'line' is given for some captions of system {cap.system!r} but not others",
                                     src, n)
                if present:
                    given[(item.key, cap.system, cap.n)] = lines[(cap.system, cap.n)]
            if self.root is not None and item.image is not None:
                # Inside the root, and within the pixel cap every importer applies (the size is read from the
                # file's header only; a missing or unreadable file passes, as elsewhere).
                image_size(resolve_image_path(self.root, item.image, source=src, location=n), source=src, location=n)
            batch.append(item)
            locations.append(n)
            self.items_read += 1
            if len(batch) >= size:
                yield self._checked(batch, locations), locations, given
                batch, locations, given = [], [], {}
        if not self.items_read:
            raise InputError("no items", src)
        if batch:
            yield self._checked(batch, locations), locations, given

    def _checked(self, batch: list[Item], locations: list[int]) -> list[Item]:
        return check_project(Project(name=self.project, image_root=self.root, items=batch,
                                     trusted_image_root=self.trusted), self.src, locations).items

    def header_project(self) -> Project:
        """The project as the header and the arguments give it, without items (what a writer opens with)."""
        return Project(name=check_name(self.project, "project", self.src), image_root=self.root, items=[],
                       trusted_image_root=self.trusted)


def _header_root(obj: dict, src: str, n: int) -> str | None:
    if obj.get("format") != FORMAT_NAME:
        raise InputError(f"unknown format {obj.get('format')!r} (expected {FORMAT_NAME!r})", src, n)
    if obj.get("version", 1) != FORMAT_VERSION:
        raise InputError(f"unsupported version {obj.get('version')!r}", src, n)
    return _str(obj.get("image_root"), "image_root", src, f"line {n}", allow_none=True)


def read_jsonl_project(project: str, path: Path | str, *, image_root: Path | str | None = None,
                       relative_header_root: bool = True, trust_root: bool = False) -> JsonlProject:
    """Read a native JSONL file (nothing stored). ``image_root`` overrides the header's.

    A relative header root is taken relative to the file's folder; with
    ``relative_header_root=False`` (files uploaded through the browser, whose
    folder is temporary) it is ignored instead. Either root must be a folder
    images may be read from (:func:`~annotator.images.check_image_root`); with
    ``trust_root`` (an import run from the command line) that includes
    ``image_root`` itself and, for the header's root, the file's folder.
    The whole project is held in memory: imports stream the file instead (:class:`JsonlStream`).
    """
    stream = JsonlStream(project, path, image_root=image_root, relative_header_root=relative_header_root,
                         trust_root=trust_root)
    proj = stream.header_project()
    caption_lines: dict[str, dict[tuple[str, int], int]] = {}
    seen: dict[str, int] = {}
    lines_seen: set[tuple[str, int, int]] = set()
    for batch, locations, given in stream.batches():
        for item, n in zip(batch, locations):
            if item.key in seen:
                raise InputError(f"item {item.key!r} appears twice", stream.src, n)
            seen[item.key] = n
            for cap in item.captions:  # a caption line given twice: as the writer refuses it (the project is whole)
                line = given.get((item.key, cap.system, cap.n))
                if line is None:
                    continue
                if (cap.system, cap.n, line) in lines_seen:
                    sample = f" (n = {cap.n})" if cap.n else ""
                    raise InputError(f"system {cap.system!r} has caption line {line}{sample} twice", stream.src, n)
                lines_seen.add((cap.system, cap.n, line))
        proj.items.extend(batch)
        for (key, system, sample), line in given.items():
            caption_lines.setdefault(system, {})[(key, sample)] = line
    return JsonlProject(proj, caption_lines)


def item_record(item: Item, lines: dict[tuple[str, int], int] | None = None) -> dict:
    """The JSONL object of one item (``lines``: (system, n) -> caption line of this item)."""
    def mentions(ms):
        return [{"start": m.start, "end": m.end, "boxes": list(m.box_ids), "type": m.phrase_type} for m in ms]

    def num(v: float):
        return int(v) if float(v).is_integer() else v

    caps = []
    for c in item.captions:
        rec = {"system": c.system}
        if lines and (c.system, c.n) in lines:
            rec["line"] = lines[(c.system, c.n)]
        rec["n"] = c.n
        rec["text"] = c.text
        rec["mentions"] = mentions(c.mentions)
        caps.append(rec)
    return {
        "key": item.key,
        "image": item.image,
        "width": item.width,
        "height": item.height,
        "is_practice": bool(item.is_practice),
        "boxes": [{"id": b.box_id, "label": b.label, "synset": b.synset, "x": num(b.x), "y": num(b.y), "w": num(b.w),
                   "h": num(b.h)} for b in item.boxes],
        "references": [{"text": r.text, "mentions": mentions(r.mentions)} for r in item.references],
        "captions": caps,
    }


def write_jsonl(project: Project, out: IO[str], *, caption_lines: dict[int, tuple[str, int]] | None = None,
                image_root: str | None = None) -> int:
    """Write a project as native JSONL (header + one line per item); return the number of items.

    ``caption_lines`` maps caption ids to (system, line) so the captions' order
    survives a round trip. ``image_root`` overrides the project's root in the header.
    """
    root = image_root or project.image_root
    if root and not image_root:
        # A file may be read from anywhere: write the stored root as the absolute folder it means.
        from ..images import effective_image_root
        root = effective_image_root(root)
    header = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "image_root": root}
    out.write(_json_line(header, None))
    n = 0
    for item in project.items:
        lines = None
        if caption_lines:
            lines = {(caption_lines[c.caption_id][0], c.n): caption_lines[c.caption_id][1]
                     for c in item.captions if c.caption_id in caption_lines}
        out.write(_json_line(item_record(item, lines), (",", ":")))
        n += 1
    return n


def _json_line(obj, separators) -> str:
    """One JSONL line: UTF-8 text as it is, control characters escaped by json; a text holding an unpaired
    surrogate (which no UTF-8 file can carry) is written with ``\\udXXX`` escapes instead of failing the export."""
    line = json.dumps(obj, ensure_ascii=False, separators=separators)
    if LONE_SURROGATE.search(line):
        line = json.dumps(obj, ensure_ascii=True, separators=separators)
    return line + "\n"


def iter_records(path: Path | str) -> Iterable[dict]:
    """Decoded item objects of a JSONL file, header skipped (for tools and tests)."""
    with Path(path).open(encoding="utf-8-sig") as fh:
        for n, raw in enumerate(fh, start=1):
            if raw.strip():
                obj = parse_json(raw, str(path), n)
                if not (isinstance(obj, dict) and "format" in obj):
                    yield obj


def write_jsonl_project(conn, data: JsonlProject, *, source: str) -> list[ImportSummary]:
    """Store a read JSONL project inside the caller's transaction, keeping the caption order of each system and
    sample (n)."""
    writer = ProjectWriter(conn, data.project, source=source)
    given = {(key, system, sample): line for system, lines in data.caption_lines.items()
             for (key, sample), line in lines.items()}
    writer.write(data.project.items, given_lines=given)
    return [writer.finish()]


@import_guard
def import_jsonl(store: Store, project: str, path: Path | str, *, image_root: Path | str | None = None,
                 relative_header_root: bool = True, trust_root: bool = False) -> ImportResult:
    """Import a native JSONL file into ``project`` (see :mod:`annotator.io.jsonl` for the arguments).

    A file of judgement rows (a judgements export, :mod:`annotator.io.judgement_rows`) is recognised by its
    first line and imported as judgements of the project's captions.
    """
    project = check_name(project, "project", "--project")
    if is_judgement_row(first_object(path)):
        return import_judgement_rows(store, project, path)
    stream = JsonlStream(project, path, image_root=image_root, relative_header_root=relative_header_root,
                         trust_root=trust_root)
    # One transaction, written a batch at a time as the file is read: memory holds one batch (constant in the
    # file's size), and bad input anywhere rolls every batch back.
    written = write_item_batches(store, stream.header_project(), stream.batches(), source=str(path), key_style=False)
    result = ImportResult(project, "jsonl", items_read=stream.items_read, systems=list(stream.systems))
    result.add(written.summary)
    return result


@import_guard
def export_jsonl(store: Store, project: str, out: IO[str]) -> int:
    """Write ``project`` as native JSONL to ``out``; return the number of items written."""
    proj = load_project(store, project, all_samples=True)
    lines = project_caption_lines(store, project)
    return write_jsonl(proj, out, caption_lines=lines)


def _run(store, project: str, *, command_line: bool, file, image_root=None):
    # An upload's folder is temporary: a relative image root in its header means nothing there.
    return import_jsonl(store, project, file, image_root=image_root, relative_header_root=command_line,
                        trust_root=command_line)


FORMAT = ImportFormat(
    name="jsonl",
    help="the native JSONL format (see docs/formats.md)",
    title="Native JSONL (items of a project export, or judgement rows of a judgements export)",
    options=(
        ReaderOption("file", None, "a JSONL file: items, or judgement rows of a judgements export", metavar="FILE",
                     kind="file", required=True, label="JSONL file", types=("jsonl", "json", "txt")),
        image_root_option("override the image root given in the file's header; "),
    ),
    read=read_jsonl_project,
    run=_run,
    example=Example(files={"file": "example.jsonl"},
                    expect={"items_created": 2, "references": 3, "captions": 2, "boxes": 1, "systems": ["sat-attn"]}),
    creates_store=True,
)
