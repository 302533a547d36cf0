"""Legacy judgement files and corrected caption files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.errors import NotFound
from annotator.io import import_corrections, import_judgements, import_lines
from annotator.io.judgements import combine, read_coarse, read_fine
from annotator.model import Label, Role
from annotator.store.corrections import current_corrections_frame
from annotator.store.judgements import current_frame, history
from annotator.store.projects import captions_of_system, project_id
from annotator.store.users import get_user
from tests.store_helpers import refused

FIX = Path(__file__).parent.parent / "fixtures"
LINES = FIX / "lines"
COARSE, FINE = FIX / "judgements" / "coarse.json", FIX / "judgements" / "fine.json"


@pytest.fixture
def project(store):
    import_lines(store, "p", "sys-a", LINES / "captions_a.txt", [LINES / "refs1.txt"])
    import_lines(store, "p", "sys-b", LINES / "captions_b.txt", [LINES / "refs1.txt"])
    return store


def _json(tmp_path, name, data) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_read_files_with_the_tools_spellings():
    assert read_coarse(COARSE) == {0: Label.ACCURATE, 1: Label.INACCURATE, 2: Label.INACCURATE}
    # Aliases resolve to ids; the result is in taxonomy order, not file order.
    assert read_fine(FINE) == {1: ("clothing_type", "number"), 2: ("object_wrong", "color")}


def test_import_coarse_and_fine(project):
    store = project
    r = import_judgements(store, "p", "sys-b", "alice", COARSE, FINE)
    assert (r.judgements, r.unchanged) == (3, 0)
    df = current_frame(store, "p").sort_values("line_no")
    assert list(df["system"]) == ["sys-b"] * 3 and list(df["user"]) == ["alice"] * 3
    assert list(df["label"]) == ["accurate", "inaccurate", "inaccurate"]
    assert list(df["error_types"]) == ["", "clothing_type number", "object_wrong color"]
    with store.read() as conn:
        user = get_user(conn, "alice")
    assert user.role is Role.ANNOTATOR and user.password_hash is None
    # Importing the same files again adds no revision.
    again = import_judgements(store, "p", "sys-b", "alice", COARSE, FINE)
    assert (again.judgements, again.unchanged) == (0, 3)
    with store.read() as conn:
        rows = captions_of_system(conn, project_id(conn, "p"), "sys-b")
        assert [len(history(conn, r.id)) for r in rows] == [1, 1, 1]


def test_changed_file_adds_a_revision(project, tmp_path):
    store = project
    import_judgements(store, "p", "sys-a", "bob", COARSE)
    changed = _json(tmp_path, "coarse.json", {"0": "incongruent", "1": "incongruent", "2": "incongruent"})
    r = import_judgements(store, "p", "sys-a", "bob", changed)
    assert (r.judgements, r.unchanged) == (1, 2)
    with store.read() as conn:
        first = captions_of_system(conn, project_id(conn, "p"), "sys-a")[0]
        revs = history(conn, first.id)
    assert [(j.revision, j.label) for j in revs] == [(1, Label.ACCURATE), (2, Label.INACCURATE)]


def test_coarse_only_import_leaves_types_empty(project):
    import_judgements(project, "p", "sys-a", "bob", COARSE)
    df = current_frame(project, "p")
    assert sorted(df["error_types"]) == ["", "", ""]
    assert sorted(df["label"]) == ["accurate", "inaccurate", "inaccurate"]


@pytest.mark.parametrize("coarse, fine, fragments", [
    ({"0": "congruent", "3": "congruent"}, None, ["coarse.json", "key '3'", "out of range", "3 captions (0..2)"]),
    ({"0": "maybe"}, None, ["coarse.json", "key '0'", "unknown coarse label 'maybe'"]),
    ({"x": "congruent"}, None, ["key 'x'", "not a non-negative integer"]),
    ({"-1": "congruent"}, None, ["not a non-negative integer"]),
    ({}, None, ["no judgements"]),
    ({"0": "incongruent"}, {"0": ["wrong-subject", "bad-spelling"]}, ["fine.json", "key '0'", "unknown error type label 'bad-spelling'"]),
    ({"0": "incongruent"}, {"0": "nonsense"}, ["unknown error type label 'nonsense'"]),
    ({"0": "incongruent"}, {"0": [3]}, ["key '0'", "list of error-type names"]),
    ({"0": "incongruent", "1": "incongruent"}, {"0": ["age"]}, ["key '1'", "incongruent", "no error types"]),
    ({"0": "congruent"}, {"0": ["age"]}, ["key '0'", "congruent", "has error types"]),
    ({"0": "congruent"}, {"2": ["age"]}, ["key '2'", "no coarse judgement"]),
])
def test_bad_judgement_files_write_nothing(project, tmp_path, coarse, fine, fragments):
    store = project
    import_judgements(store, "p", "sys-a", "carol", COARSE, FINE)  # existing data must survive untouched
    c = _json(tmp_path, "coarse.json", coarse)
    f = _json(tmp_path, "fine.json", fine) if fine is not None else None
    refused(store, lambda: import_judgements(store, "p", "sys-b", "dave", c, f), *fragments)
    with store.read() as conn:
        with pytest.raises(NotFound):
            get_user(conn, "dave")  # the user is not created either


def test_unknown_project_or_system(project):
    refused(project, lambda: import_judgements(project, "nope", "sys-a", "x", COARSE), "no project called 'nope'", error=NotFound)
    refused(project, lambda: import_judgements(project, "p", "sys-z", "x", COARSE), "no system called 'sys-z'", error=NotFound)


def test_combine_rules_directly():
    out = combine({0: Label.ACCURATE, 1: Label.INACCURATE}, {1: ("age",)})
    assert [(j.index, j.label, j.error_types) for j in out] == [(0, Label.ACCURATE, ()), (1, Label.INACCURATE, ("age",))]


def test_corrections_from_a_corrected_copy(project, tmp_path):
    store = project
    fixed = tmp_path / "fixed.txt"
    fixed.write_text("A dog runs on the grass\nTwo  people   ride bikes \nA blue car parked by a tree\n", encoding="utf-8")
    r = import_corrections(store, "p", "sys-a", "color", fixed, annotator="erin")
    assert (r.corrections, r.items_read) == (1, 3)
    df = current_corrections_frame(store, "p")
    assert len(df) == 1
    row = df.iloc[0]
    assert (row["system"], row["line_no"], row["error_type"], row["user"]) == ("sys-a", 2, "color", "erin")
    assert (row["original_text"], row["corrected_text"]) == ("A red car parked by a tree", "A blue car parked by a tree")
    with store.read() as conn:
        assert get_user(conn, "erin").role is Role.ANALYST
    # Same file again: nothing new. The tool's spelling of the type is accepted too.
    again = import_corrections(store, "p", "sys-a", "Colour", fixed, annotator="erin")
    assert (again.corrections, again.unchanged) == (0, 1)
    # Default user when none is given.
    r = import_corrections(store, "p", "sys-a", "color", fixed)
    assert r.user == "corrector" and r.corrections == 1


def test_whitespace_change_is_a_change(project, tmp_path):
    fixed = tmp_path / "fixed.txt"
    fixed.write_text("A dog runs on the grass\nTwo people ride bikes\nA red car parked by a tree\n", encoding="utf-8")
    r = import_corrections(project, "p", "sys-a", "number", fixed)
    assert r.corrections == 1


def test_bad_corrections_write_nothing(project, tmp_path):
    store = project
    short = tmp_path / "short.txt"
    short.write_text("one\ntwo\n", encoding="utf-8")
    refused(store, lambda: import_corrections(store, "p", "sys-a", "color", short), "short.txt", "2 lines", "3 captions")
    full = tmp_path / "full.txt"
    full.write_text("a\nb\nc\n", encoding="utf-8")
    refused(store, lambda: import_corrections(store, "p", "sys-a", "shape", full), "unknown error type label 'shape'")
    refused(store, lambda: import_corrections(store, "p", "sys-a", "unrelated", full), "not correctable")
    refused(store, lambda: import_corrections(store, "p", "sys-q", "color", full), "sys-q", error=NotFound)
