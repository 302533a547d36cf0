"""The lexical diversity page: how varied is each system's vocabulary next to the references, and does it track human
judgement? page.py draws the measures, the gap and the TTR curves; settings.py the settings; studies.py µ, rich and
sparse descriptions and the correlation with human scores; compute.py the cached computations they draw from."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ... import ui
from ..widgets.palette import category_colour, series_colours
from ...diversity import MEASURE_LABELS, lexical_gap
from ...diversity.readability import READABILITY_LABELS
from ...errors import AnnotatorError
from ...io.tables import FORMATS, file_name, mime_type, write_table
from ..widgets.downloads import table_download
from .compute import Texts, cached_pools, cached_report
from .settings import Choices, settings_form
from .studies import correlation_section, mu_section, rich_sparse_section


def render(ctx: ui.PageContext) -> None:
    """Draw the lexical diversity of the selected project's systems for ``ctx``."""
    ui.page_header(ctx)
    store, project = ctx.store, ctx.project
    choices = settings_form(store, project)
    report, texts = _measure(store, project, choices)
    _corpus_warnings(report)
    _measures_table(report)
    if report.systems:
        _gap_section(report, choices.measure)
    _ttr_curves(report, texts, choices.shuffles)
    mu_estimate = mu_section(texts, choices.mu, choices.measure)
    rich_sparse = rich_sparse_section(store, texts)
    correlation = correlation_section(ctx, texts, report.systems)
    _export(project, report, mu_estimate, rich_sparse, correlation)


def _measure(store, project: str, choices: Choices) -> tuple:
    """The diversity report of the project against the chosen reference corpus, and the texts the other sections
    compute from; an error stops the page."""
    try:
        from ...store.diversity import texts_fingerprint
        fp = texts_fingerprint(store, project)
        ref_upload, training = choices.ref_upload, choices.training
        ref_choice = (choices.ref_project, choices.ref_system, ref_upload.name if ref_upload is not None else None)
        ref_bytes = ref_upload.getvalue() if ref_upload is not None else None
        ref_fp = texts_fingerprint(store, choices.ref_project) if choices.ref_project else () if training is None else \
            (training.project, training.system, texts_fingerprint(store, training.project))
        report = cached_report(store.url, project, fp, choices.settings_key, choices.shuffles, ref_choice, ref_fp, ref_bytes)
    except (AnnotatorError, ValueError) as exc:
        st.error(ui.md_escape(str(exc)))
        st.stop()
    return report, Texts(store.url, project, fp, choices.settings_key, ref_choice, ref_fp, ref_bytes)


def _corpus_warnings(report) -> None:
    """Nothing to compare: no system captions, or a reference corpus without words."""
    if not report.systems:
        st.info("This project has no system captions yet, so there is nothing to compare with the references.")
    if report.references.measures["tokens"] == 0:
        st.warning("This project has no reference descriptions: the ratio ld and the lexical gap cannot be computed."
                   if report.reference is None or report.reference.own else
                   "The chosen reference corpus holds no words: the ratio ld and the lexical gap cannot be computed.")


def _measures_table(report) -> None:
    """Every measure of every corpus, with the reference corpus and the settings they were computed with."""
    st.subheader("Measures per corpus")
    frame = report.to_frame()
    shown = frame.rename(columns={"corpus": "Corpus", **MEASURE_LABELS, **READABILITY_LABELS})
    three = {label: st.column_config.NumberColumn(format="%.3f") for label in
             [*(MEASURE_LABELS[m] for m in ("ttr", "rttr", "logttr", "hdd", "mtld", "mattr", "ld", "lexical_gap")),
              *READABILITY_LABELS.values()]}
    # Two tables the page's width holds whole (sixteen columns in one ran past its right edge): the size and
    # diversity measures, then the ratio, the gap and readability, each starting with the corpus.
    split = [MEASURE_LABELS[m] for m in MEASURE_LABELS if m not in ("ld", "lexical_gap")]
    for columns in (split, [MEASURE_LABELS["ld"], MEASURE_LABELS["lexical_gap"], *READABILITY_LABELS.values()]):
        part = shown[["Corpus", *columns]]
        ui.show_table(part, hide_index=True, width="stretch", column_config={c: three[c] for c in columns if c in three})
    st.caption(ui.md_escape(f"Reference corpus cr: {report.describe_reference()}."
                            + (f" Note: {report.reference.note}." if report.reference and report.reference.note
                               else "")))
    st.caption(f"Tokens: {report.settings.tokens.describe()}. HD-D with samples of {report.settings.hdd_draws} tokens "
               f"(empty when a corpus is shorter); {report.settings.mtld.describe()}, forwards and backwards averaged; "
               f"MATTR over windows of {report.settings.mattr_window} tokens.")


def _colours(report) -> dict[str, str]:
    """Each corpus's colour: the systems' as on every page (the project's systems in order), then the references."""
    refs = report.references.name
    return series_colours([*(name for name in report.curves if name != refs), refs])


