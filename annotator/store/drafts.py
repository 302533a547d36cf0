"""Drafts of judgements: the annotate panel as an annotator left it with "Save draft".

One row per (user, caption), replaced by each new draft. Validation is the
caller's job (annotator.annotation.Queue.save_draft); these functions only
store. A judgement saved or skipped through :func:`annotator.store.judgements.insert_judgement`
removes the user's draft of that caption in the same transaction.

A draft's error spans live in its own ``spans`` column (migration 15), as the compact JSON a judgement's spans
are stored in (annotator.spans.encode_spans); NULL for a draft without spans.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import Connection, delete, select

from ..spans import clean_fix, decode_spans, encode_spans
from .codec import decode_types, encode_types
from .schema import drafts

def put_draft(conn: Connection, caption_id: int, user_id: int, *, label: str | None, error_types=(), note: str = "",
              at: datetime | None = None, stamp=None, spans=()) -> datetime:
    """Store (or replace) the user's draft of a caption inside the caller's transaction; return its time.

    ``spans``: the draft's error spans (annotator.spans.Span, checked by the caller; a fix with a control
    character is refused here too, as a judgement's is).

    ``stamp`` (annotator.store.stamps.CaptionStamp of the caption as the page showed it) refuses the draft with
    CaptionChanged, writing nothing, when the id holds another caption by now, as a save is refused.
    """
    for span in spans or ():
        clean_fix(span.fix)
    if stamp is not None:
        from .stamps import check_caption_stamp
        check_caption_stamp(conn, stamp, caption_id)
    at = at or datetime.now(timezone.utc)
    values = {"label": label, "error_types": encode_types(error_types), "spans": encode_spans(spans), "note": note or "", "saved_at": at}
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    stmt = insert(drafts).values(user_id=user_id, caption_id=caption_id, **values)
    conn.execute(stmt.on_conflict_do_update(index_elements=["user_id", "caption_id"],
                                            set_={k: stmt.excluded[k] for k in values}))
    return at


def get_draft(conn: Connection, caption_id: int, user_id: int):
    """The user's draft of a caption as a row (label, error_types as a tuple, note, saved_at in UTC, spans as a
    tuple of annotator.spans.Span), or None."""
    r = conn.execute(select(drafts.c.label, drafts.c.error_types, drafts.c.spans, drafts.c.note, drafts.c.saved_at)
                     .where(drafts.c.user_id == user_id, drafts.c.caption_id == caption_id)).first()
    if r is None:
        return None
    saved = r.saved_at
    if saved is not None and saved.tzinfo is None:  # SQLite keeps no offset; every stored time is UTC
        saved = saved.replace(tzinfo=timezone.utc)
    return r.label, decode_types(r.error_types), r.note or "", saved, decode_spans(r.spans)


def delete_draft(conn: Connection, caption_id: int, user_id: int) -> int:
    """Remove the user's draft of a caption (inside the caller's transaction); return how many rows went (0 or 1)."""
    return conn.execute(delete(drafts).where(drafts.c.user_id == user_id, drafts.c.caption_id == caption_id)).rowcount
