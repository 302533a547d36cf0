"""Assignment rows and the queue queries of the annotate page.

Every query of one annotator's queue goes through the index
``ix_assignments_user_position (user_id, project_id, position)`` and looks
judgements up by the primary key of ``current_judgements``, so the cost of
"what comes next" does not grow with the size of the project.
"""

from __future__ import annotations

from sqlalchemy import Connection, Integer, and_, case, delete, false, func, select, true
from sqlalchemy.orm import aliased

from .project_settings import DEFAULT_SECOND_PASS, SECOND_PASS_KEY, get_setting, stamp_assignments
from .queue_tallies import fine_ready_query, own_current, recount, tally
from .schema import (assignments, captions, current_judgements, items, judgements, sample_draw_captions, sample_draws,
                     systems, users)

_ANN = "annotation"
_CHUNK = 5000


def project_captions(conn: Connection, pid: int, system_names: list[str] | None = None) -> list:
    """Rows (caption_id, item_id, is_practice, system) of a project in item order, then system order: each
    system's annotated caption of an item only (:mod:`annotator.store.samples`)."""
    from .samples import project_annotated_sample
    q = (select(captions.c.id.label("caption_id"), captions.c.item_id, items.c.is_practice, systems.c.name.label("system"))
         .select_from(captions.join(items, items.c.id == captions.c.item_id).join(systems, systems.c.id == captions.c.system_id))
         .where(items.c.project_id == pid, project_annotated_sample(conn, pid)))
    if system_names:
        q = q.where(systems.c.name.in_(list(system_names)))
    return conn.execute(q.order_by(items.c.position, systems.c.id)).all()


def count_project_assignments(conn: Connection, pid: int) -> int:
    """How many assignment rows a project has."""
    return conn.execute(select(func.count()).select_from(assignments).where(assignments.c.project_id == pid)).scalar()


def replace_assignments(conn: Connection, pid: int, rows: list[dict]) -> int:
    """Delete the project's assignments and insert ``rows`` (caption_id, user_id, position, is_second)."""
    conn.execute(delete(assignments).where(assignments.c.project_id == pid))
    payload = [{"project_id": pid, **r} for r in rows]
    for start in range(0, len(payload), _CHUNK):
        conn.execute(assignments.insert(), payload[start:start + _CHUNK])
    stamp_assignments(conn, pid)
    recount(conn, pid)
    return len(payload)


def queue_ends(conn: Connection, pid: int, uids: list[int]) -> dict[int, int]:
    """The last position of each user's queue in the project (-1 for an empty queue)."""
    q = (select(assignments.c.user_id, func.max(assignments.c.position))
         .where(assignments.c.project_id == pid, assignments.c.user_id.in_(uids)).group_by(assignments.c.user_id))
    ends = {uid: -1 for uid in uids}
    ends.update({uid: int(pos) for uid, pos in conn.execute(q)})
    return ends


def queued_captions(conn: Connection, pid: int) -> set[int]:
    """Captions of the project that are in somebody's queue."""
    return set(conn.execute(select(assignments.c.caption_id).where(assignments.c.project_id == pid).distinct())
               .scalars())


def add_assignments(conn: Connection, pid: int, rows: list[dict]) -> int:
    """Insert ``rows`` (caption_id, user_id, position, is_second) next to the project's other assignments."""
    payload = [{"project_id": pid, **r} for r in rows]
    for start in range(0, len(payload), _CHUNK):
        conn.execute(assignments.insert(), payload[start:start + _CHUNK])
    if payload:
        stamp_assignments(conn, pid)
        recount(conn, pid)
    return len(payload)


def draws_made(conn: Connection, sid: int) -> int:
    """How many sample draws a system has had."""
    return conn.execute(select(func.count()).select_from(sample_draws).where(sample_draws.c.system_id == sid)).scalar()


def insert_draw(conn: Connection, pid: int, sid: int, members: list[tuple[int, float]], **fields) -> int:
    """Record a sample draw (``fields``: the columns of ``sample_draws`` but its id and project) and the
    (caption_id, inclusion probability) of every caption it took; return its id."""
    draw_id = conn.execute(sample_draws.insert().values(project_id=pid, system_id=sid, **fields)).inserted_primary_key[0]
    payload = [{"draw_id": draw_id, "caption_id": c, "probability": float(p)} for c, p in members]
    for start in range(0, len(payload), _CHUNK):
        conn.execute(sample_draw_captions.insert(), payload[start:start + _CHUNK])
    return int(draw_id)


