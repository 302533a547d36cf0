"""The rescoring page: how much would the scores improve if one kind of error were fixed?"""

from __future__ import annotations

import streamlit as st

from ... import ui
from ...report import json_text
from ...correction import corrections_table
from ...correction.sets import CorrectionSet, correction_set
from ...correction.blind import views_closed_for
from ...correction.queues import correction_layers, corrections_version, default_layer
from ...errors import AnnotatorError
from ...io.tables import FORMATS, file_name
from ...layers import ADJUDICATED, available_layers, parse_layer
from ...accounts.access import LEADS
from ...metric_settings import TOKENIZE_DESCRIPTIONS, project_tokenize, set_project_tokenize, tokenize_header
from ...metrics import REGISTRY
from ...rescoring import (
    ALL_CORRECTIONS_NOTE, ALL_CORRECTIONS_ROW, DEFAULT_RESAMPLES, by_type_table, rescore_lines, table_frame,
)
from ...taxonomy import taxonomy
from ..widgets.downloads import table_download
from ..widgets.deltas import metric_delta
from ..shell.team_choice import team_picker

METRIC_LABELS = REGISTRY.score_labels()


def _layer_name(s: str) -> str:
    if s == "any":
        return "nobody judged these captions (all stored corrections)"
    layer = parse_layer(s)
    return "the adjudicated judgements" if layer == ADJUDICATED else layer.title


@st.cache_data(show_spinner="Rescoring… (the first run starts METEOR's Java process, which can take a while)",
               max_entries=32)
def _table(url: str, project: str, system: str, layer: str | None, correctors: tuple, resamples: int, seed: int,
           fingerprint: tuple, tokenize: str, baseline_only: bool = False):
    store = ui.get_store()
    corrections = None
    if baseline_only:
        # The system's captions without any correction: the baseline row needs no layer.
        every = correction_set(store, project, system)
        corrections = CorrectionSet(project, system, every.baseline, every.line_caption_ids)
    return by_type_table(store, project, system, layer=layer, correctors=list(correctors) or None,
                         resamples=resamples, seed=seed, tokenize=tokenize, corrections=corrections)


def render(ctx: ui.PageContext) -> None:
    """Draw the rescoring page of the selected project for ``ctx``."""
    project = ui.page_header(ctx)
    systems = ui.project_systems(ctx)
    if ctx.user.role in LEADS:
        _tokenize_setting(ctx.store, project, ctx.user.role)
    if views_closed_for(ctx.store, project, ctx.user.role):
        st.info("Scores are closed to correctors while this project's blind correction round is open (a lead's "
                "setting on the Correction page): they would show how close edits come to the references.")
        return

    _metric_cards()
    tab_table, tab_file = st.tabs(["Corrections table", "Rescore a caption file"])
    with tab_table:
        _corrections_tab(ctx.store, project, systems)
    with tab_file:
        _caption_file_tab(ctx.store, project, systems)


def _metric_cards() -> None:
    """What each metric measures, the paper that defines it and a link to it (the metrics' own cards)."""
    with st.expander("About the metrics"):
        for card in REGISTRY.cards():
            st.markdown(f"**{ui.md_escape(card.label)}**: {ui.md_escape(card.description)}")
            st.text(f"{card.citation} {card.link}")  # as text: the page turns no URL into a link


def _tokenize_setting(store, project: str, role) -> None:
    """The project's metric tokenisation, which a lead may change here (it changes every score of the project)."""
    current = project_tokenize(store, project)
    with st.expander(f"Metric input: {current} (project setting)"):
        modes = list(TOKENIZE_DESCRIPTIONS)
        mode = st.radio("How the metrics read the text", modes, index=modes.index(current), key="rescore_tokenize",
                        format_func=lambda m: f"{m}: {TOKENIZE_DESCRIPTIONS[m]}")
        if st.button("Save for the project", key="rescore_tokenize_save", disabled=mode == current):
            try:
                set_project_tokenize(store, project, mode, actor_role=role)
                st.rerun()
            except AnnotatorError as exc:
                st.error(ui.md_escape(str(exc)))


