"""Judgement files of the original error-analysis tool.

* coarse file: a JSON object mapping the 0-based caption line index (a string
  such as ``"0"``) to ``"congruent"`` or ``"incongruent"`` (``"accurate"`` /
  ``"inaccurate"`` are accepted as well, in any case);
* fine file (optional): a JSON object mapping the same indices to a list of
  error-type names in that tool's spelling (``"wrong-subject"``,
  ``"type-of-clothing"`` …), resolved through the taxonomy's aliases.

Rules: congruent → accurate, no types. Incongruent → inaccurate with the fine
types. Without a fine file incongruent captions are imported as inaccurate
with no types (a coarse-only import). With a fine file, every incongruent
caption must have at least one type in it, a congruent caption may not have
any, and the fine file may not name an index the coarse file lacks; any of
these, an unknown label or a malformed index stops the import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import InputError
from ..model import Label
from ..store import Store
from ..store.legacy_judgements import import_legacy_judgements
from ..store.spool import Spool
from ..taxonomy import taxonomy
from .importers import ImportResult, import_guard, in_batches
from .options import Example, ImportFormat, ReaderOption
from .json_stream import JsonStream
from .textfiles import shorten
from .validate import check_name, parse_int

_COARSE = {"congruent": Label.ACCURATE, "accurate": Label.ACCURATE,
           "incongruent": Label.INACCURATE, "inaccurate": Label.INACCURATE}

#: Judgements checked and written at a time by an import (memory holds a batch, the files wait in a spool).
BATCH = 2000


@dataclass(frozen=True)
class LegacyJudgement:
    """One caption's judgement from the legacy files."""

    index: int
    label: Label
    error_types: tuple[str, ...]


def _entries(path: Path | str) -> Iterator[tuple[str, object, int]]:
    """The (key, value, line) of each member of a judgement file, read a member at a time (a list is tolerated:
    its positions are the keys); keys are unique: the reader refuses a repeat."""
    src = str(path)
    doc = JsonStream(path, src)
    first = doc.opens()
    if first == "{":
        for key, line in doc.members():
            yield key, doc.value(), line
    elif first == "[":  # tolerated: position = index
        for n, (value, line) in enumerate(doc.elements()):
            yield str(n), value, line
    else:
        raise InputError("expected a JSON object mapping caption index to a value", src)
    doc.close()


def _index(key: str) -> int:
    k = str(key).strip()
    if not k.isascii() or not k.isdigit():  # ASCII digits only: "²" or "١" are not line numbers
        raise InputError(f"caption index {shorten(key)!r} is not a non-negative integer")
    return parse_int(k, "caption index")  # refuses more digits than a line number can have


def _read_indexed(path: Path | str, convert, out=None):
    """Caption index → ``convert(value)`` for every member of a judgement file, read a member at a time, into
    ``out`` (a dict, or a :class:`_Spooled` bag); errors name the member's line and key."""
    src = str(path)
    out = {} if out is None else out
    for key, value, line in _entries(path):
        try:
            idx = _index(key)
            if idx in out:
                raise InputError(f"caption index {idx} appears twice")
            out[idx] = convert(value)
        except InputError as exc:
            raise InputError(exc.detail, src, f"line {line} (key {shorten(key)!r})") from None
    return out


def _coarse_label(value) -> Label:
    if not isinstance(value, str) or value.strip().lower() not in _COARSE:
        raise InputError(f"unknown coarse label {shorten(repr(value))} (expected 'congruent' or 'incongruent')")
    return _COARSE[value.strip().lower()]


class _Spooled:
    """A bag of a :class:`~annotator.store.spool.Spool` as :func:`_read_indexed` fills a dict: caption index →
    value (kept as JSON text), so that a file's members wait on disk and not in memory."""

    def __init__(self, spool: Spool, name: str):
        self.spool, self.name = spool, name
        spool.bag(name, 1, indexed=True)

    def __contains__(self, idx: int) -> bool:
        return self.spool.holds(self.name, idx)

    def __setitem__(self, idx: int, value) -> None:
        self.spool.add(self.name, idx, json.dumps(value))

    def __len__(self) -> int:
        return self.spool.count(self.name)


def _coarse_file(path: Path | str, out=None):
    """The members of a coarse file (into ``out``, see :func:`_read_indexed`); InputError for none."""
    out = _read_indexed(path, _coarse_label, out)
    if not out:
        raise InputError("the coarse file has no judgements", str(path))
    return out


def _fine_types(value) -> tuple[str, ...]:
    labels = [value] if isinstance(value, str) else value
    if not isinstance(labels, list) or not all(isinstance(v, str) for v in labels):
        raise InputError(f"expected a list of error-type names, got {shorten(repr(value))}")
    tax = taxonomy()
    return tax.validate_ids([tax.resolve_strict(v) for v in labels])


def read_coarse(path: Path | str) -> dict[int, Label]:
    """Index → accurate/inaccurate from a coarse file."""
    return _coarse_file(path)


def read_fine(path: Path | str) -> dict[int, tuple[str, ...]]:
    """Index → error type ids (taxonomy order) from a fine file; labels resolved through the aliases."""
    return _read_indexed(path, _fine_types)


