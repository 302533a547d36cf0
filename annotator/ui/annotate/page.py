"""The annotate screen: state, callbacks and rendering (pages/annotate.py calls :func:`render`).

The task panel (choice, type ticks, note and its buttons) is a form: what the
annotator chooses, ticks and writes stays in the browser, with no server run
per key, and each button of the form (Save & next, Skip, ← / →, Save draft)
sends the whole judgement in one message. Save draft stores the panel as the
user's draft of the caption in the database (annotator.annotation.Queue.save_draft);
showing a caption again brings a draft newer than its judgement back. Each button is a callback, so it
runs *before* the script renders: "Save & next" hands the judgement to the
core (annotation rules, then one committed transaction), finds the next
caption and loads it into the widgets, and the same run then shows it. The
widgets have fixed keys (``ann_*``) so the keyboard script can find them by
their ``st-key-ann_*`` CSS class; annotate/panel.js shows at once what a
click implies (a tick chooses Inaccurate, Accurate clears the ticks). annotate/next.js shows the next
caption's words at once on Save & next (from the state marker, :func:`_state_html`) with the panel inert until
the marker names the save stored, and keeps an unconfirmed save in the browser: a page that finds one sends it
again through the hidden ``ann_resend`` field (:func:`_on_resend`), stored once.

Generated captions and references are untrusted text: they are HTML-escaped
before they are put into markup, never rendered as Markdown.
"""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import NamedTuple

import streamlit as st

from ...annotation import (
    CAPTION_FILTERS, MAX_NOTE_LENGTH, STAGE_COARSE, STAGE_FINE, Queue, Task, detector_hints, keyboard_map,
    prefetch,
    labels_as_text, pictures_sent, task_image,
)
from ...correction.blind import views_closed_for
from ...errors import AnnotatorError, InputError, JudgementChanged, StoreUnavailable
from ...limits import measured_seconds
from ...model import Label, Role
from ...taxonomy import taxonomy
from .. import (
    PROGRESS_KEY, PageContext, md_escape, outage_notice, progress, refusal_text, remember_progress, signed_in,
)
from .html import (
    LABEL_TEXT, STYLE, caption_html, history_html, type_chips_html, type_columns, unrelated_hint_html,
    view_toggles_html, _guide_html,
)
from ..widgets import spans as annotate_spans
from ..widgets.figure import references_block
from ..widgets.figure_html import box_overlay_html, figure_ratio_html, short_name
from ..widgets.formatting import show_table
from ..widgets.keys import keyboard_script, panel_state_html

K_QKEY = "ann_qkey"
K_QUEUE = "ann_queue"
K_POS = "ann_pos"
K_TASK = "ann_task"
K_SHOWN = "ann_shown_at"
K_LABEL = "ann_label"
K_NOTE = "ann_note"
K_MSG = "ann_msg"
K_ERR = "ann_err"
K_DONE = "ann_all_done"
K_SIZE = "ann_queue_size"
K_PREFETCHED = "ann_prefetched_for"
K_LIST_OPEN = "ann_list_open"
K_LIST_FILTER = "ann_list_filter"
K_LIST_OFFSET = "ann_list_offset"
K_HINTS = "ann_show_hints"
K_FORM = "ann_panel"
K_HINTS_WANTED = "ann_hints_wanted"
K_NEWER = "ann_newer"  # (caption id, the judgement saved since the page showed it) after a refused save
K_SUGGESTION = "ann_suggestion"  # the judge the panel was pre-filled from (None: not pre-filled)
K_OWN = "ann_own_save"  # (caption id, revision, content) of this tab's last confirmed save
K_TRIED = "ann_tried_save"  # (caption id, base revision, content) of this tab's last save sent
K_NEXT = "ann_next_caption"  # ((load, caption id), the words of the caption Save & next goes to, or None)
K_RESEND = "ann_resend"  # the hidden field a page fills with a save kept in the browser, to send it again
K_RESENT = "ann_resent"  # the token of the last save sent again that this session handled
K_LOAD = "ann_load"  # counts the captions loaded into the panel: each showing's markup is new (widgets/spans.js)
K_SPANS_START = "ann_spans_start"  # the spans field's value as the caption was loaded
NB_HYPHEN = "\u2011"  # a hyphen no line breaks at
LIST_PAGE = 100  # captions per page of the caption list
SIZE_MAX_AGE = 60.0  # seconds; a queue only changes size when a lead reassigns
PREFETCH_DELAY = 0.4  # seconds: let this run reach the browser before preparing the next images

def type_key(type_id: str) -> str:
    """Session/widget key of an error-type checkbox."""
    return f"ann_type_{type_id}"


# --------------------------------------------------------------------------- state

def _queue(ctx: PageContext) -> Queue:
    key = (ctx.user.name, ctx.project)
    now = time.monotonic()
    if st.session_state.get(K_QKEY) != key:
        for k in (K_POS, K_TASK, K_DONE, K_MSG, K_ERR):
            st.session_state.pop(k, None)
    elif now - st.session_state.get("ann_queue_opened", 0.0) < SIZE_MAX_AGE:
        return st.session_state[K_QUEUE]
    # (Re)open now and then: a lead may have changed the second-pass mode or the assignment.
    try:
        q = Queue.open(ctx.store, ctx.user.name, ctx.user.role, ctx.project, create_user=ctx.user.local_mode)
    except StoreUnavailable:
        if st.session_state.get(K_QKEY) == key:  # keep working with the queue already open until it is back
            return st.session_state[K_QUEUE]
        raise
    st.session_state[K_QUEUE] = q
    st.session_state[K_QKEY] = key
    st.session_state["ann_queue_opened"] = now
    return q