def _gap_section(report, measure: str) -> None:
    """Each system's ratio ld and lexical gap Lg, beside the gap's curve with the systems on it."""
    st.subheader("Diversity ratio and lexical gap")
    gap_df = report.gap_frame().rename(columns={"system": "System", measure: MEASURE_LABELS[measure],
                                                "ld": "ld", "lexical_gap": "Lg", **READABILITY_LABELS})
    # The table the page's width (its readability columns ran past a narrow column's edge), the curve below it.
    ui.show_table(gap_df, hide_index=True, width="stretch",
                  column_config={c: st.column_config.NumberColumn(format="%.3f") for c in gap_df.columns if c != "System"})
    left, right = st.columns([2, 3])
    left.caption(f"ld = {MEASURE_LABELS[measure]}(system) / {MEASURE_LABELS[measure]}(cr), "
                 f"{report.references.measures[measure]:.3f} for cr; "
                 f"Lg = 1 / (1 + exp(−{report.gap.alpha:g} (ld − {report.gap.mu:g}))). Readability (textstat, "
                 "each description one sentence): the measures the lexical-gap study tested and found not to track "
                 "description quality; their correlation with human scores is below.")
    xs = np.linspace(0.0, 1.5, 151)
    curve = pd.DataFrame({"ld": xs, "Lg": lexical_gap(xs, report.gap.mu, report.gap.alpha)})
    pts = gap_df.dropna(subset=["ld"])
    chart = alt.Chart(curve).mark_line(color="#888").encode(x=alt.X("ld:Q", title="ld"), y=alt.Y("Lg:Q", title="Lg"))
    if not pts.empty:
        chart = chart + alt.Chart(pts).mark_point(size=80, filled=True).encode(
            x="ld:Q", y="Lg:Q", tooltip=["System", "ld", "Lg"],
            color=category_colour("System", domain=list(pts["System"]), colours=_colours(report)))
    right.altair_chart(chart.properties(height=220), width="stretch")


def _ttr_curves(report, texts: Texts, shuffles: int) -> None:
    """TTR as the tokens are read: the whole corpora beside one chosen image's references and captions."""
    st.subheader("TTR curves")
    pools = cached_pools(texts.url, texts.project, texts.fp)
    curves = report.curves_frame()
    # One colour per series on both charts, a system's as on every page; an image's captions take the first
    # system's, its references the reference corpus's.
    corpora = list(report.curves)
    colours = _colours(report)
    human, machine = "references (human)", "captions (machine)"
    systems, fallback = [n for n in corpora if n != report.references.name], series_colours([machine, human])
    colours[human] = colours.get(report.references.name, fallback[human])
    colours[machine] = colours[systems[0]] if systems else fallback[machine]
    corpus_col, image_col = st.columns(2)
    with corpus_col:
        if curves.empty:
            st.info("No tokens to draw.")
        else:
            lengths = {n: int(c.tokens[-1]) for n, c in report.curves.items() if len(c.tokens)}
            equal = st.checkbox("Only up to the length of the shortest corpus", value=False, key="div_equal",
                                help="TTR falls as a text grows, so corpora are best compared at the same number of tokens.")
            if equal and lengths:
                curves = curves[curves["tokens"] <= min(lengths.values())]
            line = alt.Chart(curves).mark_line().encode(
                x=alt.X("tokens:Q", title="tokens read"), y=alt.Y("ttr:Q", title="TTR"),
                color=category_colour("corpus", "Corpus", domain=corpora, colours=colours),
                tooltip=["corpus", "tokens", alt.Tooltip("ttr:Q", format=".3f")])
            band = alt.Chart(curves.assign(lo=curves["ttr"] - curves["sd"], hi=curves["ttr"] + curves["sd"])).mark_area(
                opacity=0.15).encode(x="tokens:Q", y="lo:Q", y2="hi:Q",
                                     color=category_colour("corpus", "Corpus", domain=corpora, colours=colours))
            st.altair_chart((band + line).properties(height=320, title="Whole corpora"), width="stretch")
            st.caption(f"Mean TTR over {report.curves[report.references.name].shuffles} random orders of the captions "
                       "(seed 0); the band is ± one standard deviation. Steeper, lower curves mean more repeated words.")
    with image_col:
        if not pools.keys:
            st.info("No images with descriptions.")
        else:
            from ...diversity.curves import image_curves
            image_key = st.selectbox("Image", pools.keys, key="div_image")
            one = image_curves(pools, [image_key], tokens=report.settings.tokens, shuffles=int(shuffles))[0].to_frame()
            one["descriptions"] = one["corpus"].map({"human": human, "machine": machine})
            chart = alt.Chart(one).mark_line(point=True).encode(
                x=alt.X("tokens:Q", title="tokens read"), y=alt.Y("ttr:Q", title="TTR"),
                color=category_colour("descriptions", "Descriptions", domain=[human, machine], colours=colours),
                tooltip=["descriptions", "tokens", alt.Tooltip("ttr:Q", format=".3f")])
            st.altair_chart(chart.properties(height=320, title="One image"), width="stretch")
            st.caption("The image's references and its systems' captions, each in random orders as for the corpora. "
                       "In the lexical-gap study the machine descriptions' curves fall faster.")


def _export(project: str, report, mu_estimate, rich_sparse, correlation) -> None:
    """Every table computed on the page in one download, and the measures as CSV."""
    st.subheader("Export")
    fmt = st.selectbox("Format", list(FORMATS), key="div_format", format_func=lambda f: f"{f} — {FORMATS[f].description}")
    tables = report.to_tables()
    for extra in (mu_estimate, rich_sparse, correlation):
        if extra is not None:
            tables.update(extra.to_tables())
    table_download("Download the diversity tables" + (" and correlations" if correlation is not None else ""),
                   tables, fmt, f"{project}-diversity", key="div_download")
    st.download_button("Download the measures as CSV", data=write_table(report.to_frame(), "csv"),
                       file_name=file_name(f"{project}-diversity-measures", "csv"), mime=mime_type("csv"), key="div_csv")
    if math.isnan(report.references.measures.get("hdd", math.nan)) and report.references.measures["tokens"]:
        st.caption("HD-D is empty for corpora with fewer tokens than the sample size.")