def project_draws(conn: Connection, pid: int) -> list[dict]:
    """The project's sample draws in order: id, system, number, design, size, seed, layer, targets, floor,
    taken, labelled_before, created_at."""
    d = sample_draws.c
    q = (select(d.id, systems.c.name.label("system"), d.number, d.design, d.size, d.seed, d.layer, d.targets, d.floor,
                d.taken, d.labelled_before, d.created_at)
         .select_from(sample_draws.join(systems, systems.c.id == d.system_id))
         .where(d.project_id == pid).order_by(d.id))
    return [dict(r._mapping) for r in conn.execute(q)]


def draw_members(conn: Connection, pid: int) -> list:
    """Rows (draw_id, system, caption_id, probability) of every caption the project's draws took, by draw."""
    q = (select(sample_draws.c.id.label("draw_id"), systems.c.name.label("system"), sample_draw_captions.c.caption_id,
                sample_draw_captions.c.probability)
         .select_from(sample_draw_captions.join(sample_draws, sample_draws.c.id == sample_draw_captions.c.draw_id)
                      .join(systems, systems.c.id == sample_draws.c.system_id))
         .where(sample_draws.c.project_id == pid)
         .order_by(sample_draws.c.id, sample_draw_captions.c.caption_id))
    return conn.execute(q).all()


_own_current = own_current


def queue_counts(conn: Connection, uid: int, pid: int) -> tuple[int, int, int]:
    """(assigned, judged with a label, of which second-annotator assignments) for one user's queue."""
    counted = tally(conn, uid, pid)
    if counted is not None:
        return counted.assigned, counted.labelled, counted.second
    q = (select(func.count(), func.count(current_judgements.c.label),
                func.coalesce(func.sum(assignments.c.is_second.cast(Integer)), 0))
         .select_from(assignments.outerjoin(current_judgements, _own_current()))
         .where(assignments.c.user_id == uid, assignments.c.project_id == pid))
    n, done, second = conn.execute(q).one()
    return int(n), int(done), int(second)


def queue_progress(conn: Connection, uid: int, pid: int, staged: bool) -> tuple[int, int, int]:
    """(assigned, done, waiting for the fine pass) of one user's queue; ``staged``: the user's second-annotator
    captions run a staged second pass, so those both annotators call inaccurate wait for their error types."""
    counted = tally(conn, uid, pid)
    if counted is not None:
        waiting = counted.waiting if staged else 0
        return counted.assigned, counted.labelled - waiting, waiting
    assigned, labelled, _ = queue_counts(conn, uid, pid)
    waiting = len(fine_pass_ready(conn, uid, pid)) if staged else 0
    return assigned, labelled - waiting, waiting


def staged_second_pass(conn: Connection, uid: int, pid: int) -> bool:
    """True when the user has second-annotator captions in a project whose second pass is staged."""
    return (has_second_assignments(conn, uid, pid)
            and get_setting(conn, pid, SECOND_PASS_KEY, DEFAULT_SECOND_PASS) == "staged")


def work_left(conn: Connection, uid: int, pid: int) -> int:
    """Captions of one user's queue still to do (fine passes waiting count as to do)."""
    assigned, done, _ = queue_progress(conn, uid, pid, staged_second_pass(conn, uid, pid))
    return assigned - done


def queue_size(conn: Connection, uid: int, pid: int) -> int:
    """Length of one user's queue (answered from the index alone)."""
    return conn.execute(select(func.count()).select_from(assignments)
                        .where(assignments.c.user_id == uid, assignments.c.project_id == pid)).scalar()


def has_second_assignments(conn: Connection, uid: int, pid: int) -> bool:
    """True when the user is the second (blind) annotator of at least one caption of the project."""
    counted = tally(conn, uid, pid)
    if counted is not None:
        return counted.second > 0
    return conn.execute(select(assignments.c.id).where(
        assignments.c.user_id == uid, assignments.c.project_id == pid, assignments.c.is_second == true()).limit(1)).first() is not None


def in_double_sample(conn: Connection, caption_id: int) -> bool:
    """True when a caption is in the blind double-annotation sample (a second annotator has it)."""
    return conn.execute(select(assignments.c.id).where(
        assignments.c.caption_id == caption_id, assignments.c.is_second == true()).limit(1)).first() is not None


def assignment_at(conn: Connection, uid: int, pid: int, position: int):
    """The row (position, caption_id, is_second) at ``position`` of a queue, or None."""
    return conn.execute(select(assignments.c.position, assignments.c.caption_id, assignments.c.is_second)
                        .where(assignments.c.user_id == uid, assignments.c.project_id == pid,
                               assignments.c.position == position)).first()


