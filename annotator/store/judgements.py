"""Judgement revisions (append-only) and the current judgement per key.

A save inserts revision n+1 for (caption, user, kind) and moves the
``current_judgements`` pointer in the same transaction. Two writers racing on
the same key collide on a unique constraint and the loser retries with the
next revision, so no update is lost and no revision is duplicated.

A save from a page carries the revision the page showed (``base_revision``;
0 when it showed none): when a newer one was saved meanwhile (another tab),
the save raises JudgementChanged with that judgement and writes nothing, so a
stale page never silently becomes the newest revision over someone's work.
Adjudications are checked the same way across leads
(:func:`check_adjudication_base`): the decision a lead's page showed must
still be the one that counts.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
from sqlalchemy import Connection, func, select
from sqlalchemy.exc import IntegrityError

from ..errors import InputError, JudgementChanged, NotFound
from ..model import Judgement, JudgementKind, Label
from ..limits import check_seconds
from ..spans import clean_fix, decode_spans, encode_spans
from . import Store
from .codec import decode_types, encode_types, type_mask, working_hundredths
from .drafts import delete_draft
from .projects import project_id, system_id
from .queue_tallies import after_save, before_save
from .rows import lock_key, upsert
from .save_times import epoch_micros
from .schema import captions, current_judgements, items, judgements, systems, users
from .stamps import check_caption_stamp


def newest_judgement_id(conn: Connection) -> int:
    """The newest judgement id of the whole store (0 when there is none): one primary-key look-up. Every save
    appends a row, so it moves with every save, and it is at least the number of judgement rows."""
    return int(conn.execute(select(func.max(judgements.c.id))).scalar() or 0)


def insert_judgement(conn: Connection, caption_id: int, user_id: int, *, label: Label | str | None,
                     error_types=(), note: str = "", seconds: float = 0.0,
                     kind: JudgementKind | str = JudgementKind.ANNOTATION, at: datetime | None = None,
                     revision: int | None = None, stamp=None, base_revision: int | None = None, spans=(),
                     suggested: bool | None = None) -> int:
    """Append a revision inside the caller's transaction; return its revision number.

    Validation of label/types rules is the caller's job (annotator.annotation);
    this function only stores. ``revision`` (an import of exported judgements)
    stores exactly that revision number, which must be free: it becomes the
    current judgement when it is newer than every stored revision of the key,
    and otherwise joins the history behind the current one. ``stamp`` (annotator.store.stamps.CaptionStamp,
    taken when a page showed the caption) makes the save refuse with CaptionChanged, writing nothing, when
    the id no longer holds that caption. An annotation that becomes the current one removes the user's
    draft of the caption (annotator.store.drafts) in the same transaction. ``base_revision`` (the revision of
    this key a page showed, 0 for none) refuses the save with JudgementChanged, writing nothing, unless it is
    still the newest revision of the key. ``spans`` (annotator.spans.Span, checked by the caller) are stored
    with the revision; ``suggested`` records whether the panel opened pre-filled from a judge (None: not
    recorded). Refused here whatever the caller (InputError, nothing written): ``seconds`` outside 0 to
    a day (annotator.limits.check_seconds) and a span's fix with a control character (annotator.spans.clean_fix).
    """
    seconds = check_seconds(seconds)
    for span in spans or ():
        clean_fix(span.fix)
    if stamp is not None:
        check_caption_stamp(conn, stamp, caption_id)
    kind = JudgementKind(kind).value
    label_value = Label(label).value if label is not None else None
    at = at or datetime.now(timezone.utc)
    lock_key(conn, f"judgement:{caption_id}:{user_id}:{kind}")
    newest = conn.execute(select(func.coalesce(func.max(judgements.c.revision), 0)).where(
        judgements.c.caption_id == caption_id, judgements.c.user_id == user_id, judgements.c.kind == kind)).scalar()
    if base_revision is not None and newest != int(base_revision):
        current = current_judgement(conn, caption_id, user_id, kind)
        shown = f"revision {int(base_revision)}" if base_revision else "no judgement"
        raise JudgementChanged(_changed_message(caption_id, shown, current), shown=int(base_revision), current=current)
    revision = newest + 1 if revision is None else int(revision)
    types = encode_types(error_types)
    jid = conn.execute(judgements.insert().values(
        caption_id=caption_id, user_id=user_id, kind=kind, revision=revision, label=label_value,
        error_types=types, note=note or "", seconds=seconds, created_at=at,
        spans=encode_spans(spans), suggested=suggested)).inserted_primary_key[0]
    if revision > newest:
        counted = before_save(conn, caption_id, user_id) if kind == JudgementKind.ANNOTATION.value else None
        upsert(conn, current_judgements, {"caption_id": caption_id, "user_id": user_id, "kind": kind,
                                           "judgement_id": jid, "revision": revision, "label": label_value,
                                           "error_types": types, "type_mask": type_mask(types),
                                           "hundredths": working_hundredths(seconds),
                                           "saved_us": epoch_micros(at)},
                ["caption_id", "user_id", "kind"])
        if kind == JudgementKind.ANNOTATION.value:
            delete_draft(conn, caption_id, user_id)  # the judgement supersedes the user's draft of the caption
            after_save(conn, counted, label_value, note or "")  # the queues' counts (store.queue_tallies)
    return revision


def save_judgement(store: Store, caption_id: int, user_id: int, *, check=None, **fields) -> int:
    """Store one judgement revision in its own committed transaction; retry on a race.

    ``check(conn)``, when given, runs first in that transaction (a refusal it raises writes nothing)."""
    for attempt in range(8):
        try:
            with store.transaction() as conn:
                if check is not None:
                    check(conn)
                return insert_judgement(conn, caption_id, user_id, **fields)
        except IntegrityError:
            if attempt == 7:
                raise
    raise AssertionError("unreachable")


def describe_judgement(j: Judgement | None) -> str:
    """A judgement in one line for messages: label (error type names), note, revision, who and when."""
    if j is None:
        return "no judgement"
    from ..taxonomy import taxonomy
    tax = taxonomy()
    what = j.label.value if j.label is not None else "skipped"
    if j.error_types:
        what += " (" + ", ".join(tax.get(t).name if t in tax.ids else t for t in j.error_types) + ")"
    if j.note:
        what += f", note {j.note!r}"
    when = f" at {j.created_at:%Y-%m-%d %H:%M} UTC" if j.created_at is not None else ""
    return f"{what}: revision {j.revision}, saved by {j.user!r}{when}"


def _changed_message(caption_id: int, shown: str, current: Judgement | None, what: str = "judgement") -> str:
    return (f"caption {caption_id}: the {what} changed since this page showed it ({shown}); stored now: "
            f"{describe_judgement(current)}. Nothing was saved: load the newer {what}, or save yours again over it.")


def check_adjudication_base(conn: Connection, caption_id: int, shown: Judgement | None) -> None:
    """Raise JudgementChanged unless the adjudication that counts for a caption (the newest of any lead) is
    still ``shown``, the one a lead's page showed (None: it showed none). Call it in the transaction that
    writes; it serialises the leads' decisions on the caption until that transaction ends."""
    lock_key(conn, f"adjudication:{caption_id}")
    newest = conn.execute(select(func.max(current_judgements.c.judgement_id)).where(
        current_judgements.c.caption_id == caption_id,
        current_judgements.c.kind == JudgementKind.ADJUDICATION.value)).scalar() or 0
    shown_id = int(shown.judgement_id or 0) if shown is not None else 0
    if newest == shown_id:
        return
    r = conn.execute(select(judgements, users.c.name.label("user_name")).join(users, users.c.id == judgements.c.user_id)
                     .where(judgements.c.id == newest)).first()
    current = _row_to_judgement(r, r.user_name) if r is not None else None
    before = "no adjudication" if shown is None else f"{shown.user!r}'s revision {shown.revision}"
    raise JudgementChanged(_changed_message(caption_id, before, current, "adjudication"),
                           shown=0 if shown is None else int(shown.revision), current=current)


