"""Human scores: per-caption judgements read from a CSV/TSV or from one number per line.

A reader only: it turns a file into :class:`ScoreRecord` objects and never
touches the database. :func:`annotator.io.human_scores.import_human_scores`
resolves the records against a project's captions (:func:`resolve_scores`) and
stores them in one transaction; :func:`annotator.diversity.correlation.read_metric_scores`
reads per-caption metric values in the same form.

**CSV (or TSV)** with a header row. A caption is named by key columns
(header names are matched case-insensitively):

* ``item`` and ``system``: the item key (as imported, e.g. the image file name)
  and the system name; or
* ``system`` and ``line``: the system name and the 0-based line of the caption
  in that system's captions file (the first caption is line 0).

If both ``item`` and ``line`` are present they must name the same caption.
Every other column is a score column named by its header (or only the columns
given as ``columns``); its cells are numbers, an empty cell means "no score".
Alternatively a *long* file has the key columns plus ``name`` and ``value``
columns, one score per row. A ``.tsv`` file is tab-separated.

**One score per line** (``system`` and ``name`` given): line *i* of the file is
the score of the system's caption on line *i*; the file must have exactly one
line per caption (a trailing newline is fine).

Anything malformed (a non-number, a missing key column, a caption scored twice
under one name, an unknown item or system) raises
:class:`~annotator.errors.InputError` naming the file and line.

The module-level ``NAME``, ``HELP``, ``OPTIONS``, ``EXAMPLE`` and :func:`read`
describe the format; ``FORMAT`` is its entry in the importer catalog
(:mod:`annotator.exchange.catalog`), for the command line and the Data page.
"""

from __future__ import annotations

import csv
import io
import re
from array import array
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from ..errors import InputError
from ..store import Store
from ..store.human_scores import write_score_batches
from ..store.projects import collect_batch_garbage
from .importers import import_guard
from .options import EXAMPLES_DIR, Example, ImportFormat, ReaderOption
from .validate import check_name, parse_float, parse_int

__all__ = ["HumanScoreImport", "import_human_scores", "NAME", "HELP", "OPTIONS", "EXAMPLE", "FORMAT", "ScoreRecord", "read",
           "read_scores_csv", "read_score_lines", "iter_scores", "iter_scores_csv", "iter_score_lines", "resolve_scores",
           "ScoreTally", "source_name"]

#: The format's name on the command line (``annotator import human-scores``).
NAME = "human-scores"
HELP = "per-caption human judgement scores: a CSV/TSV with key columns, or one score per line for one system"
#: Options of :func:`read`, beyond the file.
OPTIONS = (
    ReaderOption("system", "--system", "the file has one score per line for this system's captions (needs --name)",
                 metavar="S", label="System (only for a file of one score per line)"),
    ReaderOption("name", "--name", "score name of a one-score-per-line file", metavar="NAME",
                 label="Score name (only for a file of one score per line)"),
    ReaderOption("columns", "--columns", "CSV: read only these score columns", metavar="A,B", kind="list",
                 label="Score columns to read (optional, comma-separated)"),
)
#: An example file for the sample project (its items and systems).
EXAMPLE = EXAMPLES_DIR / NAME / "human_scores.csv"

_KEY_COLUMNS = ("item", "system", "line")


@dataclass(frozen=True)
class ScoreRecord:
    """One score from a file, with the key that names its caption and where it was read."""

    line: int
    system: str
    name: str
    value: float
    item: str | None = None
    index: int | None = None


def _number(text: str, source: str, line: int, column: str) -> float | None:
    text = text.strip()
    if text == "":
        return None
    return parse_float(text, column, source, line)


def source_name(path_or_text, source: str | None) -> str:
    """The name messages give the input: ``source``, the path, a file object's name, or ``input``."""
    if source:
        return source
    if isinstance(path_or_text, (str, Path)):
        return str(path_or_text)
    return getattr(path_or_text, "name", None) or "input"


