"""The Lexical diversity page's studies, each switched on when wanted: µ from rich and sparse sub-corpora, human
and machine descriptions scored against each other, and the metrics' correlation with human scores (a lead imports
the scores here)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from ... import ui
from ...accounts.access import LEADS
from ...diversity import MEASURE_LABELS
from ...errors import AnnotatorError
from ...metric_settings import paper_tokenize_note, project_tokenize, tokenize_header
from ...metrics import REGISTRY
from ...store.human_scores import score_names, scores_fingerprint
from ..widgets.palette import category_colour
from .compute import Texts, cached_correlations, cached_mu, cached_rich_sparse



def mu_section(texts: Texts, mu: float, measure: str):
    """µ from rich and sparse sub-corpora (the lexical-gap study's Fig. 5), once switched on: the estimate, else None."""
    st.subheader("µ from rich and sparse sub-corpora")
    if not st.toggle("Estimate µ from this project", key="div_mu_on",
                     help="ld of every image's references (rich) and of its captions (sparse) against cr; µ is where "
                          "the two distributions are best told apart, as the lexical-gap study chose its 0.81."):
        return None
    c1, c2, c3 = st.columns(3)
    split_kind = c1.selectbox("Sub-corpora", ["image", "groups"], key="div_mu_split",
                              format_func={"image": "one per image", "groups": "random groups"}.get)
    group_size = c2.number_input("Descriptions per group", value=50, min_value=1, step=10, key="div_mu_group",
                                 disabled=split_kind == "image")
    mu_method = c3.selectbox("Method", ["gaussian", "empirical"], key="div_mu_method",
                             format_func={"gaussian": "crossing of normal fits", "empirical": "best observed split"}.get)

    try:
        mu_estimate = cached_mu(texts.url, texts.project, texts.fp, texts.settings_key, texts.ref_choice, texts.ref_fp,
                          texts.ref_bytes, "image" if split_kind == "image" else int(group_size), mu_method)
    except AnnotatorError as exc:
        st.error(ui.md_escape(str(exc)))
        return None
    dist = mu_estimate.frame()
    hist = alt.Chart(dist).mark_bar(opacity=0.55, binSpacing=0).encode(
        x=alt.X("ld:Q", bin=alt.Bin(maxbins=30), title="ld of a sub-corpus"),
        y=alt.Y("count():Q", stack=None, title="sub-corpora"), color=category_colour("set", "Descriptions"))
    rules = pd.DataFrame({"ld": [mu_estimate.mu, float(mu)], "line": ["estimated µ", "µ in use"]})
    rule = alt.Chart(rules).mark_rule(strokeWidth=2).encode(
        x="ld:Q", strokeDash=alt.StrokeDash("line:N", title=""), tooltip=["line", alt.Tooltip("ld:Q", format=".3f")])
    st.altair_chart((hist + rule).properties(height=280), width="stretch")
    summary = mu_estimate.summary()
    st.caption(f"Estimated µ = {mu_estimate.mu:.3f} ({mu_estimate.method}); {mu_estimate.error:.1%} of "
               f"sub-corpora on the wrong side (mean of both sides). Rich: {summary['rich']['n']} sub-corpora, mean "
               f"ld {summary['rich']['mean']:.3f}; sparse: {summary['sparse']['n']}, mean "
               f"{summary['sparse']['mean']:.3f}" + (f"; {mu_estimate.dropped} left out without a defined "
                                                      f"{MEASURE_LABELS[measure]}" if mu_estimate.dropped else "")
               + ". Set µ in the settings above to use it.")
    if not mu_estimate.separated:
        st.warning("Here the references are not more diverse than the captions, so this µ does not separate "
                   "rich from sparse descriptions.")
    return mu_estimate


def rich_sparse_section(store, texts: Texts):
    """Human and machine descriptions scored against each other (the lexical-gap study's Section 3.2), once
    switched on: the table, else None."""
    st.subheader("Rich and sparse descriptions")
    if not st.toggle("Score human and machine descriptions against each other", key="div_rs_on",
                     help="For every image, draw ground-truth descriptions from the references or from the captions "
                          "and score the rest, many times over (Section 3.2 of the lexical-gap study)."):
        return None
    c1, c2, c3, c4 = st.columns(4)
    rs_draws = c1.number_input("Draws", value=1000, min_value=1, max_value=100_000, step=100, key="div_rs_draws")
    rs_truth = c2.number_input("Ground-truth descriptions", value=5, min_value=1, max_value=50, key="div_rs_truth")
    rs_seed = c3.number_input("Seed", value=0, min_value=0, step=1, key="div_rs_seed")
    rs_metrics = c4.multiselect("Metrics", list(REGISTRY.available()), default=list(REGISTRY.defaults(in_process_only=True)),
                                format_func=REGISTRY.label, key="div_rs_metrics")

    try:
        rich_sparse = cached_rich_sparse(texts.url, texts.project, texts.fp, int(rs_draws), int(rs_truth), int(rs_seed),
                                   tuple(rs_metrics), project_tokenize(store, texts.project))
    except AnnotatorError as exc:
        st.error(ui.md_escape(str(exc)))
        return None
    table = rich_sparse.table()
    table.columns = [f"{a} · {b}" for a, b in table.columns]
    ui.show_table(table, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in table.columns})
    st.caption(f"Mean over {rich_sparse.settings.draws} draws of {rich_sparse.settings.ground_truth} ground-truth "
               "descriptions per image. Human: the references; machine: the systems' captions. Images per cell: "
               + "; ".join(f"{c.ground_truth}/{c.candidates} {c.images}" for c in rich_sparse.cells) + ".")
    st.caption("Metric input: " + tokenize_header(rich_sparse.tokenize) + "; "
               + paper_tokenize_note(rich_sparse.tokenize, "lexical-gap"))
    for note in rich_sparse.notes:
        st.caption(ui.md_escape(note))
    return rich_sparse


