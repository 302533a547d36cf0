"""Queries the content-selection page needs beyond loading a project."""

from __future__ import annotations

from sqlalchemy import func, select

from . import Store
from .projects import project_id
from .schema import boxes, captions, items, refs, systems


def project_fingerprint(store: Store, name: str) -> tuple:
    """A cheap value that changes whenever the project's items, boxes, references or captions change.

    Counts and largest ids of each table (rows are only added or deleted, and
    new rows get larger ids), so a cached evaluation can be reused until then.
    """
    with store.read() as conn:
        pid = project_id(conn, name)
        it = conn.execute(select(func.count(), func.max(items.c.id)).where(items.c.project_id == pid)).one()
        bx = conn.execute(select(func.count(), func.max(boxes.c.id)).select_from(boxes.join(items, boxes.c.item_id == items.c.id))
                          .where(items.c.project_id == pid)).one()
        rf = conn.execute(select(func.count(), func.max(refs.c.id)).select_from(refs.join(items, refs.c.item_id == items.c.id))
                          .where(items.c.project_id == pid)).one()
        cp = conn.execute(select(func.count(), func.max(captions.c.id)).select_from(captions.join(systems, captions.c.system_id == systems.c.id))
                          .where(systems.c.project_id == pid)).one()
    return (pid, *tuple(it), *tuple(bx), *tuple(rf), *tuple(cp))
