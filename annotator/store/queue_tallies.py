"""Each user's queue in a project, counted as saves happen (the table queue_tallies, migration 20).

Resuming a session, the progress line and the caption list's counts read one row of it, so they cost the same
for a queue of 100,000 captions as for one of 1,000. A save of an annotation that becomes the current one moves
the counts of the rows it touches (:func:`before_save`, then :func:`after_save`, in the save's transaction:
a few rows read by key, whatever the queue's length); a change of the assignments or of the practice marks
counts the project again (:func:`recount`); a row found missing at a save is counted afresh too. Readers fall
back to counting the queue when a user has no row (no assignment in the project, or a store written around
these functions).

``waiting`` counts the second-annotator captions of a staged second pass that are ready for their error types
(both annotators said inaccurate, the second gave no type yet; practice items never): a save by either
annotator of such a caption can change it, so both annotators' rows are looked at.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, and_, case, delete, false, func, insert, select, true, update
from sqlalchemy.orm import aliased

from .schema import assignments, captions, current_judgements, items, judgements, queue_tallies

_ANN = "annotation"
COUNTS = ("assigned", "seen", "labelled", "inaccurate", "noted", "second", "waiting")


def own_current():
    """The join condition of an assignment with its user's own current annotation (outer-joined by callers)."""
    return and_(current_judgements.c.caption_id == assignments.c.caption_id,
                current_judgements.c.user_id == assignments.c.user_id,
                current_judgements.c.kind == _ANN)


def fine_ready_query(pid: int):
    """(user_id, position) of every second-annotator assignment of project ``pid`` ready for its fine pass (see
    the module docstring), in position order; callers narrow it to one user."""
    mine = current_judgements
    first = aliased(assignments)
    theirs = aliased(current_judgements)
    return (select(assignments.c.user_id, assignments.c.position)
            .select_from(assignments
                         .join(mine, own_current())
                         .join(captions, captions.c.id == assignments.c.caption_id)
                         .join(items, items.c.id == captions.c.item_id)
                         .join(first, and_(first.c.caption_id == assignments.c.caption_id, first.c.is_second == false(),
                                           first.c.user_id != assignments.c.user_id))
                         .join(theirs, and_(theirs.c.caption_id == first.c.caption_id,
                                            theirs.c.user_id == first.c.user_id, theirs.c.kind == _ANN)))
            .where(assignments.c.project_id == pid, assignments.c.is_second == true(), items.c.is_practice == false(),
                   mine.c.label == "inaccurate", mine.c.error_types == "", theirs.c.label == "inaccurate")
            .order_by(assignments.c.position))


def recount(conn: Connection, pid: int) -> None:
    """Count every queue of project ``pid`` afresh (after its assignments or practice marks changed)."""
    conn.execute(delete(queue_tallies).where(queue_tallies.c.project_id == pid))
    cj = current_judgements

    def count(cond):
        return func.coalesce(func.sum(case((cond, 1), else_=0)), 0)

    rows = conn.execute(
        select(assignments.c.user_id, func.count(), func.count(cj.c.caption_id), func.count(cj.c.label),
               count(cj.c.label == "inaccurate"), count(func.coalesce(judgements.c.note, "") != ""),
               count(assignments.c.is_second == true()),
               func.min(case((cj.c.caption_id.is_(None), assignments.c.position), else_=None)))
        .select_from(assignments.outerjoin(cj, own_current())
                     .outerjoin(judgements, judgements.c.id == cj.c.judgement_id))
        .where(assignments.c.project_id == pid).group_by(assignments.c.user_id)).all()
    if not rows:
        return
    waiting: dict[int, int] = {}
    for uid, _ in conn.execute(fine_ready_query(pid).order_by(None)):
        waiting[uid] = waiting.get(uid, 0) + 1
    conn.execute(insert(queue_tallies), [
        {"user_id": uid, "project_id": pid, "assigned": n, "seen": seen, "labelled": labelled,
         "inaccurate": int(inaccurate), "noted": int(noted), "second": int(second), "waiting": waiting.get(uid, 0),
         "unseen_from": unseen_from}
        for uid, n, seen, labelled, inaccurate, noted, second, unseen_from in rows])


def recount_all(conn: Connection) -> None:
    """:func:`recount` every project that has assignments."""
    for pid in conn.execute(select(assignments.c.project_id).distinct()).scalars().all():
        recount(conn, pid)


@dataclass(frozen=True)
class Tally:
    """One queue's counts (see the module docstring)."""

    assigned: int
    seen: int
    labelled: int
    inaccurate: int
    noted: int
    second: int
    waiting: int
    unseen_from: int | None


def tally(conn: Connection, uid: int, pid: int) -> Tally | None:
    """The counts of ``uid``'s queue in project ``pid`` (one row read by key), or None without a row."""
    row = conn.execute(select(*(queue_tallies.c[c] for c in (*COUNTS, "unseen_from")))
                       .where(queue_tallies.c.user_id == uid, queue_tallies.c.project_id == pid)).first()
    return None if row is None else Tally(*row)


