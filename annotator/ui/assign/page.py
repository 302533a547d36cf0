"""The assignment page (leads and admins): split a project across annotators, with a blind double-annotation sample."""

from __future__ import annotations

import streamlit as st

from ... import ui
from ...assignment import (
    DEFAULT_DOUBLE_FRACTION, SECOND_PASS_MODES, SPLITS, assign, assign_sample, assignment_overview, mark_practice,
    project_systems, sample_draws, second_pass_mode, set_second_pass_mode,
)
from ...accounts.auth import list_users
from ...errors import AnnotatorError
from ...layers import available_layers, parse_layer
from ...taxonomy import taxonomy
from ...team_selection import assignable_by_default


def _change_queues(change):
    """Run a change of the queues: its error as a message (None back), else its result, with the cached
    progress of this session dropped."""
    try:
        result = change()
    except AnnotatorError as exc:
        st.error(ui.md_escape(str(exc)))
        return None
    st.session_state.pop(ui.PROGRESS_KEY, None)
    return result


def _overview(box, store, project: str, role) -> None:
    """The current queues (or that nothing is assigned yet), in ``box`` at the top of the page."""
    overview = assignment_overview(store, project, actor_role=role)
    with box:
        if overview:
            st.subheader("Current queues", anchor=False)
            ui.show_table([{"annotator": r["name"], "assigned": r["assigned"], "done": r["done"],
                           "second (blind)": r["second"], "practice": r["practice"]} for r in overview],
                         hide_index=True, width="stretch")
            st.caption(f"Second pass: **{second_pass_mode(store, project)}**")
        else:
            st.info("Nothing in this project is assigned yet.")


def render(ctx: ui.PageContext) -> None:
    """Draw the assignment page of the selected project for ``ctx``."""
    st.title("Assignment")
    if not ctx.project:
        st.info("There is no project yet.")
        st.stop()

    store, project, role = ctx.store, ctx.project, ctx.user.role
    st.caption(f"Project **{ui.md_escape(project)}**")

    # The queues as they are after whatever this run changes: drawn into this box at the end of the run.
    overview_box = st.container()

    users = list_users(store)
    annotator_names = assignable_by_default(users)  # annotators who can log in, demo accounts left out
    systems = project_systems(store, project)

    _assign_form(store, project, role, users, annotator_names, systems)
    _sample_form(store, project, role, users, annotator_names, systems)
    _overview(overview_box, store, project, role)
    _draw_history(store, project, role)
    _second_pass_setting(store, project, role)
    _practice_items(store, project, role)


def _assign_form(store, project: str, role, users, annotator_names: list[str], systems: list[str]) -> None:
    """The Assign form: split the project over the chosen annotators, with its blind double-annotation share."""
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
        summary = _change_queues(lambda: assign(store, project, chosen, double_fraction=float(fraction), seed=int(seed),
                                                systems=chosen_systems or None, split=split, second_pass=second,
                                                replace=replace, actor_role=role))
        if summary:
            st.success(f"Assigned {summary.captions} captions ({summary.practice} practice) to {len(chosen)} annotators; "
                       f"{summary.double} are double-annotated.")
            ui.show_table([{"annotator": n, **c} for n, c in summary.per_annotator.items()], hide_index=True)


