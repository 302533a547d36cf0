"""Read queries behind the team dashboard (annotator.team): the project's assignments, as arrays (kept between
server starts by annotator.frames.assignments)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sqlalchemy import case, select

from . import Store
from .analysis_queries import _ints, _joined, _raw_chunks
from .packing import Field, id_widths, pack
from .projects import project_id
from .schema import assignments, captions, items, users


def read_assignment_frame(store: Store, project: str) -> pd.DataFrame:
    """One row per assignment of the project, read in full (annotator.frames.assignments.assignment_frame)."""
    with store.read() as conn:
        pid = project_id(conn, project)
        # Caption, user and second mark packed into one integer per row (annotator.store.packing), comma-joined
        # over every row: a million assignments in one text, no Python tuple per row.
        widths = id_widths(conn)
        packing = pack([Field("caption_id", assignments.c.caption_id, widths["caption"]),
                        Field("user_id", assignments.c.user_id, widths["user"]),
                        Field("is_second", case((assignments.c.is_second, 1), else_=0), 1)])
        q = select(*[_joined(conn, w) for w in packing.columns(conn)]).where(assignments.c.project_id == pid)
        row = [r for chunk in _raw_chunks(conn, q) for r in chunk][0]
        names = dict(conn.execute(select(users.c.id, users.c.name)).all())
        # The captions of practice items (few), instead of looking every assignment's item up.
        practice = np.array(conn.execute(select(captions.c.id).join(items, items.c.id == captions.c.item_id)
                                         .where(items.c.project_id == pid, items.c.is_practice.is_(True)))
                            .scalars().all(), dtype=np.int64)
    fields = packing.unpack([_ints(v) for v in row])
    caption_id, user_id, second = fields["caption_id"], fields["user_id"], fields["is_second"]
    ids, codes = np.unique(user_id, return_inverse=True)
    found = pd.Index([names[int(u)] for u in ids], dtype=object)
    order = np.argsort(np.asarray(found, dtype=object), kind="stable")  # categories sorted by name, as before
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return pd.DataFrame({"caption_id": caption_id,
                         "user": pd.Categorical.from_codes(rank[codes] if len(ids) else codes,
                                                           categories=pd.Index(list(found[order]))),
                         "is_second": second.astype(bool),
                         "is_practice": np.isin(caption_id, practice) if len(practice) else np.zeros(len(caption_id), bool)})


def user_names(store: Store) -> list:
    """[[id, name], ...] of every user, by id (what an assignment snapshot is checked against)."""
    with store.read() as conn:
        return [[int(i), str(n)] for i, n in conn.execute(select(users.c.id, users.c.name).order_by(users.c.id))]
