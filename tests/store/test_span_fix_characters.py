"""A suggested fix is refused the characters a name is refused (annotator.names.line_problem): U+202E and the
other bidirectional controls, line and paragraph separators, control characters. On every path that stores one:
judgement rows read by `import jsonl`, the annotate page's save and draft (its spans field), an adjudication,
and the store itself when it is handed Span objects directly. Nothing is stored. SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from annotator.adjudication import adjudicate
from annotator.annotation import Queue
from annotator.io import import_jsonl
from annotator.model import Role
from annotator.spans import Span
from annotator.store.drafts import put_draft
from annotator.store.judgements import insert_judgement
from annotator.store.users import user_id
from annotator.ui.widgets.spans import read_field
from tests.store_helpers import annotated_project, refused

# "sys-a says: a cat sits on a sofa number 0": "cat" is token 3.
FIXES = {
    "\u202e": "U+202E (it changes the direction of the text)",
    "\u2066": "U+2066 (it changes the direction of the text)",
    "\u2028": "the control character U+2028",
    "\t": "the control character U+0009",
}


def _fix(character: str) -> str:
    return f"dog{character}gnik"


@pytest.fixture
def project(store):
    return store, annotated_project(store)


@pytest.mark.parametrize("character", FIXES, ids=["RLO", "LRI", "line separator", "tab"])
def test_every_path_refuses_a_fix_with_a_control_character(project, tmp_path, character):
    store, caps = project
    said = FIXES[character]
    span = {"start": 3, "end": 4, "type": "subject_wrong", "fix": _fix(character)}
    row = {"system": "sys-a", "item": "img0.jpg", "annotator": "ann1", "label": "inaccurate",
           "error_types": ["subject_wrong"], "spans": [span]}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "p", path), "rows.jsonl, line 1", "span 1: the fix cannot contain",
            said)
    q = Queue.open(store, "ann1", "annotator", "p")
    task = q.task(0)
    sent = json.dumps([span])  # what the page's spans field sends
    refused(store, lambda: q.save(task, "inaccurate", ["subject_wrong"], spans=read_field(sent)), said)
    as_objects = (Span(3, 4, "subject_wrong", _fix(character)),)
    refused(store, lambda: q.save(task, "inaccurate", ["subject_wrong"], spans=as_objects), said)
    refused(store, lambda: q.save_draft(task, "inaccurate", ["subject_wrong"], spans=as_objects), said)
    refused(store, lambda: adjudicate(store, caps[0], "lead1", Role.LEAD, "inaccurate", ["subject_wrong"],
                                      spans=as_objects), said)

    def stored_directly():
        with store.transaction() as conn:
            insert_judgement(conn, caps[0], user_id(conn, "ann1"), label="inaccurate", error_types=["subject_wrong"],
                             spans=as_objects)

    def drafted_directly():
        with store.transaction() as conn:
            put_draft(conn, caps[0], user_id(conn, "ann1"), label="inaccurate", error_types=["subject_wrong"],
                      spans=as_objects)

    refused(store, stored_directly, said)
    refused(store, drafted_directly, said)
    # The fix without the character goes in on each of them.
    assert q.save(task, "inaccurate", ["subject_wrong"], spans=(Span(3, 4, "subject_wrong", "dog"),)).revision == 1
