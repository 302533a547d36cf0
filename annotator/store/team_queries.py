"""Read queries behind the team dashboard (annotator.team): the project's assignments, as arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sqlalchemy import case, func, select

from . import Store
from .projects import practice_marks, project_id
from .schema import assignments, captions, items, users


def assignment_version(store: Store, project: str) -> tuple:
    """What changes whenever the project's assignment frame would: (project id, its assignment stamp, the
    count and sum of its practice item ids); the frame carries the practice marks, so they count too.

    The stamp is the token annotator.store.assignments writes with every change of the project's assignment
    rows (one primary-key look-up, where summing a million rows took 0.4 s). A project whose assignments were
    written before stamps existed has none: then its place holds the count, newest id and sums of ids, caption
    ids, user ids and second marks of the rows, which change when any assignment is added, moved or removed,
    also when all are replaced by as many others (ids can start again from 1 after all were deleted)."""
    from .assignments import ASSIGNMENT_STAMP
    from .project_settings import get_setting
    a = assignments
    with store.read() as conn:
        pid = project_id(conn, project)
        stamp = get_setting(conn, pid, ASSIGNMENT_STAMP)
        if stamp is not None:
            head = ("stamp", stamp)
        else:
            row = conn.execute(select(func.count(), func.coalesce(func.max(a.c.id), 0),
                                      func.coalesce(func.sum(a.c.id), 0), func.coalesce(func.sum(a.c.caption_id), 0),
                                      func.coalesce(func.sum(a.c.user_id), 0),
                                      func.coalesce(func.sum(case((a.c.is_second, a.c.caption_id), else_=0)), 0))
                               .where(a.c.project_id == pid)).one()
            head = ("rows", *(int(v) for v in row))
        practice = practice_marks(conn, pid)
    return (pid, *head, *practice)


def assignment_frame(store: Store, project: str, *, snapshots=None, version: tuple | None = None) -> pd.DataFrame:
    """One row per assignment of the project: caption_id (int64), user (categorical), is_second (bool,
    the blind second annotator of a double-annotated caption), is_practice (bool, the caption's item).

    With ``snapshots`` (a frame_snapshots.SnapshotFolder) and the project's :func:`assignment_version`, the
    frame is taken from the file a read of the same version left there (a restarted server), and a read
    writes one (in the background). The names of the users are checked against the store's."""
    if snapshots is None or version is None:
        return _read_assignment_frame(store, project)
    from . import frame_snapshots
    path = snapshots.path(version[0], "assignments")
    names = _user_names(store)
    loaded = frame_snapshots.load(path)
    if loaded is not None:
        frame, meta = loaded
        if meta.get("version") == list(version) and meta.get("names") == names:
            return frame
    frame = _read_assignment_frame(store, project)
    frame_snapshots.save_later(path, frame, {"project": project, "version": list(version), "names": names})
    return frame


def _user_names(store: Store) -> list:
    with store.read() as conn:
        return [[int(i), str(n)] for i, n in conn.execute(select(users.c.id, users.c.name).order_by(users.c.id))]


def _read_assignment_frame(store: Store, project: str) -> pd.DataFrame:
    from .analysis_queries import _joined, _ints, _raw_chunks
    with store.read() as conn:
        pid = project_id(conn, project)
        # Columns as comma-joined numbers (a million assignments in one row, no Python tuple per row).
        q = (select(*[_joined(conn, c) for c in (assignments.c.caption_id, assignments.c.user_id,
                                                 case((assignments.c.is_second, 1), else_=0))])
             .where(assignments.c.project_id == pid))
        row = [r for chunk in _raw_chunks(conn, q) for r in chunk][0]
        names = dict(conn.execute(select(users.c.id, users.c.name)).all())
        # The captions of practice items (few), instead of looking every assignment's item up.
        practice = np.array(conn.execute(select(captions.c.id).join(items, items.c.id == captions.c.item_id)
                                         .where(items.c.project_id == pid, items.c.is_practice.is_(True)))
                            .scalars().all(), dtype=np.int64)
    caption_id, user_id, second = (_ints(v) for v in row)
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
