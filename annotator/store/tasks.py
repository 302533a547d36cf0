"""Reading one caption with everything the annotate page shows next to it.

Four small indexed queries (caption+item, boxes, references, nothing else):
the annotate page never loads a whole project.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, select

from ..errors import NotFound
from ..model import Box, Caption, Item, Reference
from .codec import decode_mentions
from .projects import trusted_image_root
from .schema import boxes, captions, items, projects, refs, systems
from .stamps import CaptionStamp


@dataclass(frozen=True)
class CaptionContext:
    """A caption, its item (with boxes and references) and the project's image root."""

    project_id: int
    image_root: str | None
    item: Item
    caption: Caption
    trusted_image_root: str | None = None  # the root as a command-line import set it (images.check_image_root)
    stamp: CaptionStamp | None = None  # the caption as read here: a save made for it carries this


def caption_context(conn: Connection, caption_id: int) -> CaptionContext:
    """Load a caption and its item; NotFound if the caption does not exist."""
    r = conn.execute(
        select(captions.c.id, captions.c.text, captions.c.mentions, captions.c.line_no, systems.c.name.label("system"),
               items.c.id.label("item_id"), items.c.key, items.c.image_path, items.c.width, items.c.height,
               items.c.is_practice, projects.c.id.label("project_id"), projects.c.name.label("project"),
               projects.c.image_root)
        .select_from(captions.join(systems, systems.c.id == captions.c.system_id)
                     .join(items, items.c.id == captions.c.item_id)
                     .join(projects, projects.c.id == items.c.project_id))
        .where(captions.c.id == caption_id)).first()
    if r is None:
        raise NotFound(f"no caption with id {caption_id}")
    item = Item(key=r.key, image=r.image_path, width=r.width, height=r.height, is_practice=bool(r.is_practice),
                item_id=r.item_id)
    item.boxes.extend(Box(b.box_key, b.label, b.x, b.y, b.w, b.h, b.synset) for b in conn.execute(
        select(boxes.c.box_key, boxes.c.label, boxes.c.x, boxes.c.y, boxes.c.w, boxes.c.h, boxes.c.synset)
        .where(boxes.c.item_id == r.item_id).order_by(boxes.c.id)))
    item.references.extend(Reference(x.text, decode_mentions(x.mentions)) for x in conn.execute(
        select(refs.c.text, refs.c.mentions).where(refs.c.item_id == r.item_id).order_by(refs.c.position)))
    caption = Caption(r.system, r.text, decode_mentions(r.mentions), caption_id=r.id)
    item.captions.append(caption)
    return CaptionContext(project_id=r.project_id, image_root=r.image_root, item=item, caption=caption,
                          trusted_image_root=trusted_image_root(conn, r.project_id),
                          stamp=CaptionStamp.of(r.id, r.project, r.system, r.key, r.line_no, r.text))
