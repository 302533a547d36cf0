"""Queries of the correction step: queues, current corrections of a system, caption context.

Which captions carry which type in a judgement *layer* is decided by
annotator.layers.build_layer (see annotator.correction.layer_types);
the queries here take that mapping.
"""

from __future__ import annotations

from sqlalchemy import Connection, and_, func, select

from ..errors import NotFound
from ..model import Box
from .projects import system_id, trusted_image_root
from .schema import (
    boxes, captions, corrections, current_corrections, current_judgements, items, projects, systems, users,
)


def caption_text(conn: Connection, caption_id: int) -> str:
    """The generated text of a caption (NotFound if there is no such caption)."""
    text = conn.execute(select(captions.c.text).where(captions.c.id == caption_id)).scalar()
    if text is None:
        raise NotFound(f"no caption with id {caption_id}")
    return text


def system_corrections(conn: Connection, pid: int, system: str, *, only_users: list[str] | None = None,
                       error_type: str | None = None) -> list:
    """Current corrections of one system: rows (caption_id, line_no, error_type, user, original_text,
    corrected_text, override_reason, revision, created_at, correction_id)."""
    sid = system_id(conn, pid, system)
    q = (select(corrections.c.caption_id, captions.c.line_no, corrections.c.error_type, users.c.name.label("user"),
                corrections.c.original_text, corrections.c.corrected_text, corrections.c.override_reason,
                corrections.c.revision, corrections.c.created_at, corrections.c.id.label("correction_id"))
         .select_from(current_corrections.join(corrections, corrections.c.id == current_corrections.c.correction_id)
                      .join(captions, captions.c.id == corrections.c.caption_id)
                      .join(users, users.c.id == corrections.c.user_id))
         .where(captions.c.system_id == sid))
    if only_users:
        q = q.where(users.c.name.in_(list(only_users)))
    if error_type is not None:
        q = q.where(corrections.c.error_type == error_type)
    return conn.execute(q.order_by(captions.c.line_no, corrections.c.error_type, corrections.c.id)).all()


def layer_queue(conn: Connection, pid: int, system: str, error_type: str, carried: dict[int, tuple[str, ...]], *,
                corrector: str | None = None) -> list[dict]:
    """Captions of ``system`` whose layer types (``carried``: caption_id → type ids, from
    :func:`annotator.correction.layer_types`) include ``error_type``, in line order, with the
    corrector's current correction for that type (or None)."""
    sid = system_id(conn, pid, system)
    wanted = [cid for cid, types in carried.items() if error_type in types]
    if not wanted:
        return []
    rows = []
    for start in range(0, len(wanted), 5000):
        chunk = wanted[start:start + 5000]
        rows.extend(conn.execute(select(captions.c.id, captions.c.line_no, captions.c.text, items.c.key, items.c.id.label("item_id"))
                                 .join(items, items.c.id == captions.c.item_id)
                                 .where(captions.c.id.in_(chunk), captions.c.system_id == sid)).all())
    mine: dict[int, object] = {}
    if corrector is not None:
        q = (select(corrections.c.caption_id, corrections.c.corrected_text, corrections.c.override_reason, corrections.c.revision)
             .select_from(current_corrections.join(corrections, corrections.c.id == current_corrections.c.correction_id)
                          .join(captions, captions.c.id == corrections.c.caption_id)
                          .join(users, users.c.id == corrections.c.user_id))
             .where(captions.c.system_id == sid, corrections.c.error_type == error_type, users.c.name == corrector))
        mine = {r.caption_id: r for r in conn.execute(q)}
    out = []
    for r in sorted(rows, key=lambda r: r.line_no):
        c = mine.get(r.id)
        out.append({"caption_id": r.id, "line_no": r.line_no, "item_key": r.key, "item_id": r.item_id, "text": r.text,
                    "error_types": carried[r.id],
                    "correction": None if c is None else {"corrected_text": c.corrected_text,
                                                          "override_reason": c.override_reason, "revision": c.revision}})
    return out


def layer_choices(conn: Connection, pid: int, system: str | None = None) -> dict:
    """What layers exist for a project (or one system): annotator names with current annotations, and
    whether the adjudicated layer has anything (annotations or adjudications).
    ``{"annotators": [...], "adjudicated": bool}``."""
    base = (current_judgements.join(captions, captions.c.id == current_judgements.c.caption_id)
            .join(systems, systems.c.id == captions.c.system_id).join(users, users.c.id == current_judgements.c.user_id))
    cond = [systems.c.project_id == pid, current_judgements.c.label.is_not(None)]
    if system is not None:
        cond.append(systems.c.name == system)
    names = [r[0] for r in conn.execute(select(users.c.name).distinct().select_from(base)
                                        .where(and_(*cond, current_judgements.c.kind == "annotation")).order_by(users.c.name))]
    n_adj = conn.execute(select(func.count()).select_from(base).where(and_(*cond, current_judgements.c.kind == "adjudication"))).scalar()
    return {"annotators": names, "adjudicated": bool(n_adj) or bool(names)}


