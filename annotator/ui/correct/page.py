"""The correction page: fix one error type at a time, conservatively, and watch the scores move.

Laid out for a laptop's window: a one-line header, the four choices in one row (the page's text, blind
correction and the options folded under them), the picture beside the caption and its edit field, and the
buttons under the field with their keys (annotator.ui.widgets.keys turns the keys into clicks). A save keeps the page on
the saved caption, its references and the score change on screen, until the analyst moves on. page.py draws the
choices and finds the caption, form.py the caption with its correction and saves it, scores.py the score change.
"""

from __future__ import annotations

import html

import streamlit as st

from ... import ui
from ...correction import correctable_types, correction_words, queue, state_version
from ...accounts.access import LEADS
from ...correction.blind import project_blind, project_views_closed, set_project_blind, set_project_views_closed
from ...correction.plan import correction_plan
from ...correction.queues import caption_in_context, correction_layers
from ...errors import AnnotatorError, NotFound
from ...layers import ADJUDICATED, Layer, available_layers, parse_layer
from ...store.stamps import CaptionStamp
from ...taxonomy import taxonomy
from ..widgets.keys import keyboard_script
from .form import SAVED_KEY, Choice, body, status
from .scores import live_scores

esc = ui.md_escape


#: Key → action of the page's key handler (annotator/ui/widgets/keys.js); Enter saves, ← / → move,
#: Ctrl+Enter saves from the edit field, Esc leaves it.
KEYS = {"u": "click:untouched", "/": "note"}


