"""The Annotate screen's session state: its keys, the queue, the caption loaded into the panel, and what the panel sent
(the choice, the ticked types, the note, the error spans, the time spent)."""

from __future__ import annotations

import time
from typing import NamedTuple

import streamlit as st

from ...annotation import STAGE_COARSE, Queue, Task
from ...errors import InputError, StoreUnavailable
from ...limits import measured_seconds
from ...model import Label
from ...taxonomy import taxonomy
from .. import PageContext
from ..widgets import spans as annotate_spans


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


def queue(ctx: PageContext) -> Queue:
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


def queue_size(q: Queue) -> int:
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


def load_caption(q: Queue, position: int | None) -> None:
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
        restored = f"Draft from {when(draft.saved_at)} restored." if draft is not None else \
            f"Started from the answer of judge {suggestion.judge}: check it before saving."
        st.session_state[K_MSG] = f"{st.session_state[K_MSG]} {restored}" if st.session_state.get(K_MSG) else restored
    st.session_state[K_SHOWN] = time.monotonic()
    st.session_state[K_ERR] = None
    st.session_state.pop(K_NEWER, None)


def when(at) -> str:
    """A stored time as the page shows it (UTC, to the minute)."""
    return f"{at:%Y-%m-%d %H:%M} UTC"


def ticked_types() -> list[str]:
    return [t.id for t in taxonomy().types if st.session_state.get(type_key(t.id))]


class Sent(NamedTuple):
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


def panel() -> Sent | None:
    """What the panel sent (for a save or a draft); None when no caption is shown."""
    task: Task | None = st.session_state.get(K_TASK)
    if task is None:
        return None
    label = st.session_state.get(K_LABEL)
    types = ticked_types() if task.stage != STAGE_COARSE else []
    if label is None and types:
        # Ticking a type means inaccurate (the panel shows it so at once; a judgement sent before it did
        # still means it).
        label = Label.INACCURATE.value
    return Sent(st.session_state[K_QUEUE], task, label, types, st.session_state.get(K_NOTE, ""))


def sent_spans(sent: Sent):
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


def seconds() -> float:
    now = time.monotonic()
    return measured_seconds(st.session_state.get(K_SHOWN, now), now)  # a tab left open for days counts a day
