"""Human judgement scores per caption (table ``human_scores``: caption_id, name, value).

A caption has at most one value per score name (e.g. ``correctness``,
``completeness``); writing a value for an existing (caption, name) replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlalchemy import Connection, delete, func, select

from . import Store
from .projects import project_id
from .schema import captions, human_scores, items, systems

_CHUNK = 2000


@dataclass(frozen=True)
class CaptionKeys:
    """The ways an import file may name a caption of one project.

    ``by_item_system``: (item key, system) → caption id;
    ``by_system_line``: (system, 0-based line) → caption id;
    ``lines``: system → number of captions.
    """

    by_item_system: dict
    by_system_line: dict
    lines: dict
    item_keys: frozenset


def caption_keys(conn: Connection, pid: int) -> CaptionKeys:
    """Every caption key of project ``pid`` (the annotated caption of each system and item, :mod:`.samples`)."""
    from .samples import project_annotated_sample
    by_item_system, by_system_line, lines = {}, {}, {}
    q = (select(captions.c.id, items.c.key, systems.c.name, captions.c.line_no)
         .select_from(captions.join(systems, captions.c.system_id == systems.c.id).join(items, items.c.id == captions.c.item_id))
         .where(systems.c.project_id == pid, project_annotated_sample(conn, pid)))
    for cid, key, system, line_no in conn.execute(q):
        by_item_system[(key, system)] = cid
        by_system_line[(system, line_no)] = cid
        lines[system] = lines.get(system, 0) + 1
    for (name,) in conn.execute(select(systems.c.name).where(systems.c.project_id == pid)):
        lines.setdefault(name, 0)
    item_keys = frozenset(r[0] for r in conn.execute(select(items.c.key).where(items.c.project_id == pid)))
    return CaptionKeys(by_item_system, by_system_line, lines, item_keys)


def system_caption_counts(conn: Connection, pid: int) -> dict[str, int]:
    """System name → how many annotated captions (:mod:`.samples`) it has in project ``pid`` (0 for none)."""
    from .samples import project_annotated_sample
    counts = {name: 0 for (name,) in conn.execute(select(systems.c.name).where(systems.c.project_id == pid)
                                                 .order_by(systems.c.id))}
    q = (select(systems.c.name, func.count()).select_from(captions.join(systems, captions.c.system_id == systems.c.id))
         .where(systems.c.project_id == pid, project_annotated_sample(conn, pid)).group_by(systems.c.name))
    counts.update((name, int(n)) for name, n in conn.execute(q))
    return counts


def caption_keys_for(conn: Connection, pid: int, records, lines: dict[str, int]) -> CaptionKeys:
    """The :class:`CaptionKeys` of the captions ``records`` name (objects with ``system``, ``item`` (a key or
    None) and ``index`` (a 0-based line or None), as a score file gives them), and no others: what an import
    that streams its file looks up a batch at a time. ``lines``: :func:`system_caption_counts`."""
    from .samples import project_annotated_sample
    annotated = project_annotated_sample(conn, pid)
    keys = sorted({r.item for r in records if r.item is not None})
    by_line: dict[str, set[int]] = {}
    for r in records:
        if r.index is not None and r.system in lines:
            by_line.setdefault(r.system, set()).add(r.index)
    by_item_system, by_system_line, item_keys = {}, {}, set()
    joined = captions.join(systems, captions.c.system_id == systems.c.id).join(items, items.c.id == captions.c.item_id)
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start:start + _CHUNK]
        item_keys.update(k for (k,) in conn.execute(select(items.c.key).where(items.c.project_id == pid,
                                                                               items.c.key.in_(chunk))))
        q = (select(captions.c.id, items.c.key, systems.c.name).select_from(joined)
             .where(systems.c.project_id == pid, annotated, items.c.key.in_(chunk)))
        by_item_system.update(((key, system), cid) for cid, key, system in conn.execute(q))
    for system, wanted in by_line.items():
        ordered = sorted(wanted)
        for start in range(0, len(ordered), _CHUNK):
            q = (select(captions.c.id, captions.c.line_no).select_from(joined)
                 .where(systems.c.project_id == pid, systems.c.name == system, annotated,
                        captions.c.line_no.in_(ordered[start:start + _CHUNK])))
            by_system_line.update(((system, line), cid) for cid, line in conn.execute(q))
    return CaptionKeys(by_item_system, by_system_line, dict(lines), frozenset(item_keys))


def write_scores(conn: Connection, rows: list[tuple[int, str, float]]) -> int:
    """Insert or replace (caption_id, name, value) rows inside the caller's transaction; return the count."""
    if not rows:
        return 0
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    for start in range(0, len(rows), _CHUNK):
        chunk = [{"caption_id": c, "name": n, "value": float(v)} for c, n, v in rows[start:start + _CHUNK]]
        stmt = insert(human_scores).values(chunk)
        conn.execute(stmt.on_conflict_do_update(index_elements=["caption_id", "name"], set_={"value": stmt.excluded.value}))
    return len(rows)