def correlation_section(ctx: ui.PageContext, texts: Texts, systems: list[str]):
    """Correlation of the metrics (plain and weighted by ld or Lg) with a stored human score; leads may import
    scores here. The correlations, or None."""
    store, project = ctx.store, texts.project
    st.subheader("Correlation with human judgements")

    names = score_names(store, project)
    if ctx.user.role in LEADS:
        names = _import_scores(store, project, systems, names)

    if not names:
        st.info("No human scores are stored for this project yet"
                + ("." if ctx.user.role in LEADS else "; a lead or admin can import them here or with "
                   "`annotator human-scores import`."))
        return None
    c1, c2 = st.columns(2)
    human = c1.selectbox("Human score", names, key="div_human")
    options = list(REGISTRY.available())
    chosen = c2.multiselect("Metrics", options, default=list(REGISTRY.defaults(in_process_only=True)),
                            format_func=REGISTRY.label, key="div_metrics",
                            help="Metrics that cannot run here (METEOR without Java) are not offered.")
    try:
        correlation = cached_correlations(texts.url, project, texts.fp, scores_fingerprint(store, project),
                                    texts.settings_key, tuple(chosen), texts.ref_choice, texts.ref_fp, texts.ref_bytes,
                                    project_tokenize(store, project))
    except AnnotatorError as exc:
        st.error(ui.md_escape(str(exc)))
        return None
    if correlation is not None:
        _correlation_table(correlation, human)
    return correlation


def _import_scores(store, project: str, systems: list[str], names: list[str]) -> list[str]:
    """The import of a human scores file (a lead's); the score names stored afterwards."""
    with st.expander("Import human scores", expanded=not names):
        st.markdown(
            "A CSV (or `.tsv`) with a header: a `system` column and either `item` (the item key) or `line` (the "
            "caption's 0-based line in the system's file), then one column per score — or `name` and `value` columns. "
            "Or a plain file with one number per line for one system's captions. The import is all-or-nothing.")
        up = st.file_uploader("Scores file", type=["csv", "tsv", "txt"], key="div_upload")
        c1, c2 = st.columns(2)
        lines_system = c1.selectbox("One score per line for system", ["(CSV with key columns)", *systems],
                                    key="div_lines_system")
        lines_name = c2.text_input("Score name (one-per-line files)", value="human", key="div_lines_name")
        replace_old = st.checkbox("Replace stored scores with the same names", key="div_replace")
        if st.button("Import", disabled=up is None, key="div_import"):
            from ...io.human_scores import import_human_scores
            try:
                per_line = lines_system != "(CSV with key columns)"
                summary = import_human_scores(store, project, up.getvalue(), source=up.name,
                                              system=lines_system if per_line else None,
                                              name=lines_name if per_line else None, replace=replace_old)
                st.success(f"Imported {summary.values} score(s) for {summary.captions} caption(s).")
                names = score_names(store, project)
            except AnnotatorError as exc:
                st.error(ui.md_escape(str(exc)))
    return names


def _correlation_table(correlation, human: str) -> None:
    """The correlations with ``human`` in one chosen scope (all captions, system means, within a system)."""
    fmt_cfg = {"format": "%.3f"}
    scopes = correlation.scopes()
    scope = st.radio("Scope", scopes, horizontal=True, key="div_scope",
                     format_func=lambda s: {"overall": "All captions", "system means": "System means"}.get(
                         s, f"Within {ui.md_escape(s)}"))
    table = correlation.table(scope, human)
    table.columns = [f"{a} · {b}" for a, b in table.columns]
    ui.show_table(table, width="stretch",
                 column_config={c: st.column_config.NumberColumn(**fmt_cfg) for c in table.columns})
    sub = correlation.rows[(correlation.rows["scope"] == scope) & (correlation.rows["human"] == human)]
    n_used = int(sub["n"].max()) if len(sub) else 0
    st.caption(
        f"n = {n_used} {'systems' if scope == 'system means' else 'captions'}. Standard: the metric as it is; "
        "M·ld and M·Lg: the metric times its system's ratio or gap. ld and Lg belong to a whole system, so every "
        "caption carries its system's value; within one system they are constant (empty cells) and weighting "
        "changes nothing. Kendall's τ is τ-b. Empty: fewer than three pairs or a constant column.")
    with st.expander("p-values and counts"):
        ui.show_table(sub, hide_index=True, width="stretch")
    for note in correlation.notes:
        st.caption(ui.md_escape(note))
