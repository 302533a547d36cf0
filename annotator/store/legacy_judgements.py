"""The store's side of an import of the original error-analysis tool's judgements
(:mod:`annotator.io.judgements` reads and checks the files): one transaction, a batch at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from sqlalchemy import Connection

from ..errors import InputError
from ..model import Role
from . import Store
from .exchange import caption_index_of, current_annotations
from .human_scores import system_caption_counts
from .imports import account_id
from .judgements import insert_judgement
from .projects import project_id, system_id


@dataclass
class JudgementsWritten:
    """What :func:`write_legacy_judgements` stored: judgements added, those already stored unchanged, those
    read, and the accounts created."""

    judgements: int = 0
    unchanged: int = 0
    read: int = 0
    accounts: list[str] = field(default_factory=list)


def import_legacy_judgements(store: Store, project: str, system: str, annotator: str, batches: Iterable[list], *,
                             source: str) -> JudgementsWritten:
    """:func:`write_legacy_judgements` in a transaction of its own: bad input in any batch rolls every batch back."""
    with store.transaction() as conn:
        return write_legacy_judgements(conn, project, system, annotator, batches, source=source)


def write_legacy_judgements(conn: Connection, project: str, system: str, annotator: str, batches: Iterable[list], *,
                            source: str) -> JudgementsWritten:
    """Store ``annotator``'s judgements of ``system``'s captions inside the caller's transaction, a batch at a time
    as ``batches`` yields them (lists of objects with ``index``, the 0-based caption line, ``label`` and
    ``error_types``: :class:`annotator.io.judgements.LegacyJudgement`, in index order). The annotator is created
    (role annotator, no password) when unknown; a caption whose current judgement by the annotator says the same
    is left alone. A caption index the system has no caption at stops the import (the first in index order,
    before anything of its batch is stored; the caller's transaction rolls back the batches before it), naming
    ``source``; NotFound for a project or system the store lacks."""
    written = JudgementsWritten()
    pid = project_id(conn, project)
    system_id(conn, pid, system)  # NotFound for a system the project lacks
    uid = account_id(conn, annotator, Role.ANNOTATOR, written.accounts)
    for batch in batches:
        _write_judgement_batch(conn, pid, system, uid, batch, written, source)
    return written


def _write_judgement_batch(conn: Connection, pid: int, system: str, uid: int, batch: list,
                           written: JudgementsWritten, source: str) -> None:
    _, at_line = caption_index_of(conn, pid, by_item=(), by_line={(system, j.index) for j in batch})
    by_line = {line: found[0] for (_, line), found in at_line.items()}
    for j in batch:
        if j.index not in by_line:
            n = system_caption_counts(conn, pid)[system]
            raise InputError(f"caption index {j.index} is out of range: system {system!r} has {n} captions "
                             f"(0..{n - 1})", source, f"key '{j.index}'")
    current = current_annotations(conn, uid, by_line.values())
    for j in batch:
        cid = by_line[j.index]
        if current.get(cid) == (j.label.value, j.error_types):
            written.unchanged += 1
            continue
        insert_judgement(conn, cid, uid, label=j.label, error_types=j.error_types)
        written.judgements += 1
    written.read += len(batch)
