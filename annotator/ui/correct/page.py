"""The correction page: fix one error type at a time, conservatively, and watch the scores move.

Laid out for a laptop's window: a one-line header, the four choices in one row (the page's text, blind
correction and the options folded under them), the picture beside the caption and its edit field, and the
buttons under the field with their keys (annotator.ui.keys turns the keys into clicks). A save keeps the page on
the saved caption, its references and the score change on screen, until the analyst moves on.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import streamlit as st

from ... import rescoring, ui
from ...correction import (
    caption_corrections, check_correction, correct_caption, correctable_types, correction_words, diff_html,
    leave_untouched, queue, rule_description, state_version,
)
from ...accounts.access import LEADS
from ...correction.blind import (
    project_blind, project_views_closed, references_shown, set_project_blind, set_project_views_closed, typed_blind,
)
from ...correction.plan import correction_plan
from ...correction.queues import caption_in_context, correction_layers, item_reference_texts
from ...correction.span_rule import pieces, prefill
from ...errors import AnnotatorError, NotFound
from ...layers import ADJUDICATED, Layer, available_layers, parse_layer
from ...metric_settings import project_tokenize, tokenize_header
from ...metrics import REGISTRY
from ...store.stamps import CaptionStamp
from ...taxonomy import taxonomy
from ..widgets.deltas import metric_delta
from .suggestions import correction_fixes
from ..keys import keyboard_script

esc = ui.md_escape


SPAN_RULE_TEXT = ("The annotators marked the words of this error (highlighted): change only those, and the articles, "
                  "pronouns and plural endings that agree with them.")

#: Key → action of the page's key handler (annotator/ui/static/judge_keys.js); Enter saves, ← / → move,
#: Ctrl+Enter saves from the edit field, Esc leaves it.
KEYS = {"u": "click:untouched", "/": "note"}
#: The keys as the page's key line lists them.
KEYS_HELP = (("⏎", "save"), ("Ctrl+⏎", "save from the field"), ("u", "leave untouched"),
             ("← / →", "previous / next caption"), ("/", "edit the corrected caption"), ("Esc", "leave the field"))

FLASH_KEY = "correct_flash"
#: (queue position key, caption id) of the caption just saved: the page stays on it.
SAVED_KEY = "correct_saved"

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


@dataclass(frozen=True)
class _Choice:
    """What the analyst chose to correct: the project's system, the error type, the judgement layer whose
    tags fill the queue, the optional cap on changed words and whether blind correction is on."""

    project: str
    system: str
    etype: str
    layer_label: str
    blind: bool
    limit: int | None = None

    @property
    def pos_key(self) -> str:
        return f"correct_pos::{self.project}::{self.system}::{self.etype}::{self.layer_label}"


def _show_spans(text: str, spans, etype: str) -> None:
    """The caption with the words marked with ``etype`` highlighted, each suggested fix after an arrow (as text)."""
    group = taxonomy().get(etype).group
    parts = []
    for words, span in pieces(text, spans):
        if span is None:
            parts.append(html.escape(words))
            continue
        fix = f" <span class='span-fix'>→ {html.escape(span.fix)}</span>" if span.fix is not None else ""
        parts.append(f"<mark class='span-mark span-{html.escape(group.lower())}'>{html.escape(words)}</mark>{fix}")
    st.html(f"<div class='correction-spans' style='font-size:1.05rem'>{' '.join(parts)}</div>")


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


@st.cache_resource(show_spinner="Scoring the system's captions…", max_entries=16)
def _live(url: str, project: str, system: str, etype: str, layer_label: str, metrics: tuple, tokenize: str):
    """One incremental scorer per (project, system, type, layer, metric tokenisation), shared by every session."""
    return rescoring.LiveDelta(ui.get_store(), project, system, etype, layer=layer_label, metrics=metrics,
                               tokenize=tokenize)


# --------------------------------------------------------------------------- the page

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
            _live_scores(ctx.store, choice)
        st.info(f"No caption of {esc(repr(choice.system))} carries {taxonomy().get(choice.etype).name!r} "
                "in the chosen judgements.")
        st.stop()
    done = sum(1 for it in items if it.correction is not None)
    progress_slot.progress(done / len(items), text=f"{done} of {len(items)} captions decided")
    it = items[_position(items, choice.pos_key, pos_slot)]
    cctx, stamp = _caption_as_stored(ctx.store, project, choice, it)
    live_box, revealed = _body(ctx, choice, items, it, cctx, stamp)
    st.html(keyboard_script(prefix="correct", caption_testid="correct-caption", keys=KEYS, types={}, labels=[],
                            state_name="__correctKeyState")
            + f'<span hidden data-testid="correct-caption">{it.caption_id} {html.escape(it.text)}</span>',
            unsafe_allow_javascript=True)
    if revealed:
        with live_box:
            _live_scores(ctx.store, choice)


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
    choice = _Choice(project, system, etype, layer_label, blind, limit)
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


# --------------------------------------------------------------------------- which caption

def _status(it) -> str:
    c = it.correction
    if c is None:
        return "open"
    return "left untouched" if c.corrected_text is None else "corrected"


def _go(pos_key: str, size: int, delta: int) -> None:
    st.session_state[pos_key] = (st.session_state.get(pos_key, 0) + delta) % size


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
                                           f"{_status(items[k])}"))
    return st.session_state[pos_key]


def _caption_as_stored(store, project: str, choice: _Choice, it):
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


# --------------------------------------------------------------------------- the caption and its correction

def _body(ctx: ui.PageContext, choice: _Choice, items, it, cctx, stamp):
    """The picture (and below it a slot for the score change) beside the caption, its edit field, the buttons,
    what the last save said, and the references once they may show: (the score slot, references shown)."""
    from ..widgets.figure import caption_figure
    # Blind mode: references (and the score change) only once this caption's correction is saved.
    revealed = references_shown(choice.blind, it.correction is not None)
    with st.container(key="correct_body"):
        left, right = st.columns([2, 3])
        with left:
            # The boxes' labels as readable text over the picture, as on Annotate (the references are listed
            # beside it, once they may show).
            caption_figure(ctx.store, int(it.caption_id), references=False)
            live_box = st.container()
        with right:
            _caption_and_rule(it, choice)
            text_key, reason_key = _edit_field(it, choice)
            _buttons(ctx, choice, len(items), it, stamp, revealed, text_key, reason_key)
            _last_save(it)
            _references(ctx.store, cctx, revealed)
            correction_fixes(ctx.store, choice.project, it.caption_id, choice.etype, revealed)
            _type_details(it, choice)
            _history(ctx.store, it, choice)
    return live_box, revealed


def _caption_and_rule(it, choice: _Choice) -> None:
    """The caption as generated (its marked words highlighted) and the rule of the chosen type."""
    st.markdown(f"**Generated caption** · line {it.line_no}")
    st.text(it.text)
    if it.spans:
        _show_spans(it.text, it.spans, choice.etype)
    rule = SPAN_RULE_TEXT if it.spans else rule_description(choice.etype, correction_words(), choice.limit)
    st.info(f"**{esc(taxonomy().get(choice.etype).name)}** · {rule}")


def _edit_field(it, choice: _Choice) -> tuple[str, str]:
    """The corrected caption's field, the word changes and the rule's verdict (with the override reason's field
    when the edit breaks the rule): (the field's key, the reason's key)."""
    text_key = f"correct_text::{it.caption_id}::{choice.etype}"
    reason_key = f"correct_reason::{it.caption_id}::{choice.etype}"
    if text_key not in st.session_state:
        existing = it.correction
        # A new correction starts from the suggested fixes of the marked words (the caption itself without any).
        st.session_state[text_key] = (existing.corrected_text if existing and existing.corrected_text is not None
                                      else prefill(it.text, it.spans))
    with st.container(key="correct_note"):
        st.text_area("Corrected caption", key=text_key, height=80,
                     help="Change only the words of this error type. Case is ignored when comparing; the text is "
                          "saved as written. Ctrl+Enter saves, Esc leaves the field.")
    edited = st.session_state[text_key]
    changed = edited.strip() != it.text
    st.html("<div class='correction-diff'><span class='correct-label'>Word changes:</span> "
            + (diff_html(it.text, edited) if changed else "none yet") + "</div>")
    if changed and edited.strip():
        report = check_correction(choice.etype, it.text, edited, max_changed_words=choice.limit, spans=it.spans)
        if report.ok:
            st.caption(f"Allowed ({report.changed_words} word{'s' if report.changed_words != 1 else ''} changed).")
        else:
            st.warning("This correction breaks the conservative rule:\n\n"
                       + "\n".join(f"- {esc(v)}" for v in report.violations))
            st.text_input("Reason for overriding the rule (kept with the correction and shown in exports)",
                          key=reason_key)
    return text_key, reason_key


def _buttons(ctx, choice: _Choice, size: int, it, stamp, revealed: bool, text_key: str, reason_key: str) -> None:
    """Previous, save, leave untouched and next, each with its key, and the line of keys."""
    b1, b2, b3, b4 = st.columns([2, 3, 3, 2])
    b1.button("Previous `←`", on_click=_go, args=(choice.pos_key, size, -1), key="correct_prev", width="stretch")
    b2.button("Save correction `⏎`", type="primary", key="correct_save", width="stretch",
              on_click=_save, args=(ctx, choice, it, stamp, revealed, text_key, reason_key))
    b3.button("Leave untouched `u`", key="correct_untouched", width="stretch",
              on_click=_untouched, args=(ctx, choice, it, stamp, revealed, text_key),
              help="Records the decision that this caption cannot be fixed conservatively.")
    b4.button("Next `→`", on_click=_go, args=(choice.pos_key, size, 1), key="correct_next", width="stretch")
    st.html("<div class='correct-keys' data-testid='correct-keys'>Keys: "
            + " · ".join(f"<kbd>{html.escape(k)}</kbd> {html.escape(what)}" for k, what in KEYS_HELP) + "</div>")


def _last_save(it) -> None:
    """What the last save of this caption said (until another caption is shown), else its standing decision."""
    flash = st.session_state.get(FLASH_KEY)
    if flash and flash[2] == it.caption_id:
        (st.success if flash[0] == "ok" else st.error)(esc(flash[1]))
        return
    st.session_state.pop(FLASH_KEY, None)
    if it.correction is not None:
        st.caption(f"This caption is {_status(it)} (revision {it.correction.revision}).")


def _references(store, cctx, revealed: bool) -> None:
    if revealed:
        st.markdown("**Reference descriptions**")
        with st.container(key="correct_refs"):
            for ref in item_reference_texts(store, cctx["item_id"]):
                st.text(ref)
    else:
        st.caption("References and the score change are hidden until this caption's correction is saved "
                   "(blind correction).")


def _type_details(it, choice: _Choice) -> None:
    info = taxonomy().get(choice.etype)
    others = [taxonomy().get(t).name for t in it.error_types if t != choice.etype]
    with st.expander(f"{info.name}: definition and example · also annotated: "
                     + (", ".join(others) if others else "nothing else")):
        st.text(info.definition)
        st.text(f"Example: “{info.example_caption}” — {info.example_note}")
        st.text("Also annotated: " + (", ".join(others) if others else "nothing else"))


def _history(store, it, choice: _Choice) -> None:
    hist = caption_corrections(store, it.caption_id, choice.etype)
    if not hist:
        return
    with st.expander(f"History of this caption's {taxonomy().get(choice.etype).name.lower()} corrections ({len(hist)})"):
        for h in hist:
            when = h.created_at.strftime("%Y-%m-%d %H:%M") if h.created_at else ""
            st.text(f"rev {h.revision} · {h.user} · {when}: " + ("left untouched" if h.untouched else h.corrected_text)
                    + (f"  [override: {h.override_reason}]" if h.override_reason else ""))


# --------------------------------------------------------------------------- saving

def _already_stored(store, it, etype: str, user: str, text: str | None, reason: str | None):
    """The user's current revision of the caption's correction when it already holds this decision (read
    afresh: a save by key and a click may both come before the page shows the first), else None. A second
    press of save then stores no second, identical revision."""
    mine = [h for h in caption_corrections(store, it.caption_id, etype) if h.user == user]
    if not mine:
        return None
    c = mine[-1]
    if text is not None:
        text = text.strip()
        text = None if text == it.text else text
    same = c.corrected_text == text and (text is None or (c.override_reason or None) == (reason or None))
    return c if same else None


def _saved(choice: _Choice, it, what: str) -> None:
    """After a save: say what was stored, and stay on the caption (its references and score change show)."""
    st.session_state[FLASH_KEY] = ("ok", f"Line {it.line_no}: {what}", it.caption_id)
    st.session_state[SAVED_KEY] = (choice.pos_key, it.caption_id)


@ui.signed_in
def _save(ctx, choice: _Choice, it, stamp, revealed: bool, text_key: str, reason_key: str) -> None:
    text, reason = st.session_state.get(text_key, ""), st.session_state.get(reason_key)
    c = _already_stored(ctx.store, it, choice.etype, ctx.user.name, text, reason) if text.strip() else None
    if c is not None:
        _saved(choice, it, ("left untouched" if c.corrected_text is None else "correction saved")
               + f" (revision {c.revision}); nothing changed since")
        return
    try:
        saved = correct_caption(ctx.store, it.caption_id, choice.etype, ctx.user.name, text,
                                override_reason=reason, max_changed_words=choice.limit, create_role=ctx.user.role,
                                stamp=stamp, blind=typed_blind(choice.blind, revealed), spans=it.spans)
    except AnnotatorError as exc:
        st.session_state[FLASH_KEY] = ("error", f"Not saved: {exc}", it.caption_id)
        return
    _saved(choice, it, ("no change, recorded as left untouched" if saved.corrected_text is None
                        else f"correction saved (revision {saved.revision})")
           + (" — rule overridden" if saved.override_reason else ""))


@ui.signed_in
def _untouched(ctx, choice: _Choice, it, stamp, revealed: bool, text_key: str) -> None:
    c = _already_stored(ctx.store, it, choice.etype, ctx.user.name, None, None)
    if c is not None:
        _saved(choice, it, f"left untouched (revision {c.revision}); nothing changed since")
        return
    try:
        saved = leave_untouched(ctx.store, it.caption_id, choice.etype, ctx.user.name, create_role=ctx.user.role,
                                stamp=stamp, blind=typed_blind(choice.blind, revealed))
    except AnnotatorError as exc:
        st.session_state[FLASH_KEY] = ("error", f"Not saved: {exc}", it.caption_id)
        return
    st.session_state.pop(text_key, None)
    _saved(choice, it, f"left untouched (revision {saved.revision})")


# --------------------------------------------------------------------------- the score change

def _live_scores(store, choice: _Choice) -> None:
    """The system's scores with this type's corrections applied, and their change against the captions as
    generated. Metrics that need a warm-up (METEOR's Java processes) start in the background; until they are
    up, the other metrics are shown."""
    info = taxonomy().get(choice.etype)
    warming = [k for k, state in REGISTRY.warm_up(wait=False).items() if state == "warming"]
    metrics = tuple(m for m in REGISTRY.headline_keys(REGISTRY.defaults()) if REGISTRY.metric_of_score(m) not in warming)
    live, note = None, None
    try:
        live = _live(store.url, choice.project, choice.system, choice.etype, choice.layer_label, metrics,
                     project_tokenize(store, choice.project))
        # Picks up saves (this session's and others') by rescoring only the changed captions.
        live.sync(store)
    except AnnotatorError as exc:
        note = str(exc)
    st.markdown(f"**Score change from {info.name.lower()} corrections**")
    if live is None:
        st.info(f"Scores are not available: {esc(note)}")
        return
    d = live.delta()
    shown = [(REGISTRY.score_labels().get(m, m), f"{100 * d.scores[m]:.2f}", metric_delta(100 * d.delta[m]))
             for m in d.metrics] + [("Captions changed", d.changed, {})]
    for row in range(0, len(shown), 3):
        for col, (label, value, delta) in zip(st.columns(3), shown[row:row + 3]):
            col.metric(label, value, **delta, help="×100; the change is against the captions as generated"
                       if delta else None)
    st.caption("Metric input: " + tokenize_header(d.tokenize))
    if d.unavailable:
        st.caption(esc(d.unavailable))
    elif warming:
        names = " and ".join(REGISTRY.label(k) for k in warming)
        st.caption(f"{names} {'is' if len(warming) == 1 else 'are'} starting (the first start takes a while). "
                   "The figures follow on a later update.")
