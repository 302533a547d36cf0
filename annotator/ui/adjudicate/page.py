"""The adjudication page (leads): each disagreement side by side, the final judgement set and saved.

The decision widgets have fixed keys (``adj_*``) so the keyboard script (annotator.ui.widgets.keys) finds
them: ``y``/``n`` label, the taxonomy's keys tick types, Enter decides and moves on, ←/→ move. The
decision's error spans are drawn over the caption and redrawn with Annotate's words, keys and colours
(annotator.ui.widgets.spans, its script on the ``adj_*`` widgets). page.py draws the list and the page around
the caption (caption.py) and the decision (decision.py).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ... import ui
from ...adjudication import (
    QUEUE_DISAGREEMENTS, QUEUE_STATUSES, adjudication_queue, caption_case, filter_queue, who_said_what,
)
from ...errors import AnnotatorError
from ...store.analysis_queries import annotators_in
from ...store.caption_queries import caption_details
from ..widgets import spans as annotate_spans
from ..widgets.keys import FRAMES_JS
from ..shell.team_choice import team_picker
from .caption import MARKS_JS, case_view, votes_html
from .decision import (
    K_CAPTION, K_FILTERS, K_IDS, K_LOADED, K_LOADED_FOR, K_MSG, K_OPEN, K_OPENED, decision_form, keys_script,
    load_decision, on_move,
)

esc = ui.md_escape
ALL_SYSTEMS = "All systems"
PAGE_SIZE = 200  # captions offered in the jump list at once (the block around the current one)


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


@st.cache_resource(show_spinner="Finding disagreements…", max_entries=8)
def _queue(url: str, project: str, version: tuple, annotators: tuple, system: str | None, _frame):
    return adjudication_queue(_frame, annotators=list(annotators), system=system, include_types=True)


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
    j2.button("←", key="adj_prev", on_click=on_move, args=(-1,), width="stretch", disabled=pos == 0,
              help="The previous caption of the list (`←`).")
    j3.button("→", key="adj_next", on_click=on_move, args=(1,), width="stretch", disabled=pos == len(ids) - 1,
              help="The next caption of the list (`→`).")
    j4.text(f"{pos + 1} of {len(ids)}")
    return window, pos, int(cid)


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
        load_decision(case, chosen)
    # Laid out as Annotate: the picture with its boxes' labels as text and the references with their mentions
    # on the left, the caption and the decision on the right.
    # The caption (in a pane of its own when long), who said what and the picture on the left; the decision
    # beside it, in view from the first screen.
    left, right = st.columns([13, 14], gap="medium")
    with left:
        case_view(case, chosen)
        st.html(votes_html(who_said_what(case, chosen)))
        ui.case_picture(case, references=True)
    with right:
        decision_form(ctx, case, chosen, pos, len(ids))
    st.html(keys_script() + annotate_spans.script(prefix="adj", caption_testid="adj-caption",
                                                   key_state="__adjudicateKeyState", commit=True)
            + "<script>\n" + FRAMES_JS + MARKS_JS + "</script>" + annotate_spans.STYLE, unsafe_allow_javascript=True)

    with st.expander("The captions of this list"):
        ui.show_table(queue_table(window, chosen), hide_index=True)
