"""The Annotate screen's callbacks: Save & next, Skip, ← / →, the caption list's jump, Save draft, the newer-judgement
notice's buttons and "Assign every caption to me". Each runs before the script renders; a refusal becomes the page's
error message (K_ERR), a save's outcome its message (K_MSG)."""

from __future__ import annotations

import streamlit as st

from ...annotation import Queue, Task
from ...errors import AnnotatorError, InputError, JudgementChanged, StoreUnavailable
from ...taxonomy import taxonomy
from .. import PROGRESS_KEY, PageContext, refusal_text, remember_progress, signed_in
from .html import LABEL_TEXT
from .state import (
    K_ERR, K_LIST_OPEN, K_MSG, K_NEWER, K_NOTE, K_OWN, K_POS, K_QKEY, K_QUEUE, K_SIZE, K_SUGGESTION, K_TASK, K_TRIED,
    Sent,
    load_caption, panel, seconds, sent_spans, when,
)


def reporting(callback):
    """Run ``callback``; a core error (the database down, above all) becomes the page's error message,
    so the page still draws the caption with the widgets as they were."""
    def run(*args):
        try:
            callback(*args)
        except AnnotatorError as exc:
            st.session_state[K_ERR] = str(exc)
    run.__name__ = run.__qualname__ = callback.__name__
    return run


@signed_in
def on_save(ctx: PageContext) -> None:
    sent = panel()
    if sent is None:
        return
    q, task = sent.q, sent.task
    try:
        spans = sent_spans(sent)
    except InputError as exc:
        st.session_state[K_ERR] = save_refusal(exc)
        return
    # This tab's own save of the caption, should the page still show it (the database stopped answering right
    # after it, or while it committed): the next save is based on it, and never taken for another tab's.
    base = _own_revision(task, sent, spans)
    if base is not None and base < 0:
        move_on_after_storing(q, task)
        return
    # Whatever else the panel sent goes to the core as it is: validate() refuses what breaks a rule
    # (an accurate caption with types, say) and says why.
    st.session_state[K_TRIED] = (task.caption_id, task.shown_revision if base is None else base,
                                 judgement_content(sent.label, sent.types, sent.note, spans))
    result = _stored(task, lambda: q.save(*sent.judgement(), seconds(),
                                          base_revision=task.shown_revision if base is None else base,
                                          spans=spans, suggested=st.session_state.get(K_SUGGESTION) is not None),
                     save_refusal)
    if result is _REFUSED:
        return
    st.session_state[K_OWN] = (task.caption_id, result.revision, st.session_state.pop(K_TRIED)[2])
    names = ", ".join(taxonomy().get(t).name for t in result.error_types)
    st.session_state[K_MSG] = (f"Saved item {task.item.key}: {LABEL_TEXT[result.label]}"
                               + (f" ({names})" if names else "") + f" — revision {result.revision}.")
    move_on_after_storing(q, task, lambda: update_progress(ctx, q, counted_before=result.was_done))


def judgement_content(label, types, note, spans) -> tuple:
    """What a save stores of the panel, comparable with a stored judgement's (:func:`_stored_content`)."""
    return (label, frozenset(types or ()), (note or "").strip(), tuple(sorted(spans or ())))


def _stored_content(j) -> tuple:
    return judgement_content(j.label.value if j.label is not None else None, j.error_types, j.note, j.spans)


def is_resent(current, base: int, content: tuple) -> bool:
    """Whether ``current`` (a stored judgement, or None) is the save of ``content`` based on revision ``base``."""
    return current is not None and current.label is not None and current.revision == base + 1 \
        and _stored_content(current) == content


def _own_revision(task: Task, sent: Sent, spans) -> int | None:
    """The revision a save of ``task`` is based on when this tab saved the caption since the page loaded it
    (None: the task's own, :attr:`Task.shown_revision`). Negative when that save holds the panel as it is now,
    so there is nothing to store again. A save whose commit went through while the database stopped answering
    (the page said it was not confirmed) is recognised by the revision after the one it was based on holding
    exactly what it sent."""
    own = st.session_state.get(K_OWN)
    if own is not None and own[0] == task.caption_id and own[1] > task.shown_revision:
        revision, content = own[1], own[2]
    else:
        tried = st.session_state.get(K_TRIED)
        if tried is None or tried[0] != task.caption_id:
            return None
        try:
            current = sent.q.task(task.position).current
        except AnnotatorError:
            return None
        if current is None or current.revision != tried[1] + 1 or _stored_content(current) != tried[2]:
            return None
        revision, content = current.revision, tried[2]
        st.session_state[K_OWN] = (task.caption_id, revision, content)
    if content == judgement_content(sent.label, sent.types, sent.note, spans):
        st.session_state[K_MSG] = f"Item {task.item.key} is saved already (revision {revision})."
        st.session_state[K_ERR] = None
        return -revision
    return revision


#: What :func:`_stored` answers when the store refused the judgement.
_REFUSED = object()


def _stored(task: Task, action, error_text=str):
    """Run ``action``, which stores a judgement of ``task``, and return its answer; when the store refuses it,
    say why on the page (``error_text`` of the error; another tab's newer judgement: the stale notice) and
    return :data:`_REFUSED`."""
    try:
        return action()
    except JudgementChanged as exc:
        _refused_as_stale(task, exc)
    except AnnotatorError as exc:
        st.session_state[K_ERR] = error_text(exc)
    return _REFUSED


