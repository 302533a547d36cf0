"""Small look-ups for one screen: a caption with its image and item, its judgements with notes, an item's boxes,
a project's practice items and image root, a user's role (the Agreement, Adjudication and Error analysis pages
and their commands)."""

from __future__ import annotations

import pandas as pd
from sqlalchemy import select

from ..model import Box, Judgement, JudgementKind, Label
from . import Store
from .codec import decode_types
from .projects import project_id, project_image_root
from .schema import boxes, captions, current_judgements, items, judgements, systems, users


def caption_details(store: Store, project: str, caption_ids) -> pd.DataFrame:
    """Caption rows for display: caption_id, item_id, item_key, image_path, width, height,
    is_practice, system, line_no, text (in the order of ``caption_ids``; unknown ids left out)."""
    ids = [int(c) for c in caption_ids]
    cols = ["caption_id", "item_id", "item_key", "image_path", "width", "height", "is_practice", "system", "line_no", "text"]
    if not ids:
        return pd.DataFrame(columns=cols)
    with store.read() as conn:
        pid = project_id(conn, project)
        rows = []
        for start in range(0, len(ids), 5000):
            chunk = ids[start:start + 5000]
            rows += conn.execute(
                select(captions.c.id, items.c.id, items.c.key, items.c.image_path, items.c.width, items.c.height,
                       items.c.is_practice, systems.c.name, captions.c.line_no, captions.c.text)
                .select_from(captions.join(items, items.c.id == captions.c.item_id)
                             .join(systems, systems.c.id == captions.c.system_id))
                .where(captions.c.id.in_(chunk), systems.c.project_id == pid)).all()
    df = pd.DataFrame([tuple(r) for r in rows], columns=cols)
    if df.empty:
        return df
    df["is_practice"] = df["is_practice"].astype(bool)
    order = {c: n for n, c in enumerate(ids)}
    return df.sort_values("caption_id", key=lambda s: s.map(order)).reset_index(drop=True)


def caption_judgements(store: Store, caption_id: int) -> list[Judgement]:
    """The current judgement of every user and kind for one caption (with notes and spans), by kind then user."""
    from ..spans import decode_spans
    with store.read() as conn:
        q = (select(judgements, users.c.name.label("user_name"))
             .join(current_judgements, current_judgements.c.judgement_id == judgements.c.id)
             .join(users, users.c.id == judgements.c.user_id)
             .where(current_judgements.c.caption_id == int(caption_id))
             .order_by(judgements.c.kind, users.c.name))
        out = []
        for r in conn.execute(q):
            out.append(Judgement(caption_id=r.caption_id, user=r.user_name, label=Label(r.label) if r.label else None,
                                 error_types=decode_types(r.error_types), note=r.note, seconds=r.seconds,
                                 kind=JudgementKind(r.kind), revision=r.revision, created_at=r.created_at,
                                 judgement_id=r.id, spans=decode_spans(r.spans)))
        return out


def item_boxes(store: Store, item_id: int) -> list[Box]:
    """The gold boxes of one item."""
    with store.read() as conn:
        return [Box(b.box_key, b.label, b.x, b.y, b.w, b.h, b.synset)
                for b in conn.execute(select(boxes).where(boxes.c.item_id == int(item_id)).order_by(boxes.c.id))]


def image_root(store: Store, project: str) -> str | None:
    """The project's image root directory (None if not set)."""
    with store.read() as conn:
        return project_image_root(conn, project_id(conn, project))


def practice_items(store: Store, project: str) -> list[str]:
    """Keys of the items marked as practice/guideline examples, in import order."""
    with store.read() as conn:
        pid = project_id(conn, project)
        return [r[0] for r in conn.execute(select(items.c.key).where(items.c.project_id == pid, items.c.is_practice.is_(True))
                                           .order_by(items.c.position))]


def user_role(store: Store, name: str) -> str | None:
    """The role of user ``name`` (None if there is no such user)."""
    with store.read() as conn:
        return conn.execute(select(users.c.role).where(users.c.name == name)).scalar()
