"""Every JSON the tool reads goes through the strict reader (annotator.io.textfiles.parse_json), JSON text inside
JSONL rows too: 100,000-deep nesting, a key given twice and NaN/Infinity are refused with the file and the line,
never a RecursionError traceback, and nothing is stored."""

from __future__ import annotations

import json

import pytest

from annotator.errors import InputError
from annotator.io import import_jsonl
from annotator.io.jsonl import iter_records
from annotator.exchange.label_studio import import_label_studio
from annotator.spans import parse_spans
from annotator.ui.widgets.spans import read_field
from tests.cli_helpers import run_cli
from tests.store_helpers import annotated_project, refused

DEEP = "[" * 100_000 + "]" * 100_000
#: JSON text of spans that the strict reader refuses, and what it says.
BAD_SPANS = [
    (DEEP, "nested too deeply"),
    ('[{"start": 0, "end": 1, "type": "gender", "type": "color"}]', "key 'type' appears twice in one object"),
    ('[{"start": 0, "end": NaN, "type": "gender"}]', "NaN is not a number JSON allows"),
    ('[{"start": 0, "end": Infinity, "type": "gender"}]', "Infinity is not a number JSON allows"),
]


@pytest.fixture
def project(store):
    return store, annotated_project(store)


def _row(tmp_path, spans, name: str = "rows.jsonl") -> str:
    row = {"system": "sys-a", "item": "img0.jpg", "annotator": "ann1", "label": "inaccurate",
           "error_types": ["gender"], "spans": spans}
    path = tmp_path / name
    path.write_text('{"system": "sys-a", "item": "img1.jpg", "annotator": "ann1", "label": "accurate"}\n'
                    + json.dumps(row) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("text, said", BAD_SPANS, ids=["deep", "duplicate key", "NaN", "Infinity"])
def test_spans_given_as_json_text_in_a_row(project, tmp_path, capsys, text, said):
    store, _ = project
    path = _row(tmp_path, text)
    refused(store, lambda: import_jsonl(store, "p", path), "rows.jsonl, line 2",
            "spans must be a JSON list of span objects", said)
    code, _, err = run_cli(capsys, "--db", store.url, "import", "jsonl", "--project", "p", path)
    assert code == 2 and "rows.jsonl, line 2" in err and said in err and "Traceback" not in err, err


@pytest.mark.parametrize("text, said", BAD_SPANS, ids=["deep", "duplicate key", "NaN", "Infinity"])
def test_the_annotate_page_s_spans_field(text, said):
    """What the page's hidden field sends is read by the same reader (the adjudication page uses it too)."""
    with pytest.raises(InputError, match=said):
        read_field(text)
    with pytest.raises(InputError, match=said):
        parse_spans(text)


def test_a_deep_first_line_is_named_not_a_traceback(project, tmp_path):
    """The reader looks at the first line to tell items from judgement rows; that look is strict too."""
    store, _ = project
    path = tmp_path / "deep.jsonl"
    path.write_text(DEEP + "\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "p", path), "deep.jsonl, line 1", "nested too deeply")


@pytest.mark.parametrize("text, said", [
    ('[{"id": 1, "id": 2, "data": {}, "annotations": []}]', "line 1: invalid JSON: key 'id' appears twice"),
    ('[{"id": 1,\n "data": {"line": NaN}, "annotations": []}]', "line 2: invalid JSON: NaN is not a number"),
    ("[\n" + DEEP + "]", "line 2: invalid JSON: nested too deeply"),
], ids=["duplicate key", "NaN", "deep"])
def test_a_label_studio_export(project, tmp_path, text, said):
    store, _ = project
    path = tmp_path / "ls.json"
    path.write_text(text, encoding="utf-8")
    refused(store, lambda: import_label_studio(store, "p", path), f"ls.json, {said}")


def test_records_read_for_tools_are_strict_too(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"key": "a", "key": "b"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="items.jsonl, line 1: invalid JSON: key 'key' appears twice"):
        list(iter_records(path))
