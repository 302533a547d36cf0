"""Data & users: list projects, import files, export a project. (User management: see the last section.)"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from annotator import ui

ctx = ui.page_setup("data")

from annotator.errors import AnnotatorError  # noqa: E402
from annotator.io import (  # noqa: E402
    export_jsonl, import_coco, import_corrections, import_flickr30k, import_jsonl, import_judgements, import_lines,
)
from annotator.store.projects import project_names, project_summaries  # noqa: E402
from annotator.taxonomy import taxonomy  # noqa: E402
from annotator.ui import judgement_download  # noqa: E402

FORMATS = {
    "lines": "Line-aligned text files (captions, references, image list)",
    "coco": "COCO captions / instances / results JSON",
    "flickr30k": "Flickr30K Entities (Sentences/ and Annotations/ on the server)",
    "jsonl": "Native JSONL (items of a project export, or judgement rows of a judgements export)",
    "judgements": "Judgements of the original error-analysis tool (coarse / fine JSON)",
    "corrections": "Corrected copy of a system's captions (one error type)",
}
RESULT_KEY = "data_import_result"
EXPORT_KEY = "data_export"


def _save(upload, folder: Path) -> Path:
    """Write an uploaded file under ``folder`` with its base name (never a path the browser chose)."""
    name = Path(upload.name).name or "upload"
    target = folder / name
    n = 1
    while target.exists():  # two uploads with the same name
        target = folder / f"{n}-{name}"
        n += 1
    target.write_bytes(upload.getvalue())
    return target


def _server_dir(raw: str) -> str | None:
    raw = (raw or "").strip()
    return raw or None


def _run_import(fmt: str, fields: dict) -> None:
    """Save the uploads to a temporary folder, run the importer, remember the outcome for the next run."""
    store = ctx.store
    with tempfile.TemporaryDirectory(prefix="annotator-upload-") as tmp:
        folder = Path(tmp)
        try:
            up = {k: (_save(v, folder) if v is not None and not isinstance(v, list) else
                      [_save(x, folder) for x in v] if isinstance(v, list) else None)
                  for k, v in fields.get("uploads", {}).items()}
            opts = fields.get("options", {})
            project = opts["project"]
            if fmt == "lines":
                result = import_lines(store, project, opts["system"], up["captions"], up["references"],
                                      images=up["images"], image_root=opts["image_root"],
                                      inline_mentions=opts["inline_mentions"])
            elif fmt == "coco":
                result = import_coco(store, project, up["captions_json"], up["instances_json"], results=up["results"],
                                     system=opts["system"] or None if up["results"] else None,
                                     image_root=opts["image_root"], inline_mentions=opts["inline_mentions"])
            elif fmt == "flickr30k":
                result = import_flickr30k(store, project, opts["root"], ids=up["ids"], image_root=opts["image_root"])
            elif fmt == "jsonl":
                # The upload's folder is temporary: a relative image root in its header means nothing here.
                result = import_jsonl(store, project, up["file"], image_root=opts["image_root"], relative_header_root=False)
            elif fmt == "judgements":
                result = import_judgements(store, project, opts["system"], opts["annotator"], up["coarse"], up["fine"])
            else:
                result = import_corrections(store, project, opts["system"], opts["error_type"], up["captions"],
                                            annotator=opts["annotator"] or None)
            st.session_state[RESULT_KEY] = ("success", result.describe())
        except AnnotatorError as exc:
            # Show upload names, not the temporary folder they were saved in.
            st.session_state[RESULT_KEY] = ("error", str(exc).replace(str(folder) + os.sep, ""))


def _missing(fields: dict, required: list[str]) -> list[str]:
    out = []
    for name in required:
        value = fields.get("uploads", {}).get(name, fields.get("options", {}).get(name))
        if value is None or value == "" or value == []:
            out.append(name.replace("_", " "))
    return out


def projects_section() -> None:
    st.subheader("Projects")
    rows = project_summaries(ctx.store)
    if not rows:
        st.info("There is no project yet. Import one below.")
        return
    df = pd.DataFrame(rows)
    df["systems"] = df["systems"].map(lambda s: ", ".join(s))
    st.dataframe(df, hide_index=True, width="stretch",
                 column_config={"image_root": st.column_config.TextColumn("image root")})


def import_section() -> None:
    st.subheader("Import")
    st.caption("Every import is all or nothing: if any line or record is wrong, the message names the file and the "
               "line, and nothing is stored. Importing more captions for an existing project attaches them to the "
               "items with the same keys (the image file name, or the line number when there is no image list).")
    fmt = st.selectbox("Format", list(FORMATS), format_func=FORMATS.get, key="data_format")
    with st.form(f"data_import_{fmt}", clear_on_submit=False):
        project = st.text_input("Project", value=ctx.project or "", key=f"data_{fmt}_project",
                                help="An existing project, or a new name to create one.")
        uploads: dict = {}
        options: dict = {"project": project.strip()}
        if fmt == "lines":
            options["system"] = st.text_input("System name", key="data_lines_system").strip()
            uploads["captions"] = st.file_uploader("Captions file (one per line)", key="data_lines_captions")
            uploads["references"] = st.file_uploader("Reference files (line-aligned)", accept_multiple_files=True,
                                                     key="data_lines_refs")
            uploads["images"] = st.file_uploader("Image list (optional, one file name per line)", key="data_lines_images")
        elif fmt == "coco":
            uploads["captions_json"] = st.file_uploader("Captions JSON", type=["json"], key="data_coco_caps")
            uploads["instances_json"] = st.file_uploader("Instances JSON", type=["json"], key="data_coco_inst")
            uploads["results"] = st.file_uploader("Results JSON of one system (optional)", type=["json"], key="data_coco_res")
            options["system"] = st.text_input("System name (for the results)", key="data_coco_system").strip()
        elif fmt == "flickr30k":
            options["root"] = _server_dir(st.text_input("Folder on the server holding Sentences/ and Annotations/",
                                                        key="data_f30k_root"))
            uploads["ids"] = st.file_uploader("Image ids (optional, one per line)", key="data_f30k_ids")
        elif fmt == "jsonl":
            uploads["file"] = st.file_uploader("JSONL file", type=["jsonl", "json", "txt"], key="data_jsonl_file")
        elif fmt == "judgements":
            options["system"] = st.text_input("System", key="data_j_system").strip()
            options["annotator"] = st.text_input("Annotator (created without password if new)", key="data_j_user").strip()
            uploads["coarse"] = st.file_uploader("Coarse file (index → congruent/incongruent)", type=["json"], key="data_j_coarse")
            uploads["fine"] = st.file_uploader("Fine file (index → error types), optional", type=["json"], key="data_j_fine")
        else:
            options["system"] = st.text_input("System", key="data_c_system").strip()
            types = [t for t in taxonomy().types if t.correctable]
            options["error_type"] = st.selectbox("Error type corrected in this file", [t.id for t in types],
                                                 format_func=lambda i: taxonomy().get(i).name, key="data_c_type")
            options["annotator"] = st.text_input("Corrected by (optional)", key="data_c_user").strip()
            uploads["captions"] = st.file_uploader("Corrected captions (full copy, line-aligned)", key="data_c_file")
        if fmt in ("lines", "coco"):
            options["inline_mentions"] = st.checkbox(
                "Captions carry box mentions as [words|box ids]", key=f"data_{fmt}_inline",
                help="Each caption is stored as plain text with its mentions (for content selection). Leave it off "
                     "and captions are kept exactly as written, brackets included.")
        if fmt in ("lines", "coco", "flickr30k", "jsonl"):
            options["image_root"] = _server_dir(st.text_input(
                "Image folder on the server (optional)", key=f"data_{fmt}_root",
                help="Image file names are resolved inside this folder; paths leading outside it are refused. The "
                     "folder must lie in one the administrator allows (ANNOTATOR_IMAGE_ROOTS; by default the data "
                     "directory)."))
        submitted = st.form_submit_button("Import", type="primary", icon=":material/upload:")
    if submitted:
        fields = {"uploads": uploads, "options": options}
        required = {"lines": ["project", "system", "captions", "references"],
                    "coco": ["project", "captions_json", "instances_json"],
                    "flickr30k": ["project", "root"], "jsonl": ["project", "file"],
                    "judgements": ["project", "system", "annotator", "coarse"],
                    "corrections": ["project", "system", "error_type", "captions"]}[fmt]
        missing = _missing(fields, required)
        if missing:
            st.session_state[RESULT_KEY] = ("error", "please fill in: " + ", ".join(missing))
        else:
            with st.spinner("Importing…"):
                _run_import(fmt, fields)
    outcome = st.session_state.get(RESULT_KEY)
    if outcome:
        kind, message = outcome
        (st.success if kind == "success" else st.error)(ui.md_escape(message))


def export_section() -> None:
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
            st.error(ui.md_escape(str(exc)))
    prepared = st.session_state.get(EXPORT_KEY)
    if prepared and prepared[0] == project:
        _, n, data = prepared
        st.download_button(f"Download {ui.md_escape(project)}.jsonl ({n} items)", data=data, file_name=f"{project}.jsonl",
                           mime="application/jsonl", key="data_export_download")
    judgement_download.render(ctx, project)


# ---------------------------------------------------------------------------------------------------------------
# Users. This section belongs to the account management (annotator.auth / `annotator users`); it is kept in one
# function so that work can replace its body without touching the import/export code above.
def users_section() -> None:
    st.subheader("Users")
    st.caption("Accounts are managed on the command line for now: `annotator users add NAME --role annotator`, "
               "`annotator users list`, `annotator users passwd NAME`.")


st.title("Data & users")
projects_section()
st.divider()
import_section()
st.divider()
export_section()
st.divider()
users_section()