def _row_to_judgement(r, user_name: str) -> Judgement:
    return Judgement(caption_id=r.caption_id, user=user_name, label=Label(r.label) if r.label else None,
                     error_types=decode_types(r.error_types), note=r.note, seconds=r.seconds,
                     kind=JudgementKind(r.kind), revision=r.revision, created_at=r.created_at, judgement_id=r.id,
                     spans=decode_spans(r.spans))


def current_judgement(conn: Connection, caption_id: int, user_id: int, kind: str = "annotation") -> Judgement | None:
    """The latest revision for (caption, user, kind), or None."""
    q = (select(judgements, users.c.name.label("user_name"))
         .join(current_judgements, current_judgements.c.judgement_id == judgements.c.id)
         .join(users, users.c.id == judgements.c.user_id)
         .where(current_judgements.c.caption_id == caption_id, current_judgements.c.user_id == user_id,
                current_judgements.c.kind == JudgementKind(kind).value))
    r = conn.execute(q).first()
    return _row_to_judgement(r, r.user_name) if r else None


def history(conn: Connection, caption_id: int, user_id: int | None = None, kind: str | None = None) -> list[Judgement]:
    """Every revision of a caption's judgements (optionally one user/kind), oldest first."""
    q = (select(judgements, users.c.name.label("user_name")).join(users, users.c.id == judgements.c.user_id)
         .where(judgements.c.caption_id == caption_id))
    if user_id is not None:
        q = q.where(judgements.c.user_id == user_id)
    if kind is not None:
        q = q.where(judgements.c.kind == JudgementKind(kind).value)
    return [_row_to_judgement(r, r.user_name) for r in conn.execute(q.order_by(judgements.c.user_id, judgements.c.kind, judgements.c.revision))]


