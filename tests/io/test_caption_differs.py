"""A judgement file whose caption text is not the project's says so ("the caption differs from the project's",
both texts shown around the first difference) before it reads anything that counts positions in that text.

annotator.io.validate.check_same_caption is the one check; judgement rows use it here, the Label Studio reader
calls it before it maps character offsets to words."""

from __future__ import annotations

import json

import pytest

from annotator.errors import InputError
from annotator.io import import_jsonl
from annotator.io.validate import check_same_caption
from tests.store_helpers import annotated_project, refused

STORED = "sys-a says: a cat sits on a sofa number 0"


@pytest.fixture
def project(store):
    return store, annotated_project(store)


def test_a_changed_caption_is_named_as_one_and_not_as_a_span_that_does_not_fit(project, tmp_path):
    store, _ = project
    changed = STORED + " next to a small brown dog"
    # The span fits the file's longer text but ends beyond the project's 10 tokens.
    row = {"system": "sys-a", "item": "img0.jpg", "caption": changed, "annotator": "ann1", "label": "inaccurate",
           "error_types": ["subject_wrong"], "spans": [{"start": 14, "end": 16, "type": "subject_wrong"}]}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    e = refused(store, lambda: import_jsonl(store, "p", path), "rows.jsonl, line 1",
                "the caption differs from the project's (system 'sys-a', item 'img0.jpg'): the file has "
                f"{changed!r}, the project {STORED!r}")
    assert "span" not in str(e)


def test_long_texts_are_shown_where_they_part():
    head, tail = "a man in a blue shirt rides " * 20, " past a red car" * 20
    with pytest.raises(InputError) as info:
        check_same_caption(head + "a bicycle" + tail, head + "a horse" + tail, "ls.json", "task 4")
    message = str(info.value)
    assert message.startswith("ls.json, task 4: the caption differs from the project's: the file has '…")
    assert "a bicycle" in message and "a horse" in message and len(message) < 300
    check_same_caption(STORED, STORED)  # the same text passes