def _queue_size(q: Queue) -> int:
    """The queue's length, re-counted at most once a minute (counting a long queue is not free)."""
    cached = st.session_state.get(K_SIZE)
    now = time.monotonic()
    if cached is None or cached[0] != (q.user, q.project) or now - cached[2] > SIZE_MAX_AGE:
        try:
            cached = ((q.user, q.project), q.size(), now)
        except StoreUnavailable:
            if cached is None or cached[0] != (q.user, q.project):
                raise
            return cached[1]  # the last count until the database is back
        st.session_state[K_SIZE] = cached
    return cached[1]


def _load(q: Queue, position: int | None) -> None:
    """Show ``position``: load the user's own judgement into the widgets and start the clock."""
    if position is None:
        st.session_state[K_POS] = None
        st.session_state[K_TASK] = None
        st.session_state[K_DONE] = True
        return
    task = q.task(position)
    cur = task.current
    st.session_state[K_POS] = position
    st.session_state[K_TASK] = task
    st.session_state[K_DONE] = False
    draft = q.load_draft(task)
    # A first annotator's new caption may start from a judge's answer (annotator.judges.suggestions; never a
    # double-annotated caption's second annotator): label, types and spans, to be checked before saving.
    suggestion = q.suggestion(task) if draft is None and cur is None else None
    if draft is not None:  # unfinished work of an earlier visit, newer than any saved judgement: it comes back
        label, ticked, note = draft.label, set(draft.error_types), draft.note
    elif cur is not None:
        label, ticked, note = cur.label.value if cur.label is not None else None, set(cur.error_types), cur.note
    elif suggestion is not None:
        label, ticked, note = suggestion.label, set(suggestion.error_types), ""
    else:
        label, ticked, note = None, set(), ""
    # The draft's spans, else the judgement's (or the suggestion's): widgets/spans.js draws and edits them until Save.
    spans = draft.spans if draft is not None else cur.spans if cur is not None else \
        suggestion.spans if suggestion is not None else ()
    st.session_state[K_SUGGESTION] = suggestion.judge if suggestion is not None else None
    st.session_state[annotate_spans.K_SPANS] = st.session_state[K_SPANS_START] = annotate_spans.field_value(spans)
    st.session_state[K_LOAD] = st.session_state.get(K_LOAD, 0) + 1
    st.session_state[K_LABEL] = label
    for t in taxonomy().types:
        st.session_state[type_key(t.id)] = t.id in ticked
    st.session_state[K_NOTE] = note
    if draft is not None or suggestion is not None:
        restored = f"Draft from {_when(draft.saved_at)} restored." if draft is not None else \
            f"Started from the answer of judge {suggestion.judge}: check it before saving."
        st.session_state[K_MSG] = f"{st.session_state[K_MSG]} {restored}" if st.session_state.get(K_MSG) else restored
    st.session_state[K_SHOWN] = time.monotonic()
    st.session_state[K_ERR] = None
    st.session_state.pop(K_NEWER, None)


def _when(at) -> str:
    """A stored time as the page shows it (UTC, to the minute)."""
    return f"{at:%Y-%m-%d %H:%M} UTC"


def _ticked() -> list[str]:
    return [t.id for t in taxonomy().types if st.session_state.get(type_key(t.id))]


class _Sent(NamedTuple):
    """What the panel sent for a save or a draft: the queue, the task shown, the choice, the ticked types and
    the note."""

    q: Queue
    task: Task
    label: str | None
    types: list[str]
    note: str

    def judgement(self) -> tuple:
        """The task and the judgement fields, in the order Queue.save and Queue.save_draft take them."""
        return self.task, self.label, self.types, self.note


def _panel() -> _Sent | None:
    """What the panel sent (for a save or a draft); None when no caption is shown."""
    task: Task | None = st.session_state.get(K_TASK)
    if task is None:
        return None
    label = st.session_state.get(K_LABEL)
    types = _ticked() if task.stage != STAGE_COARSE else []
    if label is None and types:
        # Ticking a type means inaccurate (the panel shows it so at once; a judgement sent before it did
        # still means it).
        label = Label.INACCURATE.value
    return _Sent(st.session_state[K_QUEUE], task, label, types, st.session_state.get(K_NOTE, ""))


def _spans(sent: _Sent):
    """The error spans the panel sent (InputError where the field cannot be read, or with what the page's
    annotator can do about a span the judgement cannot carry). None in the label-only step of a second
    pass, where the types are not asked (the span keys do nothing there)."""
    if sent.task.stage == STAGE_COARSE:
        return ()
    spans = annotate_spans.read_page_field(st.session_state.get(annotate_spans.K_SPANS), sent.task.caption.text)
    problem = annotate_spans.page_refusal(spans, label=sent.label, error_types=sent.types,
                                          caption=sent.task.caption.text)
    if problem is not None:
        raise InputError(problem[:1].lower() + problem[1:].rstrip("."))
    return spans


