"""Assignment (leads and admins): split a project across annotators, with a blind double-annotation sample."""

import streamlit as st

from annotator import ui
from annotator.assignment import (
    DEFAULT_DOUBLE_FRACTION, SECOND_PASS_MODES, SPLITS, assign, assignment_overview, mark_practice, project_systems,
    second_pass_mode, set_second_pass_mode,
)
from annotator.auth import list_users
from annotator.errors import AnnotatorError

ctx = ui.page_setup("assign")
st.title("Assignment")
if not ctx.project:
    st.info("There is no project yet.")
    st.stop()

store, project, role = ctx.store, ctx.project, ctx.user.role
st.caption(f"Project **{ui.md_escape(project)}**")

overview = assignment_overview(store, project, actor_role=role)
if overview:
    st.subheader("Current queues", anchor=False)
    st.dataframe([{"annotator": r["name"], "assigned": r["assigned"], "done": r["done"],
                   "second (blind)": r["second"], "practice": r["practice"]} for r in overview],
                 hide_index=True, width="stretch")
    st.caption(f"Second pass: **{second_pass_mode(store, project)}**")
else:
    st.info("Nothing in this project is assigned yet.")

users = list_users(store)
annotator_names = [u.name for u in users if u.role == "annotator"]
systems = project_systems(store, project)

st.subheader("Assign", anchor=False)
with st.form("assign_form"):
    chosen = st.multiselect("Annotators", [u.name for u in users], default=annotator_names, key="assign_annotators")
    c1, c2, c3 = st.columns(3)
    fraction = c1.number_input("Share double-annotated", min_value=0.0, max_value=1.0, value=DEFAULT_DOUBLE_FRACTION,
                               step=0.05, key="assign_fraction",
                               help="A seeded random sample of this share is also judged by a second annotator, blind.")
    seed = c2.number_input("Seed", min_value=0, value=0, step=1, key="assign_seed",
                           help="The same seed gives the same sample and the same queues.")
    split = c3.radio("Split", SPLITS, key="assign_split", horizontal=True,
                     help="blocks: each annotator gets a contiguous stretch; round-robin: every n-th caption.")
    chosen_systems = st.multiselect("Systems (empty: all)", systems, key="assign_systems")
    second = st.radio("Second pass", SECOND_PASS_MODES, key="assign_second_pass", horizontal=True,
                      help="staged: the second annotator first judges only accurate/inaccurate and gives error types "
                           "for the captions both found inaccurate; full: both tasks at once.")
    replace = st.checkbox("Replace the existing assignments (judgements already made are kept)", key="assign_replace")
    submitted = st.form_submit_button("Assign", type="primary")

if submitted:
    try:
        summary = assign(store, project, chosen, double_fraction=float(fraction), seed=int(seed),
                         systems=chosen_systems or None, split=split, second_pass=second, replace=replace,
                         actor_role=role)
    except AnnotatorError as exc:
        st.error(ui.md_escape(str(exc)))
    else:
        st.session_state.pop(ui.PROGRESS_KEY, None)
        st.success(f"Assigned {summary.captions} captions ({summary.practice} practice) to {len(chosen)} annotators; "
                   f"{summary.double} are double-annotated.")
        st.dataframe([{"annotator": n, **c} for n, c in summary.per_annotator.items()], hide_index=True)

with st.expander("Second pass of double annotation"):
    mode = st.radio("Mode", SECOND_PASS_MODES, index=SECOND_PASS_MODES.index(second_pass_mode(store, project)),
                    key="assign_mode_only", horizontal=True)
    if st.button("Save mode", key="assign_mode_save"):
        try:
            set_second_pass_mode(store, project, mode, actor_role=role)
            st.success(f"Second pass is now {mode}.")
        except AnnotatorError as exc:
            st.error(ui.md_escape(str(exc)))

with st.expander("Practice items"):
    st.caption("Practice items are given to every annotator first and left out of agreement. "
               "They take effect at the next assignment.")
    keys_text = st.text_area("Item keys, one per line", key="assign_practice_keys")
    p1, p2 = st.columns(2)
    for col, flag, label in ((p1, True, "Mark as practice"), (p2, False, "Unmark")):
        if col.button(label, key=f"assign_practice_{flag}"):
            try:
                n = mark_practice(store, project, keys_text.splitlines(), flag, actor_role=role)
                st.success(f"{n} items changed.")
            except AnnotatorError as exc:
                st.error(ui.md_escape(str(exc)))
