"""The Data & users page: list projects, import files (a form per format of the importer catalog), export a project."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from .. import PageContext, md_escape, show_table
from . import download
from ...errors import AnnotatorError
from ...io import export_jsonl
from ...io.importers import release_memory
from ...exchange.catalog import formats, get_format
from ...store.projects import project_names, project_summaries

RESULT_KEY = "data_import_result"
#: How many imports this session ran: the uploaders' keys carry it, so that each import leaves them empty.
UPLOADS_KEY = "data_upload_round"
EXPORT_KEY = "data_export"
#: Says an upload the browser refused (over the size limit, wrong type) in words and takes it off the list.
_REFUSALS_JS = Path(__file__).with_name("upload_refusals.js").read_text(encoding="utf-8")


def _save(upload, folder: Path) -> Path:
    """Write an uploaded file under ``folder`` with its base name (never a path the browser chose)."""
    name = Path(upload.name).name or "upload"
    target = folder / name
    n = 1
    while target.exists():  # two uploads with the same name
        target = folder / f"{n}-{name}"
        n += 1
    upload.seek(0)
    with target.open("wb") as out:
        shutil.copyfileobj(upload, out, 1 << 20)
    return target


def _release(uploads) -> None:
    """Let go of uploads saved to disk: Streamlit holds every uploaded file in the server's memory for as long as
    its uploader lists it, so the session's copy is dropped (the uploaders are drawn empty after the import) and
    the page's closed."""
    ctx = get_script_run_ctx()
    manager = getattr(ctx, "uploaded_file_mgr", None)
    for upload in uploads:
        if manager is not None and hasattr(manager, "remove_file"):
            manager.remove_file(ctx.session_id, upload.file_id)
        upload.close()


def _input(option, format_name: str):
    """Draw the widget of one declared option; return what the user gave (uploads not yet saved)."""
    key = option.widget_key(format_name)
    label = option.label or option.name.replace("_", " ").capitalize()
    if option.kind in ("file", "files"):
        if st.session_state.get(UPLOADS_KEY):
            key = f"{key}_{st.session_state[UPLOADS_KEY]}"
        upload = st.file_uploader(label, type=list(option.types) if option.types else None,
                                  accept_multiple_files=option.kind == "files", key=key, help=option.page_help)
        st.caption(upload_limit_text(format_name, several=option.kind == "files"))
        return upload
    if option.kind == "switch":
        return st.checkbox(label, key=key, help=option.page_help)
    if option.kind == "integer":
        return st.number_input(label, min_value=1, value=None, step=1, key=key, help=option.page_help)
    if option.kind == "choice":
        return st.selectbox(label, option.choices(), format_func=option.choice_label or str, key=key,
                            help=option.page_help)
    text = st.text_input(label, key=key, help=option.page_help).strip()
    if option.kind == "list":
        return option.value(text)
    return text or None  # an optional field left empty is not given


def upload_limit_text(format_name: str, *, several: bool = False) -> str:
    """What an uploader takes, said beside it: one file or several, the server's size limit per file
    (``server.maxUploadSize``), and that a bigger file goes through the command line."""
    limit = int(st.get_option("server.maxUploadSize"))
    return (f"{'Several files' if several else 'One file'}, up to {limit} MB each. A bigger file: "
            f"`annotator import {format_name} …` on the server (docs/cli.md).")


def _values(fmt, given: dict, folder: Path) -> dict:
    """The run function's keyword values: uploads saved under ``folder``, everything else as given."""
    values = {}
    for option in fmt.options:
        value = given[option.name]
        if option.kind == "file":
            value = _save(value, folder) if value is not None else None
        elif option.kind == "files":
            value = [_save(v, folder) for v in value or []]
        values[option.name] = value
    return values


def _run_import(ctx: PageContext, fmt, project: str, given: dict) -> None:
    """Save the uploads to a temporary folder and let go of them, run the importer (which reads the saved files a
    batch at a time), remember the outcome for the next run, and draw the form again with empty uploaders."""
    uploads = [u for o in fmt.options if o.kind in ("file", "files")
               for u in (given[o.name] if o.kind == "files" else [given[o.name]]) or [] if u is not None]
    with tempfile.TemporaryDirectory(prefix="annotator-upload-") as tmp:
        folder = Path(tmp)
        try:
            try:
                values = _values(fmt, given, folder)
            finally:
                _release(uploads)
            result = fmt.run(ctx.store, project, command_line=False, **values)
            st.session_state[RESULT_KEY] = ("success", result.describe())
        except AnnotatorError as exc:
            # Show upload names, not the temporary folder they were saved in.
            st.session_state[RESULT_KEY] = ("error", str(exc).replace(str(folder) + os.sep, ""))
    release_memory()  # the upload's pages and the import's, back to the system
    st.session_state[UPLOADS_KEY] = st.session_state.get(UPLOADS_KEY, 0) + 1
    st.rerun()


