"""The Adjudication page's decision: its widgets' keys (``adj_*``, which the keyboard script finds), the state they
start from (annotator.adjudication.suggested_decision), the callbacks that keep label, types and spans consistent and
save, and the form with its keys' script."""

from __future__ import annotations

import time

import streamlit as st

from ... import ui
from ...adjudication import UNCHECKED, adjudicate, suggested_decision, type_voters, types_pending
from ...annotation import PAGE_KEYS, keyboard_map
from ...errors import AnnotatorError, CaptionChanged, InputError, JudgementChanged
from ...limits import measured_seconds
from ...model import Label
from ...taxonomy import taxonomy
from ..widgets import spans as annotate_spans
from ..widgets.keys import keyboard_script, panel_state_html

esc = ui.md_escape

K_CAPTION = "adj_caption"
K_LABEL = "adj_label"
K_NOTE = "adj_note"
K_LOADED = "adj_loaded"      # caption id whose decision the widgets hold
K_LOADED_FOR = "adj_loaded_for"  # the annotators whose votes that pre-fill was made from
K_SUGGESTED = "adj_suggested"  # the pre-filled types of that caption
K_IDS = "adj_ids"            # the filtered queue's caption ids, as last drawn
K_FILTERS = "adj_filters"    # the filters that list was drawn with
K_SHOWN = "adj_shown_at"
K_STAMP = "adj_stamp"        # that caption as shown (a save refuses when the id holds another caption by now)
K_BASE = "adj_base"          # the decision that counted when the form was filled (None: none), a save's base
K_NEWER = "adj_newer"        # (caption id, the decision saved since) after a refused save
K_MSG = "adj_msg"
K_ERR = "adj_err"
K_SPANS = "adj_spans"        # the decision's spans as JSON: the hidden field widgets/spans.js writes
K_OPEN = "adj_open_caption"  # a caption another page asks to open here (the Judges page's disagreements)
K_OPENED = "adj_opened"      # that caption, kept at the head of the list while the page stays open
LABEL_TEXT = {Label.ACCURATE.value: "Accurate", Label.INACCURATE.value: "Inaccurate"}


def type_key(type_id: str) -> str:
    """Widget key of an error-type checkbox of the decision."""
    return f"adj_type_{type_id}"


def load_decision(case, annotators) -> None:
    """Put the caption's starting decision (annotator.adjudication.suggested_decision) into the widgets."""
    start = suggested_decision(case, annotators)
    st.session_state[K_LABEL] = start.label.value if start.label is not None else None
    for t in taxonomy().types:
        st.session_state[type_key(t.id)] = t.id in start.error_types
    st.session_state[K_NOTE] = start.note
    st.session_state[K_SPANS] = annotate_spans.field_value(start.spans)
    st.session_state[K_SUGGESTED] = tuple(start.error_types) or tuple(
        t for t in taxonomy().ids if t in type_voters(case, annotators))
    st.session_state[K_LOADED] = case.caption_id
    st.session_state[K_LOADED_FOR] = tuple(annotators)
    st.session_state[K_STAMP] = case.stamp
    st.session_state[K_BASE] = case.adjudication
    st.session_state.pop(K_NEWER, None)
    st.session_state[K_SHOWN] = time.monotonic()


def _ticked() -> list[str]:
    return [t.id for t in taxonomy().types if st.session_state.get(type_key(t.id))]


def decision_spans() -> tuple:
    """The spans in the field (InputError when it does not hold a list of spans)."""
    return annotate_spans.read_field(st.session_state.get(K_SPANS))


def _prune_spans() -> None:
    """Drop the decision's spans of the types it no longer ticks (every span when it says Accurate), as
    unticking a type on Annotate drops its spans."""
    try:
        spans = decision_spans()
    except InputError:
        return  # the save names what is wrong with the field
    ticked = set(_ticked()) if st.session_state.get(K_LABEL) != Label.ACCURATE.value else set()
    kept = [s for s in spans if s.type in ticked]
    if len(kept) != len(spans):
        st.session_state[K_SPANS] = annotate_spans.field_value(kept)


def _on_label() -> None:
    label = st.session_state.get(K_LABEL)
    if label == Label.ACCURATE.value:
        # An accurate caption has no error types: untick them so what is shown is what is saved.
        for t in taxonomy().types:
            st.session_state[type_key(t.id)] = False
    elif label == Label.INACCURATE.value and not _ticked():
        # Back to inaccurate: the annotators' types again, to keep or drop.
        for t in st.session_state.get(K_SUGGESTED, ()):
            st.session_state[type_key(t)] = True
    _prune_spans()
    st.session_state[K_ERR] = None


def _on_type(type_id: str) -> None:
    # Ticking an error type means the caption is inaccurate.
    if st.session_state.get(type_key(type_id)):
        st.session_state[K_LABEL] = Label.INACCURATE.value
    _prune_spans()
    st.session_state[K_ERR] = None


def _go_to(caption_id) -> None:
    st.session_state[K_CAPTION] = caption_id
    st.session_state.pop(K_LOADED, None)
    st.session_state[K_ERR] = None


def on_move(step: int) -> None:
    ids = st.session_state.get(K_IDS) or []
    cid = st.session_state.get(K_CAPTION)
    if cid in ids:
        pos = ids.index(cid) + step
        if 0 <= pos < len(ids):
            _go_to(ids[pos])
            st.session_state[K_MSG] = None


