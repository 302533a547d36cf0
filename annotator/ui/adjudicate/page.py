"""The adjudication page (leads): each disagreement side by side, the final judgement set and saved.

The decision widgets have fixed keys (``adj_*``) so the keyboard script (annotator.ui.keys) finds
them: ``y``/``n`` label, the taxonomy's keys tick types, Enter decides and moves on, ←/→ move. The
decision's error spans are drawn over the caption and redrawn with Annotate's words, keys and colours
(annotator.ui.annotate_spans, its script on the ``adj_*`` widgets).
"""

from __future__ import annotations

import html
import json
import time
from pathlib import Path

import pandas as pd
import streamlit as st

from ... import ui
from ...adjudication import (
    QUEUE_DISAGREEMENTS, QUEUE_STATUSES, UNCHECKED, adjudicate, adjudication_queue, caption_case, filter_queue,
    span_voters, suggested_decision, type_voters, types_pending, who_said_what,
)
from ...annotation import PAGE_KEYS, keyboard_map
from ...errors import AnnotatorError, CaptionChanged, InputError, JudgementChanged
from ...limits import measured_seconds
from ...model import Label
from ...store.analysis_queries import annotators_in
from ...store.caption_queries import caption_details
from ...taxonomy import taxonomy
from .. import annotate_spans
from ..keys import FRAMES_JS, keyboard_script, panel_state_html
from ..widgets.team_choice import team_picker

esc = ui.md_escape
ALL_SYSTEMS = "All systems"
PAGE_SIZE = 200  # captions offered in the jump list at once (the block around the current one)

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
K_SPANS = "adj_spans"        # the decision's spans as JSON: the hidden field annotate_spans.js writes
K_OPEN = "adj_open_caption"  # a caption another page asks to open here (the Judges page's disagreements)
K_OPENED = "adj_opened"      # that caption, kept at the head of the list while the page stays open
LABEL_TEXT = {Label.ACCURATE.value: "Accurate", Label.INACCURATE.value: "Inaccurate"}

_STYLE = """<style>
.adj-caption { font-size: 1.3rem; line-height: 1.45; padding: 0.5rem 0.8rem; border-left: 5px solid #8e44ad;
  background: #f6f2fa; border-radius: 4px; overflow-wrap: break-word; }
.adj-caption[data-long] { font-size: 1rem; max-height: calc(100vh - 300px); min-height: 12rem; overflow-y: auto; }
.st-key-adj_types [data-testid="stVerticalBlock"] { gap: 0.15rem; }

.adj-caption .ann-w { position: relative; }
.adj-marks { position: absolute; left: 0; right: 0; top: calc(100% + 1px); display: flex; flex-direction: column;
  gap: 1px; pointer-events: none; }
.adj-marks i { display: block; height: 4px; border-radius: 1px; }
.adj-marks i.adj-mark { pointer-events: auto; }
table.adj-spans td, table.adj-spans th { vertical-align: top; padding: 0.2rem 0.4rem; font-size: 0.9rem; }
table.adj-votes { border-collapse: collapse; width: 100%; font-size: 0.92rem; }
table.adj-votes th, table.adj-votes td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.45rem; text-align: left;
  vertical-align: top; word-break: normal; overflow-wrap: break-word; hyphens: none; }
table.adj-votes th { white-space: nowrap; }
div[class*="st-key-adj_type_"] label p { font-size: 0.9rem; white-space: normal; word-break: normal;
  overflow-wrap: break-word; overflow: visible; text-overflow: clip; }
div[class*="st-key-adj_type_"] label div { overflow: visible; }
</style>"""


def type_key(type_id: str) -> str:
    """Widget key of an error-type checkbox of the decision."""
    return f"adj_type_{type_id}"


@st.cache_resource(show_spinner="Finding disagreements…", max_entries=8)
def _queue(url: str, project: str, version: tuple, annotators: tuple, system: str | None, _frame):
    return adjudication_queue(_frame, annotators=list(annotators), system=system, include_types=True)


# --------------------------------------------------------------------------- decision state

def _load(case, annotators) -> None:
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


def _decision_spans() -> tuple:
    """The spans in the field (InputError when it does not hold a list of spans)."""
    return annotate_spans.read_field(st.session_state.get(K_SPANS))


