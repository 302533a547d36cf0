"""The Annotate screen's panel form: Task 1's choice, Task 2's grid of error types (with the detector hints), the
hidden spans field, the note, the last message and the action bar's buttons.

Choosing, ticking and writing stay in the browser (no server run per key); the form's buttons send the whole
judgement in one message (callbacks.py)."""

from __future__ import annotations

import html

import streamlit as st

from ...annotation import MAX_NOTE_LENGTH, STAGE_COARSE, Queue, Task, detector_hints
from ...errors import StoreUnavailable
from ...model import Label
from ...taxonomy import taxonomy
from .. import PageContext, md_escape
from ..widgets import spans as annotate_spans
from ..widgets.figure_html import short_name
from ..widgets.keys import panel_state_html
from .callbacks import on_draft, on_move, on_save, on_skip
from .html import LABEL_TEXT, type_chips_html, type_columns, unrelated_hint_html
from .state import (
    K_ERR, K_FORM, K_HINTS, K_HINTS_WANTED, K_LABEL, K_LOAD, K_MSG, K_NOTE, NB_HYPHEN, ticked_types, type_key,
)


def hints_for(q: Queue, task: Task, where) -> dict[str, tuple[str, ...]]:
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


def render_message() -> None:
    """The last message: a refusal as an error (announced at once: role "alert"), a save or skip as a
    status line in a polite live region, so a screen reader says it without moving the focus."""
    if st.session_state.get(K_ERR):
        st.error(md_escape(st.session_state[K_ERR]), icon=":material/error:")
    elif st.session_state.get(K_MSG):
        st.html('<div class="ann-msg" role="status" aria-live="polite" data-testid="ann-msg">'
                '<span aria-hidden="true">✓</span> ' + html.escape(st.session_state[K_MSG]) + "</div>")


def render_panel(ctx: PageContext, task: Task, hints: dict[str, tuple[str, ...]]) -> None:
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
            chips.html(type_chips_html(tax, ticked_types(), st.session_state.get(K_LOAD, 0)))
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
        render_message()
        b1, b2, b3, b5, b4 = st.columns([1, 1, 1, 1.1, 1.9])
        b1.form_submit_button("← Previous", key="ann_prev", on_click=on_move, args=(-1,), width="stretch")
        b2.form_submit_button("Skip `k`", key="ann_skip", on_click=on_skip, args=(ctx,), width="stretch")
        b3.form_submit_button("Next →", key="ann_next", on_click=on_move, args=(1,), width="stretch")
        b5.form_submit_button("Save draft", key="ann_draft", on_click=on_draft, width="stretch",
                              help="Keep the panel as it is in the database without saving a judgement: "
                                   "it comes back when you return to this caption, even after a "
                                   "reload. Save & next or Skip removes it.")
        b4.form_submit_button("Save & next `⏎`", key="ann_save", on_click=on_save, args=(ctx,),
                              type="primary", width="stretch")