_STYLE = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3rem; padding-bottom: 2rem; }
.st-key-correct_head h1 { font-size: 1.5rem; line-height: 1.3; padding: 0.2rem 0; }
.st-key-correct_body [data-testid="stVerticalBlock"] { gap: 0.45rem; }
.st-key-correct_body [data-testid="stText"] { font-size: 1.05rem; }
.st-key-correct_body [data-testid="stAlert"] [data-testid="stAlertContainer"] { padding: 0.45rem 0.8rem; }
.st-key-correct_refs { gap: 0.2rem; }
.st-key-correct_body .st-key-correct_refs [data-testid="stText"] { font-size: 0.95rem; }
.correct-keys { font-size: 0.8rem; color: #6b6f7b; }
.correct-keys kbd { font-family: monospace; font-size: 0.9em; border: 1px solid #bbb; border-radius: 3px;
  padding: 0 0.3em; background: #f6f6f6; color: #31333f; }
.correction-diff { font-size: 1.05rem; }
.correct-label { font-weight: 600; }
.correction-diff del { background: #fde2e1; color: #8a1c1c; }
.correction-diff ins { background: #dcf5e3; color: #145a2c; text-decoration: none; }
.span-mark { background: #fff1b8; border-bottom: 2px solid #d48806; padding: 0 2px; }
.span-fix { color: #145a2c; font-style: italic; }
[data-testid="stMain"] button p { white-space: nowrap; overflow: visible; text-overflow: clip; }
</style>"""


def _layer_title(label: str) -> str:
    layer = parse_layer(label)
    return "Adjudicated judgements" if layer == ADJUDICATED else layer.title


@st.cache_data(show_spinner=False, max_entries=64)
def _queue(url: str, project: str, system: str, etype: str, layer_label: str, user: str, version: tuple) -> list:
    # Cached until a judgement or correction of the project is saved (version moves).
    return queue(ui.get_store(), project, system, etype, layer_label, user=user)


@st.cache_data(show_spinner=False, max_entries=64)
def _plan(url: str, project: str, system: str, version: tuple):
    # The default correction plan of the system, cached until a judgement or correction is saved.
    try:
        return correction_plan(ui.get_store(), project, system=system)
    except AnnotatorError:
        return None  # several annotators and no adjudication: no default layer, no plan


def render(ctx: ui.PageContext) -> None:
    """Draw the correction page of the selected project for the user in ``ctx``."""
    st.html(_STYLE)
    project, progress_slot = _header(ctx)
    systems = ui.project_systems(ctx)
    if not systems:
        st.info(f"Project {esc(repr(project))} has no system captions to correct.")
        st.stop()
    choice, items, pos_slot = _choices(ctx, project, systems)
    if not items:
        if not choice.blind:
            live_scores(ctx.store, choice)
        st.info(f"No caption of {esc(repr(choice.system))} carries {taxonomy().get(choice.etype).name!r} "
                "in the chosen judgements.")
        st.stop()
    done = sum(1 for it in items if it.correction is not None)
    progress_slot.progress(done / len(items), text=f"{done} of {len(items)} captions decided")
    it = items[_position(items, choice.pos_key, pos_slot)]
    cctx, stamp = _caption_as_stored(ctx.store, project, choice, it)
    live_box, revealed = body(ctx, choice, items, it, cctx, stamp)
    st.html(keyboard_script(prefix="correct", caption_testid="correct-caption", keys=KEYS, types={}, labels=[],
                            state_name="__correctKeyState")
            + f'<span hidden data-testid="correct-caption">{it.caption_id} {html.escape(it.text)}</span>',
            unsafe_allow_javascript=True)
    if revealed:
        with live_box:
            live_scores(ctx.store, choice)


def _header(ctx: ui.PageContext):
    """One row: the page's name with the project, and a slot for the progress bar. Stops without a project."""
    title = ui.page_title(ctx.page_id)
    with st.container(key="correct_head"):
        head, bar = st.columns([3, 2], vertical_alignment="center")
        head.title(f"{title} · {esc(ctx.project)}" if ctx.project else title, anchor=False)  # the page's h1, set small
    project = ui.require_project(ctx, ui.page_texts()[ctx.page_id]["needs"])
    return project, bar.empty()


def _choices(ctx: ui.PageContext, project: str, systems: list[str]):
    """The row of choices (system, type, layer, and a slot for the caption), then the page's text, blind
    correction and the options, folded: (the choice, its queue, the caption slot)."""
    store = ctx.store
    c1, c2, c3, c4 = st.columns([2, 3, 3, 4])
    system = c1.selectbox("System", systems, key="correct_system")
    plan = _plan(store.url, project, system, state_version(store, project))
    planned = plan.types if plan is not None else ()
    # The plan (the most frequent types, Generally unrelated left out) comes first, its top type preselected.
    type_ids = list(planned) + [t.id for t in correctable_types() if t.id not in planned]
    etype = c2.selectbox("Error type", type_ids, key="correct_type",
                         format_func=lambda t: taxonomy().get(t).name + (" · planned" if t in planned else ""))
    choices = correction_layers(store, project, system)
    layer_options = [lay.label for lay in available_layers(choices["annotators"], adjudicated=choices["adjudicated"])]
    if not layer_options:
        st.info("Nobody has judged these captions yet, so there is nothing to correct. Annotate them first.")
        st.stop()
    own_layer = Layer.annotator(ctx.user.name).label
    default_layer = own_layer if own_layer in layer_options else layer_options[0]
    layer_label = c3.selectbox("Judgements from", layer_options, index=layer_options.index(default_layer),
                               key="correct_layer", format_func=_layer_title,
                               help="The queue holds every caption whose judgement in this layer carries the chosen type.")
    with st.expander("About this page, blind correction and options"):
        st.caption(ui.page_texts()[ctx.page_id]["about"])
        blind = _blind_settings(ctx, project)
        if plan is not None:
            st.caption(esc(plan.describe()))
        limit = _cap_option(etype)
    choice = Choice(project, system, etype, layer_label, blind, limit)
    try:
        items = _queue(store.url, project, system, etype, layer_label, ctx.user.name, state_version(store, project))
    except AnnotatorError as exc:
        st.error(esc(str(exc)))
        st.stop()
    return choice, items, c4


def _blind_settings(ctx: ui.PageContext, project: str) -> bool:
    """Whether blind correction is on; a lead switches it (and the other pages' views) here."""
    store = ctx.store
    blind = project_blind(store, project)
    if ctx.user.role not in LEADS:
        if blind:
            st.caption("Blind correction: the references and the score change show once the caption's correction "
                       "is saved.")
        return blind
    on = st.toggle("Blind correction", value=blind, key=f"correct_blind::{project}",
                   help="Hide the references and the score change until a correction is saved (the study corrected "
                        "without looking at the references). Applies to everyone correcting this project; each "
                        "correction records the mode it was made in.")
    if on != blind:
        set_project_blind(store, project, on, actor_role=ctx.user.role)
        blind = on
    if blind:
        closed = project_views_closed(store, project)
        close = st.toggle("Close references and scores to correctors on Annotate and Rescoring", value=closed,
                          key=f"correct_blind_views::{project}",
                          help="While blind correction is on, analysts see no references on the Annotate page "
                               "and no scores on the Rescoring page; leads and admins still do.")
        if close != closed:
            set_project_views_closed(store, project, close, actor_role=ctx.user.role)
    return blind


def _cap_option(etype: str) -> int | None:
    """The optional cap on changed words (off by default: the study limits what may change, not how many words);
    the colour and gender kinds of rule, which allow their own words only, have none."""
    words = correction_words()
    rule = words.rule_for(etype)
    if rule is not None and rule.kind in ("class", "pairs"):
        return None
    if not st.checkbox("Cap the number of changed words", value=words.max_changed_words is not None, key="correct_cap"):
        return None
    return int(st.number_input("Most words a correction may change", min_value=0, max_value=30,
                               value=words.max_changed_words if words.max_changed_words is not None else 3,
                               step=1, key="correct_limit"))


def _position(items, pos_key: str, where) -> int:
    """The queue position shown, chosen in ``where`` (the caption list); after a save, the saved caption's."""
    saved = st.session_state.pop(SAVED_KEY, None)
    if saved is not None and saved[0] == pos_key:
        # Stay on the caption just saved (found by its id, should the queue have been read afresh in another order).
        at = next((k for k, e in enumerate(items) if e.caption_id == saved[1]), None)
        if at is not None:
            st.session_state[pos_key] = at
    if st.session_state.get(pos_key, 0) >= len(items):
        st.session_state[pos_key] = 0
    where.selectbox("Caption", list(range(len(items))), key=pos_key,
                    format_func=lambda k: (f"{k + 1}/{len(items)} · line {items[k].line_no} · {items[k].item_key} · "
                                           f"{status(items[k])}"))
    return st.session_state[pos_key]


def _caption_as_stored(store, project: str, choice: Choice, it):
    """(the caption's context, the stamp of the caption as shown). A cached queue older than the captions (a
    restore, or a new import with the same number of saves) is read again, once, so the page shows and stamps
    the captions as they are; a caption no longer stored stops the page."""
    # The caption as shown: the save callbacks (run at the start of the next run, with this run's values) carry it.
    stamp = CaptionStamp.of(it.caption_id, project, choice.system, it.item_key, it.line_no, it.text)
    try:
        cctx = caption_in_context(store, it.caption_id)
    except NotFound:
        cctx = None
    requeued = st.session_state.pop("correct_requeued", False)
    if not requeued and (cctx is None or stamp != CaptionStamp.of(
            it.caption_id, project, cctx["system"], cctx["item_key"], cctx["line_no"], cctx["text"])):
        st.session_state["correct_requeued"] = True
        _queue.clear()
        st.rerun()
    if cctx is None:
        st.error(f"Caption {it.caption_id} is no longer in the store (restored or imported again). Reload the page.")
        st.stop()
    return cctx, stamp


