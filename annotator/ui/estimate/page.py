"""The error estimates page (analysts, leads): each system's error profile for all its captions, from the human
sample and the automatic detectors, with intervals."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from ... import ui
from ...errors import AnnotatorError
from ...estimate import INACCURATE
from ...estimate.ppi import MIN_SUPPORT
from ...estimate.project import SCORE_FORMATS, estimate_project, recorded_draws, scores_file
from ...io.tables import FORMATS, file_name
from ...layers import available_layers, parse_layer
from ...store.analysis_queries import annotators_in
from ...store.content_selection import project_fingerprint
from ...taxonomy import taxonomy
from ..widgets.downloads import table_download
from ..widgets.palette import category_colour, series_colours
from ..shell.page_data import scored_project
from .judges import judge_choice, judge_object, widths_by_judge
from ..widgets.formatting import number, percent, text_table


@st.cache_data(show_spinner="Writing the detector scores…", max_entries=8)
def _scores(url: str, project: str, fingerprint: tuple, version: tuple, layer: str, systems: tuple, fmt: str,
            _result) -> bytes:
    return scores_file(_result.scores_frame(), fmt)


@st.cache_resource(show_spinner=False, max_entries=8)
def _word_level(url: str, project: str, version: tuple, layer: str, systems: tuple, _store, _loaded):
    # the captions' fingerprint and the judgements' data version are in the key: a new caption, save or span shows
    # at the next run
    from ...estimate.span_eval import evaluate_detectors
    return evaluate_detectors(_store, project, layer, systems=list(systems), loaded=_loaded)


def _detectors_word_by_word(ctx, project: str, version: tuple, layer: str, chosen, loaded) -> None:
    """The detectors' trigger words against the layer's error spans, per type (annotator detectors evaluate)."""
    with st.expander("Detectors, word by word: their trigger words against the human error spans"):
        try:
            report = _word_level(ctx.store.url, project, version, layer, tuple(chosen), ctx.store, loaded)
        except AnnotatorError as exc:
            st.error(str(exc))
            return
        st.caption(f"{report.captions:,} captions judged in this layer, {report.captions_with_spans:,} with error "
                   "spans. Token level: words both mark with a type / words the detector marks (precision), / words "
                   "the people mark (recall). A type given without marked words is left out of its token counts "
                   "(not localised). The same table: annotator detectors evaluate.")
        ui.show_table(detector_table_text(report), hide_index=True, width="stretch")


def detector_table_text(report):
    """The evaluation's table as the page shows it: ratios with three decimals, "—" where undefined."""
    table = report.table().drop(columns=["type"]).astype(object)
    for col in ("token P", "token R", "token F1", "caption P", "caption R"):
        table[col] = ["—" if v is None or v != v else f"{v:.3f}" for v in table[col]]
    return table


def _target_name(target: str) -> str:
    return "Inaccurate (any error)" if target == INACCURATE else taxonomy().get(target).name


def _interval(ci) -> str:
    lo, hi = (min(max(x, 0.0), 1.0) for x in ci)
    return f"{100 * lo:.1f}–{100 * hi:.1f}%"


def _controls(frame, systems_all):
    """The choices above the figures: layer, systems, confidence, top five, process rate. Stops without a
    system."""
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
    return layer_choice, chosen, level, top, population


def _system_cards(report, level: float) -> None:
    """One system's heading, its four figures, warnings and notes."""
    st.subheader(ui.md_escape(report.system), anchor=False)
    e = report.inaccurate
    # wide enough at 1280×720 for the widest values: "100.0–100.0%" and "9,999 of 9,999" human labels
    m1, m2, m3, m4 = st.columns([1, 1.35, 1.35, 1.3])
    m1.metric("Inaccurate (estimate)", f"{e.estimate:.1%}")
    m2.metric(f"{level:.0%} interval", _interval(e.ci))
    m3.metric("Human labels", f"{report.n_human:,} of {report.n_total:,}")
    m4.metric("CHAIR-i / CHAIR-s", f"{report.chair.chair_i:.2f} / {report.chair.chair_s:.2f}",
              help="Object hallucination: the share of entity mentions, and of captions, naming something absent.")
    for w in report.warnings:
        st.warning(ui.md_escape(w))
    if report.sparse_targets:
        st.warning(f"{len(report.sparse_targets)} of these intervals rest on fewer than {MIN_SUPPORT} labelled "
                   "cases or non-zero residuals and are widened to the exact interval of the human labels "
                   "(marked * and *Few* in the table): "
                   + ", ".join(_target_name(t) for t in report.sparse_targets))
    if report.notes:
        with st.expander(f"Notes on these figures ({len(report.notes)})"):
            for n in report.notes:
                st.text(n)


def _types_chart(table, chosen, systems_all) -> None:
    """Every error type's estimate, interval and classical interval per system (each system in its colour of
    every page: annotator.ui.widgets.palette)."""
    rows = table[table["target"] != INACCURATE]
    if rows.empty:
        return
    order = (rows.groupby("type")["estimate"].max().sort_values(ascending=False).index.tolist())
    shown = [sy for sy in systems_all if sy in set(rows["system"])]
    base = alt.Chart(rows).encode(y=alt.Y("type:N", sort=order, title=None,
                                          axis=alt.Axis(labelOverlap=False, labelLimit=0)),
                                  yOffset=alt.YOffset("system:N"),
                                  color=category_colour("system", "System", domain=shown,
                                                        colours=series_colours(systems_all)))
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