def _seconds() -> float:
    now = time.monotonic()
    return measured_seconds(st.session_state.get(K_SHOWN, now), now)  # a tab left open for days counts a day


# --------------------------------------------------------------------------- callbacks

def _reporting(callback):
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
def _on_save(ctx: PageContext) -> None:
    sent = _panel()
    if sent is None:
        return
    q, task = sent.q, sent.task
    try:
        spans = _spans(sent)
    except InputError as exc:
        st.session_state[K_ERR] = _save_refusal(exc)
        return
    # This tab's own save of the caption, should the page still show it (the database stopped answering right
    # after it, or while it committed): the next save is based on it, and never taken for another tab's.
    base = _own_revision(task, sent, spans)
    if base is not None and base < 0:
        _move_on_after_storing(q, task)
        return
    # Whatever else the panel sent goes to the core as it is: validate() refuses what breaks a rule
    # (an accurate caption with types, say) and says why.
    st.session_state[K_TRIED] = (task.caption_id, task.shown_revision if base is None else base,
                                 _content(sent.label, sent.types, sent.note, spans))
    result = _stored(task, lambda: q.save(*sent.judgement(), _seconds(),
                                          base_revision=task.shown_revision if base is None else base,
                                          spans=spans, suggested=st.session_state.get(K_SUGGESTION) is not None),
                     _save_refusal)
    if result is _REFUSED:
        return
    st.session_state[K_OWN] = (task.caption_id, result.revision, st.session_state.pop(K_TRIED)[2])
    names = ", ".join(taxonomy().get(t).name for t in result.error_types)
    st.session_state[K_MSG] = (f"Saved item {task.item.key}: {LABEL_TEXT[result.label]}"
                               + (f" ({names})" if names else "") + f" — revision {result.revision}.")
    _move_on_after_storing(q, task, lambda: _update_progress(ctx, q, counted_before=result.was_done))


def _content(label, types, note, spans) -> tuple:
    """What a save stores of the panel, comparable with a stored judgement's (:func:`_stored_content`)."""
    return (label, frozenset(types or ()), (note or "").strip(), tuple(sorted(spans or ())))


def _stored_content(j) -> tuple:
    return _content(j.label.value if j.label is not None else None, j.error_types, j.note, j.spans)


def _is_resent(current, base: int, content: tuple) -> bool:
    """Whether ``current`` (a stored judgement, or None) is the save of ``content`` based on revision ``base``."""
    return current is not None and current.label is not None and current.revision == base + 1 \
        and _stored_content(current) == content


def _own_revision(task: Task, sent: _Sent, spans) -> int | None:
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
    if content == _content(sent.label, sent.types, sent.note, spans):
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


def _save_refusal(exc: AnnotatorError) -> str:
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


@_reporting
@signed_in
def _on_newer(load: bool) -> None:
    """The notice's buttons: ``load`` the judgement stored now into the panel, or keep the panel as it is and
    base it on that judgement (the next Save stores it as the revision after it)."""
    q: Queue = st.session_state[K_QUEUE]
    pos = st.session_state.get(K_POS)
    if pos is None:
        return
    if load:
        st.session_state[K_MSG] = None
        _load(q, pos)
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


def _move_on_after_storing(q: Queue, task: Task, before=None) -> None:
    """Show the next caption to do after ``task`` was stored (K_MSG says how). If the database stops
    answering right then, the stored caption stays on screen and the message says both things."""
    try:
        if before is not None:
            before()
        _load(q, q.next_todo(after=task.position))
    except StoreUnavailable:
        st.session_state[K_ERR] = (f"{st.session_state[K_MSG]} The database stopped answering right after, so the "
                                   "next caption cannot be loaded yet: press Next → once it is back.")


def _update_progress(ctx: PageContext, q: Queue, *, counted_before: bool) -> None:
    cached = st.session_state.get(PROGRESS_KEY, {}).get((ctx.user.name, ctx.project))
    if cached is None or cached[0] is None or q.staged:
        remember_progress(ctx.user, ctx.project, q.progress())
        return
    prog = cached[0]
    if not counted_before:
        prog = type(prog)(min(prog.assigned, prog.done + 1), prog.assigned, prog.fine_waiting)
    remember_progress(ctx.user, ctx.project, prog)


@_reporting
@signed_in
def _on_skip(ctx: PageContext) -> None:
    q: Queue = st.session_state[K_QUEUE]
    task: Task | None = st.session_state.get(K_TASK)
    if task is None:
        return
    stored = _stored(task, lambda: q.skip(task, st.session_state.get(K_NOTE, ""), _seconds()))
    if stored is _REFUSED:
        return
    st.session_state[K_MSG] = (f"Skipped item {task.item.key}; it comes back at the end." if stored
                               else f"Item {task.item.key} is judged already; moved on without changing it.")
    _move_on_after_storing(q, task)


@_reporting
@signed_in
def _on_move(step: int) -> None:
    q: Queue = st.session_state[K_QUEUE]
    pos = st.session_state.get(K_POS)
    if pos is None:  # after the end: ← steps back onto the last caption, → starts again at the first
        target = q.neighbour(10**12, -1) if step < 0 else q.neighbour(-1, 1)
    else:
        target = q.neighbour(pos, step)
    if target is not None:
        st.session_state[K_MSG] = None
        _load(q, target)


