"""What every import shares: a reader builds domain objects, then ONE transaction stores them.

Each format module (lines, coco, flickr30k, jsonl, judgements, judgement_rows, corrections, human_scores) holds
its reader and its ``import_*`` function, the store step, built from what is here: :class:`ImportResult`,
:func:`import_guard` and :func:`import_project`. This module imports no format module.

Every ``import_*`` function writes everything inside one store transaction (the
store's side of it, transaction, writer and queries, is :mod:`annotator.store.imports`;
this package holds no SQL and no connection), reading and checking its input as it
goes, so bad input (InputError naming file and line/record) or a conflict with stored
data leaves the store exactly as it was. Each returns an :class:`ImportResult`.

``trust_root`` is True only for imports run from the command line: their user
has shell access and may name any folder as the image root (or, for a root in a
JSONL header, any folder inside the JSONL file's folder), and the project
remembers that root as trusted. The pages leave it False, so a root typed into
the browser or read from an uploaded file must lie in a folder an administrator
allows (:func:`annotator.images.check_image_root`).
"""

from __future__ import annotations

import functools
import gc
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..model import Project
from ..store import Store
from ..store.imports import refused_values_as_input_errors, write_item_batches
from ..store.projects import ImportSummary, collect_batch_garbage


@contextmanager
def paused_gc():
    """Suspend the cyclic garbage collector while a large import builds millions of small objects.

    Those objects hold no reference cycles, but every few hundred allocations
    the collector would walk all of them again; pausing it makes reading and
    writing 100k items several times faster. Reference counting still frees
    memory as usual, and the collector resumes (as it was) afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def in_batches(rows, size: int):
    """``rows`` (any iterable, read as it goes) in lists of ``size``; after each batch is used, the garbage it
    left is collected (:func:`~annotator.store.projects.collect_batch_garbage`)."""
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
            collect_batch_garbage()
    if batch:
        yield batch


#: The formats whose rows are judgements of the project's captions, with their error spans.
JUDGEMENT_ROW_FORMATS = ("judgement rows", "label-studio")


@dataclass
class ImportResult:
    """What one import wrote (counts of new rows) — printed by the CLI with ``--json``."""

    project: str
    format: str
    items_read: int = 0
    items_created: int = 0
    references: int = 0
    boxes: int = 0
    captions: int = 0
    systems: list[str] = field(default_factory=list)
    judgements: int = 0
    corrections: int = 0
    unchanged: int = 0
    user: str | None = None
    #: Corrections stored past a guard (or without a tag), with the import's reason.
    overridden: int = 0
    #: Corrections: every refused line as (line number, rule and reason), and whether nothing was stored.
    refused: list = field(default_factory=list)
    dry_run: bool = False
    #: Error spans stored with the judgements.
    spans: int = 0
    #: The accounts the import created (without a password), by name.
    accounts: list[str] = field(default_factory=list)

    def add(self, summary: ImportSummary) -> None:
        """Add the counts of one ``write_project`` call."""
        self.items_created += summary.items_created
        self.references += summary.references
        self.boxes += summary.boxes
        self.captions += summary.captions

    def describe(self) -> str:
        """One readable line for the CLI and the data page: what the import wrote, counted by what it is (items,
        references, boxes and captions; judgements and their error spans; corrections; accounts), then what it
        read and what it found stored already."""
        head = "dry run (nothing stored) of " if self.dry_run else ""
        return (f"{head}{self.format} import into {self.project!r}: " + ", ".join(self._written())
                + "".join(f"\n  line {n}: {what}" for n, what in self.refused))

    def _written(self) -> list[str]:
        if self.format == "judgements":
            parts = [f"{self.judgements} judgements by {self.user} ({self.items_read} read)"]
        elif self.format in JUDGEMENT_ROW_FORMATS:
            parts = [f"{self.judgements} judgement revisions with {self.spans} error spans by {self.user} "
                     f"({self.items_read} rows read)"]
        elif self.format == "corrections":
            would = "would be stored" if self.dry_run else "by"
            parts = [f"{self.corrections} corrections {would} {self.user} ({self.items_read} lines read)"]
            if self.overridden:
                parts.append(f"{self.overridden} of them past a guard, with the reason given")
            if self.dry_run:
                parts.append(f"{len(self.refused)} line(s) refused")
        else:
            parts = [f"{self.items_created} new items ({self.items_read} read)",
                     f"{self.references} references, {self.boxes} boxes, {self.captions} captions"]
        if self.unchanged:
            parts.append(f"{self.unchanged} already stored unchanged")
        if self.accounts:
            parts.append(f"new account{'s' if len(self.accounts) > 1 else ''} {', '.join(self.accounts)} (no "
                         "password yet: an admin sets one on People, or with annotator users passwd NAME)")
        return parts


def import_guard(func):
    """Run an import with the collector paused, and turn a value the database refuses into an InputError.

    Readers check values against the schema first; the store's refusal of a value
    (:func:`annotator.store.imports.refused_values_as_input_errors`) is a safety net
    so that no database exception reaches the user for bad input.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with paused_gc():
            try:
                with refused_values_as_input_errors():
                    return func(*args, **kwargs)
            finally:
                release_memory()
    return wrapper


def release_memory() -> None:
    """Hand the memory an import freed back to the system (glibc's malloc_trim), so that a long-running app
    process returns to its size after an upload; elsewhere nothing happens."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, looked up once; None where the C library has none."""
    import ctypes
    import ctypes.util
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


@import_guard
def import_project(store: Store, project: Project, format_name: str, *, source: str) -> ImportResult:
    """Store a project a reader built (items with their boxes, references and captions) in one transaction.

    The import of a format whose reader returns a :class:`~annotator.model.Project`
    is this call; items keyed otherwise than the project's stored items are refused.
    """
    return import_batches(store, project, [(project.items, None)], format_name, source=source)


def import_batches(store: Store, project: Project, batches, format_name: str, *, source: str) -> ImportResult:
    """Store the items of ``batches`` ((items, their locations or None) as a reader streams them) into
    ``project`` (its name and image roots) in ONE transaction, a batch at a time: memory holds a batch, and bad
    input in any batch rolls every batch back. Items keyed otherwise than the project's stored items are
    refused. The transaction and the writer are the store's (:func:`annotator.store.imports.write_item_batches`)."""
    written = write_item_batches(store, project, batches, source=source)
    result = ImportResult(project.name, format_name, items_read=written.items_read, systems=list(written.systems))
    result.add(written.summary)
    return result