def _prune_spans() -> None:
    """Drop the decision's spans of the types it no longer ticks (every span when it says Accurate), as
    unticking a type on Annotate drops its spans."""
    try:
        spans = _decision_spans()
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


def _on_move(step: int) -> None:
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
        spans = _decision_spans()
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


def _on_load_newer(_button: bool = True) -> None:
    cid = st.session_state.get(K_LOADED)
    if cid is not None:
        _go_to(cid)  # the form is filled again from the decision that counts now
        st.session_state[K_MSG] = "Loaded the newer decision."


def _on_keep_mine(_button: bool = False) -> None:
    newer = st.session_state.pop(K_NEWER, None)
    if newer is not None:
        st.session_state[K_BASE] = newer[1]  # Decide now stores the form over that decision
        st.session_state[K_ERR] = None
        st.session_state[K_MSG] = "Your decision is kept: Decide & next stores it over the newer one."


# --------------------------------------------------------------------------- drawing

def votes_html(table: pd.DataFrame) -> str:
    """The annotators' judgements side by side as an HTML table (every cell escaped; words wrap whole)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>"
                   for r in table.itertuples(index=False))
    return f'<table class="adj-votes" data-testid="adj-votes"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def queue_table(queue: pd.DataFrame, annotators) -> pd.DataFrame:
    """The queue as shown: text cells, an empty cell where an annotator did not judge or nothing is decided."""
    def text(col) -> list[str]:
        return ["" if pd.isna(v) else str(v) for v in queue[col]]

    out = {"caption": queue["caption_id"].astype(int).tolist(), "system": text("system"),
           "disagreement": text("disagreement")}
    for a in annotators:
        out[f"{a}: label"] = text(f"label_{a}")
        out[f"{a}: types"] = text(f"types_{a}")
    out["decided"] = ["yes" if d else "no" for d in queue["adjudicated"]]
    out["decision"] = text("adjudicated_label")
    out["decision types"] = text("adjudicated_types")
    out["decided by"] = text("adjudicated_by")
    return pd.DataFrame(out)


#: The group colours of the annotators' marks under the words: the spans' tints (annotator.taxonomy.GROUP_COLOURS)
#: made strong enough to read as thin bars.
MARK_COLOURS = ("#d6336c", "#1c6dd0", "#2f9e44", "#c98a00", "#7048e8", "#0c8599")
LONG_CAPTION = 400  # characters: a longer caption scrolls in a pane of its own
_MARKS_JS = Path(__file__).with_name("marks.js").read_text(encoding="utf-8")


def marks_json(rows: list[tuple[str, tuple]], tax=None) -> str:
    """The annotators' marks under the caption's words as the page's script (adjudicate/marks.js) reads
    them: ``{"rows": [name, ...], "marks": [[row, start, end, colour, title], ...]}``, one row per annotator of
    ``rows`` ((name, spans) each), each span in the colour of its type's group with the type and fix as its
    title."""
    tax = tax or taxonomy()
    group_of = {t.id: k for k, g in enumerate(tax.groups) for t in tax.by_group(g)}
    marks = [[r, span.start, span.end, MARK_COLOURS[group_of[span.type] % len(MARK_COLOURS)],
              f"{who}: {tax.get(span.type).name}" + (f" → {span.fix}" if span.fix is not None else "")]
             for r, (who, spans) in enumerate(rows) for span in spans if span.type in group_of]
    return json.dumps({"rows": [who for who, _ in rows], "marks": marks}, ensure_ascii=False)


def _span_label(span, who, words, tax) -> str:
    text = " ".join(words[span.start:span.end])
    return (f"{tax.get(span.type).name}: “{text}” (words {span.start}–{span.end - 1})"
            + (f" → {span.fix}" if span.fix is not None else "") + (f" · {', '.join(who)}" if who else ""))


def _mark_rows(case, annotators) -> list[tuple[str, tuple]]:
    """(annotator, spans) of each chosen annotator who marked words on the caption, in the chosen order."""
    by_user = {j.user: j for j in case.annotations}
    return [(a, tuple(by_user[a].spans)) for a in annotators if a in by_user and by_user[a].spans]


def _spans_section(case, annotators) -> None:
    """What the marks under the caption's words say (who marked which words, with their fixes, folded), and the
    decision's spans: drawn over the caption above by annotate_spans.js from the hidden field, pre-filled with
    the union of the annotators' spans per type (annotator.adjudication.suggested_decision), and redrawn by the
    lead as on Annotate."""
    tax = taxonomy()
    words = case.text.split()
    rows = _mark_rows(case, annotators)
    # The decision's spans as JSON (hidden): annotate_spans.js rewrites it and sends each change.
    st.text_input("Error spans of the decision", key=K_SPANS, label_visibility="collapsed")
    try:
        kept = _decision_spans()
    except InputError:
        kept = ()
    who = dict(span_voters(case, annotators))
    with st.expander(f"Spans: {len(kept)} in the decision"
                     + "".join(f" · {len(spans)} by {name}" for name, spans in rows)):
        st.html('<ul class="adj-decision-spans" data-testid="adj-decision-spans">'
                + "".join(f"<li>{html.escape(_span_label(s, who.get(s, ()), words, tax))}</li>" for s in kept) + "</ul>"
                if kept else '<p data-testid="adj-decision-spans">The decision marks no words yet.</p>')
        if rows:
            st.html('<table class="adj-spans" data-testid="adj-spans">'
                    + "".join(f"<tr><th>{html.escape(name)}</th><td>"
                              + "<br>".join(html.escape(_span_label(s, (), words, tax)) for s in spans) + "</td></tr>"
                              for name, spans in rows) + "</table>")
        st.caption("The decision's spans are drawn on the caption, starting from the union of the annotators' "
                   "spans per type. Redraw them as on Annotate: select words (drag, click then shift-click, or `,` "
                   "`.` and `<` `>`) and press a type's key to mark them (it ticks the type); the same key on the "
                   "same words, `Backspace`, or a click on a span's key badge removes a span; `/` on a span edits its "
                   "suggested fix. Unticking a type drops its spans.")


def _keys_script() -> str:
    tax = taxonomy()
    keys = {k: a for k, a in keyboard_map(tax).items() if k not in PAGE_KEYS}
    # A type's key sets it (a pre-filled type pressed to confirm it stays ticked); a second press clears it.
    return keyboard_script(prefix="adj", caption_testid="adj-caption", keys=keys,
                           labels=[Label.ACCURATE.value, Label.INACCURATE.value],
                           types={t.id: type_key(t.id) for t in tax.types}, state_name="__adjudicateKeyState",
                           type_keys_set=True)


ABOUT = ("Captions the annotators disagree on: different labels, or both inaccurate with different error types. Your "
         "decision is stored as the adjudicated judgement; the error analysis uses it in its adjudicated layer, where "
         "it replaces the annotators' judgements of that caption. The form starts from every error type an annotator "
         "ticked; keep those you agree with.")


def _header():
    """The one-line header; returns the space beside the title, where the filters fold (with the page's prose)."""
    st.html(_STYLE)
    return ui.compact_header("Adjudication")


def _filters(ctx: ui.PageContext, project: str, annotator_names) -> tuple | None:
    """The annotators, system, kind of disagreement and status to list: (chosen, system, kind, status), or None
    (with a warning) while fewer than two annotators are chosen."""
    c1, c2, c3, c4 = st.container(key="adj_filters").columns([2, 1, 1, 1])
    chosen = team_picker(ctx.store, project, annotator_names, key="adj_annotators", minimum=2, container=c1)
    systems = ui.project_systems(ctx)
    system_choice = c2.selectbox("System", [ALL_SYSTEMS] + systems, key="adj_system")
    kind = c3.selectbox("Disagreement", list(QUEUE_DISAGREEMENTS), format_func=QUEUE_DISAGREEMENTS.get, key="adj_kind")
    status = c4.selectbox("Status", list(QUEUE_STATUSES), format_func=QUEUE_STATUSES.get, key="adj_show")
    if len(chosen) < 2:
        st.warning("Choose at least two annotators.")
        return None
    return chosen, system_choice, kind, status


def _listed(full: pd.DataFrame, chosen, system_choice: str, kind: str, status: str) -> pd.DataFrame:
    """The queue as the filters list it, with the caption in the form kept on it when someone decided it
    meanwhile; its ids become the list that ←/→ and Decide & next move along (``K_IDS``)."""
    queue = filter_queue(full, disagreement=kind, status=status)
    loaded = st.session_state.get(K_LOADED)
    filters = (kind, status, system_choice, tuple(chosen))
    same_list = st.session_state.get(K_FILTERS) == filters and loaded in (st.session_state.get(K_IDS) or ())
    st.session_state[K_FILTERS] = filters
    if same_list and loaded == st.session_state.get(K_CAPTION) and not (queue["caption_id"] == loaded).any():
        # The caption in the form left this list (the filters unchanged) because someone decided it meanwhile:
        # keep it on screen, so the lead's decision is not lost (a save then shows the decision made since and
        # offers to load it).
        kept = full[full["caption_id"] == loaded]
        if len(kept):
            queue = pd.concat([queue, kept]).sort_values("caption_id", kind="stable").reset_index(drop=True)
    queue = _with_opened(queue, full)
    st.session_state[K_IDS] = [int(c) for c in queue["caption_id"]]
    return queue


def _with_opened(queue: pd.DataFrame, full: pd.DataFrame) -> pd.DataFrame:
    """The list with the caption another page opened here (a judge's disagreement with the humans) at its head,
    whether or not the annotators disagree on it; the form shows it first."""
    asked = st.session_state.pop(K_OPEN, None)
    if asked is not None:
        st.session_state[K_OPENED] = st.session_state[K_CAPTION] = int(asked)
        st.session_state.pop(K_LOADED, None)
    opened = st.session_state.get(K_OPENED)
    if opened is None or (queue["caption_id"] == opened).any():
        return queue
    row = full[full["caption_id"] == opened]
    if row.empty:
        row = pd.DataFrame([{"caption_id": opened, "system": "", "disagreement": "opened from Judges",
                             "waiting_for": "", "adjudicated": False}])
    return pd.concat([row, queue], ignore_index=True)


def picker_names(store, project: str, window: pd.DataFrame) -> dict[int, str]:
    """Each listed caption as the files and the README name it (its item, system and 0-based line), then what
    the annotators disagree on and whether it is decided; never the store's caption id."""
    where = {int(r.caption_id): f"{r.item_key} · {r.system}, line {int(r.line_no)}"
             for r in caption_details(store, project, window["caption_id"]).itertuples()}
    return {int(r.caption_id): where.get(int(r.caption_id), f"{r.system}") + " · "
            + (f"waiting for {r.waiting_for}'s types" if r.waiting_for else f"{r.disagreement} disagreement")
            + " · " + ("adjudicated" if r.adjudicated else "open") for r in window.itertuples()}


def _caption_picker(store, project: str, queue: pd.DataFrame, ids: list[int]) -> tuple[pd.DataFrame, int, int]:
    """The jump list around the current caption: (the block of the queue it offers, the position, the caption id)."""
    if st.session_state.get(K_CAPTION) not in ids:
        st.session_state[K_CAPTION] = ids[0]
        st.session_state.pop(K_LOADED, None)
    pos = ids.index(st.session_state[K_CAPTION])
    start = pos // PAGE_SIZE * PAGE_SIZE
    window = queue.iloc[start:start + PAGE_SIZE]
    describe = picker_names(store, project, window)
    j1, j2, j3, j4 = st.columns([12, 2, 2, 2], vertical_alignment="center")
    cid = j1.selectbox("Caption", list(describe), key=K_CAPTION, format_func=describe.get, label_visibility="collapsed")
    j2.button("←", key="adj_prev", on_click=_on_move, args=(-1,), width="stretch", disabled=pos == 0,
              help="The previous caption of the list (`←`).")
    j3.button("→", key="adj_next", on_click=_on_move, args=(1,), width="stretch", disabled=pos == len(ids) - 1,
              help="The next caption of the list (`→`).")
    j4.text(f"{pos + 1} of {len(ids)}")
    return window, pos, int(cid)


def _case_view(case, chosen) -> None:
    """The caption (with the decision's spans drawn on it), where it comes from, who said what and where, and
    the decision that counts now or the one saved since the form was filled."""
    rows = _mark_rows(case, chosen)
    long = ' data-long="1"' if len(case.text) > LONG_CAPTION else ""
    # Room under each line for one bar per annotator who marked words.
    spacing = f' style="line-height:calc(1.45em + {5 * len(rows) + 2}px)"' if rows else ""
    # The caption as plain text: the spans script makes its words, the marks script puts the bars under them.
    st.html(f'<div class="adj-caption" data-testid="adj-caption"{long}{spacing} '
            f'data-marks="{html.escape(marks_json(rows), quote=True)}">{html.escape(case.text)}</div>')
    if rows:
        st.caption("Under each word, one bar per annotator who marked words (in the colour of the type's group): "
                   + " · ".join(f"{k + 1}. {esc(name)}" for k, (name, _) in enumerate(rows))
                   + ". Hover a bar for the type and fix.")
    st.text(f"System {case.system}, line {case.line_no}, item {case.item_key}"
            + (" (practice item)" if case.is_practice else ""))
    _spans_section(case, chosen)
    current = case.adjudication
    newer = st.session_state.get(K_NEWER)
    if newer is not None and newer[0] == case.caption_id:
        from ..widgets.newer import newer_notice
        newer_notice(newer[1], what="adjudication", key="adj", on_load=_on_load_newer, on_keep=_on_keep_mine)
    elif current is not None:
        st.info(f"Adjudicated by {esc(current.user)} (revision {current.revision}); the form shows that decision.")


def _decision_form(ctx: ui.PageContext, case, chosen, pos: int, n_ids: int) -> None:
    """The decision: label, error types (who ticked each), note, the last message and the buttons."""
    from ..annotate_html import short_name
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


def render(ctx: ui.PageContext) -> None:
    """Draw the adjudication page for the lead in ``ctx``: the filters, the queue's counts, one caption beside
    its picture with the decision, the keys' scripts, and the list's table."""
    beside_title = _header()
    project = ui.require_project(ctx, "Import captions and have them annotated first.")
    frame, version = ui.project_judgements(ctx)
    annotator_names = annotators_in(frame)
    if len(annotator_names) < 2:
        st.info("Nothing to adjudicate: fewer than two annotators have judged captions of this project.")
        return
    with beside_title.expander("About · annotators, system, disagreement, status"):
        st.caption(ABOUT)
        filters = _filters(ctx, project, annotator_names)
        counts = st.empty()
    if filters is None:
        return
    chosen, system_choice, kind, status = filters

    full = _queue(ctx.store.url, project, version, tuple(chosen),
                  None if system_choice == ALL_SYSTEMS else system_choice, frame)
    n_done = int(full["adjudicated"].sum())
    n_label = int((full["disagreement"] == "label").sum())
    counts.text(f"{len(full)} disagreements: {len(full) - n_done} open, {n_done} adjudicated "
                f"({n_label} on the label, {len(full) - n_label} on the error types).")
    queue = _listed(full, chosen, system_choice, kind, status)
    ids = st.session_state[K_IDS]
    if not ids:
        msg = st.session_state.pop(K_MSG, None)
        if msg:
            st.success(esc(msg))
        st.success("Every disagreement here is decided." if status == "undecided" else "No caption to show here.")
        return
    window, pos, cid = _caption_picker(ctx.store, project, queue, ids)

    try:
        case = caption_case(ctx.store, project, cid)
    except AnnotatorError as exc:
        ui.show_error_and_stop(exc)
    # A new caption, or another choice of annotators (their votes make the pre-fill), starts the form afresh.
    if st.session_state.get(K_LOADED) != case.caption_id or st.session_state.get(K_LOADED_FOR) != tuple(chosen):
        _load(case, chosen)
    # Laid out as Annotate: the picture with its boxes' labels as text and the references with their mentions
    # on the left, the caption and the decision on the right.
    # The caption (in a pane of its own when long), who said what and the picture on the left; the decision
    # beside it, in view from the first screen.
    left, right = st.columns([13, 14], gap="medium")
    with left:
        _case_view(case, chosen)
        st.html(votes_html(who_said_what(case, chosen)))
        ui.case_picture(case, references=True)
    with right:
        _decision_form(ctx, case, chosen, pos, len(ids))
    st.html(_keys_script() + annotate_spans.script(prefix="adj", caption_testid="adj-caption",
                                                   key_state="__adjudicateKeyState", commit=True)
            + "<script>\n" + FRAMES_JS + _MARKS_JS + "</script>" + annotate_spans.STYLE, unsafe_allow_javascript=True)

    with st.expander("The captions of this list"):
        ui.show_table(queue_table(window, chosen), hide_index=True)
