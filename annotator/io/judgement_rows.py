"""Judgements one row per caption judgement: the judgements export and its JSONL reader.

A row (``COLUMNS``) names the caption as people read it and says who judged it how::

    {"project": "flickr-val", "system": "sat-attn", "item": "1000092795.jpg", "line": 0,
     "caption": "two young men stand in a yard", "annotator": "ali", "kind": "annotation",
     "label": "inaccurate", "error_types": ["number", "activity"],
     "spans": [{"start": 0, "end": 1, "type": "number", "fix": "three"}], "note": "", "seconds": 12.4,
     "revision": 2, "saved_at": "2025-03-01T10:12:44.120301+00:00", "suggested": false}

``suggested`` says whether the annotate panel opened pre-filled from a judge's suggestion when that revision was
saved (null where nothing was recorded: imports, and revisions saved before suggestions existed).
``label`` is null for a caption the annotator skipped; ``kind`` is ``annotation`` (an annotator's own
judgement) or ``adjudication`` (a lead's decision). ``spans`` says which caption tokens each error type is
about (annotator.spans; an empty list when none were marked, and a row without the field has none). CSV and
XLSX exports hold the same columns with the error types joined by ``;`` and the spans as JSON text (empty
when none); they are for people and spreadsheets. The JSONL file (one row per line, no
header) is the one that reads back: ``annotator import jsonl`` recognises it by its first row and stores
every row as a judgement revision (:func:`import_judgement_rows`).

Reading back: a row's caption is found by system and item (or system and line when the item is not
given) and, when the row carries the caption's text, that text must be the stored one. ``project`` and
``line`` are otherwise informational. A row with a revision number keeps it (see :func:`write_records`
for how it meets revisions already stored); a row without one is added as the next revision unless the
current judgement already says the same. Any bad row stops the import with the file and line, and
nothing is stored.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Iterable, Iterator

from ..errors import InputError
from ..limits import check_free_text, check_seconds, check_text_length
from ..model import JudgementKind, Label, Role
from ..spans import Span, check_spans, spans_json
from ..store import Store
from ..store.imports import write_in_batches
from ..store.projects import collect_batch_garbage
from ..store.users import user_name_key
from ..taxonomy import taxonomy
from .importers import ImportResult, import_guard
from .textfiles import file_lines, parse_json, shorten
from .validate import check_name, check_same_caption, check_text

#: The columns of a judgements export, in order.
COLUMNS = ("project", "system", "item", "line", "caption", "annotator", "kind", "label", "error_types", "spans",
           "note", "seconds", "revision", "saved_at", "suggested")
#: How the error types of a row are joined in CSV and XLSX.
TYPE_SEPARATOR = ";"
_KINDS = {k.value for k in JudgementKind}
#: How far past the import's own time a ``saved_at`` may lie (clocks of two machines disagree a little).
FUTURE_TOLERANCE = timedelta(days=1)
_LABELS = {lab.value for lab in Label}


@dataclass(frozen=True)
class JudgementRecord:
    """One row of a judgements file, checked (``line_no``: where it is in the file)."""

    line_no: int
    project: str | None
    system: str
    item: str | None
    line: int | None
    caption: str | None
    annotator: str
    kind: str
    label: str | None
    error_types: tuple[str, ...]
    note: str
    seconds: float
    revision: int | None
    saved_at: datetime | None
    spans: tuple = ()
    suggested: bool | None = None  # the panel opened with a judge's suggestion (None: not recorded)

    @property
    def content(self) -> tuple:
        """What two revisions must share to be the same judgement (label, types, note, seconds, spans)."""
        return (self.label, self.error_types, self.note, self.seconds, self.spans)


# ------------------------------------------------------------------ writing

def format_saved_at(value: datetime | None) -> str | None:
    """A stored time as ISO 8601 in UTC with microseconds (naive times are UTC: SQLite gives them back so)."""
    if value is None:
        return None
    value = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).isoformat(timespec="microseconds")


def _json_value(value):
    if isinstance(value, tuple) and value and isinstance(value[0], Span):
        return spans_json(value)
    if isinstance(value, tuple):
        return list(value)
    if hasattr(value, "item") and callable(value.item):  # numpy scalars from a DataFrame
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_jsonl(rows: Iterable[dict], out: IO[str]) -> int:
    """Write judgement rows (mappings with ``COLUMNS``) as JSON lines; return how many.

    Every line is strict JSON; a text the store somehow holds with an unpaired surrogate is written with
    ``\\u`` escapes rather than failing the export.
    """
    n = 0
    for row in rows:
        obj = {c: _json_value(row[c]) for c in COLUMNS}
        try:
            line = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
            line.encode("utf-8")
        except UnicodeEncodeError:
            line = json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        out.write(line + "\n")
        n += 1
    return n


# ------------------------------------------------------------------ reading

def is_judgement_row(obj) -> bool:
    """True for a decoded JSONL line that is a judgement row (item lines never carry ``annotator``)."""
    return isinstance(obj, dict) and "annotator" in obj and "key" not in obj and "format" not in obj


def first_object(path: Path | str):
    """The first non-empty line of a JSONL file, decoded by the strict reader (None when it is empty or that line
    is not strict JSON: the item reader then names the problem with its line)."""
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                if raw.strip():
                    return parse_json(raw.decode("utf-8-sig"))
    except (OSError, ValueError, InputError):
        return None
    return None


def _optional_text(obj: dict, field: str, src: str, n: int) -> str | None:
    value = obj.get(field)
    return None if value is None else check_text(value, field, src, n)


def _caption_text(obj: dict, src: str, n: int) -> str | None:
    """The row's ``caption`` (None when not given): text within a caption's limit, compared with the project's
    when the row is stored."""
    text = _optional_text(obj, "caption", src, n)
    return None if text is None else check_text_length(text, "caption", src, n)


def _whole(value, field: str, src: str, n: int, *, minimum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= 2**31 - 1:
        raise InputError(f"{field} must be a whole number from {minimum}, got {shorten(repr(value))}", src, n)
    return value


def _types(value, label: str | None, src: str, n: int) -> tuple[str, ...]:
    if value is None or value == "":
        raw: list = []
    elif isinstance(value, str):
        raw = [part for part in value.replace(TYPE_SEPARATOR, " ").split() if part]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        raw = value
    else:
        raise InputError(f"error_types must be a list of error type ids, got {shorten(repr(value))}", src, n)
    tax = taxonomy()
    types = tax.validate_ids([tax.resolve_strict(v, src, n) for v in raw], src, n)
    if types and label != Label.INACCURATE.value:
        raise InputError(f"{'a skipped' if label is None else 'an accurate'} caption has no error types", src, n)
    return types


def parse_saved_at(value, src: str, n) -> datetime | None:
    """A saved time as ISO 8601 read into UTC (None stays None); InputError naming ``src`` and ``n`` when it is not
    one, or lies more than :data:`FUTURE_TOLERANCE` in the future."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"saved_at must be an ISO 8601 time, got {shorten(repr(value))}", src, n)
    try:
        at = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InputError(f"saved_at {shorten(value)!r} is not an ISO 8601 time", src, n) from None
    try:
        at = at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at.astimezone(timezone.utc)
    except OverflowError:  # a time at the very edge of the calendar, moved by its offset beyond it
        raise InputError(f"saved_at {shorten(value)!r} is not a time a judgement can have been saved", src, n) from None
    if at > datetime.now(timezone.utc) + FUTURE_TOLERANCE:
        raise InputError(f"saved_at {shorten(value)!r} lies in the future; a judgement is saved before it is "
                         "exported", src, n)
    return at


