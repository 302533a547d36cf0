"""One length limit per free-text field (annotator.limits), the same on every path that stores it.

A note: the annotate page's save, skip and draft, an adjudication (page and `annotator adjudicate --note`), and
the judgement rows `annotator import jsonl` reads back. An override reason: the Correction page and
`annotator corrections save --override-reason` (one core call) and `import corrections --reason`. Over the limit, each path
refuses with a message naming the field and the limit, and stores nothing; at the limit, each path stores, so a
note imported at the limit can be saved again from the page. SQLite and PostgreSQL.
"""

from __future__ import annotations

import json

import pytest

from annotator.adjudication import adjudicate
from annotator.annotation import Queue
from annotator.correction import correct_caption
from annotator.errors import InputError
from annotator.io import import_jsonl
from annotator.limits import TEXT_LIMITS
from annotator.store.judgements import history
from tests.cli_helpers import run_cli
from tests.store_helpers import annotated_project, refused, table_counts

NOTE, REASON = TEXT_LIMITS["note"], TEXT_LIMITS["override reason"]
pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def project(store):
    return store, annotated_project(store)


def _too_long(field: str, limit: int) -> list[str]:
    return [f"the {field} is {limit + 1:,} characters long", f"at most {limit:,} are allowed"]


def test_the_limits_are_one_each():
    assert NOTE == REASON == 2000


def test_a_note_over_the_limit_is_refused_on_every_page_path(project):
    store, caps = project
    q = Queue.open(store, "ann1", "annotator", "p")
    task = q.task(0)
    long_note = "n" * (NOTE + 1)
    refused(store, lambda: q.save(task, "inaccurate", ["other"], long_note), *_too_long("note", NOTE))
    refused(store, lambda: q.skip(task, long_note), *_too_long("note", NOTE))  # a skip used to cut it silently
    refused(store, lambda: q.save_draft(task, "inaccurate", [], long_note), *_too_long("note", NOTE))
    refused(store, lambda: adjudicate(store, caps[0], "lead1", "lead", "inaccurate", ["other"], note=long_note),
            *_too_long("note", NOTE))
    assert q.save(task, "inaccurate", ["other"], "n" * NOTE).revision == 1


def test_adjudicate_command_refuses_a_long_note(project, capsys):
    store, caps = project
    before = table_counts(store)
    code, _, err = run_cli(capsys, "--db", store.url, "adjudicate", "--project", "p", "--caption", str(caps[0]),
                           "--user", "lead1", "--label", "inaccurate", "--types", "other", "--note", "x" * (NOTE + 1))
    assert code == 2 and all(f in err for f in _too_long("note", NOTE)), err
    assert table_counts(store) == before


def _rows(tmp_path, note: str):
    path = tmp_path / "judgements.jsonl"
    row = {"project": "p", "system": "sys-a", "item": "img0.jpg", "annotator": "ann1", "kind": "annotation",
           "label": "inaccurate", "error_types": ["other"], "note": note, "revision": 1}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def test_imported_notes_have_the_page_limit_and_save_again_from_the_page(project, tmp_path, capsys):
    store, caps = project
    path = _rows(tmp_path, "i" * (NOTE + 1))
    refused(store, lambda: import_jsonl(store, "p", path), "judgements.jsonl, line 1", *_too_long("note", NOTE))
    before = table_counts(store)
    code, _, err = run_cli(capsys, "--db", store.url, "import", "jsonl", "--project", "p", str(path))
    assert code == 2 and "judgements.jsonl, line 1" in err and all(f in err for f in _too_long("note", NOTE)), err
    assert table_counts(store) == before
    # At the limit it goes in, and the annotator can save the caption again with the note as it is.
    import_jsonl(store, "p", _rows(tmp_path, "i" * NOTE))
    q = Queue.open(store, "ann1", "annotator", "p")
    task = q.task(0)
    assert task.current.note == "i" * NOTE
    assert q.save(task, "inaccurate", ["other"], task.current.note).revision == 2


def _corrected_copy(store, tmp_path, caps) -> str:
    from annotator.store.correction_queries import caption_text
    with store.read() as conn:
        lines = [caption_text(conn, c) for c in caps]
    lines[0] = "a completely different sentence about a red bus parked in a garage"
    path = tmp_path / "fixed.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_an_override_reason_over_the_limit_is_refused_by_the_import_and_the_command(project, tmp_path, capsys):
    store, caps = project
    fixed = _corrected_copy(store, tmp_path, caps)
    for reason in ("r" * (REASON + 1), "bad \x1b[31m reason"):
        before = table_counts(store)
        code, _, err = run_cli(capsys, "--db", store.url, "import", "corrections", "--project", "p", "--system",
                               "sys-a", "--error-type", "gender", "--captions", fixed, "--reason", reason)
        assert code == 2 and "--reason" in err and "override reason" in err, err
        assert table_counts(store) == before
        code, _, err = run_cli(capsys, "--db", store.url, "corrections", "save", "--project", "p", "--system", "sys-a",
                               "--line", "0", "--type", "gender", "--user", "lead1", "--text",
                               "a completely different sentence", "--override-reason", reason)
        assert code == 2 and "override reason" in err, err
        assert table_counts(store) == before
    assert "U+001B" in err  # the control character is named, as in every other text field
    with pytest.raises(InputError, match="at most 2,000 are allowed"):
        correct_caption(store, caps[0], "gender", "lead1", "a completely different sentence",
                        override_reason="r" * (REASON + 1))
    # At the limit, both store it.
    code, _, err = run_cli(capsys, "--db", store.url, "import", "corrections", "--project", "p", "--system", "sys-a",
                           "--error-type", "gender", "--captions", fixed, "--reason", "r" * REASON)
    assert code == 0, err
    saved = correct_caption(store, caps[1], "gender", "lead1", "a completely different sentence",
                            override_reason="s" * REASON)
    assert saved.override_reason == "s" * REASON


def test_history_keeps_what_was_stored(project):
    store, caps = project
    q = Queue.open(store, "ann1", "annotator", "p")
    q.skip(q.task(1), "  spaced  ")
    with store.read() as conn:
        assert [j.note for j in history(conn, caps[1])] == ["spaced"]
