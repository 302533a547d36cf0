"""The Judges page (leads, analysts): how far to trust each AI judge, against a human layer.

Every figure comes from the :class:`annotator.judges.report.JudgeReport` that ``annotator judge report`` prints:
per judge its signature, accuracy and Cohen's kappa with the interval against the layer and each annotator beside
the annotators' own kappas, per-type precision, recall, F1 and kappa, the expected calibration error with its
reliability diagram, the confusion matrix, span precision, recall and F1, the judges' agreement with each other,
the effect of suggestions, and the captions it disagrees with the humans on most confidently, each of which a
lead opens on Adjudication. Leads also choose here which judge (if any) pre-fills the annotate panel.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ... import ui
from ...accounts.access import LEADS
from ...errors import AnnotatorError
from ...io.tables import FORMATS
from ...layers import available_layers, parse_layer
from ...model import Role
from ...store.analysis_queries import annotators_in
from ..widgets.downloads import table_download
from ..shell.page_data import judges_stamp, scored_project
from ..widgets.formatting import number
from .charts import confusion_chart, reliability_diagram

esc = ui.md_escape
#: Session key the Adjudication page reads: the caption to open there first (annotator.ui.adjudicate).
OPEN_ON_ADJUDICATION = "adj_open_caption"
OFF = "(off)"


@st.cache_resource(show_spinner="Measuring the judges against the human labels…", max_entries=8)
def _report(url: str, project: str, version: tuple, stamp: tuple, layer: str, judges: tuple, _store, _loaded):
    from ...judges.report import judge_report
    return judge_report(_store, project, layer, list(judges), loaded=_loaded)


def _loaded(store, project: str, version: tuple):
    """The project and its detections, shared with the Error estimates page's cache."""
    from ...store.content_selection import project_fingerprint
    return scored_project(store.url, project, project_fingerprint(store, project), version[2:], store)


def _controls(frame, names: list[str]) -> tuple[str, list[str]]:
    layers = [lay.label for lay in available_layers(annotators_in(frame))]
    c1, c2 = st.columns([1, 3])
    layer = c1.selectbox("Human labels", layers, key="jdg_layer", format_func=lambda s: parse_layer(s).title,
                         help="The judgements each judge is measured against.")
    chosen = c2.multiselect("Judges", names, default=names, key="jdg_judges",
                            help="'detectors' is the built-in word-list detectors.")
    if not chosen:
        st.warning("Choose at least one judge.")
        st.stop()
    return layer, chosen


def _suggestion_setting(ctx: ui.PageContext, project: str, names: list[str]) -> None:
    """The judge that pre-fills the annotate panel: shown to everyone, changed by leads."""
    from ...judges.suggestions import set_suggestion_judge, suggestion_judge
    current = suggestion_judge(ctx.store, project)
    with st.expander("Suggestions on the annotate page: " + (f"from {current}" if current else "off")):
        st.caption("The annotate panel opens with the judge's label, types and spans for a first annotator — "
                   "never for the second annotator of a double-annotated caption, never for practice items, never "
                   "during blind correction with closed views, never on Adjudication. Each judgement records "
                   "whether it was made with a suggestion, and the figures below compare the two.")
        if Role(ctx.user.role) not in LEADS:
            st.caption("Only leads and admins change this.")
            return
        options = [OFF] + names
        choice = st.selectbox("Pre-fill from", options, index=options.index(current) if current in options else 0,
                              key="jdg_suggest_choice")
        if st.button("Save", key="jdg_suggest_save"):
            try:
                set_suggestion_judge(ctx.store, project, None if choice == OFF else choice, actor_role=ctx.user.role)
            except AnnotatorError as exc:
                st.error(esc(str(exc)))
            else:
                st.rerun()


def _overview(report) -> None:
    st.subheader("Judges against " + esc(parse_layer(report.layer).title), anchor=False)
    st.caption(f"{report.captions:,} captions labelled in this layer (practice items left out). A judge says "
               f"inaccurate at probability 0.5 or more. ECE: {report.bins} equal-width bins of the probability.")
    ratios = {c: _three for c in ("accuracy", "kappa", "kappa low", "kappa high", "ECE", "span F1")}
    # each judge's signature heads its own section below: the table keeps to the figures
    ui.show_table(report.judges_frame().drop(columns=["signature"]), ratios, hide_index=True, width="stretch")
    st.subheader("As good as a second annotator?", anchor=False)
    st.caption("Each judge's kappa against the layer and against each annotator, beside the annotators' kappa with "
               "each other and the judges' with each other (95% bootstrap intervals).")
    ui.show_table(report.kappa_frame(), ratios, hide_index=True, width="stretch")


