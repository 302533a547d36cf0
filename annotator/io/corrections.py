"""Corrected captions: a full, line-aligned copy of one system's captions, some lines corrected for one error type.

A reader only: :func:`read_corrected_captions` returns the lines (each checked
as caption text); :func:`annotator.io.importers.import_corrections` compares
them with the stored captions and stores each changed line as a correction.
"""

from __future__ import annotations

from pathlib import Path

from .options import Example, ImportFormat, ReaderOption
from .textfiles import read_lines
from .validate import check_text


def read_corrected_captions(path: Path | str) -> list[str]:
    """The lines of a corrected copy, exactly as written; a line that is not caption text stops with its line."""
    lines = read_lines(path)
    for n, text in enumerate(lines, start=1):
        check_text(text, "corrected caption", str(path), n)
    return lines


def _correctable_types() -> list[str]:
    from ..taxonomy import taxonomy
    return [t.id for t in taxonomy().types if t.correctable]


def _type_name(type_id: str) -> str:
    from ..taxonomy import taxonomy
    return taxonomy().get(type_id).name


def _run(store, project: str, *, command_line: bool, system, error_type, captions, annotator=None, reason=None,
         max_changed_words=None, dry_run=False):
    from .importers import import_corrections
    return import_corrections(store, project, system, error_type, captions, annotator=annotator, reason=reason,
                              max_changed_words=max_changed_words, dry_run=bool(dry_run))


FORMAT = ImportFormat(
    name="corrections",
    help="a corrected full copy of a system's captions, for one error type",
    title="Corrected copy of a system's captions (one error type)",
    options=(
        ReaderOption("system", "--system", "the system whose captions were corrected", required=True, label="System"),
        ReaderOption("error_type", "--error-type", "the error type corrected (a taxonomy id or alias)", metavar="ID",
                     kind="choice", required=True, label="Error type corrected in this file", choices=_correctable_types,
                     choice_label=_type_name),
        ReaderOption("annotator", "--annotator", "user the corrections belong to (default: corrector)",
                     label="Corrected by (optional)"),
        ReaderOption("captions", "--captions", "the corrected copy, one caption per line", metavar="FILE", kind="file",
                     required=True, label="Corrected captions (full copy, line-aligned)"),
        ReaderOption("reason", "--reason", "store lines the error type's guard refuses (or whose caption no judgement "
                     "tags with the type), with this reason (without it such lines refuse the whole import, each "
                     "listed with its line and rule)", metavar="TEXT",
                     label="Reason for lines the guard refuses (optional)"),
        ReaderOption("max_changed_words", "--max-changed-words", "also refuse corrections changing more than N words "
                     "(off by default)", metavar="N", kind="integer", label="Most words a correction may change (optional)"),
        ReaderOption("dry_run", "--dry-run", "check every line and list each refused one with its rule, storing "
                     "nothing", kind="switch", label="Only check (store nothing)"),
    ),
    read=read_corrected_captions,
    run=_run,
    example=Example(files={"captions": "sat-attn.gender.txt"}, values={"system": "sat-attn", "error_type": "gender"},
                    into_sample=True, expect={"corrections": 1, "unchanged": 0}),
)
