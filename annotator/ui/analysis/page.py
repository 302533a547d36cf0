"""The error analysis page (analysts, leads): accuracy, errors per description and error types, per system
and layer."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from ... import ui
from ...adjudication import caption_case
from ...analysis import BUCKETS, compare_systems, error_tables, examples
from ...io.tables import FORMATS
from ...layers import available_layers, parse_layer
from ...store.analysis_queries import annotators_in
from ...store.caption_queries import caption_details
from ...taxonomy import taxonomy
from ...team_selection import team_frame
from ..widgets.downloads import table_download
from ..widgets.palette import category_colour, series_colours
from ..shell.team_choice import team_picker


esc = ui.md_escape
BAR_ROW_PX = 24  # the height of one bar of the error-type chart: room for its label in the axis font


def count_axis(field: str, values, channel: str):
    """A quantitative channel for counts: whole-number ticks from 0, at least 0–1 wide (a chart of zeros and
    ones otherwise gets a 0–1 axis with fractional ticks, which reads as shares)."""
    top = max(1, int(pd.Series(values).max() or 0)) if len(values) else 1
    axis = alt.Axis(format="d", tickMinStep=1, title=f"{field}")
    enc = alt.X if channel == "x" else alt.Y
    return enc(f"{field}:Q", axis=axis, scale=alt.Scale(domain=[0, top], nice=True))


def render(ctx: ui.PageContext) -> None:
    """Draw the error analysis of the selected project for ``ctx``."""
    project = ui.page_header(ctx)
    store = ctx.store

    frame, version = ui.project_judgements(ctx)
    if frame.empty:
        st.info("Nobody has judged a caption of this project yet.")
        st.stop()

    annotators = annotators_in(frame)
    # The choices on one row, so the figures start on the first screen.
    c0, c1, c2, c3 = st.columns([3, 2, 3, 2], vertical_alignment="bottom")
    team = team_picker(store, project, annotators, key="ana_team", minimum=1, container=c0,
                       help="Whose annotations count: the per-annotator layers offered and the adjudicated and "
                            "consensus layers built from them. The same team is chosen on Agreement, Adjudication "
                            "and Rescoring.")
    if not team:
        st.warning("Choose at least one annotator.")
        st.stop()
    if len(team) < len(annotators):
        frame, version = team_frame(frame, team), (*version, tuple(team))
    layers = [lay.label for lay in available_layers(team)]
    if st.session_state.get("ana_layer") not in layers:
        st.session_state.pop("ana_layer", None)  # an annotator just left out of the team
    layer_choice = c1.selectbox("Judgements", layers, key="ana_layer", format_func=lambda s: parse_layer(s).title,
                                help="Adjudicated: a lead's decision where there is one, otherwise the annotators' judgement "
                                     "when they agree (or when only one judged the caption). Captions whose labels differ "
                                     "and are not adjudicated are left out.")
    all_systems = ui.project_systems(ctx)
    chosen = c2.multiselect("Systems", all_systems, default=all_systems, key="ana_systems",
                            help="Several systems are shown side by side.")
    no_practice = c3.toggle("Leave out practice items", value=False, key="ana_no_practice")
    if not chosen:
        st.warning("Choose at least one system.")
        st.stop()

    layer = ui.judgement_layer(ctx, frame, version, layer_choice)
    if len(chosen) == 1:
        report = error_tables(layer, system=chosen[0], exclude_practice=no_practice)
        per_system = {chosen[0]: report}
    else:
        report = compare_systems(layer, chosen, exclude_practice=no_practice)
        per_system = report.tables
    overall = error_tables(layer, exclude_practice=no_practice) if len(chosen) == len(all_systems) else None

    _left_out(per_system)
    _headline_figures(per_system)
    _errors_per_description(report, per_system, all_systems)
    order = _error_types(report, per_system, all_systems)
    _examples(store, project, layer, chosen, no_practice)
    _export(report, project, layer_choice, order, overall if len(chosen) > 1 else None)


def _left_out(per_system: dict) -> None:
    """What the figures leave out: unresolved disagreements and inaccurate captions without known types."""
    unresolved = sum(t.unresolved for t in per_system.values())
    untyped = sum(t.untyped for t in per_system.values())
    # One compact line each, so the figures stay on the first screen.
    if unresolved:
        # No colour directive: the page's Markdown check counts coloured text as a name rendered (it must find none).
        st.caption(f":material/warning: {unresolved} captions are left out: their annotators disagree on "
                   "the label and no lead has adjudicated them yet (see the Adjudication page).")
    if untyped:
        st.caption(f":material/info: {untyped} inaccurate captions have no known error types (types differ between "
                   "annotators, or none were ticked); they count as inaccurate but not in the error tables.")


def _headline_figures(per_system: dict) -> None:
    """Per system: captions judged, the share inaccurate and errors per inaccurate caption."""
    for system, t in per_system.items():  # one row per system, its three figures side by side
        name, c1, c2, c3 = st.columns([2, 2, 2, 3], vertical_alignment="center")
        name.markdown(f"**{esc(system)}**")
        c1.metric("Captions judged", t.total)
        c2.metric("Inaccurate", "—" if t.share_inaccurate is None else f"{t.share_inaccurate:.0%}",
                  help=f"{t.inaccurate} of {t.total}")
        c3.metric("Errors per inaccurate caption",
                  "—" if t.errors_per_inaccurate is None else f"{t.errors_per_inaccurate:.2f}")


def _errors_per_description(report, per_system: dict, all_systems: list[str]) -> None:
    """How many error types the inaccurate descriptions carry: the table and its chart."""
    st.subheader("Errors per inaccurate description")
    errors_long = pd.DataFrame([{"system": s, "errors": b, "descriptions": t.errors_per_description[b]}
                                for s, t in per_system.items() for b in BUCKETS])
    chart = alt.Chart(errors_long).mark_bar().encode(
        x=alt.X("errors:N", sort=list(BUCKETS), title="error types on the description",
                axis=alt.Axis(labelAngle=0)),
        xOffset="system:N", y=count_axis("descriptions", errors_long["descriptions"], "y"),
        color=category_colour("system", domain=list(per_system), colours=series_colours(all_systems)),
        tooltip=["system", "errors", "descriptions"])
    # Tables the page's full width (every system's counts and shares in view), each chart below its table.
    ui.show_table(report.errors_frame(), hide_index=True, width="stretch")
    st.altair_chart(chart.properties(height=240), width="stretch")


def _error_types(report, per_system: dict, all_systems: list[str]) -> str:
    """The error-type table and chart in the chosen order, and the group and share tables. Returns the order."""
    tax = taxonomy()
    st.subheader("Error types")
    st.caption("Two shares per type: the **share of errors** is its count over every error type ticked; the **share of "
               "descriptions** is the captions carrying it over the captions whose types are known, accurate ones included "
               "(the error-analysis study's 26 % unrelated descriptions is a share of descriptions).")
    order = st.radio("Order", ["grouped", "count", "taxonomy"], horizontal=True, key="ana_order",
                     format_func={"grouped": "by group", "count": "by count", "taxonomy": "as in the taxonomy"}.get)
    # The type's name only: its id says the same thing a second time (exports and the CLI keep both).
    types_table = report.types_frame(order).drop(columns=["type"])
    types_long = pd.DataFrame([{"system": s, "type": et.name, "group": et.group, "count": t.type_counts[et.id]}
                               for s, t in per_system.items() for et in tax.types])
    sort_names = types_table["name"].tolist()
    several = len(per_system) > 1
    # Counts on a whole-number axis; several systems told apart by hue (bars side by side), not by shade.
    # Every type's name whole beside its bar: no label dropped for lack of room, none cut short.
    bars = alt.Chart(types_long).mark_bar().encode(
        y=alt.Y("type:N", sort=sort_names, title=None, axis=alt.Axis(labelOverlap=False, labelLimit=0)),
        x=count_axis("count", types_long["count"], "x"),
        color=category_colour("system", domain=list(per_system), colours=series_colours(all_systems)) if several
        else category_colour("group", domain=list(tax.groups)),
        yOffset="system:N" if several else alt.Undefined,
        tooltip=["system", "type", "group", "count"])
    # With several systems, short headings (the two shares are defined above the table), so the table fits the
    # page; one system's table keeps the long ones, as the exports do.
    shown = types_table if not several else types_table.rename(
        columns=lambda c: c.replace("share of errors", "of errors").replace("share of descriptions", "of descr."))
    ui.show_table(shown, hide_index=True, width="stretch")
    st.altair_chart(bars.properties(height=BAR_ROW_PX * len(tax.types) * len(per_system)), width="stretch")
    ui.show_table(report.groups_frame(), hide_index=True, width="stretch")
    ui.show_table(report.share_frame(), hide_index=True, width="stretch")
    return order


def _examples(store, project: str, layer, systems: list[str], no_practice: bool) -> None:
    """Click through to captions with a type, a number of errors or a label; one opened beside its picture."""
    tax = taxonomy()
    st.subheader("Examples")
    kinds = {"type": "with an error type", "errors": "with a number of errors", "label": "judged accurate / inaccurate"}
    c1, c2, c3 = st.columns(3)
    kind = c1.selectbox("Captions", list(kinds), format_func=kinds.get, key="ana_ex_kind")
    if kind == "type":
        value = c2.selectbox("Error type", list(tax.ids), format_func=lambda t: tax.get(t).name, key="ana_ex_type")
        filt = {"type_id": value}
    elif kind == "errors":
        value = c2.selectbox("Errors", list(BUCKETS) + ["untyped"], key="ana_ex_errors")
        filt = {"errors": value}
    else:
        value = c2.selectbox("Label", ["inaccurate", "accurate"], key="ana_ex_label")
        filt = {"label": value}
    ex_system = c3.selectbox("System", systems, key="ana_ex_system")
    ex = examples(layer, system=ex_system, exclude_practice=no_practice, limit=50, **filt)
    if ex.empty:
        st.caption("No caption matches.")
    else:
        details = caption_details(store, project, ex["caption_id"].tolist())
        ex = ex.merge(details[["caption_id", "item_key", "text"]], on="caption_id", how="left")
        ui.show_table(ex[["caption_id", "item_key", "system", "text", "label", "types", "status"]], hide_index=True)
        opened = st.selectbox("Open", ex["caption_id"].tolist(), key="ana_ex_open",
                              format_func=lambda c: f"caption {c} — {ex.loc[ex.caption_id == c, 'item_key'].iloc[0]}")
        det = details[details.caption_id == opened].iloc[0]
        row = ex[ex.caption_id == opened].iloc[0]
        left, right = st.columns([3, 2])
        with left:
            ui.case_picture(caption_case(store, project, int(opened)))
        with right:
            st.text(str(det.text))
            st.text(f"{row['label']}: {', '.join(tax.get(t).name for t in str(row['types']).split()) or '—'} ({row['status']})")


def _export(report, project: str, layer_choice: str, order: str, overall) -> None:
    """Every table in one download and one a button; ``overall`` (several systems together) shown when given."""
    st.subheader("Export")
    fmt = st.selectbox("Format", list(FORMATS), key="ana_format", format_func=lambda f: f"{f} — {FORMATS[f].description}")
    stem = f"{project}-{parse_layer(layer_choice).user or layer_choice}"
    tables = report.to_tables()
    tables["Error types"] = report.types_frame(order)  # exports keep the type id beside its name
    table_download("Download all tables", tables, fmt, f"{stem}-tables", key="ana_dl_all",
                   caption=f"Error analysis of {project}")
    cols = st.columns(len(tables))
    for col, (name, df) in zip(cols, tables.items()):
        table_download(name, {name: df}, fmt, f"{stem}-{name}", key=f"ana_dl_{name}", container=col, caption=name)
    if overall is not None:
        with st.expander("All chosen systems together"):
            ui.show_table(overall.types_frame(order), hide_index=True)
