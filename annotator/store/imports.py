"""The store's side of an import: one transaction around what a reader streams, a batch at a time.

An importer (annotator/io/) reads and checks its input and hands the batches to a function here; the
transaction, the writer and every query stay in the store, so bad input in any batch (an InputError raised by
the reader while the batches are drawn, or by the writer) rolls every batch back and leaves the store as it was.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Callable, Iterable, Iterator, TypeVar

from sqlalchemy import Connection, select
from sqlalchemy.exc import DataError

from ..errors import InputError, NotFound
from ..model import Role
from . import Store
from .projects import ImportSummary, ProjectWriter, collect_batch_garbage, project_id, system_captions_in_chunks
from .schema import items, projects
from .users import get_user_row, user_id

W = TypeVar("W")

#: The item keys of line-aligned files imported without an image list (``line-000001``, …).
_LINE_KEY = re.compile(r"^line-\d{6,}$")


@dataclass(frozen=True)
class BatchesWritten:
    """What :func:`write_item_batches` stored: the writer's counts, the items read and the systems met (in the
    order first met)."""

    summary: ImportSummary
    items_read: int
    systems: tuple[str, ...]


def write_item_batches(store: Store, project, batches: Iterable, *, source: str, key_style: bool = True) -> BatchesWritten:
    """Store the items of ``batches`` into ``project`` (a :class:`~annotator.model.Project`: its name and image
    roots; its items are ignored) in ONE transaction, a batch at a time, as a reader streams them.

    Each batch is ``(items, their locations or None)``, optionally with a third member, the captions' given
    lines by (item key, system, n) (:meth:`~annotator.store.projects.ProjectWriter.write`). Memory holds one
    batch; bad input in any batch rolls every batch back. Items keyed otherwise than the project's stored items
    (line numbers against image names) are refused, naming ``source``, unless ``key_style`` is False (a native
    file names its keys itself)."""
    items_read = 0
    systems: dict[str, None] = {}
    with store.transaction() as conn:
        writer = ProjectWriter(conn, project, source=source)
        for batch, locations, *given in batches:
            if key_style and not items_read and batch:
                _check_key_style(conn, project.name, batch[0].key, source)
            writer.write(batch, locations, *given)
            items_read += len(batch)
            systems.update((c.system, None) for item in batch for c in item.captions)
        summary = writer.finish()
    return BatchesWritten(summary, items_read, tuple(systems))


def write_project_parts(store: Store, parts: Iterable[tuple]) -> list[ImportSummary]:
    """Store several parts of one import in ONE transaction, each ``(project, batches, source)`` with a writer of
    its own (:class:`~annotator.store.projects.ProjectWriter`: ``project`` names the project and its image
    roots, ``batches`` yields ``(items, their locations or None)`` as a reader streams them, ``source`` is the
    file its errors name), in order; bad input in any batch of any part rolls every part back. Returns each
    part's counts. (A COCO import: its captions and instances files, then a system's results.)"""
    summaries = []
    with store.transaction() as conn:
        for project, batches, source in parts:
            writer = ProjectWriter(conn, project, source=source)
            for batch, locations in batches:
                writer.write(batch, locations)
            summaries.append(writer.finish())
    return summaries


def write_in_batches(store: Store, project: str, batches: Iterable, writer: Callable[[Connection, int], W]) -> W:
    """Hand ``batches`` (as a reader streams them) to ``writer(conn, project id).write(batch)`` in ONE
    transaction and return the writer; anything raised while a batch is drawn or written rolls every batch
    back (NotFound for an unknown project). The writer holds the format's rules (the judgement rows')."""
    with store.transaction() as conn:
        written = writer(conn, project_id(conn, project))
        for batch in batches:
            written.write(batch)
    return written


@contextmanager
def refused_values_as_input_errors() -> Iterator[None]:
    """Turn a value the database refuses (SQLAlchemy's DataError) into an InputError saying nothing was imported:
    readers check values against the schema first, so this is a safety net that keeps database exceptions
    from the user."""
    try:
        yield
    except DataError as exc:
        reason = (str(getattr(exc, "orig", exc)).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"the database refused a value ({reason}); nothing was imported") from None


def compare_corrected_copy(store: Store, project: str, system: str, lines: Iterator[tuple[int, str]], *, source: str,
                           size: int, store_batch: Callable[[Connection, list[tuple]], None],
                           finish: Callable[[], None]) -> int:
    """Read a corrected copy of ``system``'s captions (``lines``: (line number, text), checked by the reader)
    beside the stored captions, ``size`` at a time, in ONE transaction: each chunk's changed lines ((line number,
    stored caption row, corrected text)) go to ``store_batch(conn, pairs)`` (the correction rules, which the store
    does not hold, decide what is stored), then ``finish()`` runs inside the transaction, after the counts were
    compared (it may refuse the import). A copy with another number of lines than the system has captions is
    refused naming both and ``source``; anything refused rolls every chunk back. Returns the lines read."""
    read = captions_seen = 0
    with store.transaction() as conn:
        stored_chunks = system_captions_in_chunks(conn, project_id(conn, project), system, size)
        for rows in stored_chunks:
            collect_batch_garbage()
            batch = list(islice(lines, len(rows)))
            read += len(batch)
            captions_seen += len(rows)
            if len(batch) < len(rows):
                break
            pairs = [(n, r, text) for (n, text), r in zip(batch, rows) if text != r.text]
            if pairs:
                store_batch(conn, pairs)
        captions_seen += sum(len(rest) for rest in stored_chunks)  # the file ended first: count the rest
        read += sum(1 for _ in lines)
        if read != captions_seen:
            raise InputError(f"line count differs: the file has {read} lines but system {system!r} has "
                             f"{captions_seen} captions", source)
        finish()
    return read


def _check_key_style(conn: Connection, project: str, first_key: str, source: str) -> None:
    # Items keyed by line number and items keyed by image name never match, so mixing them (e.g. forgetting
    # --images for the second system) would create a second, parallel set of items: refuse instead.
    stored = conn.execute(select(items.c.key).join(projects, projects.c.id == items.c.project_id)
                          .where(projects.c.name == project).order_by(items.c.position).limit(1)).scalar()
    if stored is None:
        return
    incoming_lines = bool(_LINE_KEY.match(first_key))
    if incoming_lines != bool(_LINE_KEY.match(stored)):
        hint = ("this project's items are keyed by image file name; give the image list with --images" if incoming_lines
                else "this project's items are keyed by line number; leave out --images")
        raise InputError(f"project {project!r} already has items keyed differently ({stored!r} vs "
                         f"{first_key!r}): {hint}", source)


def account_id(conn: Connection, name: str, role: Role, created: list[str]) -> int:
    """The id of account ``name`` inside the caller's transaction; one that does not exist is created without a
    password, with ``role``, and its name appended to ``created``."""
    if get_user_row(conn, name) is None:
        created.append(name)
    return user_id(conn, name, create_role=role)


def existing_account_id(conn: Connection, name: str) -> int | None:
    """The id of account ``name``, or None when there is none (nothing is created)."""
    try:
        return user_id(conn, name)
    except NotFound:
        return None