@_reporting
@signed_in
def _on_goto_todo() -> None:
    q: Queue = st.session_state[K_QUEUE]
    target = q.first_todo()
    if target is not None:
        st.session_state[K_MSG] = None
        _load(q, target)


def _on_open_list() -> None:
    st.session_state[K_LIST_OPEN] = True


@_reporting
@signed_in
def _on_jump(position: int) -> None:
    q: Queue = st.session_state[K_QUEUE]
    st.session_state[K_MSG] = None
    _load(q, position)


@_reporting
@signed_in
def _on_draft() -> None:
    # The form's values are in the session now; store them as the user's draft of this caption.
    sent = _panel()
    if sent is None:
        return
    try:
        draft = sent.q.save_draft(*sent.judgement(), spans=_spans(sent))
    except InputError as exc:
        st.session_state[K_ERR] = "The draft was not kept: " + exc.detail + "."
        return
    st.session_state[K_ERR] = None
    st.session_state[K_MSG] = (f"Draft kept for this caption at {_when(draft.saved_at)} (not saved as a judgement "
                               "yet); it comes back when you return to it, even after a reload.")


class _Kept(NamedTuple):
    """A save the browser kept while it was unconfirmed and sends again (next.js)."""

    token: str
    user: str
    project: str
    caption_id: int
    position: int
    base: int
    label: str | None
    types: tuple[str, ...]
    note: str
    spans: str
    seconds: float


def _read_kept(raw: str) -> _Kept:
    """The save a page sent again, from the JSON of the hidden field (ValueError where it cannot be read)."""
    import json
    try:
        d = json.loads(raw)
        label = d.get("label")
        if label not in (None, Label.ACCURATE.value, Label.INACCURATE.value):
            raise ValueError(f"unknown label {label!r}")
        types = tuple(str(t) for t in d.get("types") or ())
        kept = _Kept(str(d["token"])[:100], str(d["user"]), str(d["project"]), int(d["caption"]),
                     int(d["position"]), int(d["base"]), label, types, str(d.get("note") or ""),
                     str(d.get("spans") or "[]"), measured_seconds(0.0, float(d.get("seconds") or 0.0)))
    except (TypeError, KeyError, AttributeError, json.JSONDecodeError) as exc:
        raise ValueError(str(exc)) from exc
    if kept.label is None and kept.types:  # a tick means inaccurate, as the panel's save reads it
        kept = kept._replace(label=Label.INACCURATE.value)
    return kept


@_reporting
@signed_in
def _on_resend(ctx: PageContext) -> None:
    """A save kept in the browser while unconfirmed (the page was closed or reloaded before the server answered):
    store it unless it is stored already; when another save of the caption came since, keep it as the caption's
    draft and say so. Nothing is stored twice: the revision after the one the save was based on holding exactly
    it is that save."""
    raw = st.session_state.get(K_RESEND) or ""
    st.session_state[K_RESEND] = ""
    if not raw:
        return
    try:
        kept = _read_kept(raw)
    except ValueError:
        st.session_state[K_ERR] = ("A save kept in this browser from before the page was reloaded could not be read, "
                                   "so it was not sent again.")
        return
    st.session_state[K_RESENT] = kept.token
    if kept.user != ctx.user.name or kept.project != ctx.project:
        return  # another account's or project's: never stored from here
    q = _queue(ctx)
    task = q.task(kept.position)
    what = f"Your save of item {task.item.key} from before the page was closed or reloaded"
    if task.caption_id != kept.caption_id:
        st.session_state[K_ERR] = f"{what} was not stored: the caption at its place in your queue has changed."
        return
    if task.stage == STAGE_COARSE:  # the label-only step: types and spans are not asked
        kept, spans = kept._replace(types=()), ()
    else:
        try:
            spans = annotate_spans.read_page_field(kept.spans, task.caption.text)
        except InputError as exc:
            st.session_state[K_ERR] = f"{what} was not stored: {_save_refusal(exc)}"
            return
    content = _content(kept.label, kept.types, kept.note, spans)
    if _is_resent(task.current, kept.base, content):
        st.session_state[K_OWN] = (task.caption_id, task.current.revision, content)
        st.session_state[K_MSG] = f"{what} is stored (revision {task.current.revision})."
        st.session_state[K_ERR] = None
        result = None
    else:
        try:
            result = q.save(task, kept.label, kept.types, kept.note, kept.seconds, base_revision=kept.base,
                            spans=spans)
        except JudgementChanged:
            q.save_draft(task, kept.label, kept.types, kept.note, spans=spans)
            st.session_state[K_ERR] = (f"{what} was not stored: another tab or window saved this caption since. "
                                       "It is kept as your draft of the caption: open it to compare.")
            return
        except AnnotatorError as exc:
            st.session_state[K_ERR] = f"{what} was not stored: {_save_refusal(exc)}"
            return
        st.session_state[K_OWN] = (task.caption_id, result.revision, content)
        st.session_state[K_MSG] = f"{what} is stored now (revision {result.revision})."
        st.session_state[K_ERR] = None
    if st.session_state.get(K_POS) == task.position:  # still on screen: move on, as Save & next does
        _move_on_after_storing(q, task, None if result is None else
                               (lambda: _update_progress(ctx, q, counted_before=result.was_done)))
    elif result is not None:
        _update_progress(ctx, q, counted_before=result.was_done)


