"""The Correction page's caption and its correction: what the analyst chose (Choice), the caption with its marked
words and the type's rule, the edit field with the word changes and the rule's verdict, the buttons and their keys,
the references once they may show, the history, and the saves behind the buttons."""

from __future__ import annotations

import html
from dataclasses import dataclass

import streamlit as st

from ... import ui
from ...correction import (
    caption_corrections, check_correction, correct_caption, correction_words, diff_html, leave_untouched,
    rule_description,
)
from ...correction.blind import references_shown, typed_blind
from ...correction.queues import item_reference_texts
from ...correction.span_rule import pieces, prefill
from ...errors import AnnotatorError
from ...taxonomy import taxonomy
from .suggestions import correction_fixes

esc = ui.md_escape



SPAN_RULE_TEXT = ("The annotators marked the words of this error (highlighted): change only those, and the articles, "
                  "pronouns and plural endings that agree with them.")


#: The keys as the page's key line lists them.
KEYS_HELP = (("⏎", "save"), ("Ctrl+⏎", "save from the field"), ("u", "leave untouched"),
             ("← / →", "previous / next caption"), ("/", "edit the corrected caption"), ("Esc", "leave the field"))


FLASH_KEY = "correct_flash"


#: (queue position key, caption id) of the caption just saved: the page stays on it.
SAVED_KEY = "correct_saved"


@dataclass(frozen=True)
class Choice:
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


def status(it) -> str:
    c = it.correction
    if c is None:
        return "open"
    return "left untouched" if c.corrected_text is None else "corrected"


def go(pos_key: str, size: int, delta: int) -> None:
    st.session_state[pos_key] = (st.session_state.get(pos_key, 0) + delta) % size


def body(ctx: ui.PageContext, choice: Choice, items, it, cctx, stamp):
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


def _caption_and_rule(it, choice: Choice) -> None:
    """The caption as generated (its marked words highlighted) and the rule of the chosen type."""
    st.markdown(f"**Generated caption** · line {it.line_no}")
    st.text(it.text)
    if it.spans:
        _show_spans(it.text, it.spans, choice.etype)
    rule = SPAN_RULE_TEXT if it.spans else rule_description(choice.etype, correction_words(), choice.limit)
    st.info(f"**{esc(taxonomy().get(choice.etype).name)}** · {rule}")


def _edit_field(it, choice: Choice) -> tuple[str, str]:
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


def _buttons(ctx, choice: Choice, size: int, it, stamp, revealed: bool, text_key: str, reason_key: str) -> None:
    """Previous, save, leave untouched and next, each with its key, and the line of keys."""
    b1, b2, b3, b4 = st.columns([2, 3, 3, 2])
    b1.button("Previous `←`", on_click=go, args=(choice.pos_key, size, -1), key="correct_prev", width="stretch")
    b2.button("Save correction `⏎`", type="primary", key="correct_save", width="stretch",
              on_click=_save, args=(ctx, choice, it, stamp, revealed, text_key, reason_key))
    b3.button("Leave untouched `u`", key="correct_untouched", width="stretch",
              on_click=_untouched, args=(ctx, choice, it, stamp, revealed, text_key),
              help="Records the decision that this caption cannot be fixed conservatively.")
    b4.button("Next `→`", on_click=go, args=(choice.pos_key, size, 1), key="correct_next", width="stretch")
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
        st.caption(f"This caption is {status(it)} (revision {it.correction.revision}).")


def _references(store, cctx, revealed: bool) -> None:
    if revealed:
        st.markdown("**Reference descriptions**")
        with st.container(key="correct_refs"):
            for ref in item_reference_texts(store, cctx["item_id"]):
                st.text(ref)
    else:
        st.caption("References and the score change are hidden until this caption's correction is saved "
                   "(blind correction).")


def _type_details(it, choice: Choice) -> None:
    info = taxonomy().get(choice.etype)
    others = [taxonomy().get(t).name for t in it.error_types if t != choice.etype]
    with st.expander(f"{info.name}: definition and example · also annotated: "
                     + (", ".join(others) if others else "nothing else")):
        st.text(info.definition)
        st.text(f"Example: “{info.example_caption}” — {info.example_note}")
        st.text("Also annotated: " + (", ".join(others) if others else "nothing else"))


def _history(store, it, choice: Choice) -> None:
    hist = caption_corrections(store, it.caption_id, choice.etype)
    if not hist:
        return
    with st.expander(f"History of this caption's {taxonomy().get(choice.etype).name.lower()} corrections ({len(hist)})"):
        for h in hist:
            when = h.created_at.strftime("%Y-%m-%d %H:%M") if h.created_at else ""
            st.text(f"rev {h.revision} · {h.user} · {when}: " + ("left untouched" if h.untouched else h.corrected_text)
                    + (f"  [override: {h.override_reason}]" if h.override_reason else ""))


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


def _saved(choice: Choice, it, what: str) -> None:
    """After a save: say what was stored, and stay on the caption (its references and score change show)."""
    st.session_state[FLASH_KEY] = ("ok", f"Line {it.line_no}: {what}", it.caption_id)
    st.session_state[SAVED_KEY] = (choice.pos_key, it.caption_id)


@ui.signed_in
def _save(ctx, choice: Choice, it, stamp, revealed: bool, text_key: str, reason_key: str) -> None:
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
def _untouched(ctx, choice: Choice, it, stamp, revealed: bool, text_key: str) -> None:
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
