"""What says whether a dashboard's frame is still the store's: the store-side versions and fingerprints that
annotator.frames compares (each a few primary-key look-ups)."""

from __future__ import annotations

import hashlib
import json

from sqlalchemy import Connection, case, func, select

from . import Store
from .judgements import newest_judgement_id
from .migrations import applied_versions
from .project_settings import ASSIGNMENT_STAMP, get_setting
from .projects import practice_marks, project_id
from .schema import assignments, judgements, systems, users

def data_version(store: Store, project: str) -> tuple:
    """A cheap fingerprint that changes when judgements or a project's practice marks change.

    Pages use it as a cache key for :func:`judgement_frame`. Every save appends a
    judgement row, so the newest judgement id moves; it is taken over the whole
    database (a primary-key look-up, instant on a million rows), so a save in
    another project merely refreshes the cache. Marking practice items changes
    the practice count/sum.
    """
    with store.read() as conn:
        pid = project_id(conn, project)
        newest = newest_judgement_id(conn)
        practice = practice_marks(conn, pid)
    return (pid, newest, *practice)


def assignment_version(store: Store, project: str) -> tuple:
    """What changes whenever the project's assignment frame would: (project id, its assignment stamp, the
    count and sum of its practice item ids); the frame carries the practice marks, so they count too.

    The stamp is the token annotator.store.assignments writes with every change of the project's assignment
    rows (one primary-key look-up, where summing a million rows took 0.4 s). A project whose assignments were
    written before stamps existed has none: then its place holds the count, newest id and sums of ids, caption
    ids, user ids and second marks of the rows, which change when any assignment is added, moved or removed,
    also when all are replaced by as many others (ids can start again from 1 after all were deleted)."""
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


PROBES = 16  # rows checked besides the newest: ids at k/16 of the range


def fingerprint(conn: Connection, project_id: int, newest: int, *, known_users: int | None = None,
                known_systems: int | None = None) -> dict:
    """What must be unchanged for a snapshot that covers judgement ids up to ``newest`` to be used
    (see the module docstring). Users and systems are compared up to the largest ids the snapshot knew
    (``known_users``, ``known_systems``; None: all of them now): one added since changes nothing."""
    j = judgements
    count = conn.execute(select(func.count()).select_from(j).where(j.c.id <= int(newest))).scalar()
    ids = sorted({int(newest) * k // PROBES for k in range(1, PROBES)} | {int(newest)})
    rows = {int(r[0]): [int(r[1]), int(r[2]), str(r[3]), r[4], str(r[5]), str(r[6]), repr(float(r[7]))]
            for r in conn.execute(select(j.c.id, j.c.caption_id, j.c.user_id, j.c.kind, j.c.label, j.c.error_types,
                                         j.c.created_at, j.c.seconds).where(j.c.id.in_(ids)))}
    uq = select(users.c.id, users.c.name).order_by(users.c.id)
    if known_users is not None:
        uq = uq.where(users.c.id <= int(known_users))
    sq = select(systems.c.id, systems.c.name).where(systems.c.project_id == int(project_id)).order_by(systems.c.id)
    if known_systems is not None:
        sq = sq.where(systems.c.id <= int(known_systems))
    user_rows, system_rows = conn.execute(uq).all(), conn.execute(sq).all()
    digest = hashlib.sha256(json.dumps([[[int(i), str(n)] for i, n in user_rows],
                                        [[int(i), str(n)] for i, n in system_rows]]).encode("utf-8")).hexdigest()
    return {"schema": applied_versions(conn), "newest": int(newest), "count": int(count),
            "rows": {str(k): rows.get(k) for k in ids}, "names": digest,
            "known_users": max((int(r[0]) for r in user_rows), default=0),
            "known_systems": max((int(r[0]) for r in system_rows), default=0)}