def parse_record(obj, src: str, n: int) -> JudgementRecord:
    """Check one decoded judgement row (line ``n`` of ``src``)."""
    if not isinstance(obj, dict):
        raise InputError("each line must be a JSON object", src, n)
    unknown = sorted(set(obj) - set(COLUMNS))
    if unknown:
        raise InputError(f"unknown field {unknown[0]!r}; a judgement row has {', '.join(COLUMNS)}", src, n)
    for field in ("system", "annotator"):
        if obj.get(field) is None:
            raise InputError(f"missing field {field!r}", src, n)
    if obj.get("item") is None and obj.get("line") is None:
        raise InputError("a row names its caption by 'item' (or by 'line')", src, n)
    kind = obj.get("kind", JudgementKind.ANNOTATION.value)
    if kind not in _KINDS:
        raise InputError(f"unknown kind {shorten(repr(kind))}; expected 'annotation' or 'adjudication'", src, n)
    label = obj.get("label")
    if label == "":
        label = None
    if label is not None and label not in _LABELS:
        raise InputError(f"unknown label {shorten(repr(label))}; expected 'accurate', 'inaccurate' or null (skipped)",
                         src, n)
    seconds = check_seconds(obj.get("seconds"), "seconds", src, n)
    error_types = _types(obj.get("error_types"), label, src, n)
    try:
        spans = check_spans(obj.get("spans"), label=label, error_types=error_types)
    except InputError as e:
        raise InputError(e.detail, src, n) from None
    return JudgementRecord(
        line_no=n,
        project=_optional_text(obj, "project", src, n),
        system=check_name(obj["system"], "system", src, n),
        item=None if obj.get("item") is None else check_name(obj["item"], "key", src, n),
        line=_whole(obj.get("line"), "line", src, n, minimum=0),
        caption=_caption_text(obj, src, n),
        annotator=check_name(obj["annotator"], "user", src, n),
        kind=kind, label=label, error_types=error_types, spans=spans,
        note="" if obj.get("note") is None else check_free_text(obj["note"], "note", src, n),
        seconds=seconds,
        revision=_whole(obj.get("revision"), "revision", src, n, minimum=1),
        saved_at=parse_saved_at(obj.get("saved_at"), src, n),
        suggested=_suggested(obj.get("suggested"), src, n))


