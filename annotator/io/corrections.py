"""Corrected captions: a full, line-aligned copy of one system's captions, some lines corrected for one error type.

A reader only: :func:`read_corrected_captions` returns the lines (each checked
as caption text); :func:`import_corrections` compares
them with the stored captions and stores each changed line as a correction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..correction import check_correction
from ..correction.queues import untagged_reason
from ..errors import InputError
from ..limits import check_free_text, check_text_length
from ..model import Role
from ..store import Store
from ..store.corrections import insert_correction
from ..store.exchange import current_correction_texts
from ..store.imports import account_id, compare_corrected_copy, existing_account_id
from ..taxonomy import taxonomy
from .importers import ImportResult, import_guard
from .options import Example, ImportFormat, ReaderOption
from .textfiles import file_lines
from .validate import check_name, check_text


#: Lines read, compared and stored at a time by an import (memory holds one batch).
BATCH = 5000


def read_corrected_captions(path: Path | str) -> list[str]:
    """The lines of a corrected copy, exactly as written; a line that is not caption text (or longer than a
    caption may be) stops with its line. The whole file is returned: an import streams it
    (:func:`iter_corrected_captions`)."""
    return [text for _, text in iter_corrected_captions(path)]


def iter_corrected_captions(path: Path | str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a corrected copy, read and checked one line at a time."""
    for n, text in file_lines(path):
        check_text(text, "corrected caption", str(path), n)
        check_text_length(text, "caption", str(path), n, named="the corrected caption")
        yield n, text


def _correctable_types() -> list[str]:
    from ..taxonomy import taxonomy
    return [t.id for t in taxonomy().types if t.correctable]


def _type_name(type_id: str) -> str:
    from ..taxonomy import taxonomy
    return taxonomy().get(type_id).name


#: User that owns imported corrections when no ``--annotator`` is given.
DEFAULT_CORRECTOR = "corrector"


@import_guard
def import_corrections(store: Store, project: str, system: str, error_type: str, captions: Path | str, *,
                       annotator: str | None = None, reason: str | None = None,
                       max_changed_words: int | None = None, dry_run: bool = False) -> ImportResult:
    """Import a corrected full copy of ``system``'s captions: each changed line is a correction of ``error_type``.

    The file must have exactly as many lines as the system has captions. The
    original text of a correction is the stored caption. Unchanged lines add
    nothing; a line whose current correction (same user and type) already has
    this text is left alone. Every changed line passes the guard of
    ``error_type`` that a save on the Correction page passes
    (:func:`annotator.correction.check_correction`); when lines do not, every
    one of them is listed with its line number and rule, and nothing is stored,
    unless ``reason`` is given: then the reason is stored with each correction
    that needed it (and only with those), as an override made on the page is.
    A line whose caption no judgement tags with ``error_type`` needs the
    reason too, when the system's captions are judged at all. ``dry_run``
    checks everything and stores nothing: the result lists the refused lines
    (``result.refused``) and counts what would be stored.
    """
    tax = taxonomy()
    type_id = tax.resolve_strict(str(error_type), "--error-type")
    if not tax.get(type_id).correctable:
        raise InputError(f"error type {type_id!r} is not correctable", "--error-type")
    user = (DEFAULT_CORRECTOR if annotator is None else str(annotator)).strip()
    if not user:
        raise InputError("an annotator name cannot be empty", "--annotator")
    user = check_name(user, "user", "--annotator")
    project, system = check_name(project, "project", "--project"), check_name(system, "system", "--system")
    reason = (reason or "").strip() or None
    if reason is not None:
        check_free_text(reason, "override reason", "--reason")
    result = ImportResult(project, "corrections", systems=[system], user=user, dry_run=dry_run)
    src = str(captions)
    changed = 0
    account: list = []  # the corrector's id, once a line needs it

    def store_batch(conn, pairs: list) -> None:
        nonlocal changed
        changed += len(pairs)
        _store_batch(conn, pairs, type_id, user, reason, max_changed_words, result, account)

    def finish() -> None:
        if result.refused and not dry_run:
            first = result.refused[0][0]
            raise InputError(f"{len(result.refused)} of {changed} changed line(s) refused (nothing was imported; "
                             "correct less, or give --reason to store these lines with a reason):"
                             + "".join(f"\n  line {n}: {what}" for n, what in result.refused), src, first)

    # One transaction, the store's: the file and the system's captions are read side by side a batch at a time,
    # and each batch's corrections are written as it is compared (a refused line or a count that differs, found
    # later, rolls every batch back).
    result.items_read = compare_corrected_copy(store, project, system, iter_corrected_captions(captions), source=src,
                                               size=BATCH, store_batch=store_batch, finish=finish)
    return result


def _store_batch(conn, pairs: list, type_id: str, user: str, reason: str | None, max_changed_words: int | None,
                 result: ImportResult, account: list) -> None:
    """Check a batch's changed lines ((line, stored caption row, corrected text)) against the guard of ``type_id``
    and store those that pass (or carry ``reason``) as corrections, unless a line was refused already or this is
    a dry run: then only what would be stored is counted."""
    tax = taxonomy()
    untagged = untagged_reason(conn, [r.id for _, r, _ in pairs], type_id)
    overrides, passing = {}, []
    for n, r, text in pairs:
        report = check_correction(type_id, r.text, text.strip(), max_changed_words=max_changed_words)
        if not (report.ok and r.id not in untagged):
            if reason is None:
                result.refused.append((n, f"refused by the {report.rule} guard of {tax.get(type_id).name}: "
                                       + "; ".join(report.violations) if not report.ok
                                       else f"refused: {untagged[r.id]}"))
                continue
            overrides[r.id] = reason
        passing.append((r, text))
    if not passing:
        return
    if not account:
        # A dry run creates no user: one that does not exist yet has nothing stored to compare with.
        account.append(existing_account_id(conn, user) if result.dry_run
                       else account_id(conn, user, Role.ANALYST, result.accounts))
    uid = account[0]
    current = current_correction_texts(conn, uid, type_id, [r.id for r, _ in passing]) if uid is not None else {}
    write = not result.dry_run and not result.refused  # a refused line rolls the import back: stop writing
    for r, text in passing:
        if r.id in current and current[r.id] == text:
            result.unchanged += 1
            continue
        if write:
            insert_correction(conn, r.id, type_id, uid, original_text=r.text, corrected_text=text,
                              override_reason=overrides.get(r.id))
        result.corrections += 1
        result.overridden += r.id in overrides


def _run(store, project: str, *, command_line: bool, system, error_type, captions, annotator=None, reason=None,
         max_changed_words=None, dry_run=False):
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