#: Scores read, resolved and written at a time by an import (memory holds one batch).
BATCH = 5000
_LONE_CR = re.compile(r"\r(?!\n)")


def _text_lines(path_or_text, name: str) -> Iterator[str]:
    """The lines of a path (str or Path), bytes, or a file object (text or binary), one at a time with their
    line ends (memory holds one line, whatever the input's size); bytes are decoded as UTF-8, a byte-order mark at
    the start dropped. InputError naming the line of a byte that is not UTF-8, or the file when it cannot be read."""
    if isinstance(path_or_text, (str, Path)):
        try:
            fh = open(path_or_text, "rb")
        except OSError as exc:
            raise InputError(f"cannot read the file ({exc.strerror or exc})", name) from None
        with fh:
            yield from _decoded(fh, name)
    elif isinstance(path_or_text, bytes):
        yield from _decoded(io.BytesIO(path_or_text), name)
    else:
        yield from _decoded(path_or_text, name)


def _decoded(lines: Iterable, name: str) -> Iterator[str]:
    offset = 0
    for n, raw in enumerate(lines, start=1):
        if isinstance(raw, str):
            yield raw.lstrip("\ufeff") if n == 1 else raw
            continue
        try:
            yield raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"the file is not UTF-8 text (byte {offset + exc.start}: {exc.reason})", name, n) from None
        offset += len(raw)


def _csv_lines(path_or_text, name: str) -> Iterator[str]:
    """:func:`_text_lines` cut at a lone carriage return as well, as a CSV file's lines are (``newline=""``)."""
    for line in _text_lines(path_or_text, name):
        if "\r" in line:
            start = 0
            for m in _LONE_CR.finditer(line):
                yield line[start:m.end()]
                start = m.end()
            if start < len(line):
                yield line[start:]
        else:
            yield line


def read_scores_csv(path_or_text, *, source: str | None = None, columns: Sequence[str] | None = None,
                    delimiter: str | None = None) -> list[ScoreRecord]:
    """Parse a CSV/TSV of human scores (see the module documentation) into records.

    ``path_or_text``: a path, the file's bytes, or a file object.
    ``columns``: read only these score columns (others are ignored).
    Raises InputError (file and line) for anything malformed. The records of the whole file are returned: an
    import streams them instead (:func:`iter_scores_csv`).
    """
    return list(iter_scores_csv(path_or_text, source=source, columns=columns, delimiter=delimiter))