def _three(v) -> str:
    return number(v, 3)


def _judge_section(ctx: ui.PageContext, report, j) -> None:
    from ...judges.outputs import signature_text
    st.subheader(f"Judge {esc(j.judge)}", anchor=False)
    st.text(signature_text(j.signature))
    a = j.vs_layer
    m = st.columns(5)
    m[0].metric("Captions", f"{j.n:,}", help=f"{j.unscored} of the layer's captions have no output of this judge")
    m[1].metric("Accuracy", number(a.accuracy, 3))
    ci = f"interval {number(a.kappa_ci[0], 3)} – {number(a.kappa_ci[1], 3)}" if a.kappa_ci else "no interval"
    m[2].metric("Cohen's kappa", number(a.kappa, 3), help=ci)
    m[3].metric("Calibration error (ECE)", number(j.ece, 3))
    m[4].metric("Span F1 (tokens)", number(j.spans.f1, 3),
                help=f"{j.spans.captions_with_spans} of {j.spans.captions} captions carry human error spans")
    left, right = st.columns(2)
    confusion_chart(j, report.layer, container=left)
    reliability_diagram(j, container=right)
    with st.expander("Per error type"):
        rows = report.types_frame()
        ui.show_table(rows[rows["judge"] == j.judge].drop(columns=["judge"]), hide_index=True, width="stretch")
    if j.suggestions:
        _suggestion_effect(j)
    _disagreements(ctx, j)


def _suggestion_effect(j) -> None:
    rows = [{"judgements": e.group, "count": e.judgements,
             "agreement with the judge": e.agreement.accuracy if e.agreement else None,
             "kappa with the judge": e.agreement.kappa if e.agreement else None,
             "median seconds per caption": e.median_seconds} for e in j.suggestions]
    st.caption("Human judgements made with the panel pre-filled from a judge and without (anchoring shows as "
               "higher agreement with the judge)")
    ui.show_table(pd.DataFrame(rows), hide_index=True, width="stretch")


def _disagreements(ctx: ui.PageContext, j) -> None:
    """The captions the judge disagrees with the humans on most confidently; a lead opens one on Adjudication."""
    if not j.disagreements:
        st.caption("The judge agrees with the layer on every caption it scored.")
        return
    with st.expander(f"Most confident disagreements ({len(j.disagreements)})"):
        frame = pd.DataFrame([{"caption_id": d.caption_id, "system": d.system, "item": d.item, "caption": d.caption,
                               "humans": d.human + (f" ({' '.join(d.human_types)})" if d.human_types else ""),
                               "judge p(inaccurate)": d.p_inaccurate, "judge types": " ".join(d.judge_types),
                               "confidence": d.confidence} for d in j.disagreements])
        ui.show_table(frame, hide_index=True, width="stretch")
        if Role(ctx.user.role) not in LEADS:
            return
        c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
        cid = c1.selectbox("Caption", frame["caption_id"].tolist(), key=f"jdg_open_{j.judge}",
                           format_func=lambda c: f"{frame.loc[frame.caption_id == c, 'system'].iloc[0]} · "
                                                 f"{frame.loc[frame.caption_id == c, 'item'].iloc[0]}")
        if c2.button("Open on Adjudication", key=f"jdg_go_{j.judge}"):
            st.session_state[OPEN_ON_ADJUDICATION] = int(cid)
            st.switch_page("pages/adjudicate.py")


def render(ctx: ui.PageContext) -> None:
    """Draw the Judges page for ``ctx``."""
    from ...judges import judge_names
    project = ui.page_header(ctx)
    store = ctx.store
    frame, version = ui.project_judgements(ctx)
    names = judge_names(store, project)
    _suggestion_setting(ctx, project, names)
    if frame.empty:
        st.info("Nobody has judged a caption of this project yet: judges are measured against human labels.")
        st.stop()
    layer, chosen = _controls(frame, names)
    try:
        loaded = _loaded(store, project, version) if "detectors" in chosen else None
        report = _report(store.url, project, version, judges_stamp(store, project), layer, tuple(chosen), store,
                         loaded)
    except AnnotatorError as exc:
        ui.show_error_and_stop(exc)
    _overview(report)
    for j in report.judges:
        st.divider()
        _judge_section(ctx, report, j)
    st.divider()
    fmt = st.selectbox("Format", list(FORMATS), key="jdg_format", format_func=lambda f: f"{f} — {FORMATS[f].description}")
    table_download("Download every judge table", report, fmt, f"{project}-judges", key="jdg_download",
                   caption=f"Judges against {report.layer}")