def _estimates_table(table, level: float) -> None:
    """The estimates of every system and target, one format per column."""
    shown = table[["system", "type", "estimate"]].assign(
        interval=[_interval(c) + ("*" if sparse else "")
                  for c, sparse in zip(zip(table["ci_low"], table["ci_high"]), table["sparse"])],
        sparse=table["sparse"],
        classical=[_interval(c) for c in zip(table["classical_low"], table["classical_high"])])
    shown = pd.concat([shown, table[["n_human", "more_labels_to_halve"]]], axis=1)
    shown = text_table(shown, {"estimate": percent, "more_labels_to_halve": lambda v: number(v, 0)})
    # The detector's precision, recall and AUC in one column, so the table fits the page's width.
    shown["detector"] = [" / ".join(number(v) for v in row)
                         for row in zip(table["precision"], table["recall"], table["auc"])]
    # Whole, as tall as its rows: an inner scroll bar would hide the last column's edge.
    ui.show_table(shown, hide_index=True, width="stretch", height="content", column_config={
        "system": st.column_config.TextColumn("System"), "type": st.column_config.TextColumn("Target"),
        "estimate": st.column_config.TextColumn("Estimate", width="small"),
        "interval": st.column_config.TextColumn(f"{level:.0%} CI", help=f"The estimate's {level:.0%} interval."),
        "sparse": st.column_config.CheckboxColumn(
            "Few", width="small", help=f"Fewer than {MIN_SUPPORT} labelled cases or non-zero residuals: the interval is "
                              "widened to the exact interval of the human labels."),
        "classical": st.column_config.TextColumn("Classical", help="The classical interval, from the human labels "
                                                                  "alone."),
        "n_human": st.column_config.NumberColumn("Labels", width="small", help="Human labels."),
        "more_labels_to_halve": st.column_config.TextColumn(
            "To halve", width="small",
            help="More labels to halve: about how many more human labels, drawn at random, would halve the interval."),
        "detector": st.column_config.TextColumn(
            "Detector P / R / AUC", help="The detector's precision (of its flags), recall (on the labelled "
                                         "captions) and AUC (how well its score ranks them).")})



def _difference(result, estimated) -> None:
    """Two chosen systems' difference per target, with its interval."""
    if len(estimated) < 2:
        return
    st.subheader("Difference between two systems", anchor=False)
    d1, d2 = st.columns(2)
    a = d1.selectbox("System A", estimated, index=0, key="est_diff_a")
    b = d2.selectbox("System B", estimated, index=1, key="est_diff_b")
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
        ui.show_table(diff_table, {c: percent for c in shares}, hide_index=True, width="stretch")


def _downloads(store, project: str, fingerprint, version, layer_choice: str, estimated, result) -> None:
    """The tables in every format and the detector scores."""
    cols = st.columns(len(FORMATS))
    for col, fmt in zip(cols, FORMATS):
        table_download(f"Download {fmt.upper()}", result, fmt, f"estimates-{project}", key=f"est_dl_{fmt}", container=col,
                       caption="Estimated error shares")
    # Wide enough for the whole label ("Download detector scores (JSONL)" was cut in a quarter of the width).
    cols = st.columns(max(3, len(SCORE_FORMATS)))
    for col, (ext, fmt) in zip(cols, SCORE_FORMATS.items()):
        col.download_button(f"Download detector scores ({fmt.upper()})",
                            data=_scores(store.url, project, fingerprint, version, layer_choice, tuple(estimated), fmt,
                                         result),
                            file_name=file_name(f"detector-scores-{project}", "csv").removesuffix(".csv") + ext,
                            mime="text/csv" if fmt == "csv" else "application/jsonl", key=f"est_scores_{fmt}",
                            help="Every estimated caption's detector scores, human label and trigger words, to check "
                                 "the estimate with another tool (as annotator estimate --scores).")


def render(ctx: ui.PageContext) -> None:
    """Draw the error estimates of the selected project's systems for ``ctx``."""
    project = ui.page_header(ctx)
    store = ctx.store
    systems_all = ui.project_systems(ctx)

    frame, version = ui.project_judgements(ctx)
    if frame.empty:
        st.info("Nobody has judged a caption of this project yet: estimates need some human labels.")
        st.stop()
    layer_choice, chosen, level, top, population = _controls(frame, systems_all)

    judge_name = judge_choice(store, project)
    st.caption(f"A {level:.0%} interval holds the true share in {round(100 * level)} of 100 random human samples.")
    try:
        fingerprint = project_fingerprint(store, project)
        proj, scored = scored_project(store.url, project, fingerprint, version[2:], store)
        layer = ui.judgement_layer(ctx, frame, version, layer_choice)
        options = dict(systems=chosen, alpha=round(1 - level, 6), types="top5" if top else "all",
                       finite_population=not population, scored=scored, draws=recorded_draws(store, project),
                       skip_unlabelled=True)
        judge = None if judge_name == "detectors" else judge_object(store, project, judge_name)
        result = estimate_project(proj, layer, judge=judge, **options)
    except AnnotatorError as exc:
        ui.show_error_and_stop(exc)
    for system, why in result.skipped.items():
        st.info(f"System {ui.md_escape(system)} is not estimated: {ui.md_escape(why)}")
    estimated = [r.system for r in result.reports]
    table = result.frame()
    table["type"] = [_target_name(t) for t in table["target"]]

    for report in result.reports:
        _system_cards(report, level)
    _types_chart(table, chosen, systems_all)
    _estimates_table(table, level)
    _difference(result, estimated)
    widths_by_judge(store, project, lambda **kw: estimate_project(proj, layer, **kw), chosen, options, _target_name)
    _detectors_word_by_word(ctx, project, (fingerprint, version), layer_choice, chosen, (proj, scored))
    st.divider()
    _downloads(store, project, fingerprint, version, layer_choice, estimated, result)