def assignment_of_caption(conn: Connection, uid: int, caption_id: int):
    """The user's assignment row (project_id, position, is_second) for a caption, or None."""
    return conn.execute(select(assignments.c.project_id, assignments.c.position, assignments.c.is_second)
                        .where(assignments.c.user_id == uid, assignments.c.caption_id == caption_id)).first()


def neighbour_position(conn: Connection, uid: int, pid: int, position: int, step: int) -> int | None:
    """The next (step > 0) or previous (step < 0) position in the queue, or None at either end."""
    col = assignments.c.position
    q = select(col).where(assignments.c.user_id == uid, assignments.c.project_id == pid)
    q = q.where(col > position).order_by(col) if step > 0 else q.where(col < position).order_by(col.desc())
    return conn.execute(q.limit(1)).scalar()


def first_unseen(conn: Connection, uid: int, pid: int, after: int = -1) -> int | None:
    """First position after ``after`` whose caption the user has not judged or skipped yet (the walk starts at
    the lowest unseen position the queue's tally knows of)."""
    counted = tally(conn, uid, pid)
    if counted is not None:
        if counted.unseen_from is None:
            return None
        after = max(after, counted.unseen_from - 1)
    return _first_after(conn, uid, pid, after, assignments.outerjoin(current_judgements, _own_current()),
                        current_judgements.c.caption_id.is_(None))


def first_skipped(conn: Connection, uid: int, pid: int, after: int = -1) -> int | None:
    """First position after ``after`` whose current judgement is a skip (no label)."""
    counted = tally(conn, uid, pid)
    if counted is not None and counted.seen == counted.labelled:
        return None
    return _first_after(conn, uid, pid, after, assignments.join(current_judgements, _own_current()),
                        current_judgements.c.label.is_(None))


def _first_after(conn: Connection, uid: int, pid: int, after: int, joined, condition) -> int | None:
    """First position after ``after`` in the user's queue (``joined``: assignments with the user's current
    judgements) whose row meets ``condition``."""
    q = (select(assignments.c.position)
         .select_from(joined)
         .where(assignments.c.user_id == uid, assignments.c.project_id == pid, assignments.c.position > after,
                condition)
         .order_by(assignments.c.position).limit(1))
    return conn.execute(q).scalar()


def fine_pass_ready(conn: Connection, uid: int, pid: int, *, after: int | None = None, limit: int | None = None
                    ) -> list[int]:
    """Positions of second-annotator captions that both annotators judged inaccurate and
    this user has not given error types yet (the staged fine-grained pass); ``after`` and ``limit``: only
    those after a position, only so many."""
    counted = tally(conn, uid, pid)
    if counted is not None and not counted.waiting:
        return []
    q = fine_ready_query(pid).where(assignments.c.user_id == uid)
    if after is not None:
        q = q.where(assignments.c.position > after)
    if limit is not None:
        q = q.limit(limit)
    return [r[1] for r in conn.execute(q)]


def first_annotator_label(conn: Connection, caption_id: int, uid: int) -> str | None:
    """Current label of the caption's first (non-second) annotator other than ``uid``, or None."""
    q = (select(current_judgements.c.label)
         .select_from(assignments.join(current_judgements, _own_current()))
         .where(assignments.c.caption_id == caption_id, assignments.c.is_second == false(),
                assignments.c.user_id != uid)
         .limit(1))
    return conn.execute(q).scalar()


def overview(conn: Connection, pid: int) -> list[dict]:
    """Per assigned user: name, assigned, done (labelled), second (blind double), practice."""
    q = (select(users.c.name, func.count().label("assigned"), func.count(current_judgements.c.label).label("done"),
                func.coalesce(func.sum(assignments.c.is_second.cast(Integer)), 0).label("second"),
                func.coalesce(func.sum(items.c.is_practice.cast(Integer)), 0).label("practice"))
         .select_from(assignments.join(users, users.c.id == assignments.c.user_id)
                      .join(captions, captions.c.id == assignments.c.caption_id)
                      .join(items, items.c.id == captions.c.item_id)
                      .outerjoin(current_judgements, _own_current()))
         .where(assignments.c.project_id == pid)
         .group_by(users.c.name).order_by(users.c.name))
    return [dict(r._mapping) for r in conn.execute(q)]