@ui.signed_in
def _on_save(ctx: ui.PageContext) -> None:
    cid = st.session_state.get(K_LOADED)
    if cid is None:
        return
    label = st.session_state.get(K_LABEL)
    types = _ticked() if label == Label.INACCURATE.value else []
    now = time.monotonic()
    seconds = measured_seconds(st.session_state.get(K_SHOWN, now), now)
    try:
        # The lead's spans as drawn; the core checks them as it checks an annotator's (annotator.spans).
        spans = decision_spans()
        revision = adjudicate(ctx.store, int(cid), ctx.user.name, ctx.user.role, label, types,
                              note=st.session_state.get(K_NOTE) or "", seconds=seconds,
                              create_user=ctx.user.local_mode, stamp=st.session_state.get(K_STAMP),
                              base=st.session_state.get(K_BASE, UNCHECKED), spans=spans)
    except JudgementChanged as exc:
        # Another lead (or another tab) decided since the form was filled: keep the form, show that decision.
        st.session_state[K_ERR] = "Not saved: another decision was saved for this caption since it was shown (see above)."
        st.session_state[K_NEWER] = (int(cid), exc.current)
        return
    except AnnotatorError as exc:
        st.session_state[K_ERR] = ui.refusal_text(exc)  # worded as on Annotate
        if isinstance(exc, CaptionChanged):
            st.session_state.pop(K_LOADED, None)  # show the caption the id holds now, from its own start
        return
    st.session_state[K_MSG] = f"Caption {cid} adjudicated as {label} (revision {revision})."
    ids = st.session_state.get(K_IDS) or []
    later = ids[ids.index(cid) + 1:] if cid in ids else []
    _go_to(later[0] if later else cid)


def on_load_newer(_button: bool = True) -> None:
    cid = st.session_state.get(K_LOADED)
    if cid is not None:
        _go_to(cid)  # the form is filled again from the decision that counts now
        st.session_state[K_MSG] = "Loaded the newer decision."


def on_keep_mine(_button: bool = False) -> None:
    newer = st.session_state.pop(K_NEWER, None)
    if newer is not None:
        st.session_state[K_BASE] = newer[1]  # Decide now stores the form over that decision
        st.session_state[K_ERR] = None
        st.session_state[K_MSG] = "Your decision is kept: Decide & next stores it over the newer one."


def keys_script() -> str:
    tax = taxonomy()
    keys = {k: a for k, a in keyboard_map(tax).items() if k not in PAGE_KEYS}
    # A type's key sets it (a pre-filled type pressed to confirm it stays ticked); a second press clears it.
    return keyboard_script(prefix="adj", caption_testid="adj-caption", keys=keys,
                           labels=[Label.ACCURATE.value, Label.INACCURATE.value],
                           types={t.id: type_key(t.id) for t in tax.types}, state_name="__adjudicateKeyState",
                           type_keys_set=True)


def decision_form(ctx: ui.PageContext, case, chosen, pos: int, n_ids: int) -> None:
    """The decision: label, error types (who ticked each), note, the last message and the buttons."""
    from ..widgets.figure_html import short_name
    tax = taxonomy()
    waiting = types_pending(case.annotations, chosen)
    voters = type_voters(case, chosen)
    st.radio("Decision", [Label.ACCURATE.value, Label.INACCURATE.value], index=None, key=K_LABEL,
             horizontal=True, on_change=_on_label, label_visibility="collapsed",
             format_func=lambda v: f"{LABEL_TEXT[v]} `{tax.accurate_key if v == 'accurate' else tax.inaccurate_key}`")
    # The groups in two columns, their boxes close together: all 20 types and Decide & next on the first screen.
    halves = [tax.groups[:(len(tax.groups) + 1) // 2], tax.groups[(len(tax.groups) + 1) // 2:]]
    with st.container(key="adj_types"):
        for col, groups in zip(st.columns(2), halves):
            with col:
                for group in groups:
                    st.markdown(f"**{group}**")
                    for t in tax.by_group(group):
                        who = voters.get(t.id, ())
                        st.checkbox(f"{short_name(t.name, group)} `{t.key}`"
                                    + (f" · {esc(', '.join(who))}" if who else ""),
                                    key=type_key(t.id), help=f"**{t.name}**: {t.definition}",
                                    on_change=_on_type, args=(t.id,))
    if st.session_state.get(K_ERR):
        st.error(esc(st.session_state[K_ERR]), icon=":material/error:")
    elif st.session_state.get(K_MSG):
        st.success(esc(st.session_state[K_MSG]))
    if waiting:
        st.warning(f"Waiting for {esc(' and '.join(waiting))}'s error types (second pass): no decision on this "
                   "caption until they are in.")
    n1, n2 = st.columns([3, 2], vertical_alignment="bottom")
    n1.text_input("Note (required for Other)", key=K_NOTE, help="Optional otherwise. `Esc` leaves the field.")
    n2.button("Decide & next ⏎", key="adj_save", on_click=_on_save, args=(ctx,), type="primary", width="stretch",
              disabled=bool(waiting))
    st.html(panel_state_html("adj", K_LABEL, [type_key(t.id) for t in tax.types]))
    st.caption("Ticking an error type decides inaccurate; after a type, who ticked it. "
               "Keys: `y` / `n` accurate / inaccurate · a type's key sets it, a second press clears it · "
               "`Enter` decide & next · `←` `→` move · with words selected (`,` `.` `<` `>` or the mouse), a type's "
               "key marks them · `/` on a span: its fix")