def iter_scores_csv(path_or_text, *, source: str | None = None, columns: Sequence[str] | None = None,
                    delimiter: str | None = None) -> Iterator[ScoreRecord]:
    """The records of a CSV/TSV of human scores (as :func:`read_scores_csv`), read one line at a time."""
    name = source_name(path_or_text, source)
    if delimiter is None:
        delimiter = "\t" if name.lower().endswith(".tsv") else ","
    reader = csv.reader(_csv_lines(path_or_text, name), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("the file is empty; expected a header row", name, 1) from None
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc})", name, 1) from None
    cols = [h.strip() for h in header]
    lower = [c.lower() for c in cols]
    if len(set(lower)) != len(lower):
        dup = next(c for c in lower if lower.count(c) > 1)
        raise InputError(f"column {dup!r} appears twice in the header", name, 1)
    pos = {c: i for i, c in enumerate(lower)}
    if "system" not in pos or not ("item" in pos or "line" in pos):
        raise InputError("the header needs a 'system' column and an 'item' or 'line' column to name each caption "
                         f"(found: {', '.join(cols) or 'nothing'})", name, 1)
    long_form = "name" in pos and "value" in pos
    if long_form:
        score_cols: list[tuple[int, str]] = []
    else:
        candidates = [(i, c) for i, c in enumerate(cols) if lower[i] not in _KEY_COLUMNS]
        if columns is not None:
            wanted = {c.strip().lower(): c for c in columns}
            missing = [c for k, c in wanted.items() if k not in pos]
            if missing:
                raise InputError(f"no score column called {missing[0]!r} (found: {', '.join(cols)})", name, 1)
            candidates = [(i, c) for i, c in candidates if c.lower() in wanted]
        score_cols = []
        for i, c in candidates:
            if c == "":
                raise InputError(f"score column {i + 1} has no name in the header", name, 1)
            score_cols.append((i, check_name(c, "score name", name, 1)))
        if not score_cols:
            raise InputError("no score column: give score columns next to the key columns, or 'name' and 'value'", name, 1)
    found = False
    line = reader.line_num
    while True:
        start = line + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(f"malformed CSV ({exc})", name, start) from None
        line = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(cols):
            raise InputError(f"{len(row)} fields but the header has {len(cols)}", name, start)
        system = row[pos["system"]].strip()
        if not system:
            raise InputError("the system is empty", name, start)
        system = check_name(system, "system", name, start)
        item = row[pos["item"]].strip() if "item" in pos else None
        index = None
        if "line" in pos:
            index = parse_int(row[pos["line"]].strip(), "line (the 0-based caption line)", name, start)
            if index < 0:
                raise InputError(f"line: {index} is negative; caption lines count from 0", name, start)
        if item is not None and item == "" and index is None:
            raise InputError("the item is empty", name, start)
        if item == "":
            item = None
        elif item is not None:
            item = check_name(item, "key", name, start)
        if long_form:
            score_name = row[pos["name"]].strip()
            if not score_name:
                raise InputError("the score name is empty", name, start)
            score_name = check_name(score_name, "score name", name, start)
            if columns is not None and score_name.lower() not in {c.strip().lower() for c in columns}:
                continue
            value = _number(row[pos["value"]], name, start, "value")
            if value is not None:
                found = True
                yield ScoreRecord(start, system, score_name, value, item, index)
        else:
            for i, c in score_cols:
                value = _number(row[i], name, start, c)
                if value is not None:
                    found = True
                    yield ScoreRecord(start, system, c, value, item, index)
    if not found:
        raise InputError("the file holds no score", name)


def read_score_lines(path_or_text, system: str, name: str, *, source: str | None = None) -> list[ScoreRecord]:
    """Parse a one-score-per-line file for ``system``: line i scores the caption on line i (0-based)."""
    return list(iter_score_lines(path_or_text, system, name, source=source))


def iter_score_lines(path_or_text, system: str, name: str, *, source: str | None = None) -> Iterator[ScoreRecord]:
    """The records of a one-score-per-line file (as :func:`read_score_lines`), read one line at a time."""
    src = source_name(path_or_text, source)
    if not name or not name.strip():
        raise InputError("a score name is needed for a one-score-per-line file", src)
    name = check_name(name, "score name", "--name")
    system = check_name(system, "system", "--system")
    i = -1
    for i, raw in enumerate(_text_lines(path_or_text, src)):
        raw = raw[:-1] if raw.endswith("\n") else raw
        raw = raw.rstrip("\r")
        if raw.strip() == "":
            raise InputError("the line is empty; every caption needs a score", src, i + 1)
        yield ScoreRecord(i + 1, system, name, _number(raw, src, i + 1, name), None, i)
    if i < 0:
        raise InputError("the file holds no score", src)


def read(path_or_text, *, system: str | None = None, name: str | None = None, columns: Sequence[str] | None = None,
         source: str | None = None) -> list[ScoreRecord]:
    """Read a human-score file: one score per line for ``system`` (named ``name``), else a CSV/TSV with key columns."""
    return list(iter_scores(path_or_text, system=system, name=name, columns=columns, source=source))


def iter_scores(path_or_text, *, system: str | None = None, name: str | None = None,
                columns: Sequence[str] | None = None, source: str | None = None) -> Iterator[ScoreRecord]:
    """:func:`read`, one record at a time as the file is read."""
    if system is not None:
        return iter_score_lines(path_or_text, system, name or "", source=source)
    return iter_scores_csv(path_or_text, source=source, columns=columns)


