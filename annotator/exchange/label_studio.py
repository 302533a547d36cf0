"""Label Studio both ways: a project's captions and judgements as Label Studio tasks, and Label Studio's export
read back into the project.

The format itself (the labeling config, the tasks' data and results, characters against caption words) is the
codec :mod:`annotator.io.label_studio`; this module composes what lies above it: the judgements export, the
automatic detectors' predictions and the accounts.
"""

from __future__ import annotations

from pathlib import Path

from ..io.importers import ImportResult, import_guard
from ..io.judgement_rows import store_records
from ..io.label_studio import ACCURATE, DETECTOR_MODEL, INACCURATE, annotation_results, read_label_studio
from ..io.options import Example, ImportFormat, ReaderOption
from ..io.validate import check_name
from ..judgement_export import export_judgements
from ..store import Store
from ..store.projects import load_project


def export_label_studio(store: Store, project: str, *, system: str | None = None, layer=None,
                        image_prefix: str = "", predictions: bool = False) -> list[dict]:
    """The Label Studio task list of ``project`` (one task per caption; ``system``: one system's only).

    ``layer`` keeps the judgements that layer rests on (annotator.layers), else every current judgement.
    ``predictions`` adds the detectors' flags as predictions (annotator.estimate).
    """
    proj = load_project(store, project)
    table = export_judgements(store, project, layer=layer, system=system).rows
    by_caption: dict[tuple[str, str], list[dict]] = {}
    for row in table.to_dict("records"):
        by_caption.setdefault((row["system"], row["item"]), []).append(row)
    flagged = _detector_results(store, project, system) if predictions else {}
    tasks = []
    users: dict[str, int] = {}
    for item in proj.items:
        refs = "\n".join(f"{k}. {r.text}" for k, r in enumerate(item.references, start=1))
        for cap in item.captions:
            if system is not None and cap.system != system:
                continue
            data = {"image": f"{image_prefix}{item.image}" if item.image else "", "caption": cap.text,
                    "references": refs, "project": project, "system": cap.system, "item": item.key,
                    "line": cap.line}
            annotations = []
            for row in by_caption.get((cap.system, item.key), []):
                uid = users.setdefault(row["annotator"], len(users) + 1)
                annotations.append({
                    "id": len(tasks) * 1000 + len(annotations) + 1,
                    "completed_by": {"id": uid, "email": row["annotator"], "first_name": row["annotator"],
                                     "last_name": ""},
                    "result": annotation_results(cap.text, row["label"], row["error_types"], row["spans"],
                                                 row["note"], prefix=f"u{uid}"),
                    "was_cancelled": row["label"] is None,
                    "ground_truth": row["kind"] == "adjudication",
                    "lead_time": float(row["seconds"]),
                    "created_at": row["saved_at"], "updated_at": row["saved_at"]})
            task = {"id": len(tasks) + 1, "data": data, "annotations": annotations}
            if predictions:
                task["predictions"] = [flagged.get(cap.caption_id) or {"model_version": DETECTOR_MODEL, "score": 0.0,
                                                                        "result": []}]
            tasks.append(task)
    return tasks


def _detector_results(store: Store, project: str, system: str | None) -> dict[int, dict]:
    """caption id → the detectors' prediction (flagged types and their trigger spans)."""
    from ..estimate.span_eval import detector_spans  # only with --predictions
    out = {}
    for found in detector_spans(store, project, systems=None if system is None else [system]).values():
        for caption_id, text, types, spans, score in found:
            results = annotation_results(text, INACCURATE if types else ACCURATE, types, spans, "", prefix="d")
            out[caption_id] = {"model_version": DETECTOR_MODEL, "score": round(float(score), 6), "result": results}
    return out


@import_guard
def import_label_studio(store: Store, project: str, path: Path | str, *, source: str | None = None) -> ImportResult:
    """Import the annotations of a Label Studio JSON export into ``project``'s captions (all or nothing)."""
    project = check_name(project, "project", "--project")
    src = source or str(path)
    return store_records(store, project, read_label_studio(path, source=src), source=src, format_name="label-studio")


def _run(store, project: str, *, command_line: bool, file):
    return import_label_studio(store, project, file)


FORMAT = ImportFormat(
    name="label-studio",
    help="a Label Studio JSON export of an annotator project (see docs/formats.md)",
    title="Label Studio JSON export (annotations of tasks made by `annotator export label-studio`)",
    options=(ReaderOption("file", None, "a Label Studio JSON export (a list of tasks)", metavar="FILE", kind="file",
                          required=True, label="Label Studio JSON file", types=("json",)),),
    read=read_label_studio,
    run=_run,
    example=Example(files={"file": "example.json"}, into_sample=True,
                    expect={"judgements": 2, "user": "ls-annotator", "systems": ["sat-attn"]}),
)