def _state_html(ctx: PageContext, q: Queue, task: Task | None) -> str:
    """The page's hidden state marker, read by next.js and by tests: the user and project; the caption
    shown (its showing number, id, place in the queue, the revision a save of it is based on, its item); the words
    of the caption Save & next goes to (read once per showing; absent when there is none or the database is away);
    the last save this tab saw stored (caption id and revision: a judgement is in the store once they show it);
    and the last save sent again that the server handled."""
    attrs = {"data-testid": "ann-state", "data-user": ctx.user.name, "data-project": ctx.project}
    own = st.session_state.get(K_OWN)
    if own is not None:
        attrs.update({"data-stored-caption": own[0], "data-stored-revision": own[1]})
    if st.session_state.get(K_RESENT):
        attrs["data-resent"] = st.session_state[K_RESENT]
    if task is not None:
        load = st.session_state.get(K_LOAD, 0)
        attrs.update({"data-load": load, "data-caption": task.caption_id, "data-position": task.position,
                      "data-base": task.shown_revision, "data-item": task.item.key})
        cached = st.session_state.get(K_NEXT)
        if cached is None or cached[0] != (load, task.caption_id):
            try:
                after = q.next_todo(after=task.position)
                words = q.task(after).caption.text if after is not None and after != task.position else None
            except AnnotatorError:
                words = None
            else:
                st.session_state[K_NEXT] = cached = ((load, task.caption_id), words)
        else:
            words = cached[1]
        if words is not None:
            attrs["data-next"] = words
    return "<span hidden " + " ".join(f'{k}="{html.escape(str(v))}"' for k, v in attrs.items()) + "></span>"


@signed_in
def _on_assign_to_me(ctx: PageContext) -> None:
    from ...assignment import assign_to_self
    try:
        assign_to_self(ctx.store, ctx.project, ctx.user.name, ctx.user.role)
    except AnnotatorError as exc:
        st.session_state[K_ERR] = str(exc)
    st.session_state.pop(K_QKEY, None)
    st.session_state.pop(K_SIZE, None)
    remember_progress(ctx.user, ctx.project, None)
    st.session_state.pop(PROGRESS_KEY, None)


#: Hover links between mentions and boxes (a static script; see widgets/box_links.js).
_BOX_LINKS_JS = (Path(__file__).parents[1] / "widgets" / "box_links.js").read_text(encoding="utf-8")
#: What a click in the panel implies on screen, and the "Generally unrelated" reminder (panel.js).
_PANEL_JS = Path(__file__).with_name("panel.js").read_text(encoding="utf-8")
#: Save & next shown at once and kept until stored (next.js).
_NEXT_JS = Path(__file__).with_name("next.js").read_text(encoding="utf-8")


def _keyboard_script() -> str:
    """The page's key handler (annotator.ui.widgets.keys) on the ``ann_*`` widgets."""
    tax = taxonomy()
    return keyboard_script(prefix="ann", caption_testid="ann-caption", keys=keyboard_map(tax),
                           labels=[Label.ACCURATE.value, Label.INACCURATE.value],
                           types={t.id: type_key(t.id) for t in tax.types}, state_name="__annotatorKeyState")


# --------------------------------------------------------------------------- page

def render(ctx: PageContext) -> None:
    """Draw the annotate page for ``ctx.user`` in ``ctx.project``."""
    if ctx.user.role is Role.ANNOTATOR:
        # An annotator's sidebar starts folded here (its only other page is the guidelines): the panel
        # needs the whole width of a laptop's window.
        st.set_page_config(initial_sidebar_state="collapsed")
    st.html(STYLE)
    if not ctx.project:
        st.info("There is no project yet. An admin imports one on the Data page or with `annotator import`.")
        return
    try:
        q = _queue(ctx)
        if _queue_size(q) == 0:
            st.session_state.pop(K_SIZE, None)  # look again on the next run: work may be assigned any time
            _render_nothing_assigned(ctx)
            return
        if K_POS not in st.session_state:
            _load(q, q.first_todo())
    except StoreUnavailable as exc:
        outage_notice(exc)
        return
    except AnnotatorError as exc:
        st.error(md_escape(str(exc)))
        return
    task: Task | None = st.session_state.get(K_TASK)
    prog = progress(ctx.store, ctx.user, ctx.project)

    head, bar = st.columns([3, 2], vertical_alignment="center")
    with head:
        st.subheader(f"Annotate · {md_escape(ctx.project)}", anchor=False)
    with bar:
        if prog is not None:
            st.progress(prog.fraction, text=f"{prog.done} of {prog.assigned} judged"
                        + (f" · {prog.fine_waiting} waiting for the fine pass" if prog.fine_waiting else ""))

    if task is None:
        _render_all_done(q)
    else:
        _render_task(ctx, q, task)
    st.html(_keyboard_script() + "<script>\n" + _BOX_LINKS_JS + "</script><script>\n" + _PANEL_JS + "</script>"
            + "<script>\n" + _NEXT_JS + "</script>" + annotate_spans.script() + annotate_spans.STYLE,
            unsafe_allow_javascript=True)
    # A save the browser kept while unconfirmed comes back here (hidden; next.js fills it).
    with st.container(key="ann_resend_box"):
        st.text_input("Save sent again", key=K_RESEND, on_change=_on_resend, args=(ctx,),
                      label_visibility="collapsed")
    if st.session_state.pop(K_LIST_OPEN, False):
        _caption_list(q)
    # Drawn last, once the caption and its panel are: the caption after this one, for Save & next to show at once.
    st.html(_state_html(ctx, q, task))
    if task is None:
        return
    if st.session_state.get(K_PREFETCHED) != (q.user, q.project, task.position):
        # While the annotator reads this caption, prepare the images of the next ones.
        st.session_state[K_PREFETCHED] = (q.user, q.project, task.position)
        prefetch(q, task.position, delay=PREFETCH_DELAY)


