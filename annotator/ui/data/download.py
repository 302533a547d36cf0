"""The judgements download (annotator.judgement_export) as the Data page offers it."""

from __future__ import annotations

import streamlit as st

from ...errors import AnnotatorError, StoreUnavailable
from ...judgement_export import EXPORT_FORMATS, export_judgements
from .. import PageContext, md_escape, outage_notice

ALL_JUDGEMENTS = "every judgement"
ALL_SYSTEMS = "all systems"
LAYERS = (ALL_JUDGEMENTS, "adjudicated", "consensus")
FORMAT_HELP = {"csv": "CSV (spreadsheets; error types joined by ;)", "jsonl": "JSONL (reads back with the JSONL import)",
               "xlsx": "XLSX workbook"}


def render(ctx: PageContext, project: str, *, key: str = "data_judgements") -> None:
    """Choose which judgements of ``project`` to export and in what format; prepare the file, then download it."""
    from ...accounts.auth import list_users
    from ...store.projects import system_names
    st.markdown("**Judgements** — one row per caption judgement: caption, annotator, label, error types, note, "
                "seconds, revision and time saved.")
    try:
        users = [u.name for u in list_users(ctx.store)]
        systems = system_names(ctx.store, project)
    except AnnotatorError as exc:
        st.error(md_escape(str(exc)))
        return
    c1, c2, c3 = st.columns([2, 1, 1])
    chosen = c1.multiselect("Annotators (empty: everyone)", users, key=f"{key}_annotators")
    layer = c2.selectbox("Judgements", LAYERS, key=f"{key}_layer",
                         help="adjudicated / consensus: only the judgements each caption's decision in that layer "
                              "rests on (the lead's adjudication, or the annotators' agreeing judgements).")
    system = c3.selectbox("System", [ALL_SYSTEMS] + systems, key=f"{key}_system")
    c1, c2, c3 = st.columns([2, 1, 1])
    fmt = c1.radio("Format", EXPORT_FORMATS, format_func=FORMAT_HELP.get, horizontal=True, key=f"{key}_format")
    history = c2.checkbox("Every revision", key=f"{key}_history", help="Not only the current judgements.")
    choice = (project, tuple(chosen), layer, system, fmt, history)
    if c3.button("Prepare judgements", icon=":material/download:", key=f"{key}_prepare"):
        try:
            export = export_judgements(ctx.store, project, annotators=chosen or None,
                                       layer=None if layer == ALL_JUDGEMENTS else layer,
                                       system=None if system == ALL_SYSTEMS else system, history=history,
                                       actor=ctx.user.name, actor_role=ctx.user.role)
            st.session_state[key] = (choice, len(export), export.to_bytes(fmt), export.file_name(fmt),
                                     export.mime_type(fmt))
        except AnnotatorError as exc:
            if isinstance(exc, StoreUnavailable):
                outage_notice(exc)
            else:
                st.error(md_escape(str(exc)))
    prepared = st.session_state.get(key)
    if prepared and prepared[0] == choice:
        _, rows, data, name, mime = prepared
        st.download_button(f"Download {md_escape(name)} ({rows} rows)", data=data, file_name=name, mime=mime,
                           key=f"{key}_download", on_click="ignore")