def has_adjudications(conn: Connection, pid: int, system: str) -> bool:
    """True when a lead adjudicated some caption of ``system``."""
    q = (select(current_judgements.c.caption_id)
         .select_from(current_judgements.join(captions, captions.c.id == current_judgements.c.caption_id)
                      .join(systems, systems.c.id == captions.c.system_id))
         .where(systems.c.project_id == pid, systems.c.name == system, current_judgements.c.kind == "adjudication",
                current_judgements.c.label.is_not(None))
         .limit(1))
    return conn.execute(q).first() is not None


def tagged_types(conn: Connection, caption_ids: list[int]) -> dict[int, set[str]]:
    """caption_id → every error type some current judgement (an annotation or an adjudication) of the
    caption carries; captions nobody tagged are left out."""
    out: dict[int, set[str]] = {}
    ids = list(caption_ids)
    for start in range(0, len(ids), 5000):
        q = (select(current_judgements.c.caption_id, current_judgements.c.error_types)
             .where(current_judgements.c.caption_id.in_(ids[start:start + 5000]),
                    current_judgements.c.kind.in_(("annotation", "adjudication"))))
        for cid, types in conn.execute(q):
            if types:
                out.setdefault(cid, set()).update(types.split())
    return out


def caption_context(conn: Connection, caption_id: int) -> dict:
    """The item behind a caption: item_key, image path, image root, width, height, boxes, system, line_no, text."""
    r = conn.execute(select(captions.c.id, captions.c.text, captions.c.line_no, items.c.id.label("item_id"), items.c.key,
                            items.c.image_path, items.c.width, items.c.height, projects.c.image_root,
                            projects.c.id.label("project_id"),
                            systems.c.name.label("system"))
                     .join(items, items.c.id == captions.c.item_id).join(systems, systems.c.id == captions.c.system_id)
                     .join(projects, projects.c.id == items.c.project_id)
                     .where(captions.c.id == caption_id)).first()
    if r is None:
        raise NotFound(f"no caption with id {caption_id}")
    bx = [Box(b.box_key, b.label, b.x, b.y, b.w, b.h, b.synset)
          for b in conn.execute(select(boxes).where(boxes.c.item_id == r.item_id).order_by(boxes.c.id))]
    return {"caption_id": r.id, "text": r.text, "line_no": r.line_no, "item_id": r.item_id, "item_key": r.key,
            "image": r.image_path, "image_root": r.image_root, "width": r.width, "height": r.height,
            "trusted_image_root": trusted_image_root(conn, r.project_id),
            "boxes": bx, "system": r.system}


def project_references(conn: Connection, pid: int) -> dict[int, list[str]]:
    """item_id → its reference texts in order."""
    from .schema import refs
    out: dict[int, list[str]] = {}
    q = (select(refs.c.item_id, refs.c.text).join(items, items.c.id == refs.c.item_id)
         .where(items.c.project_id == pid).order_by(refs.c.item_id, refs.c.position))
    for r in conn.execute(q):
        out.setdefault(r.item_id, []).append(r.text)
    return out


def item_references(conn: Connection, item_id: int) -> list[str]:
    """The reference texts of one item, in order."""
    from .schema import refs
    return [r[0] for r in conn.execute(select(refs.c.text).where(refs.c.item_id == item_id).order_by(refs.c.position))]


def project_items_in_order(conn: Connection, pid: int) -> list:
    """Rows (id, key) of a project's items in import order."""
    return conn.execute(select(items.c.id, items.c.key).where(items.c.project_id == pid).order_by(items.c.position)).all()


def corrections_fingerprint(conn: Connection, pid: int) -> tuple:
    """(count, newest id) of a project's correction revisions: changes whenever a correction is saved."""
    q = (select(func.count(corrections.c.id), func.max(corrections.c.id))
         .select_from(corrections.join(captions, captions.c.id == corrections.c.caption_id)
                      .join(systems, systems.c.id == captions.c.system_id))
         .where(systems.c.project_id == pid))
    n, newest = conn.execute(q).first()
    return (int(n or 0), int(newest or 0))


def system_judged(conn: Connection, caption_id: int) -> bool:
    """True when some caption of the system that ``caption_id`` belongs to has a current judgement."""
    sys_id = select(captions.c.system_id).where(captions.c.id == caption_id).scalar_subquery()
    q = (select(current_judgements.c.caption_id)
         .select_from(current_judgements.join(captions, captions.c.id == current_judgements.c.caption_id))
         .where(captions.c.system_id == sys_id, current_judgements.c.kind.in_(("annotation", "adjudication")))
         .limit(1))
    return conn.execute(q).first() is not None