def _suggested(value, src: str, n: int) -> bool | None:
    """The row's ``suggested``: true, false or null (not recorded)."""
    if value is None or isinstance(value, bool):
        return value
    raise InputError(f"suggested must be true, false or null, got {shorten(repr(value))}", src, n)


def read_judgement_rows(path: Path | str, *, source: str | None = None) -> list[JudgementRecord]:
    """Read and check a JSONL file of judgement rows (nothing stored).

    Refused, with the line: a line that is not a judgement row, a row of another project than the first
    row's, and one revision of the same judgement given twice. The whole file is returned: an import streams it
    (:func:`iter_judgement_rows`).
    """
    return list(iter_judgement_rows(path, source=source))


def _revision_key(rec: JudgementRecord) -> tuple:
    return (rec.system, rec.item, rec.line, user_name_key(rec.annotator), rec.kind, rec.revision)


def iter_judgement_rows(path: Path | str, *, source: str | None = None) -> Iterator[JudgementRecord]:
    """The rows of a JSONL file of judgement rows, read and checked one line at a time (as
    :func:`read_judgement_rows`). A row that repeats a revision is found by the hash of its judgement and
    revision (one integer a numbered row), confirmed by reading the file again up to it (rare: only then)."""
    src = source or str(path)
    seen: set[int] = set()
    project = None
    found = False
    for n, raw in file_lines(path):
        if not raw.strip():
            continue
        obj = parse_json(raw, src, n)
        if not is_judgement_row(obj):
            raise InputError("not a judgement row (an item line? a file holds either items or judgements)", src, n)
        rec = parse_record(obj, src, n)
        if rec.project is not None:
            if project is None:
                project = rec.project
            elif rec.project != project:
                raise InputError(f"row of project {rec.project!r} in a file of project {project!r}", src, n)
        if rec.revision is not None:
            key = _revision_key(rec)
            if hash(key) in seen:
                earlier = _earlier_line(path, src, key, n)
                if earlier is not None:
                    raise InputError(f"revision {rec.revision} of this judgement is also on line {earlier}", src, n)
            seen.add(hash(key))
        found = True
        yield rec
    if not found:
        raise InputError("no judgement rows", src)


def _earlier_line(path, src: str, key: tuple, before: int) -> int | None:
    """The first line before line ``before`` whose row is revision ``key`` (None: only a hash was shared)."""
    for n, raw in file_lines(path):
        if n >= before:
            return None
        if raw.strip():
            rec = parse_record(parse_json(raw, src, n), src, n)
            if rec.revision is not None and _revision_key(rec) == key:
                return n
    return None


# ------------------------------------------------------------------ storing

def _accounts(conn, records: list[JudgementRecord], source: str, ids: dict[str, int], created: dict[str, str]) -> None:
    """Fill ``ids`` (user id per name key) for the rows' annotators, creating the missing ones (lead when any of
    their rows is an adjudication) and naming them in ``created`` (name key → name, in the order created); an
    account this import created as an annotator's becomes a lead's when a later batch holds an adjudication of
    theirs. InputError for an adjudication row under an account that may not adjudicate."""
    from ..accounts.access import LEADS
    from ..store.users import get_user_row, update_user, user_id
    adjudicating = {user_name_key(r.annotator) for r in records if r.kind == JudgementKind.ADJUDICATION.value}
    done: set[str] = set()
    for rec in records:
        key = user_name_key(rec.annotator)
        if key in done:
            continue
        done.add(key)
        if key in created:
            if key in adjudicating:
                update_user(conn, created[key], role=Role.LEAD)
            continue
        row = get_user_row(conn, rec.annotator)
        if row is None:
            created[key] = rec.annotator
        elif key in adjudicating and Role(row.role) not in LEADS:
            first = next(r for r in records if user_name_key(r.annotator) == key
                         and r.kind == JudgementKind.ADJUDICATION.value)
            raise InputError(f"an adjudication under {rec.annotator!r}, whose account is an {row.role}'s: only a "
                             "lead or an admin adjudicates (import it under a lead's name, or change the account's "
                             "role first); nothing was imported", source, first.line_no)
        if key not in ids:
            ids[key] = user_id(conn, rec.annotator, create_role=Role.LEAD if key in adjudicating else Role.ANNOTATOR)


