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

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import InputError
from ..model import Label, Role
from ..store import Store
from ..store.exchange import current_annotations
from ..store.imports import account_id
from ..store.judgements import insert_judgement
from ..store.projects import captions_of_system, project_id
from ..taxonomy import taxonomy
from .importers import ImportResult, import_guard
from .options import Example, ImportFormat, ReaderOption
from .json_stream import JsonStream
from .textfiles import shorten
from .validate import check_name, parse_int

_COARSE = {"congruent": Label.ACCURATE, "accurate": Label.ACCURATE,
           "incongruent": Label.INACCURATE, "inaccurate": Label.INACCURATE}


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


def _read_indexed(path: Path | str, convert) -> dict:
    """Caption index → ``convert(value)`` for every member of a judgement file, read a member at a time; errors
    name the member's line and key."""
    src = str(path)
    out: dict = {}
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


def read_coarse(path: Path | str) -> dict[int, Label]:
    """Index → accurate/inaccurate from a coarse file."""
    out = _read_indexed(path, _coarse_label)
    if not out:
        raise InputError("the coarse file has no judgements", str(path))
    return out


def read_fine(path: Path | str) -> dict[int, tuple[str, ...]]:
    """Index → error type ids (taxonomy order) from a fine file; labels resolved through the aliases."""
    tax = taxonomy()

    def types(value) -> tuple[str, ...]:
        labels = [value] if isinstance(value, str) else value
        if not isinstance(labels, list) or not all(isinstance(v, str) for v in labels):
            raise InputError(f"expected a list of error-type names, got {shorten(repr(value))}")
        return tax.validate_ids([tax.resolve_strict(v) for v in labels])

    return _read_indexed(path, types)


def combine(coarse: dict[int, Label], fine: dict[int, tuple[str, ...]] | None, *, coarse_src: str = "coarse",
            fine_src: str = "fine") -> list[LegacyJudgement]:
    """Apply the rules in the module docstring; return judgements sorted by index."""
    out = []
    if fine is not None:
        for idx in sorted(fine):
            if idx not in coarse:
                raise InputError(f"caption index {idx} has error types but no coarse judgement", fine_src, f"key '{idx}'")
    for idx in sorted(coarse):
        label = coarse[idx]
        types: tuple[str, ...] = ()
        if fine is not None:
            types = fine.get(idx, ())
            if label is Label.ACCURATE and types:
                raise InputError(f"caption index {idx} is congruent in {coarse_src} but has error types", fine_src,
                                 f"key '{idx}'")
            if label is Label.INACCURATE and not types:
                raise InputError(f"caption index {idx} is incongruent in {coarse_src} but has no error types in the fine file",
                                 fine_src, f"key '{idx}'")
        out.append(LegacyJudgement(idx, label, types))
    return out


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
    judgements = read_legacy_judgements(coarse, fine)
    with store.transaction() as conn:
        return write_legacy_judgements(conn, project, system, annotator, judgements, source=str(coarse))


def write_legacy_judgements(conn, project: str, system: str, annotator: str, judgements, *, source: str) -> ImportResult:
    """Store judgements read by :func:`annotator.io.judgements.read_legacy_judgements` inside the caller's transaction."""
    result = ImportResult(project, "judgements", items_read=len(judgements), systems=[system], user=annotator)
    pid = project_id(conn, project)
    rows = captions_of_system(conn, pid, system)
    by_line = {r.line_no: r.id for r in rows}
    for j in judgements:
        if j.index not in by_line:
            raise InputError(f"caption index {j.index} is out of range: system {system!r} has {len(rows)} captions "
                             f"(0..{len(rows) - 1})", source, f"key '{j.index}'")
    uid = account_id(conn, annotator, Role.ANNOTATOR, result.accounts)
    current = current_annotations(conn, uid, [by_line[j.index] for j in judgements])
    for j in judgements:
        cid = by_line[j.index]
        if current.get(cid) == (j.label.value, j.error_types):
            result.unchanged += 1
            continue
        insert_judgement(conn, cid, uid, label=j.label, error_types=j.error_types)
        result.judgements += 1
    return result


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