def write_score_batches(store: Store, project: str, batches, resolve, *, replace: bool = False) -> tuple[int, int]:
    """Store human scores in ONE transaction, a batch at a time as an import reads them; return (values written,
    stored values deleted).

    ``batches`` yields lists of records (``system``, ``item``, ``index``: see :func:`caption_keys_for`);
    ``resolve(records, keys)`` turns a batch into (caption id, name, value) rows with the batch's
    :class:`CaptionKeys`, raising InputError for a record that names no caption. With ``replace``, the project's
    stored scores of a name are deleted before the first row of that name is written. Anything raised while
    the batches are drawn or written rolls every batch back (NotFound for an unknown project)."""
    written = removed = 0
    names: set[str] = set()
    with store.transaction() as conn:
        pid = project_id(conn, project)
        lines = system_caption_counts(conn, pid)
        for records in batches:
            rows = resolve(records, caption_keys_for(conn, pid, records, lines))
            new = sorted({name for _, name, _ in rows} - names)
            if replace and new:
                removed += delete_scores(conn, pid, new)
            names.update(new)
            written += write_scores(conn, rows)
    return written, removed


def _project_caption_ids(pid: int):
    return (select(captions.c.id).select_from(captions.join(systems, captions.c.system_id == systems.c.id))
            .where(systems.c.project_id == pid))


def delete_scores(conn: Connection, pid: int, names: list[str] | None = None) -> int:
    """Delete the project's human scores (only those called ``names`` when given); return rows deleted."""
    q = delete(human_scores).where(human_scores.c.caption_id.in_(_project_caption_ids(pid)))
    if names:
        q = q.where(human_scores.c.name.in_(list(names)))
    return conn.execute(q).rowcount


def scores_frame(store: Store, project: str, names: list[str] | None = None) -> pd.DataFrame:
    """The project's human scores, one row per (caption, name).

    Columns: caption_id, item_key, system, line_no, name, value; ordered by
    system, line and name.
    """
    cols = ["caption_id", "item_key", "system", "line_no", "name", "value"]
    with store.read() as conn:
        pid = project_id(conn, project)
        q = (select(human_scores.c.caption_id, items.c.key.label("item_key"), systems.c.name.label("system"),
                    captions.c.line_no, human_scores.c.name, human_scores.c.value)
             .select_from(human_scores.join(captions, captions.c.id == human_scores.c.caption_id)
                          .join(systems, systems.c.id == captions.c.system_id).join(items, items.c.id == captions.c.item_id))
             .where(systems.c.project_id == pid)
             .order_by(systems.c.id, captions.c.line_no, human_scores.c.name))
        if names:
            q = q.where(human_scores.c.name.in_(list(names)))
        rows = conn.execute(q).all()
    return pd.DataFrame([tuple(r) for r in rows], columns=cols)


def score_names(store: Store, project: str) -> list[str]:
    """Names of the human scores stored for the project, sorted."""
    with store.read() as conn:
        pid = project_id(conn, project)
        q = (select(human_scores.c.name).distinct().where(human_scores.c.caption_id.in_(_project_caption_ids(pid)))
             .order_by(human_scores.c.name))
        return [r[0] for r in conn.execute(q)]


def scores_fingerprint(store: Store, project: str) -> tuple:
    """Changes whenever the project's human scores change (count, largest id, sum of values)."""
    with store.read() as conn:
        pid = project_id(conn, project)
        row = conn.execute(select(func.count(), func.max(human_scores.c.id), func.sum(human_scores.c.value))
                           .where(human_scores.c.caption_id.in_(_project_caption_ids(pid)))).one()
    return (pid, *tuple(row))