@st.dialog("Your captions", width="large")
def _caption_list(q: Queue) -> None:
    """The caption list: filters, a page of captions in queue order, and a jump by number (Enter)."""
    tax = taxonomy()
    current = st.session_state.get(K_POS)
    with st.form("ann_jump_form", border=False, enter_to_submit=True):
        j1, j2 = st.columns([3, 1], vertical_alignment="bottom")
        number = j1.text_input("Go to caption number (then Enter)", key="ann_jump_number",
                               placeholder=f"1 … {_queue_size(q)}")
        go = j2.form_submit_button("Go ⏎", width="stretch")
    if go:
        target = q.position_of((number or "").strip())
        if target is None:
            st.error(f"There is no caption number {md_escape((number or '').strip())} in your queue "
                     f"(1 to {_queue_size(q)}).")
        else:
            _on_jump(target)
            st.rerun()
    counts = q.listing_counts()
    status = st.radio("Show", list(CAPTION_FILTERS), key=K_LIST_FILTER, horizontal=True,
                      format_func=lambda f: f"{CAPTION_FILTERS[f]} ({counts[f]})")
    total = counts[status]
    offset = st.session_state.get(K_LIST_OFFSET, {}).get(status)
    if offset is None:  # first look at this filter: the page holding the current caption (when listed)
        offset = (current // LIST_PAGE) * LIST_PAGE if status == "all" and current is not None else 0
    offset = max(0, min(offset, max(0, total - 1) // LIST_PAGE * LIST_PAGE))
    entries = q.listing(status, offset=offset, limit=LIST_PAGE)
    if not entries:
        st.caption("No caption matches this filter.")
        return
    rows = [{"No.": e.number, "Item": e.item_key, "Caption": e.caption,
             "Judgement": e.status.capitalize() + (" (now open)" if e.position == current else ""),
             "Error types": ", ".join(tax.get(t).name for t in e.error_types if t in tax.ids), "Note": e.note}
            for e in entries]
    picked = show_table(rows, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                          key="ann_list_table", height=min(38 + 35 * len(rows), 420),
                          column_config={"No.": st.column_config.NumberColumn(width="small"),
                                         "Caption": st.column_config.TextColumn(width="large")})
    chosen = picked.selection.rows if picked and picked.selection else []
    if chosen:
        _on_jump(entries[chosen[0]].position)
        st.rerun()
    p1, p2, p3 = st.columns([1, 2, 1], vertical_alignment="center")
    p2.caption(f"{offset + 1}–{offset + len(entries)} of {total}. Click a row to open that caption.")
    pages = st.session_state.setdefault(K_LIST_OFFSET, {})
    if p1.button("← Earlier", key="ann_list_earlier", disabled=offset == 0, width="stretch"):
        pages[status] = max(0, offset - LIST_PAGE)
        st.rerun(scope="fragment")
    if p3.button("Later →", key="ann_list_later", disabled=offset + LIST_PAGE >= total, width="stretch"):
        pages[status] = offset + LIST_PAGE
        st.rerun(scope="fragment")


def _hints(q: Queue, task: Task, where) -> dict[str, tuple[str, ...]]:
    """The hints toggle (off unless the annotator switches it on; kept for the session) and the hints it
    allows for this caption (never any for a caption of the blind double-annotation sample)."""
    # The choice outlives the widget (absent on the all-done page and in the coarse stage).
    st.session_state[K_HINTS] = st.session_state.get(K_HINTS_WANTED, False)
    on = where.toggle("Detector hints", key=K_HINTS, on_change=_on_hints,
                      help="Words the automatic detectors flag in this caption, shown under the type they point "
                           "to. A pointer only: judge from the picture. Never shown for captions that two "
                           "annotators judge blind.")
    if not on:
        return {}
    try:
        blind = q.in_double_sample(task)
    except StoreUnavailable:
        return {}
    if blind:
        st.caption("No hints for this caption: two annotators judge it independently.")
    return detector_hints(task.caption.text, task.item, enabled=True, blind=blind)


def _on_hints() -> None:
    st.session_state[K_HINTS_WANTED] = bool(st.session_state.get(K_HINTS))


def _render_nothing_assigned(ctx: PageContext) -> None:
    from ...store.assignments import count_project_assignments
    from ...store.projects import project_id
    with ctx.store.read() as conn:
        assigned_at_all = count_project_assignments(conn, project_id(conn, ctx.project)) > 0
    st.subheader(f"Annotate · {md_escape(ctx.project)}", anchor=False)
    if st.session_state.get(K_ERR):
        st.error(md_escape(st.session_state[K_ERR]))
    if ctx.user.role in (Role.LEAD, Role.ADMIN) and not assigned_at_all:
        st.info("Nothing in this project is assigned yet. Split it across annotators on the Assignment page, "
                "or judge every caption yourself.")
        st.button("Assign every caption to me", key="ann_assign_me", on_click=_on_assign_to_me, args=(ctx,),
                  type="primary")
    else:
        st.info("Nothing is assigned to you in this project. Ask your lead to assign you some captions, "
                "or pick another project in the sidebar.")


def _render_message() -> None:
    """The last message: a refusal as an error (announced at once: role "alert"), a save or skip as a
    status line in a polite live region, so a screen reader says it without moving the focus."""
    if st.session_state.get(K_ERR):
        st.error(md_escape(st.session_state[K_ERR]), icon=":material/error:")
    elif st.session_state.get(K_MSG):
        st.html('<div class="ann-msg" role="status" aria-live="polite" data-testid="ann-msg">'
                '<span aria-hidden="true">✓</span> ' + html.escape(st.session_state[K_MSG]) + "</div>")


def _render_all_done(q: Queue) -> None:
    st.success("Every caption in your queue is judged. Thank you! You can still go back and revise.")
    _render_message()  # what the last save did (a revision saved on the way back here, say)
    c1, c2, c3, c4, _ = st.columns([1, 1, 1.2, 1.3, 2])
    c1.button("← Last", key="ann_prev", on_click=_on_move, args=(-1,), width="stretch")
    c2.button("First →", key="ann_next", on_click=_on_move, args=(1,), width="stretch")
    c3.button("Captions `l`", key="ann_list", on_click=_on_open_list, width="stretch")
    c4.button("Check for new work", key="ann_todo", on_click=_on_goto_todo, width="stretch")
    st.html('<span data-judge-done="ann" hidden></span>')


def _render_task(ctx: PageContext, q: Queue, task: Task) -> None:
    """One caption: the picture and references on the left; the caption, the panel and the history on the right."""
    left, right = st.columns([11, 16], gap="medium")
    with left:
        _render_figure(ctx, task)
    with right:
        hints = _render_caption_head(q, task)
        _render_panel(ctx, task, hints)
        _render_history(q, task)


def _render_figure(ctx: PageContext, task: Task) -> None:
    """The picture (with its boxes), the item's line, the references and the guide's overlay."""
    item = task.item
    # Boxes and references are shown or hidden in the browser (panel.js, keys h and t), and
    # the choice holds from caption to caption without asking the server. Where the item's size is
    # known the boxes are outlines and labels over one plain picture; otherwise both renders are sent.
    st.html(view_toggles_html())
    note = None
    with st.container(key="ann_figure"):
        st.html(figure_ratio_html(item))
        for show_boxes in pictures_sent(task):
            with st.container(key="ann_img_boxes" if show_boxes else "ann_img_plain"):
                jpeg, note = task_image(task, show_boxes)
                st.image(jpeg, width="stretch", output_format="JPEG")
        if labels_as_text(task):
            st.html(box_overlay_html(item))
    st.caption(f"Item **{md_escape(item.key)}** · {len(item.boxes)} boxes")
    if note:
        st.caption(f":orange[{md_escape(note)}]")
    if views_closed_for(ctx.store, ctx.project, ctx.user.role):
        with st.container(key="ann_refs"):
            st.caption("References are closed to correctors while this project's blind correction round is open.")
    else:
        references_block(item)
    st.html(_guide_html())


def _render_caption_head(q: Queue, task: Task) -> dict[str, tuple[str, ...]]:
    """Where the caption is in the queue (and its stage), the list button, the hints toggle, the caption, the
    earlier judgement and a newer one saved elsewhere; returns the detector hints to show in the panel."""
    tax = taxonomy()
    meta = [f"Caption {task.position + 1} of {_queue_size(q)}"]
    if task.item.is_practice:
        meta.append(":orange-badge[Practice item]")
    if task.stage == STAGE_COARSE:
        meta.append(":violet-badge[Second annotation: accurate / inaccurate only]")
    elif task.stage == STAGE_FINE:
        meta.append(":violet-badge[Fine pass: which errors?]")
    m1, m3, m2 = st.columns([3, 1.9, 1.4], vertical_alignment="center")
    m1.markdown(" · ".join(meta))
    m2.button("Captions `l`", key="ann_list", on_click=_on_open_list, width="stretch")
    hints = _hints(q, task, m3) if task.stage != STAGE_COARSE else {}
    # The showing's number and starting spans: the browser puts them in the spans field when they change.
    st.html(caption_html(task.caption.text, st.session_state.get(K_LOAD, 0),
                         st.session_state.get(K_SPANS_START), spans=task.stage != STAGE_COARSE))
    if task.current is not None:
        cur = task.current
        what = LABEL_TEXT.get(cur.label.value, "?") if cur.label is not None else "skipped"
        names = ", ".join(tax.get(t).name for t in cur.error_types if t in tax.ids)
        st.caption(f"You judged this caption before ({what}{': ' + names if names else ''}, revision "
                   f"{cur.revision}). Saving again keeps the earlier version in the history.")
    newer = st.session_state.get(K_NEWER)
    if newer is not None and newer[0] == task.caption_id:
        from ..widgets.newer import newer_notice
        newer_notice(newer[1], what="judgement", key="ann", on_load=_on_newer, on_keep=_on_newer)
    return hints


def _render_panel(ctx: PageContext, task: Task, hints: dict[str, tuple[str, ...]]) -> None:
    """The panel form: Task 1, Task 2's type grid (with the hints), the hidden spans field and the action bar.

    Choosing, ticking and writing stay in the browser (no server run per key); Save & next, Skip, ← / → and
    Save draft each send the whole judgement in one message, and the core checks it again (annotation.validate).
    The couplings a click implies on screen (a tick chooses Inaccurate, Accurate clears the ticks) are
    panel.js's; the save applies them too.
    """
    tax = taxonomy()
    with st.form(K_FORM, border=False, enter_to_submit=False):
        t1, chips = st.columns([3, 2], vertical_alignment="bottom")
        t1.radio("Task 1 · Is the caption an accurate description of the image?",
                 [Label.ACCURATE.value, Label.INACCURATE.value], index=None, key=K_LABEL, horizontal=True,
                 format_func=lambda v: f"{LABEL_TEXT[v]} `{tax.accurate_key if v == 'accurate' else tax.inaccurate_key}`")
        if task.stage != STAGE_COARSE:
            # The ticked types beside the choice, so a tick made by key is seen wherever the box is.
            chips.html(type_chips_html(tax, _ticked(), st.session_state.get(K_LOAD, 0)))
        if task.stage == STAGE_COARSE:
            st.caption("This caption is double-annotated. Give only the accurate / inaccurate judgement now; "
                       "if both annotators find it inaccurate it comes back to you for the error types.")
        else:
            _render_type_grid(tax, hints)
        # The error spans as JSON, written by widgets/spans.js (hidden): they go with the form's buttons.
        st.text_input("Error spans", key=annotate_spans.K_SPANS, label_visibility="collapsed")
        _render_action_bar(ctx)
    st.html(panel_state_html("ann", K_LABEL, [type_key(t.id) for t in tax.types]))


def _render_type_grid(tax, hints: dict[str, tuple[str, ...]]) -> None:
    """Task 2: one box per error type, grouped; a long group goes on in the next column, so every type is in
    view at 1280×720."""
    st.html('<p class="ann-task2"><b>Task 2 · Which errors does it make?</b> Tick each that applies.</p>')
    columns = type_columns(tax)
    cols = st.columns(len(columns), gap="small")
    for col, (group, heading, types) in zip(cols, columns):
        with col:
            st.html(f'<p class="ann-group">{html.escape(heading) or "&nbsp;"}</p>')
            for t in types:
                # Joined by no-break characters: the key stays beside the last word, "Non-existent" stays whole.
                st.checkbox(f"{short_name(t.name, group).replace('-', NB_HYPHEN)}\u00a0`{t.key}`", key=type_key(t.id),
                            help=f"**{t.name}**: {t.definition}")
                if t.id in hints:
                    st.caption("Detector: " + md_escape(", ".join(hints[t.id])))
    st.html(unrelated_hint_html(tax))


def _render_action_bar(ctx: PageContext) -> None:
    """The note, the last message and the form's buttons. The bar stays in view (sticky at the bottom of the
    window) however many types are ticked, so a refusal is never off screen."""
    with st.container(key="ann_actionbar"):
        st.text_input("Note `/` (optional; required for Other) — Esc leaves the field", key=K_NOTE,
                      max_chars=MAX_NOTE_LENGTH, label_visibility="collapsed",
                      placeholder="Note  /  — optional; required for Other. Esc leaves the field")
        _render_message()
        b1, b2, b3, b5, b4 = st.columns([1, 1, 1, 1.1, 1.9])
        b1.form_submit_button("← Previous", key="ann_prev", on_click=_on_move, args=(-1,), width="stretch")
        b2.form_submit_button("Skip `k`", key="ann_skip", on_click=_on_skip, args=(ctx,), width="stretch")
        b3.form_submit_button("Next →", key="ann_next", on_click=_on_move, args=(1,), width="stretch")
        b5.form_submit_button("Save draft", key="ann_draft", on_click=_on_draft, width="stretch",
                              help="Keep the panel as it is in the database without saving a judgement: "
                                   "it comes back when you return to this caption, even after a "
                                   "reload. Save & next or Skip removes it.")
        b4.form_submit_button("Save & next `⏎`", key="ann_save", on_click=_on_save, args=(ctx,),
                              type="primary", width="stretch")


def _render_history(q: Queue, task: Task) -> None:
    """The user's earlier revisions of this caption (when there are any)."""
    if task.current is None:
        return
    with st.expander("History of your judgement of this caption"):
        try:
            revisions = q.history(task.caption_id)
        except StoreUnavailable:
            st.caption("The history cannot be read while the database is not answering.")
        else:
            st.html(history_html(revisions, taxonomy()))
