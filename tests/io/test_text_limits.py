"""One length limit for caption and reference text (annotator.limits.TEXT_LIMITS), applied by every importer.

A caption or reference one character over the limit is refused naming the file and the line (or the record, in
COCO's one-line JSON files), and nothing is stored; one at the limit imports. A corrected caption saved through
the Correction page's core call has the same limit. The Data page's uploads run the
same importers (tests/browser/test_data_import_upload.py checks one in Chromium).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from annotator.io import (
    import_coco, import_corrections, import_flickr30k, import_jsonl, import_judgement_rows, import_lines,
)
from annotator.correction import correct_caption
from annotator.exchange.label_studio import import_label_studio
from annotator.limits import TEXT_LIMITS
from annotator.store.projects import load_project
from tests.store_helpers import annotated_project, refused

FIX = Path(__file__).parent.parent / "fixtures"
LIMIT = TEXT_LIMITS["caption"]


def text_of(length: int) -> str:
    """Words of a paragraph-length description, exactly ``length`` characters long."""
    base = "a man in a blue shirt rides a bicycle past a red car "
    text = (base * (length // len(base) + 1))[:length - 1].rstrip()
    return text + "." * (length - len(text))


def too_long(what: str = "the caption") -> str:
    return f"{what} is {LIMIT + 1:,} characters long; at most {LIMIT:,} are allowed"


def test_the_limits_serve_paragraphs():
    assert TEXT_LIMITS["caption"] == TEXT_LIMITS["reference"] == 10_000
    assert len(text_of(LIMIT)) == LIMIT and len(text_of(LIMIT + 1)) == LIMIT + 1


def _lines(tmp_path, caption: str, reference: str):
    caps, refs = tmp_path / "caps.txt", tmp_path / "refs.txt"
    caps.write_text(f"a dog runs\n{caption}\n", encoding="utf-8")
    refs.write_text(f"a dog is running\n{reference}\n", encoding="utf-8")
    return caps, refs


def test_lines(store, tmp_path):
    caps, refs = _lines(tmp_path, text_of(LIMIT + 1), "a cat")
    refused(store, lambda: import_lines(store, "p", "sys", caps, [refs]), "caps.txt, line 2",
            too_long("the caption of 'sys'"))
    caps, refs = _lines(tmp_path, "a cat", text_of(LIMIT + 1))
    refused(store, lambda: import_lines(store, "p", "sys", caps, [refs]), "refs.txt, line 2", too_long("the reference"))
    caps, refs = _lines(tmp_path, text_of(LIMIT), text_of(LIMIT))
    assert import_lines(store, "p", "sys", caps, [refs]).captions == 2


def test_coco_references_and_results(store, tmp_path):
    data = json.loads((FIX / "coco" / "captions.json").read_text(encoding="utf-8"))
    data["annotations"][1]["caption"] = text_of(LIMIT + 1) + "  \n"  # stored trimmed: counted trimmed
    captions = tmp_path / "captions.json"
    captions.write_text(json.dumps(data), encoding="utf-8")
    refused(store, lambda: import_coco(store, "c", captions), "captions.json, annotations[1]", too_long("the reference"))
    data["annotations"][1]["caption"] = text_of(LIMIT) + "  \n"
    captions.write_text(json.dumps(data), encoding="utf-8")
    results = [{"image_id": 42, "caption": "a surfer"}, {"image_id": 73, "caption": text_of(LIMIT + 1)}]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    refused(store, lambda: import_coco(store, "c", captions, results=path, system="nic"), "results.json, record 1",
            too_long())
    results[1]["caption"] = text_of(LIMIT)
    path.write_text(json.dumps(results), encoding="utf-8")
    assert import_coco(store, "c", captions, results=path, system="nic").captions == 2


def test_flickr30k_sentences(store, tmp_path):
    root = tmp_path / "f30k"
    shutil.copytree(FIX / "flickr30k", root)
    sentences = root / "Sentences" / "1002.txt"
    lines = sentences.read_text(encoding="utf-8").splitlines()
    lines[2] = f"[/EN#20/people A man] {text_of(LIMIT + 1 - len('A man '))}"
    sentences.write_text("\n".join(lines) + "\n", encoding="utf-8")
    refused(store, lambda: import_flickr30k(store, "f", root), "1002.txt, line 3", too_long("the reference"))
    lines[2] = f"[/EN#20/people A man] {text_of(LIMIT - len('A man '))}"
    sentences.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_flickr30k(store, "f", root).references == 10


def _item(caption: str, reference) -> str:
    return json.dumps({"key": "a.jpg", "references": [reference], "captions": [{"system": "s", "text": caption}]})


@pytest.mark.parametrize("caption, reference, where, what", [
    (text_of(LIMIT + 1), "a dog", "line 2, captions[0]", "the caption"),
    ("a dog", text_of(LIMIT + 1), "line 2, references[0]", "the reference"),
    ("a dog", {"text": text_of(LIMIT + 1), "mentions": []}, "line 2, references[0]", "the reference"),
])
def test_jsonl_items(store, tmp_path, caption, reference, where, what):
    path = tmp_path / "items.jsonl"
    path.write_text('{"format": "annotator-jsonl", "version": 1}\n' + _item(caption, reference) + "\n",
                    encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "j", path), f"items.jsonl, {where}", too_long(what))


def test_jsonl_items_at_the_limit(store, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text(_item(text_of(LIMIT), text_of(LIMIT)) + "\n", encoding="utf-8")
    assert import_jsonl(store, "j", path).captions == 1
    assert len(load_project(store, "j").items[0].captions[0].text) == LIMIT


@pytest.fixture
def project(store):
    return store, annotated_project(store)


def test_judgement_rows_and_label_studio(project, tmp_path):
    store, _ = project
    row = {"system": "sys-a", "item": "img0.jpg", "caption": text_of(LIMIT + 1), "annotator": "ann1",
           "label": "accurate"}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    refused(store, lambda: import_judgement_rows(store, "p", path), "rows.jsonl, line 1", too_long())
    refused(store, lambda: import_jsonl(store, "p", path), "rows.jsonl, line 1", too_long())
    task = {"id": 5, "data": {"system": "sys-a", "item": "img0.jpg", "caption": text_of(LIMIT + 1)},
            "annotations": [{"id": 8, "completed_by": {"email": "ann1@x"},
                             "result": [{"from_name": "judgement", "value": {"choices": ["accurate"]}}]}]}
    ls = tmp_path / "ls.json"
    ls.write_text(json.dumps([task]), encoding="utf-8")
    refused(store, lambda: import_label_studio(store, "p", ls), "ls.json, task 5", too_long())


def test_corrections(project, tmp_path):
    store, caps = project
    refused(store, lambda: correct_caption(store, caps[0], "gender", "lead1", text_of(LIMIT + 1),
                                           override_reason="long"), too_long("the corrected caption"))
    path = tmp_path / "fixed.txt"
    path.write_text("\n".join([text_of(LIMIT + 1)] + [f"caption {k}" for k in range(2)]) + "\n", encoding="utf-8")
    refused(store, lambda: import_corrections(store, "p", "sys-a", "gender", path, reason="long"), "fixed.txt, line 1",
            too_long("the corrected caption"))
