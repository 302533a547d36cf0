"""The agreement page (leads): kappa with its interval, error-type agreement, disagreements, practice items."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from ... import ui
from ..widgets.palette import category_colour
from ...adjudication import caption_case
from ...agreement import agreement_report
from ...errors import AnnotatorError
from ...io.tables import FORMATS
from ...store.analysis_queries import annotators_in
from ...store.caption_queries import caption_details, practice_items
from ...store.projects import set_practice
from ...taxonomy import taxonomy
from ..widgets.downloads import table_download
from .suggestions import suggestion_section
from ..shell.team_choice import team_picker


esc = ui.md_escape
ALL_SYSTEMS = "All systems"
PAGE_SIZE = 200


@st.cache_resource(show_spinner="Computing agreement…", max_entries=16)
def _report(url: str, project: str, version: tuple, annotators: tuple, system: str | None, _frame):
    # Adjudications in the shared frame never count: the report takes annotations only.
    return agreement_report(_frame, list(annotators), system=system)


@st.cache_resource(show_spinner="Computing span agreement…", max_entries=16)
def _span_report(url: str, project: str, version: tuple, annotators: tuple, system: str | None, _store):
    from ...span_agreement import span_agreement
    return span_agreement(_store, project, list(annotators), system=system)


def _span_section(store, project: str, version: tuple, annotators, system: str | None, a: str, b: str) -> None:
    """Agreement on where: the chosen pair's token F1 per type, and every pair's figures (annotator.span_agreement)."""
    st.subheader("Where: error spans")
    # Reading every judgement with its caption text is heavier than the figures above: asked for, not by default.
    if not st.toggle("Compare the words the annotators marked", key="agr_spans",
                     help="Token and exact-span F1 of the error spans, per type (annotator agreement --spans)"):
        return
    report = _span_report(store.url, project, version, tuple(annotators), system, store)
    pair = next((p for p in report.pairs if {p.a, p.b} == {a, b}), None)
    if pair is None or not pair.per_type:
        st.caption("No error spans marked by these two yet.")
        return
    m = st.columns(3)
    m[0].metric("Token micro F1", _num(pair.micro_f1), help="2·Σ both / Σ (a + b) over the types either marked")
    m[1].metric("Exact span F1", _num(pair.exact_f1), help="spans with the same caption, start, end and type")
    m[2].metric("Typed errors not localised", f"{pair.not_localised[pair.a]} / {pair.not_localised[pair.b]}",
                help=f"caption-level error types without a span: {pair.a} / {pair.b}")
    ui.show_table(report.type_frame(pair).rename(columns={"A tokens": f"{pair.a} tokens", "B tokens": f"{pair.b} tokens"}),
                 hide_index=True)
    with st.expander("Span agreement of every pair"):
        ui.show_table(report.pairs_frame(), hide_index=True)


def _num(x, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


PER_TYPE_ROW_PX = 24  # height of one type's bar row in the per-type chart


def render(ctx: ui.PageContext) -> None:
    """Draw the agreement dashboard for the lead in ``ctx``."""
    project = ui.page_header(ctx)
    store = ctx.store

    frame, version = ui.project_judgements(ctx)
    annotator_names = annotators_in(frame)
    if len(annotator_names) < 2:
        st.info("Agreement needs at least two annotators who judged the same captions. "
                "Assign a double-annotation sample on the Assignment page first.")
        st.stop()

    c1, c2, c3 = st.columns([5, 2, 3])
    chosen = team_picker(store, project, annotator_names, key="agr_annotators", minimum=2, container=c1,
                         help="Every pair among them is compared; alpha and Fleiss' kappa use them all. "
                              "The same team is chosen on Adjudication, Error analysis and Rescoring.")
    systems = ui.project_systems(ctx)
    system_choice = c2.selectbox("System", [ALL_SYSTEMS] + systems, key="agr_system")
    system = None if system_choice == ALL_SYSTEMS else system_choice
    if len(chosen) < 2:
        st.warning("Choose at least two annotators.")
        st.stop()

    report = _report(store.url, project, version, tuple(chosen), system, frame)

    if report.practice_captions_excluded:
        st.info(f"{report.practice_captions_excluded} captions of {report.practice_items_excluded} practice items "
                f"({report.practice_judgements_excluded} judgements) are left out of every figure on this page.")
    else:
        st.caption("No practice items among these judgements.")

    a, b = _one_pair(report, c3)
    _all_annotators(report)
    _span_section(store, project, version, chosen, system, a, b)
    _disagreements(store, project, report, a, b)
    suggestion_section(store, project)
    _practice_items(store, project)
    _export(report, project)


def _one_pair(report, column) -> tuple[str, str]:
    """The chosen pair (either order; the first is the reference for error types; its choice in ``column``, on
    the filters' row): its figures and charts. Returns the pair."""
    pair_options = [(p.a, p.b) for p in report.pairs]
    pair_options += [(b, a) for a, b in pair_options]
    a, b = column.selectbox("Pair", pair_options, key="agr_pair", format_func=lambda p: f"{p[0]} vs {p[1]}",
                            help="The first of the pair is the reference for error types.")
    pair = report.pair(a, b)
    if pair.n == 0:
        st.warning("These two annotators have no caption in common (outside practice items).")
    else:
        _pair_figures(report, pair, a, b)
        _pair_charts(pair, a, b)
    return a, b


def _pair_figures(report, pair, a: str, b: str) -> None:
    """The pair's coarse agreement (shared captions, raw agreement, kappa with its interval) and its error-type
    agreement (precision, recall, F1)."""
    m = st.columns(4)
    m[0].metric("Shared captions", pair.n)
    m[1].metric("Raw agreement", _num(pair.agreement))
    ci = (f"{report.bootstrap.confidence:.0%} interval {_num(pair.kappa_ci[0])} – {_num(pair.kappa_ci[1])}"
          if pair.kappa_ci else "no interval")
    m[2].metric("Cohen's kappa", _num(pair.kappa), help=f"{ci}; percentile bootstrap, "
                f"{report.bootstrap.n_resamples} resamples, seed {report.bootstrap.seed}")
    m[3].metric("Both inaccurate", pair.both_inaccurate)
    st.text(f"Judged inaccurate: {a} {pair.inaccurate[a]}, {b} {pair.inaccurate[b]}, both {pair.both_inaccurate}; "
            f"kappa {ci}.")
    m = st.columns(4)
    m[0].metric("Type precision", _num(pair.fine.precision), help=f"Share of {esc(b)}'s types that {esc(a)} also ticked")
    m[1].metric("Type recall", _num(pair.fine.recall), help=f"Share of {esc(a)}'s types that {esc(b)} also ticked")
    m[2].metric("Type F1", _num(pair.fine.f1))
    m[3].metric("Macro F1", _num(pair.fine.macro_f1), help="Mean over the types either of them used")
    if pair.fine_pending:
        st.caption(f"Error types compared on {pair.fine.n} captions; {pair.fine_pending} captions both found inaccurate "
                   "are still waiting for one annotator's error types (fine pass) and are not counted yet.")


def _pair_charts(pair, a: str, b: str) -> None:
    """The pair's confusion heat map and its per-type figure as a chart and a table."""
    cf = pd.DataFrame([{"reference": f"{a}: {ra}", "other": f"{b}: {rb}", "captions": pair.confusion[i][j]}
                       for i, ra in enumerate(("accurate", "inaccurate")) for j, rb in enumerate(("accurate", "inaccurate"))])
    # Labels whole and upright: the annotator's name over its columns' labels, beside its rows'.
    heat = alt.Chart(cf).mark_rect().encode(
        x=alt.X("other:N", title=None, axis=alt.Axis(labelAngle=0, labelLimit=0, orient="top")),
        y=alt.Y("reference:N", title=None, axis=alt.Axis(labelLimit=0)),
        color=alt.Color("captions:Q", scale=alt.Scale(scheme="blues"), legend=None),
        tooltip=["reference", "other", "captions"])
    text = alt.Chart(cf).mark_text(fontSize=16).encode(x="other:N", y="reference:N", text="captions:Q")
    left, right = st.columns([1, 2])
    left.altair_chart((heat + text).properties(height=220, title="Confusion"), width="stretch")

    tf = pair.fine.type_frame()
    metric = right.radio("Per-type figure", ["f1", "kappa", "precision", "recall"], horizontal=True, key="agr_metric")
    used = tf[(tf.iloc[:, 3] + tf.iloc[:, 4]) > 0]
    # The per-type chart as tall as its rows (every type's name legible), its table beside it.
    chart_col, table_col = st.columns([2, 3])
    if used.empty:
        chart_col.caption("No error types on captions both found inaccurate.")
    else:
        height = PER_TYPE_ROW_PX * len(used) + 40
        bars = alt.Chart(used).mark_bar().encode(
            x=alt.X(f"{metric}:Q", scale=alt.Scale(domain=[-1 if metric == "kappa" else 0, 1])),
            y=alt.Y("name:N", sort="-x", title=None), color=category_colour("group", domain=list(taxonomy().groups)),
            tooltip=["name", "group", "both", metric])
        chart_col.altair_chart(bars.properties(title=f"Per-type {metric}", height=height), width="stretch",
                               height=height + 40)
    ui.show_table(tf, container=table_col, hide_index=True, width="stretch")


def _all_annotators(report) -> None:
    """Krippendorff's alpha, Fleiss' kappa and the table of every pair."""
    st.subheader("All annotators")
    m = st.columns(3)
    m[0].metric("Krippendorff's alpha", _num(report.alpha), help=f"nominal, over {report.alpha_units} captions with two "
                "or more judgements (missing judgements allowed)")
    m[1].metric("Fleiss' kappa", _num(report.fleiss_kappa), help=f"over the {report.fleiss_items} captions judged by all "
                f"{report.fleiss_m} chosen annotators")
    m[2].metric("Captions judged by two or more", report.multiply_judged)
    ui.show_table(report.pairs_frame(), hide_index=True)


def _disagreements(store, project: str, report, a: str, b: str) -> None:
    """The pair's disagreements a page at a time, one opened beside its picture and both judgements."""
    st.subheader("Disagreements")
    with_types = st.toggle("Include error-type disagreements", value=False, key="agr_with_types")
    dis = report.disagreements(a, b, types=with_types)
    if dis.empty:
        st.caption("No disagreements between these two.")
    else:
        st.caption(f"{len(dis)} captions. Resolve them on the Adjudication page.")
        n_pages = (len(dis) - 1) // PAGE_SIZE + 1
        page_no = int(st.number_input("Page", 1, n_pages, 1, key="agr_dis_page")) if n_pages > 1 else 1
        shown = dis.iloc[(page_no - 1) * PAGE_SIZE: page_no * PAGE_SIZE]
        details = caption_details(store, project, shown["caption_id"].tolist())
        shown = shown.merge(details[["caption_id", "item_key", "text"]], on="caption_id", how="left")
        ui.show_table(shown.drop(columns=["item_id"]), hide_index=True)
        opened = st.selectbox("Open a disagreement", shown["caption_id"].tolist(), key="agr_open",
                              format_func=lambda c: f"caption {c} — {shown.loc[shown.caption_id == c, 'item_key'].iloc[0]}")
        row = shown[shown.caption_id == opened].iloc[0]
        left, right = st.columns([3, 2])
        case = caption_case(store, project, int(opened))
        with left:
            ui.case_picture(case)
        with right:
            st.text(f"{row['system']}, item {row['item_key']}")
            st.text(str(row["text"]))
            rows = [{"annotator": j.user, "label": j.label.value if j.label else "skipped",
                     "types": ", ".join(taxonomy().get(t).name for t in j.error_types if t in taxonomy().ids),
                     "note": j.note} for j in case.annotations if j.user in (a, b)]
            ui.show_table(pd.DataFrame(rows), hide_index=True)
            if st.button("Mark this item as practice", key="agr_mark_one",
                         help="Practice items are left out of agreement (use it for guideline examples)."):
                set_practice(store, project, [row["item_key"]], True)
                st.session_state["agr_flash"] = f"Item {esc(row['item_key'])} is now a practice item."
                st.rerun()


def _practice_items(store, project: str) -> None:
    """Mark or unmark practice items (left out of every agreement figure); the page runs again after a change."""
    with st.expander("Practice items"):
        st.caption("Items used as guideline or training examples. Their captions are left out of every agreement figure.")
        current = practice_items(store, project)
        st.text("Current practice items: " + (", ".join(current) if current else "none"))
        keys_text = st.text_area("Item keys (one per line)", key="agr_practice_keys")
        keys = [k.strip() for k in keys_text.splitlines() if k.strip()]
        c1, c2 = st.columns(2)
        for button, col, practice in (("agr_practice_set", c1, True), ("agr_practice_unset", c2, False)):
            title = "Mark as practice" if practice else "Remove the practice mark"
            if col.button(title, key=button, disabled=not keys):
                try:
                    n = set_practice(store, project, keys, practice)
                except AnnotatorError as exc:
                    st.error(esc(str(exc)))
                else:
                    # Figures above were drawn before the click: run again so they leave these items out.
                    st.session_state["agr_flash"] = (f"{n} items marked as practice." if practice
                                                     else f"{n} items are no longer practice items.")
                    st.rerun()
        if st.session_state.get("agr_flash"):
            st.success(st.session_state.pop("agr_flash"))


def _export(report, project: str) -> None:
    """Every agreement table in one download."""
    st.subheader("Export")
    fmt = st.selectbox("Format", list(FORMATS), key="agr_format", format_func=lambda f: f"{f} — {FORMATS[f].description}")
    table_download("Download every agreement table", report, fmt, f"{project}-agreement", key="agr_download",
                   caption="Inter-annotator agreement")