def double_annotated_pairs(conn: Connection, pid: int) -> list[tuple[int, str, str]]:
    """(caption_id, first annotator, second annotator) of every blind double assignment."""
    first = aliased(assignments)
    u1 = aliased(users)
    u2 = aliased(users)
    q = (select(assignments.c.caption_id, u1.c.name, u2.c.name)
         .select_from(assignments
                      .join(first, and_(first.c.caption_id == assignments.c.caption_id, first.c.is_second == false()))
                      .join(u1, u1.c.id == first.c.user_id).join(u2, u2.c.id == assignments.c.user_id))
         .where(assignments.c.project_id == pid, assignments.c.is_second == true())
         .order_by(assignments.c.caption_id))
    return [(r[0], r[1], r[2]) for r in conn.execute(q)]


def user_queue(conn: Connection, uid: int, pid: int) -> list:
    """All rows (position, caption_id, is_second) of a queue in order (for tests and exports)."""
    return conn.execute(select(assignments.c.position, assignments.c.caption_id, assignments.c.is_second)
                        .where(assignments.c.user_id == uid, assignments.c.project_id == pid)
                        .order_by(assignments.c.position)).all()


#: Filters of one user's caption list (see :func:`queue_listing`).
LIST_FILTERS = ("all", "todo", "skipped", "judged", "inaccurate", "note")


def _listing_query(uid: int, pid: int, status: str):
    # The user's own current annotation and its note (outer-joined: a caption never seen has none).
    base = (assignments.outerjoin(current_judgements, _own_current())
            .outerjoin(judgements, judgements.c.id == current_judgements.c.judgement_id)
            .join(captions, captions.c.id == assignments.c.caption_id)
            .join(items, items.c.id == captions.c.item_id))
    where = [assignments.c.user_id == uid, assignments.c.project_id == pid]
    if status == "todo":
        where.append(current_judgements.c.caption_id.is_(None))
    elif status == "skipped":
        where += [current_judgements.c.caption_id.is_not(None), current_judgements.c.label.is_(None)]
    elif status == "judged":
        where.append(current_judgements.c.label.is_not(None))
    elif status == "inaccurate":
        where.append(current_judgements.c.label == "inaccurate")
    elif status == "note":
        where.append(func.coalesce(judgements.c.note, "") != "")
    elif status != "all":
        raise ValueError(f"unknown filter {status!r}; known: {', '.join(LIST_FILTERS)}")
    return base, where


def queue_listing(conn: Connection, uid: int, pid: int, status: str = "all", *, offset: int = 0,
                  limit: int = 50) -> list:
    """One page of a user's queue in queue order, filtered by ``status`` (:data:`LIST_FILTERS`): rows of
    (position, caption_id, item_key, text, judged (a current revision exists), label, error_types, note,
    revision)."""
    base, where = _listing_query(uid, pid, status)
    q = (select(assignments.c.position, assignments.c.caption_id, items.c.key.label("item_key"), captions.c.text,
                current_judgements.c.caption_id.is_not(None).label("seen"), current_judgements.c.label,
                current_judgements.c.error_types, judgements.c.note, current_judgements.c.revision)
         .select_from(base).where(*where).order_by(assignments.c.position).offset(offset).limit(limit))
    return conn.execute(q).all()


def queue_listing_count(conn: Connection, uid: int, pid: int, status: str = "all") -> int:
    """How many captions of a user's queue pass ``status`` (the length of :func:`queue_listing` unpaged)."""
    base, where = _listing_query(uid, pid, status)
    return conn.execute(select(func.count()).select_from(base).where(*where)).scalar()



def queue_listing_counts(conn: Connection, uid: int, pid: int) -> dict[str, int]:
    """How many captions of a user's queue pass each of :data:`LIST_FILTERS`: from the queue's tally (one row),
    else in one pass over the queue."""
    counted = tally(conn, uid, pid)
    if counted is not None:
        return dict(zip(LIST_FILTERS, (counted.assigned, counted.assigned - counted.seen,
                                       counted.seen - counted.labelled, counted.labelled, counted.inaccurate,
                                       counted.noted)))
    # Counting needs no caption text: only the queue, the user's current judgements and their notes.
    base = (assignments.outerjoin(current_judgements, _own_current())
            .outerjoin(judgements, judgements.c.id == current_judgements.c.judgement_id))
    where = [assignments.c.user_id == uid, assignments.c.project_id == pid]
    seen = current_judgements.c.caption_id.is_not(None)
    label = current_judgements.c.label

    def count(cond):
        return func.coalesce(func.sum(case((cond, 1), else_=0)), 0)

    row = conn.execute(select(func.count(), count(current_judgements.c.caption_id.is_(None)),
                              count(and_(seen, label.is_(None))), count(label.is_not(None)),
                              count(label == "inaccurate"), count(func.coalesce(judgements.c.note, "") != ""))
                       .select_from(base).where(*where)).one()
    return dict(zip(LIST_FILTERS, (int(v) for v in row)))