@dataclass
class SaveState:
    """What a save changes the counts from: the caption's assignments and the current annotations before it."""

    caption_id: int
    user_id: int
    assigned: list  # rows (user_id, project_id, is_second, position) of the caption's assignments
    own: tuple | None  # the user's current (label, note) before the save, None when unseen
    waiting: dict  # second annotator's user id -> whether the caption was waiting for their fine pass


def before_save(conn: Connection, caption_id: int, user_id: int) -> SaveState | None:
    """Read what a save of ``user_id``'s annotation of a caption may change (None: nobody has it assigned)."""
    assigned = conn.execute(select(assignments.c.user_id, assignments.c.project_id, assignments.c.is_second,
                                   assignments.c.position).where(assignments.c.caption_id == caption_id)).all()
    if not assigned:
        return None
    own = conn.execute(select(current_judgements.c.label, judgements.c.note)
                       .select_from(current_judgements.join(judgements,
                                                            judgements.c.id == current_judgements.c.judgement_id))
                       .where(current_judgements.c.caption_id == caption_id, current_judgements.c.user_id == user_id,
                              current_judgements.c.kind == _ANN)).first()
    return SaveState(caption_id, user_id, assigned, None if own is None else (own[0], own[1] or ""),
                     _waiting(conn, caption_id, assigned))


def after_save(conn: Connection, state: SaveState | None, label: str | None, note: str) -> None:
    """Move the counts by what the save changed (``label`` and ``note`` of the new current annotation)."""
    if state is None:
        return
    mine = next((r for r in state.assigned if r[0] == state.user_id), None)
    moves: dict[tuple[int, int], dict[str, int]] = {}
    if mine is not None:
        old_label, old_note = state.own if state.own is not None else (None, "")
        moves[(mine[0], mine[1])] = {
            "seen": int(state.own is None),
            "labelled": (label is not None) - (state.own is not None and old_label is not None),
            "inaccurate": (label == "inaccurate") - (old_label == "inaccurate"),
            "noted": bool(note) - bool(old_note)}
    if state.waiting:
        now = _waiting(conn, state.caption_id, state.assigned)
        for row in state.assigned:
            change = now.get(row[0], False) - state.waiting.get(row[0], False)
            if change:
                moves.setdefault((row[0], row[1]), {})["waiting"] = change
    for (uid, pid), move in moves.items():
        if not _move(conn, uid, pid, move):
            recount(conn, pid)  # no row to move (a store written around this module): count it all again
            return
    if mine is not None and state.own is None:
        _advance_unseen(conn, mine[0], mine[1], mine[3])


def _move(conn: Connection, uid: int, pid: int, move: dict[str, int]) -> bool:
    values = {name: queue_tallies.c[name] + change for name, change in move.items() if change}
    where = (queue_tallies.c.user_id == uid, queue_tallies.c.project_id == pid)
    if not values:
        return conn.execute(select(queue_tallies.c.user_id).where(*where)).first() is not None
    return conn.execute(update(queue_tallies).where(*where).values(**values)).rowcount == 1


def _advance_unseen(conn: Connection, uid: int, pid: int, position: int) -> None:
    """The user saw the caption at ``position``: when it was the lowest unseen one, find the next (a short walk
    from there, as an annotator works through the queue in order)."""
    where = (queue_tallies.c.user_id == uid, queue_tallies.c.project_id == pid)
    if conn.execute(select(queue_tallies.c.unseen_from).where(*where)).scalar() != position:
        return
    following = conn.execute(
        select(assignments.c.position).select_from(assignments.outerjoin(current_judgements, own_current()))
        .where(assignments.c.user_id == uid, assignments.c.project_id == pid, assignments.c.position > position,
               current_judgements.c.caption_id.is_(None))
        .order_by(assignments.c.position).limit(1)).scalar()
    conn.execute(update(queue_tallies).where(*where).values(unseen_from=following))


def _waiting(conn: Connection, caption_id: int, assigned: list) -> dict[int, bool]:
    """For each second annotator of the caption: whether it waits for their fine pass (empty without one)."""
    seconds = [r[0] for r in assigned if r[2]]
    if not seconds:
        return {}
    practice = conn.execute(select(items.c.is_practice).select_from(captions.join(items, items.c.id == captions.c.item_id))
                            .where(captions.c.id == caption_id)).scalar()
    current = {uid: (label, types) for uid, label, types in conn.execute(
        select(current_judgements.c.user_id, current_judgements.c.label, current_judgements.c.error_types)
        .where(current_judgements.c.caption_id == caption_id, current_judgements.c.kind == _ANN))}
    firsts = [r[0] for r in assigned if not r[2]]
    out = {}
    for uid in seconds:
        label, types = current.get(uid, (None, None))
        first_says = any(current.get(f, (None,))[0] == "inaccurate" for f in firsts if f != uid)
        out[uid] = bool(not practice and label == "inaccurate" and types == "" and first_says)
    return out


__all__ = ["COUNTS", "SaveState", "Tally", "after_save", "before_save", "fine_ready_query", "own_current",
           "recount", "recount_all", "tally"]