def combine(coarse: dict[int, Label], fine: dict[int, tuple[str, ...]] | None, *, coarse_src: str = "coarse",
            fine_src: str = "fine") -> list[LegacyJudgement]:
    """Apply the rules in the module docstring; return judgements sorted by index."""
    if fine is not None:
        _refuse_fine_only(next((idx for idx in sorted(fine) if idx not in coarse), None), fine_src)
    return list(_joined(((idx, coarse[idx], None if fine is None else fine.get(idx, ())) for idx in sorted(coarse)),
                        coarse_src, fine_src))


def _refuse_fine_only(idx: int | None, fine_src: str) -> None:
    """InputError for caption index ``idx`` (unless None), which the fine file has and the coarse one lacks."""
    if idx is not None:
        raise InputError(f"caption index {idx} has error types but no coarse judgement", fine_src, f"key '{idx}'")


def _joined(rows: Iterable[tuple], coarse_src: str, fine_src: str) -> Iterator[LegacyJudgement]:
    """The judgements of ``rows`` ((index, label, error types or None without a fine file), in index order),
    each checked by the rules of the module docstring."""
    for idx, label, types in rows:
        if types is not None:
            if label is Label.ACCURATE and types:
                raise InputError(f"caption index {idx} is congruent in {coarse_src} but has error types", fine_src,
                                 f"key '{idx}'")
            if label is Label.INACCURATE and not types:
                raise InputError(f"caption index {idx} is incongruent in {coarse_src} but has no error types in the fine file",
                                 fine_src, f"key '{idx}'")
        yield LegacyJudgement(idx, label, types or ())


def _spooled_judgements(spool: Spool, coarse: Path | str, fine: Path | str | None) -> Iterator[LegacyJudgement]:
    """The judgements of a coarse (and fine) file, read into ``spool`` and checked there as
    :func:`read_legacy_judgements` checks them in memory; given back in index order as they are read from it."""
    coarse_src, fine_src = str(coarse), str(fine) if fine is not None else "fine"
    _coarse_file(coarse, _Spooled(spool, "coarse"))
    if fine is not None:
        _read_indexed(fine, _fine_types, _Spooled(spool, "fine"))
        missing = spool.first_missing("fine", "coarse", by_key=True)
        _refuse_fine_only(None if missing is None else missing[0], fine_src)
    else:
        spool.bag("fine", 1)

    def rows():
        for idx, label, types in spool.joined("coarse", "fine"):
            yield (idx, Label(json.loads(label)),
                   None if fine is None else tuple(json.loads(types)) if types is not None else ())

    for _ in _joined(rows(), coarse_src, fine_src):  # every rule checked before anything is stored
        pass
    return _joined(rows(), coarse_src, fine_src)


def read_legacy_judgements(coarse: Path | str, fine: Path | str | None = None) -> list[LegacyJudgement]:
    """Read and check a coarse (and optional fine) file; nothing stored."""
    c = read_coarse(coarse)
    f = read_fine(fine) if fine is not None else None
    return combine(c, f, coarse_src=str(coarse), fine_src=str(fine) if fine is not None else "fine")


@import_guard
def import_judgements(store: Store, project: str, system: str, annotator: str, coarse: Path | str,
                      fine: Path | str | None = None) -> ImportResult:
    """Import the error-analysis tool's coarse (and fine) judgements of ``system``'s captions by ``annotator``.

    The annotator is created (role annotator, no password) when unknown. A
    caption whose current judgement by this annotator already has the same
    label and types is left alone, so importing a file twice adds nothing.
    """
    if annotator is None or not str(annotator).strip():
        raise InputError("an annotator name is required", "--annotator")
    annotator = check_name(str(annotator).strip(), "user", "--annotator")
    project, system = check_name(project, "project", "--project"), check_name(system, "system", "--system")
    with Spool() as spool:
        # The files wait in a spool (a scratch file apart from the store), where they are checked; the judgements
        # are then written a batch at a time in one transaction: memory holds a batch, not the files.
        judgements = _spooled_judgements(spool, coarse, fine)
        # The transaction and the writer are the store's (:mod:`annotator.store.legacy_judgements`).
        written = import_legacy_judgements(store, project, system, annotator, in_batches(judgements, BATCH),
                                           source=str(coarse))
    return ImportResult(project, "judgements", systems=[system], user=annotator, judgements=written.judgements,
                        unchanged=written.unchanged, items_read=written.read, accounts=written.accounts)


def _run(store, project: str, *, command_line: bool, system, annotator, coarse, fine=None):
    return import_judgements(store, project, system, annotator, coarse, fine)


FORMAT = ImportFormat(
    name="judgements",
    help="coarse/fine judgement JSON files of the original error-analysis tool",
    title="Judgements of the original error-analysis tool (coarse / fine JSON)",
    options=(
        ReaderOption("system", "--system", "the system whose captions were judged", required=True, label="System"),
        ReaderOption("annotator", "--annotator", "user the judgements belong to (created if unknown)", required=True,
                     label="Annotator (created without password if new)"),
        ReaderOption("coarse", "--coarse", "caption line → congruent/incongruent", metavar="FILE", kind="file",
                     required=True, label="Coarse file (index → congruent/incongruent)", types=("json",)),
        ReaderOption("fine", "--fine", "caption line → error types", metavar="FILE", kind="file",
                     label="Fine file (index → error types), optional", types=("json",)),
    ),
    read=read_legacy_judgements,
    run=_run,
    example=Example(files={"coarse": "coarse.json", "fine": "fine.json"},
                    values={"system": "sat-attn", "annotator": "tool-annotator"}, into_sample=True,
                    expect={"judgements": 3, "user": "tool-annotator"}),
)