def _corrections_tab(store, project: str, systems: list[str]) -> None:
    """The by-type table of one system's stored corrections, with its intervals, notes and downloads."""
    if not systems:
        st.info(f"Project {ui.md_escape(repr(project))} has no system captions.")
        return
    c1, c2, c3, c4 = st.columns([2, 2, 1, 1])
    system = c1.selectbox("System", systems, key="rescore_system")
    layer = _layer_picker(store, project, system, c2)
    resamples = int(c3.number_input("Bootstrap resamples", min_value=1, max_value=100_000, value=DEFAULT_RESAMPLES,
                                    step=100, key="rescore_resamples"))
    seed = int(c4.number_input("Seed", min_value=0, value=0, step=1, key="rescore_seed"))
    fingerprint = corrections_version(store, project)
    corr = corrections_table(store, project, system=system, with_diff=False)
    correctors = sorted(corr["user"].unique()) if not corr.empty else []
    chosen = team_picker(store, project, correctors, key="rescore_correctors", label="Corrections by",
                         help="When several people corrected one caption for one type, the latest correction "
                              "counts.")

    # Only the correction rows need a layer (and correctors): the baseline row is shown whatever is unchosen.
    waiting = None
    if layer is None and correctors:
        waiting = ("Several annotators judged these captions and nobody adjudicated: choose whose judgements decide "
                   "which corrections count (above) to see what each error type's corrections change.")
    elif correctors and not chosen:
        waiting = "Choose whose corrections to use (above) to see what they change."
    baseline_only = waiting is not None or layer is None
    try:
        result = _table(store.url, project, system, None if layer in ("any", None) else layer,
                        tuple(chosen) if chosen != correctors else (), resamples, seed, fingerprint,
                        project_tokenize(store, project), baseline_only)
    except AnnotatorError as exc:
        st.error(ui.md_escape(str(exc)))
        return
    if result is not None:
        _show_rescoring(result, project, system, waiting=waiting, baseline_only=baseline_only)


def _layer_picker(store, project: str, system: str, column) -> str | None:
    """The choice of whose judgements decide which corrections count (a layer label, "any", or None while
    unchosen), preset to the project's default layer where there is one."""
    choices = correction_layers(store, project, system)
    layer_opts = [lay.label for lay in available_layers(choices["annotators"], adjudicated=choices["adjudicated"])]
    try:
        preset = default_layer(store, project, system)
    except AnnotatorError:
        preset = None  # several annotators and no adjudication: the user chooses
    if not layer_opts:
        layer_opts = ["any"]  # nobody judged these captions: every correction counts
    index = layer_opts.index(preset.label) if preset is not None and preset.label in layer_opts else (
        0 if layer_opts == ["any"] else None)
    return column.selectbox("Count corrections whose type is given by", layer_opts, key="rescore_layer",
                            format_func=_layer_name, index=index, placeholder="Choose whose judgements count",
                            help="A correction counts only while this layer gives the caption its type (the study "
                                 "corrects only captions annotated with the type).")


def _show_rescoring(result, project: str, system: str, *, waiting: str | None = None,
                    baseline_only: bool = False) -> None:
    """One rescoring result: the compact score-and-Δ table, its intervals, its notes and its downloads; with
    ``baseline_only`` its baseline row alone (``waiting`` says what the correction rows wait for)."""
    meta = result.meta
    if meta.unavailable:
        st.warning(ui.md_escape(meta.unavailable))
    if waiting:
        st.info(waiting)
    elif not result.types:
        st.info("No stored correction changes a caption of this system yet: only the baseline is shown. "
                "Corrections are made on the Correction page.")
    metrics = [m for m in REGISTRY.score_keys() if m in result.baseline]
    frame = table_frame(result)
    if baseline_only:
        frame = frame[frame["row"] == frame["row"].iloc[0]]  # the baseline row: nothing else is chosen yet
    shown = st.multiselect("Metrics shown", metrics, default=[m for m in REGISTRY.headline_keys() if m in metrics],
                           format_func=lambda m: METRIC_LABELS[m], key="rescore_shown",
                           help="The downloads always have every metric, with intervals and p-values.")
    shown = [m for m in metrics if m in shown] or metrics
    st.caption("Metric input: " + tokenize_header(meta.tokenize))
    # Compact view: score and Δ per metric; the export has the intervals and p-values too.
    view = frame[["row", "changed"] + [c for m in shown for c in (METRIC_LABELS[m], f"{METRIC_LABELS[m]} Δ")]]
    ui.show_table(view, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%+.2f" if c.endswith(" Δ") else "%.2f")
                                for c in view.columns if c not in ("row", "changed")})
    if baseline_only:
        return
    st.caption(ALL_CORRECTIONS_NOTE)
    _intervals(result, shown)
    _rescoring_notes(meta)
    _rescoring_downloads(result, frame, project, system)


