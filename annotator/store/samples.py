"""Which of a system's several descriptions of an image the human work is about.

A system may hold a pool of descriptions per image (samples or beams, numbered ``n`` = 0, 1, …; migration 14).
Lexical diversity, rich-sparse, µ and the lexical gap read the whole pool. Annotation, assignment, agreement,
correction, rescoring, human scores and every import or export keyed by (image, system) work on one caption per
system and image: the one :func:`annotated_sample` selects, the project's chosen sample index (the setting
``annotated_sample``, 0 = the first unless a lead chose another with :func:`set_annotated_index`). This is the
one place that rule lives; every query that lists a project's or a system's captions for that work filters
through :func:`project_annotated_sample`, which reads the index once per query (:func:`annotated_index`).

The index can change only while the project holds no human work on its captions (judgements, corrections,
imported human scores, drawn human samples): those belong to the caption annotators saw. Assignments made
before any of that are moved to the same image and system's caption at the new index.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Connection, Table, bindparam, func, select, update

from ..errors import InputError
from .project_settings import get_setting, set_setting, stamp_assignments
from .schema import (assignments, captions, current_corrections, current_judgements, human_scores, sample_draws,
                     systems)

#: The project setting that holds the chosen sample index, and its value when none was chosen.
SAMPLE_SETTING = "annotated_sample"
ANNOTATED_SAMPLE = 0
#: Captions with their systems, to keep one project's.
_OF_PROJECT = captions.join(systems, systems.c.id == captions.c.system_id)


def annotated_index(conn: Connection, pid: int) -> int:
    """The sample index project ``pid`` annotates (0 unless a lead chose another)."""
    return int(get_setting(conn, pid, SAMPLE_SETTING, str(ANNOTATED_SAMPLE)))


def annotated_sample(index: int, table: Table = captions) -> ColumnElement[bool]:
    """The SQL condition that keeps, of each system's descriptions of an image, the one annotators see:
    sample ``index``, the project's :func:`annotated_index`."""
    return table.c.n == int(index)


def project_annotated_sample(conn: Connection, pid: int, table: Table = captions) -> ColumnElement[bool]:
    """:func:`annotated_sample` of project ``pid``'s chosen index (one read of its setting)."""
    return annotated_sample(annotated_index(conn, pid), table)


def is_annotated(n: int, index: int) -> bool:
    """True for the sample index annotation works on (the same rule for captions already read)."""
    return int(n) == int(index)


def _human_work(conn: Connection, pid: int) -> dict[str, int]:
    """How many judgements, corrections, human scores and human-sample draws project ``pid`` holds."""
    def count(table) -> int:
        return int(conn.execute(select(func.count()).select_from(
            table.join(_OF_PROJECT, captions.c.id == table.c.caption_id)).where(systems.c.project_id == pid)).scalar())

    draws = int(conn.execute(select(func.count()).select_from(sample_draws)
                             .where(sample_draws.c.project_id == pid)).scalar())
    return {"judgement": count(current_judgements), "correction": count(current_corrections),
            "human score": count(human_scores), "human-sample draw": draws}


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def set_annotated_index(conn: Connection, pid: int, project: str, index: int) -> int:
    """Choose the sample index project ``pid`` (named ``project``) annotates, inside the caller's write
    transaction; returns it.

    Refused (InputError, the setting unchanged) for an index that is not a non-negative integer, one that no
    caption of the project has, and, when it differs from the current one, once the project holds human work on
    its captions (the message names the project and the counts). Assignments follow the change: each moves to
    its image and system's caption at the new index (refused when one has none)."""
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise InputError(f"the annotated sample index must be a non-negative integer, got {index!r}", "--annotated-sample")
    current = annotated_index(conn, pid)
    present = sorted(r[0] for r in conn.execute(select(captions.c.n).distinct().select_from(_OF_PROJECT)
                                                 .where(systems.c.project_id == pid)))
    if index not in present:
        held = ", ".join(str(n) for n in present) if present else "none: it has no captions yet"
        raise InputError(f"project {project!r} has no caption with sample index n = {index} "
                         f"(its sample indices: {held})", "--annotated-sample")
    if index == current:
        return index
    work = {noun: k for noun, k in _human_work(conn, pid).items() if k}
    if work:
        listed = ", ".join(_plural(k, noun) for noun, k in work.items())
        raise InputError(f"project {project!r} already holds {listed} on its captions of sample n = {current}; "
                         f"they belong to the captions annotators saw, so the annotated sample index stays {current}",
                         "--annotated-sample")
    moved = _move_assignments(conn, pid, project, index)
    set_setting(conn, pid, SAMPLE_SETTING, str(index))
    if moved:
        stamp_assignments(conn, pid)
    return index


def _move_assignments(conn: Connection, pid: int, project: str, index: int) -> int:
    """Point project ``pid``'s assignments at the same item and system's caption with sample ``index``; return
    how many there are."""
    old = captions.alias("old")
    new = captions.alias("new")
    rows = conn.execute(
        select(assignments.c.id, new.c.id)
        .select_from(assignments.join(old, old.c.id == assignments.c.caption_id)
                     .outerjoin(new, (new.c.item_id == old.c.item_id) & (new.c.system_id == old.c.system_id)
                                & (new.c.n == index)))
        .where(assignments.c.project_id == pid)).all()
    missing = sum(1 for _, cid in rows if cid is None)
    if missing:
        raise InputError(f"project {project!r} has {_plural(missing, 'assigned caption')} with no caption of "
                         f"sample n = {index} for the same image and system; the annotated sample index is unchanged",
                         "--annotated-sample")
    if rows:  # one statement for all of them
        conn.execute(update(assignments).where(assignments.c.id == bindparam("assignment"))
                     .values(caption_id=bindparam("caption")),
                     [{"assignment": aid, "caption": cid} for aid, cid in rows])
    return len(rows)