def _check_no_gap(stored: set[int], numbered: list[JudgementRecord], source: str) -> None:
    """InputError naming the first row whose revision leaves a hole in one judgement's revisions (stored and
    in the file together): saves number revisions 1, 2, 3 …, so a hole means a revision was lost."""
    revisions = stored | {r.revision for r in numbered}
    if not revisions:
        return
    missing = sorted(set(range(min(revisions), max(revisions) + 1)) - revisions)
    if not missing:
        return
    rec = next(r for r in numbered if r.revision > missing[0])
    gap = f"revision {missing[0]} is" if len(missing) == 1 else f"revisions {', '.join(map(str, missing[:5]))}" + (
        " …" if len(missing) > 5 else "") + " are"
    raise InputError(f"revision {rec.revision} of {rec.annotator!r}'s {rec.kind} of this caption leaves a gap: "
                     f"{gap} neither stored nor in the file (export with --history to carry every revision); "
                     "nothing was imported", source, rec.line_no)


@dataclass(frozen=True)
class RowsWritten:
    """What :func:`write_records` stored."""

    revisions: int
    unchanged: int
    annotators: tuple[str, ...]
    spans: int = 0  # error spans stored with those revisions
    created: tuple[str, ...] = ()  # accounts created for annotators the store did not know


def _caption_of(rec: JudgementRecord, index: dict, by_line: dict, src: str) -> int:
    if rec.item is not None:
        found = index.get((rec.system, rec.item))
        if found is None:
            raise InputError(f"the project has no caption of system {rec.system!r} for item {rec.item!r}",
                             src, rec.line_no)
    else:
        found = by_line.get((rec.system, rec.line))
        if found is None:
            raise InputError(f"system {rec.system!r} of the project has no caption at caption line {rec.line} "
                             "(counted from 0)", src, rec.line_no)
    caption_id, _, text = found
    if rec.caption is not None:
        named = f"item {rec.item!r}" if rec.item is not None else f"caption line {rec.line}"
        check_same_caption(rec.caption, text, src, rec.line_no, which=f" (system {rec.system!r}, {named})")
    if rec.spans:
        try:
            check_spans(rec.spans, label=rec.label, error_types=rec.error_types, caption=text)
        except InputError as e:
            raise InputError(e.detail, src, rec.line_no) from None
    return caption_id


#: Rows read and written at a time by an import (memory holds one batch; a judgement's rows that stand together
#: in the file are never split between two batches).
BATCH = 5000


def write_records(store: Store, project: str, records: Iterable[JudgementRecord], *, source: str) -> RowsWritten:
    """Store checked rows in one transaction, the store's (InputError, and nothing is stored, on a conflict).

    For each judgement (caption, annotator, kind), rows are taken in revision order:

    * a revision the store holds already must say the same (label, types, note, seconds): it is left alone;
      a different one is a conflict, refused;
    * a newer revision than every stored one is stored under its number with its time and becomes the
      current judgement; an older one missing from the store joins the history;
    * a row without a revision is added as the next one, unless the current judgement says the same.

    Annotators unknown to the store are created without a password (role annotator; lead when any of their
    rows is an adjudication), as every import does. Refused as well, naming the row: an adjudication under
    an account that may not adjudicate (an annotator's or an analyst's), and revisions that would leave a gap
    in a judgement's history (those stored and those in the file together must run on without a hole, as
    saves number them; the lowest may be above 1, as in an export of current judgements only).

    The rows are written :data:`BATCH` at a time as ``records`` yields them, the rows of one judgement that
    follow each other in one batch (an export lists them so); a batch compares its rows with what the store
    holds by then, the earlier batches' revisions included.
    """
    return write_in_batches(store, project, _batches(records), lambda conn, pid: _RowsWriter(conn, pid, source)).written()


def _judgement_of(rec: JudgementRecord) -> tuple:
    return (rec.system, rec.item, rec.line if rec.item is None else None, user_name_key(rec.annotator), rec.kind)