def _intervals(result, shown: list[str]) -> None:
    """The bootstrap intervals and p-values of every row for the metrics shown, folded away."""
    meta = result.meta
    detail = []
    for name, r in [(taxonomy().get(t).name, r) for t, r in result.types.items()] + [(ALL_CORRECTIONS_ROW, result.all)]:
        for m in shown:
            lo, hi = r.ci[m]
            detail.append({"row": name, "metric": METRIC_LABELS[m], "Δ": 100 * r.delta[m],
                           "95% low": 100 * lo, "95% high": 100 * hi, "p": r.p[m]})
    with st.expander("Bootstrap intervals and p-values", expanded=False):
        ui.show_table(detail, hide_index=True, width="stretch",
                     column_config={"Δ": st.column_config.NumberColumn(format="%+.2f"),
                                    "95% low": st.column_config.NumberColumn(format="%+.2f"),
                                    "95% high": st.column_config.NumberColumn(format="%+.2f"),
                                    "p": st.column_config.NumberColumn(format="%.3f")})
        st.caption(f"{meta.resamples} resamples, seed {meta.seed}.")


def _rescoring_notes(meta) -> None:
    """What the result leaves out or how it chose: dropped corrections, the layer, overlaps and overridden guards."""
    notes = meta.notes()
    if meta.dropped:
        notes.append(f"{meta.dropped} correction(s) are not counted because the chosen layer no longer gives "
                     "the caption that type.")
    notes.append(meta.layer_note)
    for n in notes:
        st.caption(ui.md_escape(n))
    if meta.conflicts:
        with st.expander("Captions with overlapping corrections"):
            ui.show_table(meta.conflicts, hide_index=True)
    if meta.overrides:
        with st.expander("Corrections saved past a guard"):
            ui.show_table(meta.overrides, hide_index=True)


def _rescoring_downloads(result, frame, project: str, system: str) -> None:
    """The table in a chosen format and the raw result as JSON."""
    meta = result.meta
    e1, e2 = st.columns([1, 3])
    fmt = e1.selectbox("Export format", list(FORMATS), key="rescore_fmt")
    stem = f"{project}_{system}_rescoring"
    table_caption = (f"Rescoring of {system} after corrections (scores ×100; "
                     f"{tokenize_header(meta.tokenize)}). {ALL_CORRECTIONS_NOTE}")
    table_download(f"Download table ({fmt})", frame, fmt, stem, key="rescore_download", container=e2, name="rescoring",
                   float_format="{:.2f}", caption=table_caption)
    st.download_button("Download raw result (JSON)", json_text(result.to_dict()),
                       file_name=file_name(f"{stem}_raw", "json"), mime="application/json", key="rescore_download_raw")


def _caption_file_tab(store, project: str, systems: list[str]) -> None:
    """Score an uploaded caption file against the project's references, next to one system's own captions."""
    st.caption("Upload a UTF-8 text file with one caption per line. Line i stands for caption line i of the chosen "
               "system (or for the project's i-th item); the file is scored against the project's references and "
               "compared with that system's own captions on the same items.")
    align_opts = systems + ["(project item order)"]
    align = st.selectbox("Lines follow", align_opts, key="rescore_align")
    up = st.file_uploader("Caption file", type=["txt"], key="rescore_upload")
    if up is not None:
        try:
            raw = up.getvalue().decode("utf-8-sig")
        except UnicodeDecodeError:
            st.error(f"{ui.md_escape(up.name)}: the file is not UTF-8 text.")
            raw = None
        if raw is not None:
            lines = raw.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
            system_for = None if align == "(project item order)" else align
            try:
                res = rescore_lines(store, project, lines, system=system_for, source=up.name, resamples=DEFAULT_RESAMPLES)
            except AnnotatorError as exc:
                st.error(ui.md_escape(str(exc)))
                res = None
            if res is not None:
                if res["unavailable"]:
                    st.warning(ui.md_escape(res["unavailable"]))
                ms = [m for m in REGISTRY.score_keys() if m in res["scores"]]
                cols = st.columns(len(ms))
                for col, m in zip(cols, ms):
                    change = 100 * res["compare"]["delta"][m] if res["compare"] else None
                    col.metric(METRIC_LABELS[m], f"{100 * res['scores'][m]:.2f}", **metric_delta(change))
                st.caption("Metric input: " + tokenize_header(res["tokenize"]))
                st.caption(f"{res['n']} captions scored"
                           + (f"; {len(res['skipped'])} without references left out" if res["skipped"] else "")
                           + (f"; {res['compare']['changed']} differ from {ui.md_escape(system_for)}" if res["compare"] else ""))
                if res["compare"]:
                    cmp = res["compare"]
                    ui.show_table([{"metric": METRIC_LABELS[m], cmp["system"]: 100 * cmp["baseline"][m],
                                   up.name: 100 * res["scores"][m], "Δ": 100 * cmp["delta"][m],
                                   "95% low": 100 * cmp["ci"][m][0], "95% high": 100 * cmp["ci"][m][1], "p": cmp["p"][m]}
                                  for m in ms], hide_index=True, width="stretch",
                                 column_config={c: st.column_config.NumberColumn(format="%+.2f")
                                                for c in ("Δ", "95% low", "95% high")})