def save_refusal(exc: AnnotatorError) -> str:
    """A refused save as the page says it: a bad field as one sentence, any other error as the judging pages do."""
    if isinstance(exc, InputError):
        return exc.detail[:1].upper() + exc.detail[1:] + "."
    return refusal_text(exc)


def _refused_as_stale(task: Task, exc: JudgementChanged) -> None:
    """Another tab saved this caption since the page showed it: say so and keep the panel as it is; the notice
    (:func:`annotator.ui.widgets.newer.newer_notice`) shows the newer judgement and offers to load it."""
    st.session_state[K_ERR] = ("Not saved: another tab or window saved this caption since this page showed it "
                               "(see above). Your choices are still here.")
    st.session_state[K_NEWER] = (task.caption_id, exc.current)


@reporting
@signed_in
def on_newer(load: bool) -> None:
    """The notice's buttons: ``load`` the judgement stored now into the panel, or keep the panel as it is and
    base it on that judgement (the next Save stores it as the revision after it)."""
    q: Queue = st.session_state[K_QUEUE]
    pos = st.session_state.get(K_POS)
    if pos is None:
        return
    if load:
        st.session_state[K_MSG] = None
        load_caption(q, pos)
        cur = st.session_state[K_TASK].current
        if cur is not None and not st.session_state.get(K_MSG):
            st.session_state[K_MSG] = f"Loaded revision {cur.revision}."
        return
    task = q.task(pos)
    st.session_state[K_TASK] = task
    st.session_state.pop(K_NEWER, None)
    st.session_state[K_ERR] = None
    st.session_state[K_MSG] = (f"Your panel is kept: Save & next stores it as revision {task.shown_revision + 1}, "
                               "after the newer one (which stays in the history).")


def move_on_after_storing(q: Queue, task: Task, before=None) -> None:
    """Show the next caption to do after ``task`` was stored (K_MSG says how). If the database stops
    answering right then, the stored caption stays on screen and the message says both things."""
    try:
        if before is not None:
            before()
        load_caption(q, q.next_todo(after=task.position))
    except StoreUnavailable:
        st.session_state[K_ERR] = (f"{st.session_state[K_MSG]} The database stopped answering right after, so the "
                                   "next caption cannot be loaded yet: press Next → once it is back.")


def update_progress(ctx: PageContext, q: Queue, *, counted_before: bool) -> None:
    cached = st.session_state.get(PROGRESS_KEY, {}).get((ctx.user.name, ctx.project))
    if cached is None or cached[0] is None or q.staged:
        remember_progress(ctx.user, ctx.project, q.progress())
        return
    prog = cached[0]
    if not counted_before:
        prog = type(prog)(min(prog.assigned, prog.done + 1), prog.assigned, prog.fine_waiting)
    remember_progress(ctx.user, ctx.project, prog)


@reporting
@signed_in
def on_skip(ctx: PageContext) -> None:
    q: Queue = st.session_state[K_QUEUE]
    task: Task | None = st.session_state.get(K_TASK)
    if task is None:
        return
    stored = _stored(task, lambda: q.skip(task, st.session_state.get(K_NOTE, ""), seconds()))
    if stored is _REFUSED:
        return
    st.session_state[K_MSG] = (f"Skipped item {task.item.key}; it comes back at the end." if stored
                               else f"Item {task.item.key} is judged already; moved on without changing it.")
    move_on_after_storing(q, task)


@reporting
@signed_in
def on_move(step: int) -> None:
    q: Queue = st.session_state[K_QUEUE]
    pos = st.session_state.get(K_POS)
    if pos is None:  # after the end: ← steps back onto the last caption, → starts again at the first
        target = q.neighbour(10**12, -1) if step < 0 else q.neighbour(-1, 1)
    else:
        target = q.neighbour(pos, step)
    if target is not None:
        st.session_state[K_MSG] = None
        load_caption(q, target)


@reporting
@signed_in
def on_goto_todo() -> None:
    q: Queue = st.session_state[K_QUEUE]
    target = q.first_todo()
    if target is not None:
        st.session_state[K_MSG] = None
        load_caption(q, target)


def on_open_list() -> None:
    st.session_state[K_LIST_OPEN] = True


@reporting
@signed_in
def on_jump(position: int) -> None:
    q: Queue = st.session_state[K_QUEUE]
    st.session_state[K_MSG] = None
    load_caption(q, position)


@reporting
@signed_in
def on_draft() -> None:
    # The form's values are in the session now; store them as the user's draft of this caption.
    sent = panel()
    if sent is None:
        return
    try:
        draft = sent.q.save_draft(*sent.judgement(), spans=sent_spans(sent))
    except InputError as exc:
        st.session_state[K_ERR] = "The draft was not kept: " + exc.detail + "."
        return
    st.session_state[K_ERR] = None
    st.session_state[K_MSG] = (f"Draft kept for this caption at {when(draft.saved_at)} (not saved as a judgement "
                               "yet); it comes back when you return to it, even after a reload.")


@signed_in
def on_assign_to_me(ctx: PageContext) -> None:
    from ...assignment import assign_to_self
    try:
        assign_to_self(ctx.store, ctx.project, ctx.user.name, ctx.user.role)
    except AnnotatorError as exc:
        st.session_state[K_ERR] = str(exc)
    st.session_state.pop(K_QKEY, None)
    st.session_state.pop(K_SIZE, None)
    remember_progress(ctx.user, ctx.project, None)
    st.session_state.pop(PROGRESS_KEY, None)