def _batches(records: Iterable[JudgementRecord]) -> Iterator[list[JudgementRecord]]:
    batch: list[JudgementRecord] = []
    for rec in records:
        if len(batch) >= BATCH and _judgement_of(rec) != _judgement_of(batch[-1]):
            yield batch
            batch = []
            collect_batch_garbage()
        batch.append(rec)
    if batch:
        yield batch


class _RowsWriter:
    """:func:`write_records` a batch at a time: what was written so far, and the accounts met."""

    def __init__(self, conn, pid: int, source: str):
        self.conn, self.pid, self.source = conn, pid, source
        self.users: dict[str, int] = {}
        self.created: dict[str, str] = {}
        self.names: dict[str, None] = {}
        self.revisions = self.unchanged = self.spans = 0

    def write(self, records: list[JudgementRecord]) -> None:
        from ..store.exchange import caption_index_of, stored_revisions
        from ..store.judgements import insert_judgement
        conn, source = self.conn, self.source
        index, by_line = caption_index_of(conn, self.pid, {(r.system, r.item) for r in records if r.item is not None},
                                          {(r.system, r.line) for r in records if r.item is None})
        targets = [(_caption_of(rec, index, by_line, source), rec) for rec in records]
        _accounts(conn, [rec for _, rec in targets], source, self.users, self.created)
        stored = stored_revisions(conn, [cid for cid, _ in targets])
        tax = taxonomy()
        groups: dict[tuple, list[JudgementRecord]] = {}
        for cid, rec in targets:
            groups.setdefault((cid, self.users[user_name_key(rec.annotator)], rec.kind), []).append(rec)
            self.names.setdefault(rec.annotator, None)
        for (cid, uid, kind), recs in groups.items():
            # Compared with the stored types in taxonomy order (every save stores them so; old data may not be).
            have = {rev: (label, tax.in_order(types), note, seconds, spans)
                    for rev, (label, types, note, seconds, spans) in stored.get((cid, uid, kind), {}).items()}
            numbered = sorted((r for r in recs if r.revision is not None), key=lambda r: r.revision)
            _check_no_gap(set(have), numbered, source)
            for rec in numbered + [r for r in recs if r.revision is None]:
                if rec.revision is not None and rec.revision in have:
                    if have[rec.revision] != rec.content:
                        raise InputError(f"revision {rec.revision} of {rec.annotator!r}'s {rec.kind} of this caption "
                                         "is stored already and says something else; nothing was imported",
                                         source, rec.line_no)
                    self.unchanged += 1
                    continue
                if rec.revision is None and have and have[max(have)] == rec.content:
                    self.unchanged += 1
                    continue
                revision = insert_judgement(conn, cid, uid, label=rec.label, error_types=rec.error_types,
                                            note=rec.note, seconds=rec.seconds, kind=rec.kind, at=rec.saved_at,
                                            revision=rec.revision, spans=rec.spans, suggested=rec.suggested)
                have[revision] = rec.content
                self.revisions += 1
                self.spans += len(rec.spans or ())

    def written(self) -> RowsWritten:
        names = tuple(sorted(self.names, key=str.casefold))
        return RowsWritten(self.revisions, self.unchanged, names, self.spans, tuple(self.created.values()))


@import_guard
def import_judgement_rows(store: Store, project: str, path: Path | str, *, source: str | None = None) -> ImportResult:
    """Import a JSONL file of judgement rows into ``project`` (rules in :func:`annotator.io.judgement_rows.write_records`),
    reading it a line at a time as its batches are written."""
    project = check_name(project, "project", "--project")
    src = source or str(path)
    return store_records(store, project, iter_judgement_rows(path, source=src), source=src,
                         format_name="judgement rows")


def store_records(store: Store, project: str, records: Iterable[JudgementRecord], *, source: str,
                  format_name: str) -> ImportResult:
    """Store checked judgement records in one transaction (:func:`write_records`, as ``records`` yields them) and
    say what was stored; the last step of every importer of judgement rows (JSONL, Label Studio)."""
    read = _Counted(records)
    written = write_records(store, project, read, source=source)
    return ImportResult(project, format_name, items_read=read.count, judgements=written.revisions,
                        unchanged=written.unchanged, user=", ".join(written.annotators),
                        systems=list(read.systems), spans=written.spans, accounts=list(written.created))


class _Counted:
    """The records of an iterable as they pass, counted, with their systems in the order met."""

    def __init__(self, records: Iterable[JudgementRecord]):
        self.records, self.count, self.systems = records, 0, {}

    def __iter__(self):
        for rec in self.records:
            self.count += 1
            self.systems.setdefault(rec.system, None)
            yield rec
