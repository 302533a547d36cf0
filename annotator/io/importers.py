"""Importers and the exporter: a reader builds domain objects, then ONE transaction stores them.

Every ``import_*`` function reads and checks all its input before it opens a
write transaction, and writes everything inside that one transaction, so bad
input (InputError naming file and line/record) or a conflict with stored data
leaves the store exactly as it was. Each returns an :class:`ImportResult`.

``trust_root`` is True only for imports run from the command line: their user
has shell access and may name any folder as the image root (or, for a root in a
JSONL header, any folder inside the JSONL file's folder), and the project
remembers that root as trusted. The pages leave it False, so a root typed into
the browser or read from an uploaded file must lie in a folder an administrator
allows (:func:`annotator.images.check_image_root`).
"""

from __future__ import annotations

import gc
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Sequence

from ..errors import InputError, NotFound
from ..limits import check_free_text
from ..model import Item, Project, Role
from ..store import Store
from ..store.projects import ImportSummary, captions_of_system, load_project, project_id, write_project
from ..taxonomy import taxonomy
from .coco import read_coco_project, read_coco_results
from .corrections import read_corrected_captions
from . import human_scores as human_score_files
from .flickr30k import read_flickr30k_project
from .judgement_rows import first_object, is_judgement_row, read_judgement_rows
from .judgement_rows import write_records as write_judgement_records
from .judgements import read_legacy_judgements
from .jsonl import JsonlProject, read_jsonl_project, write_jsonl
from .lines import read_lines_project
from .validate import check_name

#: User that owns imported corrections when no ``--annotator`` is given.
DEFAULT_CORRECTOR = "corrector"

_LINE_KEY = re.compile(r"^line-\d{6,}$")


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

    def add(self, summary: ImportSummary) -> None:
        """Add the counts of one ``write_project`` call."""
        self.items_created += summary.items_created
        self.references += summary.references
        self.boxes += summary.boxes
        self.captions += summary.captions

    def describe(self) -> str:
        """One readable line for the CLI and the data page."""
        parts = [f"{self.items_created} new items ({self.items_read} read)"]
        if self.references or self.boxes or self.captions or self.format in ("lines", "coco", "flickr30k", "jsonl"):
            parts.append(f"{self.references} references, {self.boxes} boxes, {self.captions} captions")
        if self.format == "judgements":
            parts.append(f"{self.judgements} judgements by {self.user}")
        if self.format == "judgement rows":
            parts = [f"{self.judgements} judgement revisions stored ({self.items_read} rows read; annotators: "
                     f"{self.user})"]
        if self.format == "corrections":
            would = "would be stored" if self.dry_run else "by"
            parts = [f"{self.corrections} corrections {would} {self.user}" if self.dry_run
                     else f"{self.corrections} corrections by {self.user}"]
            if self.overridden:
                parts.append(f"{self.overridden} of them past a guard, with the reason given")
            if self.dry_run:
                parts.append(f"{len(self.refused)} line(s) refused")
        if self.unchanged:
            parts.append(f"{self.unchanged} already stored unchanged")
        head = "dry run (nothing stored) of " if self.dry_run else ""
        return (f"{head}{self.format} import into {self.project!r}: " + ", ".join(parts)
                + "".join(f"\n  line {n}: {what}" for n, what in self.refused))


def _check_key_style(conn, project: Project, source: str) -> None:
    # Items keyed by line number and items keyed by image name never match, so
    # mixing them (e.g. forgetting --images for the second system) would create
    # a second, parallel set of items: refuse instead.
    from ..store.exchange import item_keys
    existing = item_keys(conn, project.name)
    if not existing or not project.items:
        return
    incoming_lines = bool(_LINE_KEY.match(project.items[0].key))
    stored_lines = bool(_LINE_KEY.match(existing[0]))
    if incoming_lines != stored_lines:
        hint = ("this project's items are keyed by image file name; give the image list with --images" if incoming_lines
                else "this project's items are keyed by line number; leave out --images")
        raise InputError(f"project {project.name!r} already has items keyed differently ({existing[0]!r} vs "
                         f"{project.items[0].key!r}): {hint}", source)


