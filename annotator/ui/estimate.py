"""The error estimates page (analysts, leads): each system's error profile for all its captions, from the human
sample and the automatic detectors, with intervals."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from .. import ui
from ..errors import AnnotatorError
from ..estimate import INACCURATE
from ..estimate.project import estimate_project, project_detections, recorded_draws
from ..io.tables import FORMATS
from ..layers import available_layers, parse_layer
from ..store.analysis_queries import annotators_in
from ..taxonomy import taxonomy
from .downloads import table_download
from .formatting import number, percent, text_table


@st.cache_resource(show_spinner="Running the error detectors on every caption…", max_entries=4)
def _scored(url: str, project: str, systems: tuple, practice: tuple, _store):
    # the detectors read captions and references only: computed again when a system is added or practice marks change
    from ..store.projects import load_project
    proj = load_project(_store, project)
    return proj, project_detections(proj)


def _target_name(target: str) -> str:
    return "Inaccurate (any error)" if target == INACCURATE else taxonomy().get(target).name


def _interval(ci) -> str:
    lo, hi = (min(max(x, 0.0), 1.0) for x in ci)
    return f"{100 * lo:.1f}–{100 * hi:.1f}%"


def render(ctx: ui.PageContext) -> None:
    """Draw the error estimates of the selected project's systems for ``ctx``."""
    project = ui.page_header(ctx)
    store = ctx.store
    systems_all = ui.project_systems(ctx)

    frame, version = ui.project_judgements(ctx)
    if frame.empty:
        st.info("Nobody has judged a caption of this project yet: estimates need some human labels.")
        st.stop()

    layers = [lay.label for lay in available_layers(annotators_in(frame))]
    c1, c2, c3 = st.columns([2, 4, 1])
    layer_choice = c1.selectbox("Judgements", layers, key="est_layer", format_func=lambda s: parse_layer(s).title,
                                help="Whose labels count as the human sample.")
    chosen = c2.multiselect("Systems", systems_all, default=systems_all, key="est_systems")
    level = c3.selectbox("Confidence", [0.90, 0.95, 0.99], index=1, key="est_level", format_func=lambda x: f"{x:.0%}")
    t1, t2 = st.columns([1, 3])
    top = t1.toggle("Top 5 types", value=False, key="est_top5", help="Only the five most frequent error types.")
    population = t2.toggle("Estimate the rate of the process, not the share among these captions", value=False,
                           key="est_population",
                           help="Off: the share among exactly this project's captions (all labelled means exact). On: "
                                "the rate of the process the captions come from, as if new images were drawn; wider.")
    if not chosen:
        st.warning("Choose at least one system.")
        st.stop()

    try:
        proj, scored = _scored(store.url, project, tuple(systems_all), version[2:], store)
        layer = ui.judgement_layer(ctx, frame, version, layer_choice)
        result = estimate_project(proj, layer, systems=chosen, alpha=round(1 - level, 6),
                                  types="top5" if top else "all", finite_population=not population, scored=scored,
                                  draws=recorded_draws(store, project))
    except AnnotatorError as exc:
        ui.show_error_and_stop(exc)

    table = result.frame()
    table["type"] = [_target_name(t) for t in table["target"]]

    for report in result.reports:
        st.subheader(ui.md_escape(report.system), anchor=False)
        e = report.inaccurate
        m1, m2, m3, m4 = st.columns([1, 1.5, 1.2, 1.3])  # the interval card wide enough for "100.0–100.0%"
        m1.metric("Inaccurate (estimate)", f"{e.estimate:.1%}")
        m2.metric(f"{level:.0%} interval", _interval(e.ci))
        m3.metric("Human labels", f"{report.n_human:,} of {report.n_total:,}")
        m4.metric("CHAIR-i / CHAIR-s", f"{report.chair.chair_i:.2f} / {report.chair.chair_s:.2f}",
                  help="Object hallucination: the share of entity mentions, and of captions, naming something absent.")
        for w in report.warnings:
            st.warning(ui.md_escape(w))
        if report.notes:
            with st.expander(f"Notes on these figures ({len(report.notes)})"):
                for n in report.notes:
                    st.text(n)

    rows = table[table["target"] != INACCURATE]
    if not rows.empty:
        order = (rows.groupby("type")["estimate"].max().sort_values(ascending=False).index.tolist())
        base = alt.Chart(rows).encode(y=alt.Y("type:N", sort=order, title=None),
                                      yOffset=alt.YOffset("system:N"), color=alt.Color("system:N", title="System"))
        classical = base.mark_rule(opacity=0.3, strokeWidth=6).encode(
            x=alt.X("classical_low:Q", title="Share of captions", axis=alt.Axis(format="%")), x2="classical_high:Q")
        interval = base.mark_rule(strokeWidth=2).encode(x="ci_low:Q", x2="ci_high:Q")
        point = base.mark_point(filled=True, size=50).encode(
            x="estimate:Q",
            tooltip=[alt.Tooltip("system:N"), alt.Tooltip("type:N"), alt.Tooltip("estimate:Q", format=".1%"),
                     alt.Tooltip("ci_low:Q", format=".1%"), alt.Tooltip("ci_high:Q", format=".1%"),
                     alt.Tooltip("classical_low:Q", format=".1%"), alt.Tooltip("classical_high:Q", format=".1%"),
                     alt.Tooltip("n_human:Q"), alt.Tooltip("more_labels_to_halve:Q")])
        st.altair_chart((classical + interval + point).properties(height=max(200, 22 * len(order) * len(chosen))),
                        width="stretch")
        st.caption("Dot: estimate; thin line: its interval; wide pale bar: the classical interval from the human "
                   "labels alone.")

    shown = table[["system", "type", "estimate"]].assign(
        interval=[_interval(c) for c in zip(table["ci_low"], table["ci_high"])],
        classical=[_interval(c) for c in zip(table["classical_low"], table["classical_high"])])
    shown = pd.concat([shown, table[["n_human", "more_labels_to_halve", "precision", "recall", "auc"]]], axis=1)
    shown = text_table(shown, {"estimate": percent, "more_labels_to_halve": lambda v: number(v, 0),
                               **{c: number for c in ("precision", "recall", "auc")}})
    st.dataframe(shown, hide_index=True, width="stretch", column_config={
        "system": st.column_config.TextColumn("System"), "type": st.column_config.TextColumn("Target"),
        "estimate": st.column_config.TextColumn("Estimate"),
        "interval": st.column_config.TextColumn(f"{level:.0%} interval"),
        "classical": st.column_config.TextColumn("Classical interval", help="From the human labels alone."),
        "n_human": st.column_config.NumberColumn("Human labels"),
        "more_labels_to_halve": st.column_config.TextColumn(
            "More labels to halve", help="About how many more human labels, drawn at random, would halve the interval."),
        "precision": st.column_config.TextColumn("Precision", help="Of the detector's flags."),
        "recall": st.column_config.TextColumn("Recall", help="Of the detector, on the labelled captions."),
        "auc": st.column_config.TextColumn("AUC", help="How well the detector's score ranks them.")})

    if len(chosen) >= 2:
        st.subheader("Difference between two systems", anchor=False)
        d1, d2 = st.columns(2)
        a = d1.selectbox("System A", chosen, index=0, key="est_diff_a")
        b = d2.selectbox("System B", chosen, index=1, key="est_diff_b")
        if a == b:
            st.info("Choose two different systems.")
        else:
            diffs = result.difference(a, b)
            diff_table = pd.DataFrame([{"target": _target_name(t),
                                        "A minus B": d.estimate, "low": d.ci[0], "high": d.ci[1],
                                        "classical low": d.classical_ci[0], "classical high": d.classical_ci[1],
                                        "interval": f"paired, {d.pairs} images" if d.design == "paired"
                                        else "independent samples"}
                                       for t, d in diffs.items()])
            # One format per column (one decimal, as the estimates above), "—" where a figure is missing.
            shares = ("A minus B", "low", "high", "classical low", "classical high")
            st.dataframe(text_table(diff_table, {c: percent for c in shares}), hide_index=True, width="stretch")

    st.divider()
    cols = st.columns(len(FORMATS))
    for col, fmt in zip(cols, FORMATS):
        table_download(f"Download {fmt.upper()}", result, fmt, f"estimates-{project}", key=f"est_dl_{fmt}", container=col,
                       caption="Estimated error shares")
