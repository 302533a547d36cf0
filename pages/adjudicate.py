"""Adjudication (leads): see each disagreement side by side and set the final judgement."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from annotator import ui

ctx = ui.page_setup("adjudicate")

from annotator.adjudication import adjudicate, adjudication_queue, caption_case  # noqa: E402
from annotator.errors import AnnotatorError  # noqa: E402
from annotator.store.analysis_queries import annotators_in  # noqa: E402
from annotator.taxonomy import taxonomy  # noqa: E402

esc = ui.md_escape
ALL_SYSTEMS = "All systems"
PAGE_SIZE = 200
SHOW = {"open": "Not adjudicated yet", "done": "Adjudicated", "all": "All"}

st.title("Adjudication")
st.caption("Captions the annotators disagree on: different labels, or both inaccurate with different error types. "
           "Your decision is stored as the adjudicated judgement; the error analysis uses it in its adjudicated "
           "layer, where it replaces the annotators' judgements of that caption.")

project = ui.require_project(ctx, "Import captions and have them annotated first.")
store = ctx.store
tax = taxonomy()


@st.cache_resource(show_spinner="Finding disagreements…", max_entries=8)
def _queue(url: str, project: str, version: tuple, annotators: tuple, system: str | None, with_types: bool, _frame):
    return adjudication_queue(_frame, annotators=list(annotators), system=system, include_types=with_types)


frame, version = ui.project_judgements(ctx)

annotator_names = annotators_in(frame)
if len(annotator_names) < 2:
    st.info("Nothing to adjudicate: fewer than two annotators have judged captions of this project.")
    st.stop()

c1, c2, c3 = st.columns([3, 1, 1])
chosen = c1.multiselect("Annotators", annotator_names, default=annotator_names, key="adj_annotators")
systems = ui.project_systems(ctx)
system_choice = c2.selectbox("System", [ALL_SYSTEMS] + systems, key="adj_system")
show = c3.selectbox("Show", list(SHOW), format_func=SHOW.get, key="adj_show")
with_types = st.toggle("Include error-type disagreements", value=True, key="adj_types",
                       help="Off: only captions where the accurate/inaccurate labels differ.")
if len(chosen) < 2:
    st.warning("Choose at least two annotators.")
    st.stop()

queue = _queue(store.url, project, version, tuple(chosen), None if system_choice == ALL_SYSTEMS else system_choice,
               with_types, frame)
n_done = int(queue["adjudicated"].sum())
st.text(f"{len(queue)} disagreements: {len(queue) - n_done} open, {n_done} adjudicated.")
if show == "open":
    queue = queue[~queue["adjudicated"]]
elif show == "done":
    queue = queue[queue["adjudicated"]]
if queue.empty:
    st.success("No caption to show here." if show != "open" else "Every disagreement is adjudicated.")
    st.stop()

n_pages = (len(queue) - 1) // PAGE_SIZE + 1
page_no = int(st.number_input("Page", 1, n_pages, 1, key="adj_page")) if n_pages > 1 else 1
shown = queue.iloc[(page_no - 1) * PAGE_SIZE: page_no * PAGE_SIZE].reset_index(drop=True)


def _label(cid: int) -> str:
    r = shown[shown.caption_id == cid].iloc[0]
    state = "adjudicated" if r["adjudicated"] else "open"
    return f"caption {cid} · {r['system']} · {r['disagreement']} disagreement · {state}"


ids = shown["caption_id"].tolist()
if "adj_next" in st.session_state:  # set by "Save decision" (the widget's own key cannot change after it is drawn)
    st.session_state["adj_caption"] = st.session_state.pop("adj_next")
if st.session_state.get("adj_caption") not in ids:
    st.session_state["adj_caption"] = ids[0]
cid = st.selectbox("Caption", ids, key="adj_caption", format_func=_label)

try:
    case = caption_case(store, project, int(cid))
except AnnotatorError as exc:
    st.error(esc(str(exc)))
    st.stop()


def _type_names(types) -> str:
    return ", ".join(tax.get(t).name for t in types if t in tax.ids) or "—"


left, right = st.columns([3, 2])
with left:
    png, problem = case.image_png()
    st.image(png, caption=f"{esc(case.item_key)} with its gold boxes")
    if problem:
        st.caption(f"The photo cannot be shown: {esc(problem)}")
with right:
    st.caption("Caption")
    st.text(case.text)
    st.text(f"System {case.system}, line {case.line_no + 1}, item {case.item_key}"
            + (" (practice item)" if case.is_practice else ""))
    judged = [j for j in case.annotations if j.user in chosen]
    cols = st.columns(max(1, len(judged)))
    for col, j in zip(cols, judged):
        with col:
            st.caption(esc(j.user))
            st.text(j.label.value if j.label else "skipped")
            st.text(_type_names(j.error_types))
            if j.note:
                st.text(f"Note: {j.note}")
    current = case.adjudication
    if current is not None:
        st.info(f"Adjudicated by {esc(current.user)} (revision {current.revision}).")
        st.text(f"{current.label.value if current.label else '—'}: {_type_names(current.error_types)}")
        if current.note:
            st.text(f"Note: {current.note}")

st.subheader("Your decision")
labels = ["accurate", "inaccurate"]
default_label = current.label.value if current is not None and current.label else None
label = st.radio("Label", labels, index=labels.index(default_label) if default_label else None, horizontal=True,
                 key=f"adj_label_{cid}")
suggested = list(current.error_types) if current is not None else sorted(
    {t for j in judged for t in j.error_types}, key=tax.ids.index)
types = st.multiselect("Error types", list(tax.ids), default=suggested if label == "inaccurate" else [],
                       format_func=lambda t: f"{tax.get(t).name} ({tax.get(t).group})", key=f"adj_types_{cid}",
                       disabled=label != "inaccurate",
                       help="Pre-filled with every type an annotator ticked; keep only those you agree with.")
note = st.text_area("Note (optional)", value=current.note if current is not None else "", key=f"adj_note_{cid}")
if st.button("Save decision", type="primary", key=f"adj_save_{cid}", disabled=label is None):
    try:
        revision = adjudicate(store, int(cid), ctx.user.name, ctx.user.role, label,
                              types if label == "inaccurate" else [], note=note, create_user=ctx.user.local_mode)
    except AnnotatorError as exc:
        st.error(esc(str(exc)))
    else:
        st.session_state["adj_saved"] = f"Caption {cid} adjudicated as {label} (revision {revision})."
        later = [c for c in ids if c > cid]
        if show == "open" and later:
            st.session_state["adj_next"] = later[0]
        st.rerun()
if st.session_state.get("adj_saved"):
    st.success(st.session_state.pop("adj_saved"))

with st.expander("All disagreements on this page"):
    st.dataframe(pd.DataFrame(shown), hide_index=True)