def _import_guard(func):
    """Run an import with the collector paused, and turn a value the database refuses into an InputError.

    Readers check values against the schema first; the DataError branch is a
    safety net so that no database exception reaches the user for bad input.
    """
    import functools

    from sqlalchemy.exc import DataError

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with paused_gc():
            try:
                return func(*args, **kwargs)
            except DataError as exc:
                reason = (str(getattr(exc, "orig", exc)).strip().splitlines() or [type(exc).__name__])[0]
                raise InputError(f"the database refused a value ({reason}); nothing was imported") from None
    return wrapper


@_import_guard
def import_lines(store: Store, project: str, system: str, captions: Path | str, references=(), *,
                 images: Path | str | None = None, image_root: Path | str | None = None,
                 inline_mentions: bool = False, trust_root: bool = False) -> ImportResult:
    """Import line-aligned captions of ``system`` with references (and an image list) into ``project``.

    ``inline_mentions``: the captions carry ``[words|box ids]`` markup (see :func:`read_lines_project`).
    ``trust_root``: the image root was named on the command line (see the module docstring).
    """
    project = check_name(project, "project", "--project")
    proj = read_lines_project(project, system, captions, references, images=images, image_root=image_root,
                              inline_mentions=inline_mentions, trust_root=trust_root)
    return import_project(store, proj, "lines", source=str(captions))


@_import_guard
def import_project(store: Store, project: Project, format_name: str, *, source: str) -> ImportResult:
    """Store a project a reader built (items with their boxes, references and captions) in one transaction.

    The import of a format whose reader returns a :class:`~annotator.model.Project`
    is this call; items keyed otherwise than the project's stored items are refused.
    """
    result = ImportResult(project.name, format_name, items_read=len(project.items), systems=project.systems)
    with store.transaction() as conn:
        _check_key_style(conn, project, source)
        result.add(write_project(conn, project, source=source))
    return result


@_import_guard
def import_coco(store: Store, project: str, captions_json: Path | str, instances_json: Path | str | None = None, *,
                results: Path | str | None = None, system: str | None = None,
                image_root: Path | str | None = None, inline_mentions: bool = False,
                trust_root: bool = False) -> ImportResult:
    """Import COCO references (+ instance boxes, + one system's results) into ``project``.

    ``inline_mentions``: the results' captions carry ``[words|box ids]`` markup (see :func:`read_coco_results`).
    """
    project = check_name(project, "project", "--project")
    if (results is None) != (system is None):
        raise InputError("--results and --system go together: give both or neither")
    proj, keys = read_coco_project(project, captions_json, instances_json, image_root=image_root,
                                   trust_root=trust_root)
    res_proj = (read_coco_results(project, system, results, keys, inline_mentions=inline_mentions)
                if results is not None else None)
    result = ImportResult(project, "coco", items_read=len(proj.items), systems=res_proj.systems if res_proj else [])
    with store.transaction() as conn:
        result.add(write_project(conn, proj, source=str(captions_json)))
        if res_proj is not None:
            result.add(write_project(conn, res_proj, source=str(results)))
    return result


@_import_guard
def import_flickr30k(store: Store, project: str, root: Path | str, *, ids: Path | str | None = None,
                     image_root: Path | str | None = None, trust_root: bool = False) -> ImportResult:
    """Import Flickr30K Entities references with phrase–box links and gold boxes into ``project``."""
    project = check_name(project, "project", "--project")
    proj = read_flickr30k_project(project, root, ids=ids, image_root=image_root, trust_root=trust_root)
    result = ImportResult(project, "flickr30k", items_read=len(proj.items))
    with store.transaction() as conn:
        result.add(write_project(conn, proj, source=str(root)))
    return result


def write_jsonl_project(conn, data: JsonlProject, *, source: str) -> list[ImportSummary]:
    """Store a read JSONL project inside the caller's transaction, keeping each system's caption order."""
    proj = data.project
    systems = proj.systems
    base = Project(proj.name, proj.image_root, trusted_image_root=proj.trusted_image_root, items=[
        Item(key=i.key, image=i.image, width=i.width, height=i.height, boxes=i.boxes, references=i.references,
             is_practice=i.is_practice) for i in proj.items])
    summaries = [write_project(conn, base, source=source)]
    for system in systems:
        caps = [(i.key, c) for i in proj.items for c in i.captions if c.system == system]
        lines = data.caption_lines.get(system)
        if lines:
            caps.sort(key=lambda kc: lines[kc[0]])
        summaries.append(write_project(conn, Project(proj.name, None, [Item(key=k, captions=[c]) for k, c in caps]),
                                       source=source))
    return summaries


