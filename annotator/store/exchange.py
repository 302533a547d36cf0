"""Queries the importers and the exporter need beyond the repository modules."""

from __future__ import annotations

from sqlalchemy import Connection, select

from .codec import decode_types
from .schema import captions, corrections, current_corrections, current_judgements, projects, systems


def has_projects(conn: Connection) -> bool:
    """True when the store holds at least one project."""
    return conn.execute(select(projects.c.id).limit(1)).first() is not None


def caption_lines(conn: Connection, pid: int) -> dict[int, tuple[str, int]]:
    """caption id → (system name, 0-based line) for every caption of a project."""
    q = (select(captions.c.id, systems.c.name, captions.c.line_no)
         .join(systems, systems.c.id == captions.c.system_id).where(systems.c.project_id == pid))
    return {r.id: (r.name, r.line_no) for r in conn.execute(q)}


def current_annotations(conn: Connection, user_id: int, caption_ids) -> dict[int, tuple[str | None, tuple[str, ...]]]:
    """caption id → (label, error type ids) of a user's current own (annotation-kind) judgements."""
    out = {}
    ids = list(caption_ids)
    for start in range(0, len(ids), 5000):
        chunk = ids[start:start + 5000]
        q = select(current_judgements.c.caption_id, current_judgements.c.label, current_judgements.c.error_types).where(
            current_judgements.c.user_id == user_id, current_judgements.c.kind == "annotation",
            current_judgements.c.caption_id.in_(chunk))
        for r in conn.execute(q):
            out[r.caption_id] = (r.label, decode_types(r.error_types))
    return out


def current_correction_texts(conn: Connection, user_id: int, error_type: str, caption_ids) -> dict[int, str | None]:
    """caption id → corrected text of a user's current correction for one error type."""
    out = {}
    ids = list(caption_ids)
    for start in range(0, len(ids), 5000):
        chunk = ids[start:start + 5000]
        q = (select(current_corrections.c.caption_id, corrections.c.corrected_text)
             .join(corrections, corrections.c.id == current_corrections.c.correction_id)
             .where(current_corrections.c.user_id == user_id, current_corrections.c.error_type == error_type,
                    current_corrections.c.caption_id.in_(chunk)))
        for r in conn.execute(q):
            out[r.caption_id] = r.corrected_text
    return out


def item_keys(conn: Connection, project: str) -> list[str] | None:
    """Item keys of a project in order, or None when there is no such project."""
    from .schema import items
    pid = conn.execute(select(projects.c.id).where(projects.c.name == project)).scalar()
    if pid is None:
        return None
    return [r[0] for r in conn.execute(select(items.c.key).where(items.c.project_id == pid).order_by(items.c.position))]