def _missing(fmt, given: dict) -> list[str]:
    return [name.replace("_", " ") for name in fmt.required() if given.get(name) in (None, "", [])]


def projects_section(ctx: PageContext) -> None:
    st.subheader("Projects")
    rows = project_summaries(ctx.store)
    if not rows:
        st.info("There is no project yet. Import one below.")
        return
    df = pd.DataFrame(rows)
    df["systems"] = df["systems"].map(lambda s: ", ".join(s))
    df["image_root"] = df["image_root"].fillna("")  # no root set: an empty cell, not "None"
    show_table(df, hide_index=True, width="stretch",
                 column_config={"image_root": st.column_config.TextColumn("image root")})


def import_section(ctx: PageContext) -> None:
    st.subheader("Import")
    st.caption("Every import is all or nothing: if any line or record is wrong, the message names the file and the "
               "line, and nothing is stored. Importing more captions for an existing project attaches them to the "
               "items with the same keys (the image file name, or the line number when there is no image list).")
    titles = {fmt.name: fmt.title for fmt in formats()}
    fmt = get_format(st.selectbox("Format", list(titles), format_func=titles.get, key="data_format"))
    with st.form(f"data_import_{fmt.name}", clear_on_submit=False):
        project = st.text_input("Project", value=ctx.project or "", key=f"data_{fmt.name}_project",
                                help="An existing project, or a new name to create one.")
        given = {"project": project.strip()}
        for option in fmt.options:
            given[option.name] = _input(option, fmt.name)
        button, message = st.columns([1, 5], vertical_alignment="center")
        submitted = button.form_submit_button("Import", type="primary", icon=":material/upload:")
    st.html(f"<script>{_REFUSALS_JS}</script>", unsafe_allow_javascript=True)
    if submitted:
        missing = _missing(fmt, given)
        if missing:
            st.session_state[RESULT_KEY] = ("error", "please fill in: " + ", ".join(missing))
        else:
            with message, st.spinner("Importing…"):
                _run_import(ctx, fmt, given.pop("project"), given)
    outcome = st.session_state.get(RESULT_KEY)
    if outcome:
        kind, text = outcome
        # beside the Import button, one line of the summary (an annotator, a refused record) per line
        (message.success if kind == "success" else message.error)(md_escape(text).replace("\n", "  \n"))


def export_section(ctx: PageContext) -> None:
    st.subheader("Export")
    names = project_names(ctx.store)
    if not names:
        st.caption("Nothing to export yet.")
        return
    c1, c2 = st.columns([3, 1])
    project = c1.selectbox("Project", names, index=names.index(ctx.project) if ctx.project in names else 0,
                           key="data_export_project")
    c2.selectbox("Format", ["jsonl"], key="data_export_format",
                 help="The native format: one item per line with boxes, references, captions and mentions. "
                      "Importing it again gives the same project.")
    if st.button("Prepare export", icon=":material/download:", key="data_export_prepare"):
        buf = io.StringIO()
        try:
            n = export_jsonl(ctx.store, project, buf)
            st.session_state[EXPORT_KEY] = (project, n, buf.getvalue().encode("utf-8"))
        except AnnotatorError as exc:
            st.error(md_escape(str(exc)))
    prepared = st.session_state.get(EXPORT_KEY)
    if prepared and prepared[0] == project:
        _, n, data = prepared
        st.download_button(f"Download {md_escape(project)}.jsonl ({n} items)", data=data, file_name=f"{project}.jsonl",
                           mime="application/jsonl", key="data_export_download")
    download.render(ctx, project)


# Users. This section belongs to the account management (annotator.accounts.auth / `annotator users`); it is kept in one
# function so that work can replace its body without touching the import/export code above.
def users_section(ctx: PageContext) -> None:
    st.subheader("Users")
    st.caption("Admins manage accounts on the People page (add, role, password reset, unlock, deactivate; every "
               "change recorded), or with `annotator users`.")


def render(ctx: PageContext) -> None:
    """Draw the Data & users page."""
    st.title("Data & users")
    projects_section(ctx)
    st.divider()
    import_section(ctx)
    st.divider()
    export_section(ctx)
    st.divider()
    users_section(ctx)