@_import_guard
def import_jsonl(store: Store, project: str, path: Path | str, *, image_root: Path | str | None = None,
                 relative_header_root: bool = True, trust_root: bool = False) -> ImportResult:
    """Import a native JSONL file into ``project`` (see :mod:`annotator.io.jsonl` for the arguments).

    A file of judgement rows (a judgements export, :mod:`annotator.io.judgement_rows`) is recognised by its
    first line and imported as judgements of the project's captions.
    """
    project = check_name(project, "project", "--project")
    if is_judgement_row(first_object(path)):
        return import_judgement_rows(store, project, path)
    data = read_jsonl_project(project, path, image_root=image_root, relative_header_root=relative_header_root,
                              trust_root=trust_root)
    result = ImportResult(project, "jsonl", items_read=len(data.project.items), systems=data.project.systems)
    with store.transaction() as conn:
        for s in write_jsonl_project(conn, data, source=str(path)):
            result.add(s)
    return result


@_import_guard
def import_judgement_rows(store: Store, project: str, path: Path | str, *, source: str | None = None) -> ImportResult:
    """Import a JSONL file of judgement rows into ``project`` (rules in :func:`annotator.io.judgement_rows.write_records`)."""
    project = check_name(project, "project", "--project")
    src = source or str(path)
    records = read_judgement_rows(path, source=src)
    with store.transaction() as conn:
        written = write_judgement_records(conn, project, records, source=src)
    return ImportResult(project, "judgement rows", items_read=len(records), judgements=written.revisions,
                        unchanged=written.unchanged, user=", ".join(written.annotators),
                        systems=list(dict.fromkeys(r.system for r in records)))


@_import_guard
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
    from ..store.exchange import current_annotations
    from ..store.judgements import insert_judgement
    from ..store.users import user_id
    result = ImportResult(project, "judgements", items_read=len(judgements), systems=[system], user=annotator)
    pid = project_id(conn, project)
    rows = captions_of_system(conn, pid, system)
    by_line = {r.line_no: r.id for r in rows}
    for j in judgements:
        if j.index not in by_line:
            raise InputError(f"caption index {j.index} is out of range: system {system!r} has {len(rows)} captions "
                             f"(0..{len(rows) - 1})", source, f"key '{j.index}'")
    uid = user_id(conn, annotator, create_role=Role.ANNOTATOR)
    current = current_annotations(conn, uid, [by_line[j.index] for j in judgements])
    for j in judgements:
        cid = by_line[j.index]
        if current.get(cid) == (j.label.value, j.error_types):
            result.unchanged += 1
            continue
        insert_judgement(conn, cid, uid, label=j.label, error_types=j.error_types)
        result.judgements += 1
    return result


