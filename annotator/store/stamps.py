"""Caption stamps: which caption a save was made for, checked inside the save's own transaction.

Caption ids are not forever: restoring a backup or importing a project into a
store that was emptied hands the same ids to other captions. A page open from
before would then save its judgement onto a caption nobody showed the user.
So a page takes a :class:`CaptionStamp` of the caption it shows (its id plus a
digest of project, system, item key, line and text), and every save that
carries one checks, in the transaction that writes, that the id still names
that caption (:func:`check_caption_stamp`: one lookup by primary key). When it
does not, the save raises :class:`~annotator.errors.CaptionChanged` and
writes nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from sqlalchemy import Connection, select

from ..errors import CaptionChanged
from .schema import captions, items, projects, systems


def _digest(project: str, system: str, item_key: str, line_no: int, text: str) -> str:
    payload = json.dumps([str(project), str(system), str(item_key), int(line_no), str(text)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CaptionStamp:
    """A caption as a page showed it: its id, where it sits (for messages) and a digest of its content."""

    caption_id: int
    project: str
    system: str
    item_key: str
    line_no: int
    digest: str

    @classmethod
    def of(cls, caption_id: int, project: str, system: str, item_key: str, line_no: int, text: str) -> "CaptionStamp":
        """The stamp of a caption from the values a page shows (``line_no`` 0-based, as stored)."""
        return cls(int(caption_id), str(project), str(system), str(item_key), int(line_no),
                   _digest(project, system, item_key, line_no, text))

    def where(self) -> str:
        """Item, system and project of the stamped caption, for messages."""
        return f"item {self.item_key!r} of system {self.system!r} in project {self.project!r}"


def _stamp_row(conn: Connection, caption_id: int):
    return conn.execute(
        select(captions.c.id, captions.c.line_no, captions.c.text, systems.c.name.label("system"),
               items.c.key.label("item_key"), projects.c.name.label("project"))
        .select_from(captions.join(systems, systems.c.id == captions.c.system_id)
                     .join(items, items.c.id == captions.c.item_id)
                     .join(projects, projects.c.id == items.c.project_id))
        .where(captions.c.id == int(caption_id))).first()


def caption_stamp(conn: Connection, caption_id: int) -> CaptionStamp | None:
    """The stamp of the caption stored under ``caption_id`` now, or None when there is none."""
    r = _stamp_row(conn, caption_id)
    if r is None:
        return None
    return CaptionStamp.of(r.id, r.project, r.system, r.item_key, r.line_no, r.text)


def check_caption_stamp(conn: Connection, stamp: CaptionStamp, caption_id: int | None = None) -> None:
    """Raise CaptionChanged unless ``caption_id`` (default: the stamp's) still holds the stamped caption.

    Call it inside the transaction that writes, so nothing can replace the caption between the check and
    the write.
    """
    cid = stamp.caption_id if caption_id is None else int(caption_id)
    now = caption_stamp(conn, cid) if cid == stamp.caption_id else None
    if now is not None and now.digest == stamp.digest:
        return
    if cid != stamp.caption_id:
        what = f"the page showed caption {stamp.caption_id}, {stamp.where()}, but the save named caption {cid}"
    elif now is None:
        what = f"it was {stamp.where()} when the page showed it, and no caption has that id any more"
    elif now.where() == stamp.where():
        what = f"{stamp.where()} has another text or line than the page showed"
    else:
        what = f"it was {stamp.where()} when the page showed it, and that id now holds {now.where()}"
    raise CaptionChanged(
        f"caption {stamp.caption_id} changed underneath this page: {what} (the database was restored from a backup "
        "or the project imported again since). Nothing was saved. Reload the page to see the captions as they are now.")