def resolve_scores(records: Sequence[ScoreRecord], keys, source: str, *, whole_system: bool = False) -> list[tuple[int, str, float]]:
    """(caption id, score name, value) for each record, resolved with a project's caption keys.

    ``keys``: :class:`annotator.store.human_scores.CaptionKeys`. InputError for an unknown system, item or
    line, or a caption scored twice under one name.
    """
    tally = ScoreTally(source)
    rows = tally.resolve(records, keys)
    tally.finish(whole_system=whole_system)
    return rows


class ScoreTally:
    """Records resolved a batch at a time (:meth:`resolve`), and what a whole file must satisfy checked at its end
    (:meth:`finish`): no caption scored twice under one name, and for a one-score-per-line file one score per
    caption. Each score resolved costs 16 bytes (its caption and name in one integer, and its line), not a
    record."""

    def __init__(self, source: str):
        self.source = source
        self.records = 0
        self.first_system: str | None = None
        self.lines: dict[str, int] = {}  # system -> captions (from the keys)
        self.systems: dict[str, None] = {}
        self.names: dict[str, int] = {}  # score name -> its number, in the order first resolved
        self._codes = array("q")  # caption id << 24 | name number, per row resolved
        self._at = array("q")  # the file line of each
        self.captions = 0  # distinct captions scored, counted by finish()

    def resolve(self, records: Iterable[ScoreRecord], keys) -> list[tuple[int, str, float]]:
        """(caption id, score name, value) of each record (see :func:`resolve_scores`)."""
        rows = []
        source = self.source
        self.lines = keys.lines
        here: dict[int, int] = {}  # the batch's codes -> line: one statement may not write a row twice
        for r in records:
            self.records += 1
            if self.first_system is None:
                self.first_system = r.system
            self.systems.setdefault(r.system, None)
            if r.system not in keys.lines:
                known = ", ".join(sorted(keys.lines)) or "none"
                raise InputError(f"the project has no system called {r.system!r} (systems: {known})", source, r.line)
            cid = None
            if r.index is not None:
                cid = keys.by_system_line.get((r.system, r.index))
                if cid is None:
                    n = keys.lines[r.system]
                    raise InputError(f"caption line {r.index} is out of range: system {r.system!r} has {n} captions "
                                     f"(lines 0..{n - 1})", source, r.line)
            if r.item is not None:
                if r.item not in keys.item_keys:
                    raise InputError(f"the project has no item {r.item!r}", source, r.line)
                by_item = keys.by_item_system.get((r.item, r.system))
                if by_item is None:
                    raise InputError(f"system {r.system!r} has no caption for item {r.item!r}", source, r.line)
                if cid is not None and cid != by_item:
                    raise InputError(f"item {r.item!r} and line {r.index} name different captions of {r.system!r}",
                                     source, r.line)
                cid = by_item
            number = self.names.setdefault(r.name, len(self.names))
            if number >= 1 << 24:
                raise InputError(f"more than {1 << 24} score names", source, r.line)
            code = cid << 24 | number
            if code in here:
                raise InputError(f"this caption already has a {r.name!r} score on line {here[code]}", source, r.line)
            here[code] = r.line
            self._codes.append(code)
            self._at.append(r.line)
            rows.append((cid, r.name, r.value))
        return rows

    def finish(self, *, whole_system: bool = False) -> None:
        """InputError at the first line that scores a caption scored before under the same name; for a
        one-score-per-line file (``whole_system``), unless the file scores each of the system's captions."""
        codes, at = self._codes, self._at
        repeat = None  # (line, line of the first score, name number) of the first score that repeats one
        distinct = 0
        code = cid = first = None
        seconds = False
        # Sorted by code, stably: the scores of one caption and name stand together in file order.
        for i in sorted(range(len(codes)), key=codes.__getitem__):
            if codes[i] != code:
                code, first, seconds = codes[i], at[i], False
                if code >> 24 != cid:
                    cid, distinct = code >> 24, distinct + 1
            elif not seconds:
                seconds = True
                if repeat is None or at[i] < repeat[0]:
                    repeat = (at[i], first, code & 0xFFFFFF)
        if repeat is not None:
            name = next(n for n, number in self.names.items() if number == repeat[2])
            raise InputError(f"this caption already has a {name!r} score on line {repeat[1]}", self.source, repeat[0])
        self.captions = distinct
        if whole_system and self.records:
            n = self.lines.get(self.first_system, 0)
            if self.records != n:
                raise InputError(f"{self.records} scores but system {self.first_system!r} has {n} captions; "
                                 "a one-score-per-line file needs exactly one line per caption", self.source,
                                 self.records)


