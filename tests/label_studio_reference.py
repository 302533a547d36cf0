"""The Label Studio export as it was before it streamed (the whole project and judgement table read, the task
list built): the reference tests/io/test_label_studio_export_stream.py compares the streamed file with, byte for
byte, and measures the memory of."""

from __future__ import annotations

import io
import json

from annotator.exchange.label_studio import _annotation, _detector_results, account_emails, blind_key
from annotator.io.label_studio import DETECTOR_MODEL
from annotator.judgement_export import export_judgements
from annotator.store.projects import load_project


def list_export(store, project, *, system=None, layer=None, image_prefix="", predictions=False, email_domain=None,
                 blind=False) -> list[dict]:
    """The export as it was before it streamed: the whole project and judgement table read, the task list built."""
    proj = load_project(store, project)
    table = export_judgements(store, project, layer=layer, system=system).rows
    by_caption: dict[tuple[str, str], list[dict]] = {}
    for row in table.to_dict("records"):
        by_caption.setdefault((row["system"], row["item"]), []).append(row)
    emails = account_emails(store, table["annotator"].tolist(), email_domain)
    flagged = _detector_results(store, project, system) if predictions and not blind else {}
    tasks: list[dict] = []
    for item in proj.items:
        refs = "\n".join(f"{k}. {r.text}" for k, r in enumerate(item.references, start=1))
        for cap in item.captions:
            if system is not None and cap.system != system:
                continue
            data = {"image": f"{image_prefix}{item.image}" if item.image else "", "caption": cap.text,
                    "references": refs, "project": project, "system": cap.system, "item": item.key,
                    "line": cap.line}
            rows = by_caption.get((cap.system, item.key), [])
            groups = [[r] for r in rows] if blind else [rows]
            for group in groups or [[]]:
                task = {"id": len(tasks) + 1, "data": dict(data),
                        "annotations": [_annotation(len(tasks), k, row, cap.text, emails)
                                        for k, row in enumerate(group)]}
                if blind:
                    del task["data"]["system"]
                    task["data"]["caption_key"] = blind_key(cap.system, item.key)
                if flagged or (predictions and not blind):
                    task["predictions"] = [flagged.get(cap.caption_id) or {"model_version": DETECTOR_MODEL,
                                                                            "score": 0.0, "result": []}]
                tasks.append(task)
    return tasks


def reference_text(tasks: list[dict]) -> str:
    buf = io.StringIO()
    json.dump(tasks, buf, ensure_ascii=False, indent=1)
    return buf.getvalue() + "\n"
