"""Bulk writes for benchmarks and large synthetic stores.

``bulk_judgements`` appends many first revisions at once (one executemany per
chunk, plus the matching ``current_judgements`` rows). It skips the per-save
revision lookup of :func:`annotator.store.judgements.insert_judgement`, so it
is only for keys that have no judgement yet — exactly what a benchmark or a
fresh synthetic store needs.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import Connection, func, select

from .codec import encode_types, type_mask, working_hundredths
from .save_times import epoch_micros
from .schema import current_judgements, judgements

_CHUNK = 20_000


def bulk_judgements(conn: Connection, rows, *, at: datetime | None = None) -> int:
    """Insert (caption_id, user_id, label, error_types) first revisions of kind 'annotation'; return the count."""
    at = at or datetime.now(timezone.utc)
    start = conn.execute(select(func.coalesce(func.max(judgements.c.id), 0))).scalar()
    batch, n = [], 0
    for cid, uid, label, types in rows:
        batch.append((cid, uid, label, encode_types(types)))
        if len(batch) >= _CHUNK:
            start = _flush(conn, batch, start, at)
            n += len(batch)
            batch = []
    if batch:
        _flush(conn, batch, start, at)
        n += len(batch)
    if n:
        from .queue_tallies import recount_all
        recount_all(conn)  # the queues' counts, as saves would have moved them
    if conn.dialect.name == "postgresql" and n:
        # Explicit ids bypassed the sequence: move it past them.
        from sqlalchemy import text
        conn.execute(text("SELECT setval(pg_get_serial_sequence('judgements', 'id'), (SELECT max(id) FROM judgements))"))
    return n


def _flush(conn: Connection, batch, start_id: int, at: datetime) -> int:
    saved_us = epoch_micros(at)
    # Explicit ids let the current rows point at their revision without reading them back.
    conn.execute(judgements.insert(), [
        {"id": start_id + k + 1, "caption_id": c, "user_id": u, "kind": "annotation", "revision": 1, "label": lab,
         "error_types": t, "note": "", "seconds": 5.0, "created_at": at} for k, (c, u, lab, t) in enumerate(batch)])
    conn.execute(current_judgements.insert(), [
        {"caption_id": c, "user_id": u, "kind": "annotation", "judgement_id": start_id + k + 1, "revision": 1,
         "label": lab, "error_types": t, "type_mask": type_mask(t), "hundredths": working_hundredths(5.0),
         "saved_us": saved_us}
        for k, (c, u, lab, t) in enumerate(batch)])
    return start_id + len(batch)