def _sample_form(store, project: str, role, users, annotator_names: list[str], systems: list[str]) -> None:
    """The Next human sample form: draw captions not labelled yet (active or uniform) and queue them."""
    # Imported here, after the queues and the Assign form are on screen: the estimators pull in scipy.stats,
    # about a second on a first visit of the page (issue 24 item 20).
    from ...estimate.sampling import DEFAULT_FLOOR, DEFAULT_WIDEST, DESIGNS, TARGETS
    from ...judges import judge_names

    st.subheader("Next human sample", anchor=False)
    st.caption("Draw about N captions of each chosen system that are not labelled yet and add them to the end of the "
               "queues, shuffled, one annotator each. Every caption's chance of being drawn is recorded and the error "
               "estimates weight its label by it, so they stay unbiased. Active: captions whose labels shrink the widest "
               "intervals most (the detector is unsure, or flags a type whose interval is wide) get higher chances; "
               "uniform: all the same. The blind double sample and practice items stay as they are.")
    tax = taxonomy()
    with st.form("sample_form"):
        sample_annotators = st.multiselect("Annotators", [u.name for u in users], default=annotator_names,
                                           key="sample_annotators")
        s1, s2, s3 = st.columns(3)
        sample_systems = s1.multiselect("Systems (empty: all)", systems, key="sample_systems")
        size = s2.number_input("Captions per system (about)", min_value=1, value=100, step=10, key="sample_size")
        design = s3.radio("Design", DESIGNS, key="sample_design", horizontal=True,
                          help="active: chances where labels shrink the widest intervals; uniform: the same for all.")
        s4, s5, s6 = st.columns(3)
        layers = [lay.label for lay in available_layers([u.name for u in users])]
        layer = s4.selectbox("Labels so far", layers, key="sample_layer", format_func=lambda s: parse_layer(s).title,
                             help="Captions labelled in this layer count for certain; active draws learn from them.")
        sample_seed = s5.number_input("Seed", min_value=0, value=0, step=1, key="sample_seed",
                                      help="The same seed on the same data gives the same draw.")
        floor = s6.number_input("Floor", min_value=0.0, max_value=1.0, value=DEFAULT_FLOOR, step=0.05, key="sample_floor",
                                help="Every caption keeps at least this share of the chance a uniform draw gives it.")
        t1, t2 = st.columns([2, 1])
        targets = t1.multiselect(f"Aim at (empty: the {DEFAULT_WIDEST} widest intervals)", list(TARGETS),
                                 key="sample_targets",
                                 format_func=lambda t: "Inaccurate (any error)" if t == "inaccurate" else tax.get(t).name)
        judge = t2.selectbox("How unsure each caption is, from", judge_names(store, project), key="sample_judge",
                             help="Active draws: the judge whose probabilities say where labels help most (the "
                                  "built-in detectors, or an AI judge of the Judges page).")
        drawn = st.form_submit_button("Draw and queue")

    if drawn:
        result = _change_queues(lambda: assign_sample(
            store, project, sample_annotators, int(size), systems=sample_systems or None, design=design,
            seed=int(sample_seed), layer=layer, targets=targets or None, floor=float(floor), actor_role=role,
            judge=judge if design == "active" else None))
        if result:
            st.success(f"Drew {sum(d.taken for d in result.draws)} captions in {len(result.draws)} draws and queued "
                       f"{sum(d.queued for d in result.draws)}.")
            ui.show_table([{"system": d.system, "draw": d.number, "drawn": d.taken, "asked (about)": d.size,
                           "labelled before": d.labelled_before, "aimed at": ", ".join(d.targets),
                           "smallest chance": d.probability_range[0] if d.probability_range else None,
                           "largest chance": d.probability_range[1] if d.probability_range else None,
                           "already queued": d.already_queued, **{f"to {n}": k for n, k in d.per_annotator.items()}}
                          for d in result.draws], hide_index=True, width="stretch")


def _draw_history(store, project: str, role) -> None:
    """The sample draws made so far, folded away."""
    history = sample_draws(store, project, actor_role=role)
    if history:
        with st.expander(f"Sample draws so far ({len(history)})"):
            ui.show_table([{"system": h["system"], "draw": h["number"], "design": h["design"], "drawn": h["taken"],
                           "asked (about)": h["size"], "labelled before": h["labelled_before"], "labels": h["layer"],
                           "aimed at": h["targets"], "seed": h["seed"], "when": h["created_at"]} for h in history],
                         hide_index=True, width="stretch")


def _second_pass_setting(store, project: str, role) -> None:
    """Switch the second pass of double annotation between staged and full."""
    with st.expander("Second pass of double annotation"):
        mode = st.radio("Mode", SECOND_PASS_MODES, index=SECOND_PASS_MODES.index(second_pass_mode(store, project)),
                        key="assign_mode_only", horizontal=True)
        if st.button("Save mode", key="assign_mode_save"):
            try:
                set_second_pass_mode(store, project, mode, actor_role=role)
                st.success(f"Second pass is now {mode}.")
            except AnnotatorError as exc:
                st.error(ui.md_escape(str(exc)))


def _practice_items(store, project: str, role) -> None:
    """Mark or unmark items as practice by their keys."""
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