def current_frame(store: Store, project: str, *, kind: str | None = "annotation", users_: list[str] | None = None,
                  include_skipped: bool = False) -> pd.DataFrame:
    """Current judgements of a project as a DataFrame, one row per (caption, user, kind).

    Columns: caption_id, item_id, item_key, is_practice, system, line_no, user, kind, label,
    error_types (space-separated ids). This is the one query analysis and
    agreement read; it touches only the denormalised current table.
    """
    with store.read() as conn:
        pid = project_id(conn, project)
        q = (select(current_judgements.c.caption_id, captions.c.item_id, items.c.key.label("item_key"),
                    items.c.is_practice, systems.c.name.label("system"), captions.c.line_no,
                    users.c.name.label("user"), current_judgements.c.kind, current_judgements.c.label,
                    current_judgements.c.error_types)
             .select_from(current_judgements.join(captions, captions.c.id == current_judgements.c.caption_id)
                          .join(systems, systems.c.id == captions.c.system_id)
                          .join(items, items.c.id == captions.c.item_id)
                          .join(users, users.c.id == current_judgements.c.user_id))
             .where(systems.c.project_id == pid))
        if kind is not None:
            q = q.where(current_judgements.c.kind == JudgementKind(kind).value)
        if users_:
            q = q.where(users.c.name.in_(users_))
        if not include_skipped:
            q = q.where(current_judgements.c.label.is_not(None))
        result = conn.execute(q)
        df = pd.DataFrame(result.fetchall(), columns=list(result.keys()))
    if not df.empty:
        df["is_practice"] = df["is_practice"].astype(bool)
    return df


def caption_id_for_line(conn: Connection, pid: int, system: str, line_no: int, *, source: str | None = None) -> int:
    """Caption id of 0-based ``line_no`` of a system's annotated captions (:mod:`.samples`); InputError if out of range."""
    from .samples import project_annotated_sample
    sid = system_id(conn, pid, system)
    annotated = project_annotated_sample(conn, pid)
    cid = conn.execute(select(captions.c.id).where(captions.c.system_id == sid, captions.c.line_no == line_no,
                                                   annotated)).scalar()
    if cid is None:
        n = conn.execute(select(func.count()).select_from(captions)
                         .where(captions.c.system_id == sid, annotated)).scalar()
        raise InputError(f"caption index {line_no} is out of range: system {system!r} has {n} captions (0..{n - 1})", source, f"key {line_no!r}")
    return cid


def require_caption(conn: Connection, caption_id: int) -> None:
    """Raise NotFound when no caption has this id."""
    if conn.execute(select(captions.c.id).where(captions.c.id == caption_id)).scalar() is None:
        raise NotFound(f"no caption with id {caption_id}")


def judgement_spans(conn: Connection, judgement_ids) -> list[tuple[int, tuple]]:
    """(caption id, spans) of the given judgement revisions that carry spans."""
    ids = sorted(set(int(i) for i in judgement_ids))
    out = []
    for start in range(0, len(ids), 5000):
        q = select(judgements.c.caption_id, judgements.c.spans).where(
            judgements.c.id.in_(ids[start:start + 5000]), judgements.c.spans.is_not(None))
        out += [(r.caption_id, decode_spans(r.spans)) for r in conn.execute(q)]
    return out


def current_caption_spans(conn: Connection, caption_id: int) -> tuple:
    """Every span of the current judgements of a caption (annotations and adjudications, everyone's)."""
    q = (select(judgements.c.spans).join(current_judgements, current_judgements.c.judgement_id == judgements.c.id)
         .where(current_judgements.c.caption_id == caption_id, judgements.c.spans.is_not(None)))
    return tuple(s for (raw,) in conn.execute(q) for s in decode_spans(raw))


def caption_place(conn: Connection, caption_id: int) -> tuple[str, str]:
    """(project name, system name) of a caption; NotFound when no caption has this id."""
    from .schema import projects
    r = conn.execute(select(projects.c.name, systems.c.name).select_from(
        captions.join(systems, systems.c.id == captions.c.system_id).join(projects, projects.c.id == systems.c.project_id))
        .where(captions.c.id == caption_id)).first()
    if r is None:
        raise NotFound(f"no caption with id {caption_id}")
    return r[0], r[1]


def newest_revision_times(conn: Connection, caption_ids) -> dict[tuple[int, int, str], datetime]:
    """(caption id, user id, kind) → when the newest revision of that judgement was saved, for the given captions."""
    out: dict = {}
    ids = sorted(set(caption_ids))
    for start in range(0, len(ids), 5000):
        q = (select(judgements.c.caption_id, judgements.c.user_id, judgements.c.kind, func.max(judgements.c.created_at))
             .where(judgements.c.caption_id.in_(ids[start:start + 5000]))
             .group_by(judgements.c.caption_id, judgements.c.user_id, judgements.c.kind))
        for r in conn.execute(q):
            at = r[3]
            out[(r[0], r[1], r[2])] = at if at is None or at.tzinfo is not None else at.replace(tzinfo=timezone.utc)
    return out