@_import_guard
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
    from ..correction import check_correction
    from ..correction.queues import untagged_reason
    from ..store.corrections import insert_correction
    from ..store.exchange import current_correction_texts
    from ..store.users import user_id
    tax = taxonomy()
    type_id = tax.resolve_strict(str(error_type), "--error-type")
    if not tax.get(type_id).correctable:
        raise InputError(f"error type {type_id!r} is not correctable", "--error-type")
    user = (DEFAULT_CORRECTOR if annotator is None else str(annotator)).strip()
    if not user:
        raise InputError("an annotator name cannot be empty", "--annotator")
    user = check_name(user, "user", "--annotator")
    project, system = check_name(project, "project", "--project"), check_name(system, "system", "--system")
    lines = read_corrected_captions(captions)
    reason = (reason or "").strip() or None
    if reason is not None:
        check_free_text(reason, "override reason", "--reason")
    result = ImportResult(project, "corrections", items_read=len(lines), systems=[system], user=user, dry_run=dry_run)
    with store.transaction() as conn:
        pid = project_id(conn, project)
        rows = captions_of_system(conn, pid, system)
        if len(lines) != len(rows):
            raise InputError(f"line count differs: the file has {len(lines)} lines but system {system!r} has "
                             f"{len(rows)} captions", str(captions))
        changed = [(r, text) for r, text in zip(rows, lines) if text != r.text]
        if not changed:
            return result
        overrides = {}
        untagged = untagged_reason(conn, [r.id for r, _ in changed], type_id)
        for n, (r, text) in enumerate(zip(rows, lines), start=1):
            if text == r.text:
                continue
            report = check_correction(type_id, r.text, text.strip(), max_changed_words=max_changed_words)
            if report.ok and r.id not in untagged:
                continue
            if reason is None:
                result.refused.append((n, f"refused by the {report.rule} guard of {tax.get(type_id).name}: "
                                       + "; ".join(report.violations) if not report.ok
                                       else f"refused: {untagged[r.id]}"))
                continue
            overrides[r.id] = reason
        if result.refused and not dry_run:
            first = result.refused[0][0]
            raise InputError(f"{len(result.refused)} of {len(changed)} changed line(s) refused (nothing was imported; "
                             "correct less, or give --reason to store these lines with a reason):"
                             + "".join(f"\n  line {n}: {what}" for n, what in result.refused), str(captions), first)
        refused_lines = {n for n, _ in result.refused}
        stored = [(r, text) for n, (r, text) in enumerate(zip(rows, lines), start=1)
                  if text != r.text and n not in refused_lines]
        # A dry run creates no user: one that does not exist yet has nothing stored to compare with.
        uid = _existing_user(conn, user) if dry_run else user_id(conn, user, create_role=Role.ANALYST)
        current = current_correction_texts(conn, uid, type_id, [r.id for r, _ in stored]) if uid is not None else {}
        for r, text in stored:
            if r.id in current and current[r.id] == text:
                result.unchanged += 1
                continue
            if not dry_run:
                insert_correction(conn, r.id, type_id, uid, original_text=r.text, corrected_text=text,
                                  override_reason=overrides.get(r.id))
            result.corrections += 1
            result.overridden += r.id in overrides
    return result


def _existing_user(conn, name: str) -> int | None:
    from ..store.users import user_id
    try:
        return user_id(conn, name)
    except NotFound:
        return None


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


@_import_guard
def import_human_scores(store: Store, project: str, path_or_text, *, system: str | None = None,
                        name: str | None = None, columns: Sequence[str] | None = None, replace: bool = False,
                        source: str | None = None) -> HumanScoreImport:
    """Read a human-score file (:mod:`annotator.io.human_scores`) and store its scores in one transaction.

    With ``system`` (and ``name``) the file is one score per line for that
    system; otherwise it is a CSV/TSV with key columns. A value for a (caption,
    name) already stored replaces it; ``replace`` first deletes the project's
    stored scores of the imported names. Nothing is written if anything is wrong.
    """
    from ..store.human_scores import caption_keys, delete_scores, write_scores
    project = check_name(project, "project", "--project")
    records = human_score_files.read(path_or_text, system=system, name=name, columns=columns, source=source)
    src = human_score_files.source_name(path_or_text, source)
    with store.transaction() as conn:
        pid = project_id(conn, project)
        keys = caption_keys(conn, pid)
        rows = human_score_files.resolve_scores(records, keys, src, whole_system=system is not None)
        names = tuple(dict.fromkeys(r[1] for r in rows))
        removed = delete_scores(conn, pid, list(names)) if replace else 0
        write_scores(conn, rows)
    return HumanScoreImport(src, project, names, tuple(dict.fromkeys(r.system for r in records)),
                            len({r[0] for r in rows}), len(rows), removed)


@_import_guard
def export_jsonl(store: Store, project: str, out: IO[str]) -> int:
    """Write ``project`` as native JSONL to ``out``; return the number of items written."""
    from ..store.exchange import caption_lines
    proj = load_project(store, project)
    with store.read() as conn:
        lines = caption_lines(conn, project_id(conn, project))
    return write_jsonl(proj, out, caption_lines=lines)