@dataclass(frozen=True)
class HumanScoreImport:
    """What a human-score import wrote."""

    source: str
    project: str
    names: tuple[str, ...]
    systems: tuple[str, ...]
    captions: int
    values: int
    replaced: int = 0

    def describe(self) -> str:
        """One readable line for the CLI and the data page."""
        return (f"imported {self.values} score(s) ({', '.join(self.names)}) for {self.captions} caption(s) of "
                f"{', '.join(self.systems)} into project {self.project!r}"
                + (f"; {self.replaced} old score(s) replaced" if self.replaced else ""))


@import_guard
def import_human_scores(store: Store, project: str, path_or_text, *, system: str | None = None,
                        name: str | None = None, columns: Sequence[str] | None = None, replace: bool = False,
                        source: str | None = None) -> HumanScoreImport:
    """Read a human-score file (:mod:`annotator.io.human_scores`) and store its scores in one transaction.

    With ``system`` (and ``name``) the file is one score per line for that
    system; otherwise it is a CSV/TSV with key columns. A value for a (caption,
    name) already stored replaces it; ``replace`` first deletes the project's
    stored scores of the imported names. Nothing is written if anything is wrong.
    The file is read, resolved and written :data:`BATCH` scores at a time (memory holds a batch; the store's
    side is :func:`annotator.store.human_scores.write_score_batches`).
    """
    project = check_name(project, "project", "--project")
    src = source_name(path_or_text, source)
    records = iter_scores(path_or_text, system=system, name=name, columns=columns, source=source)
    tally = ScoreTally(src)

    def batches():
        while batch := list(islice(records, BATCH)):
            yield batch
            collect_batch_garbage()
        tally.finish(whole_system=system is not None)  # still inside the transaction: a repeat rolls it back

    values, removed = write_score_batches(store, project, batches(), tally.resolve, replace=replace)
    return HumanScoreImport(src, project, tuple(tally.names), tuple(tally.systems), tally.captions, values, removed)


def _run(store, project: str, *, command_line: bool, file, system=None, name=None, columns=None, replace=False,
         source: str | None = None):
    if system and not name:
        raise InputError("--system needs --name (the score name of a one-score-per-line file)", source or str(file))
    return import_human_scores(store, project, file, system=system, name=name, columns=columns, replace=replace,
                               source=source)


FORMAT = ImportFormat(
    name=NAME,
    help="import a CSV/TSV of human scores, or one score per line for one system",
    title="Human scores per caption (CSV/TSV, or one score per line for one system)",
    description="CSV/TSV: a header with 'system' and 'item' (item key) or 'line' (0-based caption line) columns, then one "
                "column per score name (or 'name' and 'value' columns). With --system and --name: one score per line, "
                "aligned with the system's captions. All-or-nothing: any error leaves the store unchanged.",
    options=(
        ReaderOption("file", None, "the scores file", metavar="FILE", kind="file", required=True,
                     label="Scores file (CSV/TSV, or one score per line)", types=("csv", "tsv", "txt")),
        *OPTIONS,
        ReaderOption("replace", "--replace", "first delete the stored scores of the imported names", kind="switch",
                     label="Replace the stored scores of these names"),
    ),
    read=read,
    run=_run,
    example=Example(files={"file": "human_scores.csv"}, into_sample=True,
                    expect={"values": 32, "captions": 16, "names": ["correctness", "detail"]}),
    dest_prefix="hs_",
)
