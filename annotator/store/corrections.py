"""Correction revisions (append-only) and the current correction per key."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
from sqlalchemy import Connection, func, select
from sqlalchemy.exc import IntegrityError

from ..model import Correction
from . import Store
from .rows import lock_key, upsert
from .schema import captions, corrections, current_corrections, items, systems, users


def insert_correction(conn: Connection, caption_id: int, error_type: str, user_id: int, *, original_text: str,
                      corrected_text: str | None, override_reason: str | None = None, at: datetime | None = None,
                      stamp=None, blind: bool | None = None) -> int:
    """Append a correction revision inside the caller's transaction; return its revision.

    ``blind`` records whether the references and live scores were hidden while it was made (None: not known).

    ``stamp`` (annotator.store.stamps.CaptionStamp of the caption as a page showed it) makes the save refuse
    with CaptionChanged, writing nothing, when the id no longer holds that caption.
    """
    if stamp is not None:
        from .stamps import check_caption_stamp
        check_caption_stamp(conn, stamp, caption_id)
    at = at or datetime.now(timezone.utc)
    lock_key(conn, f"correction:{caption_id}:{error_type}:{user_id}")
    revision = conn.execute(select(func.coalesce(func.max(corrections.c.revision), 0) + 1).where(
        corrections.c.caption_id == caption_id, corrections.c.error_type == error_type,
        corrections.c.user_id == user_id)).scalar()
    cid = conn.execute(corrections.insert().values(
        caption_id=caption_id, error_type=error_type, user_id=user_id, revision=revision, original_text=original_text,
        corrected_text=corrected_text, override_reason=override_reason, created_at=at,
        blind=blind)).inserted_primary_key[0]
    upsert(conn, current_corrections, {"caption_id": caption_id, "error_type": error_type, "user_id": user_id,
                                        "correction_id": cid, "revision": revision, "updated_at": at},
            ["caption_id", "error_type", "user_id"])
    return revision


def save_correction(store: Store, caption_id: int, error_type: str, user_id: int, **fields) -> int:
    """Store one correction revision in its own committed transaction; retry on a race."""
    for attempt in range(8):
        try:
            with store.transaction() as conn:
                return insert_correction(conn, caption_id, error_type, user_id, **fields)
        except IntegrityError:
            if attempt == 7:
                raise
    raise AssertionError("unreachable")


def _row(r) -> Correction:
    return Correction(caption_id=r.caption_id, error_type=r.error_type, user=r.user_name, original_text=r.original_text,
                      corrected_text=r.corrected_text, override_reason=r.override_reason, revision=r.revision,
                      created_at=r.created_at, correction_id=r.id, blind=r.blind)


def correction_history(conn: Connection, caption_id: int, error_type: str | None = None) -> list[Correction]:
    """Every revision of a caption's corrections, oldest first."""
    q = (select(corrections, users.c.name.label("user_name")).join(users, users.c.id == corrections.c.user_id)
         .where(corrections.c.caption_id == caption_id))
    if error_type is not None:
        q = q.where(corrections.c.error_type == error_type)
    return [_row(r) for r in conn.execute(q.order_by(corrections.c.error_type, corrections.c.user_id, corrections.c.revision))]


def current_corrections_frame(store: Store, project: str, *, error_type: str | None = None, system: str | None = None) -> pd.DataFrame:
    """Current corrections of a project: caption_id, item_key, system, line_no, error_type, user,
    original_text, corrected_text, override_reason, revision, blind."""
    from .projects import project_id
    with store.read() as conn:
        pid = project_id(conn, project)
        q = (select(corrections.c.caption_id, items.c.key.label("item_key"), systems.c.name.label("system"), captions.c.line_no,
                    corrections.c.error_type, users.c.name.label("user"), corrections.c.original_text,
                    corrections.c.corrected_text, corrections.c.override_reason, corrections.c.revision,
                    corrections.c.blind)
             .select_from(current_corrections.join(corrections, corrections.c.id == current_corrections.c.correction_id)
                          .join(captions, captions.c.id == corrections.c.caption_id)
                          .join(systems, systems.c.id == captions.c.system_id)
                          .join(items, items.c.id == captions.c.item_id)
                          .join(users, users.c.id == corrections.c.user_id))
             .where(systems.c.project_id == pid))
        if error_type is not None:
            q = q.where(corrections.c.error_type == error_type)
        if system is not None:
            q = q.where(systems.c.name == system)
        result = conn.execute(q.order_by(systems.c.name, captions.c.line_no))
        return pd.DataFrame(result.fetchall(), columns=list(result.keys()))
