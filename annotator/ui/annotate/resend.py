"""A save the browser kept while it was unconfirmed (next.js) and sends again through the hidden ``ann_resend`` field,
stored once; and the page's hidden state marker that next.js reads."""

from __future__ import annotations

import html
from typing import NamedTuple

import streamlit as st

from ...annotation import STAGE_COARSE, Queue, Task
from ...errors import AnnotatorError, InputError, JudgementChanged
from ...limits import measured_seconds
from ...model import Label
from .. import PageContext, signed_in
from ..widgets import spans as annotate_spans
from .callbacks import (
    is_resent, judgement_content, move_on_after_storing, reporting, save_refusal, update_progress,
)
from .state import K_ERR, K_LOAD, K_MSG, K_NEXT, K_OWN, K_POS, K_RESEND, K_RESENT, queue


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


@reporting
@signed_in
def on_resend(ctx: PageContext) -> None:
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
    q = queue(ctx)
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
            st.session_state[K_ERR] = f"{what} was not stored: {save_refusal(exc)}"
            return
    content = judgement_content(kept.label, kept.types, kept.note, spans)
    if is_resent(task.current, kept.base, content):
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
            st.session_state[K_ERR] = f"{what} was not stored: {save_refusal(exc)}"
            return
        st.session_state[K_OWN] = (task.caption_id, result.revision, content)
        st.session_state[K_MSG] = f"{what} is stored now (revision {result.revision})."
        st.session_state[K_ERR] = None
    if st.session_state.get(K_POS) == task.position:  # still on screen: move on, as Save & next does
        move_on_after_storing(q, task, None if result is None else
                               (lambda: update_progress(ctx, q, counted_before=result.was_done)))
    elif result is not None:
        update_progress(ctx, q, counted_before=result.was_done)


def state_html(ctx: PageContext, q: Queue, task: Task | None) -> str:
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
