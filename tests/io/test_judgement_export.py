"""Judgements export (one row per caption judgement) and its read-back, on SQLite and PostgreSQL.

The project is tests.store.test_agreement_store.build_project (three annotators, revisions, notes, two leads'
adjudications) plus a skip, time spent on some saves and notes a spreadsheet or a CSV reader would trip on.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from annotator.errors import InputError, NotFound, PermissionDenied
from annotator.io import export_jsonl, import_jsonl
from annotator.io.judgement_rows import COLUMNS
from annotator.judgement_export import export_judgements
from annotator.store import open_store
from annotator.store.judgements import insert_judgement
from annotator.store.projects import table_counts
from annotator.store.users import user_id
from tests.cli_helpers import run_cli
from tests.store_helpers import refused
from tests.store.test_agreement_store import JUDGEMENTS, PROJECT, build_project

ROOT = Path(__file__).resolve().parents[2]
TRICKY = '=HYPERLINK("http://x") , "quoted"\nsecond line; with ; semicolons'
AT = datetime(2025, 3, 1, 10, 12, 44, 120301, tzinfo=timezone.utc)


def build(store) -> list[int]:
    """build_project plus: ann3 skipped c6 after 4.5 s, ann1's second thought on c0 with a tricky note and 12.25 s
    (its types stored out of taxonomy order, as the export puts them in order)."""
    ids = build_project(store)
    with store.transaction() as conn:
        ann1, ann3 = user_id(conn, "ann1"), user_id(conn, "ann3")
        insert_judgement(conn, ids[6], ann3, label=None, note="come back later", seconds=4.5, at=AT)
        insert_judgement(conn, ids[0], ann1, label="inaccurate", error_types=["gender", "age"], note=TRICKY,
                         seconds=12.25)
    return ids


@pytest.fixture
def fresh(store, tmp_path):
    """A second, empty store of the same kind as ``store``."""
    if store.is_sqlite:
        other = open_store(f"sqlite:///{tmp_path / 'fresh.db'}")
        yield other
        other.dispose()
    else:
        from tests.conftest import _drop_pg_schema, _pg_schema_store
        other, schema, _ = _pg_schema_store()
        yield other
        other.dispose()
        _drop_pg_schema(schema)


def _copy(store, fresh, tmp_path, *, history: bool) -> tuple:
    """Export the project and its judgements from ``store``, import both into ``fresh``; return the two exports."""
    project_file = tmp_path / "project.jsonl"
    with project_file.open("w", encoding="utf-8") as fh:
        export_jsonl(store, PROJECT, fh)
    before = export_judgements(store, PROJECT, history=history)
    rows_file = tmp_path / "judgements.jsonl"
    rows_file.write_bytes(before.to_bytes("jsonl"))
    import_jsonl(fresh, PROJECT, project_file)
    result = import_jsonl(fresh, PROJECT, rows_file)
    assert result.format == "judgement rows" and result.judgements == len(before)
    return before, rows_file


def test_current_rows_are_every_current_judgement_with_what_a_reader_needs(store):
    ids = build(store)
    export = export_judgements(store, PROJECT)
    rows = export.rows
    assert list(rows.columns) == list(COLUMNS)
    # Every (caption, user, kind) once: the annotations, ann3's skip of c6 and three adjudications (boss, lea twice).
    assert len(rows) == sum(len(j) for j in JUDGEMENTS.values()) + 1 + 3
    first = rows[(rows.item == "img0") & (rows.system == "sysA") & (rows.annotator == "ann1")].iloc[0]
    assert first.to_dict() | {"saved_at": None} == {
        "project": PROJECT, "system": "sysA", "item": "img0", "line": 0,
        "caption": "caption A0: a man in a *red* shirt | 0", "annotator": "ann1", "kind": "annotation",
        "label": "inaccurate", "error_types": ("age", "gender"), "spans": (), "note": TRICKY, "seconds": 12.25,
        "revision": 2, "saved_at": None, "suggested": None}
    skip = rows[(rows.item == "img6") & (rows.annotator == "ann3")].iloc[0]
    assert (skip.label, skip.error_types, skip.note, skip.seconds, skip.saved_at) == (
        None, (), "come back later", 4.5, "2025-03-01T10:12:44.120301+00:00")
    decided = rows[rows.kind == "adjudication"]
    assert sorted(zip(decided.item, decided.annotator)) == [("img1", "lea"), ("img4", "boss"), ("img4", "lea")]
    # Project order: systems as imported, items by position, then annotator.
    assert rows.system.tolist() == ["sysA"] * (len(rows) - 20) + ["sysB"] * 20
    assert rows[rows.system == "sysA"].item.tolist()[:4] == ["img0"] * 3 + ["img1"]  # ann1, ann2, ann3, then img1
    assert ids


def test_history_has_every_revision_and_filters_narrow_it(store):
    build(store)
    history = export_judgements(store, PROJECT, history=True).rows
    mine = history[(history.item == "img6") & (history.system == "sysA") & (history.annotator == "ann1")]
    assert mine.revision.tolist() == [1, 2, 3] and mine.label.tolist() == ["accurate", "inaccurate", "accurate"]
    assert mine.note.tolist() == ["", "first thought", ""]
    assert len(history) == len(export_judgements(store, PROJECT)) + 3  # c6 ann1 twice more, c0 ann1 once more

    ann3 = export_judgements(store, PROJECT, annotators=["ANN3"], system="sysA").rows
    assert set(ann3.annotator) == {"ann3"} and sorted(ann3.item) == sorted(f"img{i}" for i in (0, 1, 2, 3, 4, 5, 6, 9))
    lea = export_judgements(store, PROJECT, annotators=["lea"]).rows
    assert set(lea.kind) == {"adjudication"} and len(lea) == 2
    assert export_judgements(store, PROJECT, layer="annotator:ann2").rows.equals(
        export_judgements(store, PROJECT, annotators=["ann2"]).rows)
    with pytest.raises(NotFound, match="nobody"):
        export_judgements(store, PROJECT, annotators=["nobody"])
    with pytest.raises(NotFound, match="sysC"):
        export_judgements(store, PROJECT, system="sysC")


def test_adjudicated_layer_keeps_the_judgements_its_decisions_rest_on(store):
    """Worked out by hand from JUDGEMENTS: agreed and types-open captions keep every annotation, adjudicated
    ones the newest adjudication only (c4: lea's, after boss's), unresolved ones (c2, c5, c9, c12, c19) nothing."""
    ids = build_project(store)
    rows = export_judgements(store, PROJECT, layer="adjudicated").rows
    index = {c: i for i, c in enumerate(ids)}
    by_key = {(("sysA", "sysB").index(s) * 10 + int(k[3:]), a, kind)
              for s, k, a, kind in zip(rows.system, rows.item, rows.annotator, rows.kind)}
    both = ("ann1", "ann2")
    expected = ({(0, a, "annotation") for a in ("ann1", "ann2", "ann3")} | {(1, "lea", "adjudication")}
                | {(3, a, "annotation") for a in ("ann1", "ann2", "ann3")} | {(4, "lea", "adjudication")}
                | {(c, a, "annotation") for c in (6, 7, 8, 10, 11, 13, 14, 15, 16, 17, 18) for a in both})
    assert by_key == expected and len(rows) == 30 and index
    consensus = export_judgements(store, PROJECT, layer="consensus").rows
    # Without the leads, c1 (all inaccurate, types differ) keeps its three annotations and c4 (I, A, I) is unresolved.
    assert set(consensus.kind) == {"annotation"} and len(consensus) == 31
    cons_keys = {(("sysA", "sysB").index(s) * 10 + int(k[3:]), a) for s, k, a in
                 zip(consensus.system, consensus.item, consensus.annotator)}
    assert {(1, a) for a in ("ann1", "ann2", "ann3")} <= cons_keys and not any(c == 4 for c, _ in cons_keys)
    history = export_judgements(store, PROJECT, layer="adjudicated", history=True).rows
    assert len(history) == 30 + 2  # ann1's two earlier revisions of c6 come along


def test_annotators_export_only_their_own(store):
    build_project(store)
    own = export_judgements(store, PROJECT, actor="ann2", actor_role="annotator")
    assert set(own.rows.annotator) == {"ann2"} and own.annotators == ("ann2",)
    for kwargs in ({"annotators": ["ann1"]}, {"layer": "adjudicated"}, {"layer": "annotator:ann1"}):
        with pytest.raises(PermissionDenied):
            export_judgements(store, PROJECT, actor="ann2", actor_role="annotator", **kwargs)
    assert len(export_judgements(store, PROJECT, actor="lea", actor_role="lead")) > len(own)


@pytest.mark.parametrize("history", [False, True])
def test_jsonl_round_trip_gives_the_same_judgements(store, fresh, tmp_path, history):
    build(store)
    before, rows_file = _copy(store, fresh, tmp_path, history=history)
    after = export_judgements(fresh, PROJECT, history=history)
    pd.testing.assert_frame_equal(after.rows, before.rows)
    if history:  # the whole history came along, so the current judgements are the same too
        pd.testing.assert_frame_equal(export_judgements(fresh, PROJECT).rows, export_judgements(store, PROJECT).rows)
    # Importing the file again adds nothing.
    counts = table_counts(fresh)
    again = import_jsonl(fresh, PROJECT, rows_file)
    assert (again.judgements, again.unchanged) == (0, len(before)) and table_counts(fresh) == counts


def test_a_current_export_then_the_history_fills_the_history_in(store, fresh, tmp_path):
    build(store)
    _copy(store, fresh, tmp_path, history=False)
    full = tmp_path / "history.jsonl"
    full.write_bytes(export_judgements(store, PROJECT, history=True).to_bytes("jsonl"))
    result = import_jsonl(fresh, PROJECT, full)
    assert result.judgements == 3  # the older revisions join the history behind the current judgements
    pd.testing.assert_frame_equal(export_judgements(fresh, PROJECT, history=True).rows,
                                  export_judgements(store, PROJECT, history=True).rows)
    pd.testing.assert_frame_equal(export_judgements(fresh, PROJECT).rows, export_judgements(store, PROJECT).rows)


def _lines(export) -> list[dict]:
    return [json.loads(line) for line in export.to_bytes("jsonl").decode("utf-8").splitlines()]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_bad_rows_name_the_line_and_store_nothing(store, fresh, tmp_path):
    build(store)
    _copy(store, fresh, tmp_path, history=False)
    rows = _lines(export_judgements(store, PROJECT))
    cases = [
        ({"label": "accurate"}, "has no error types"),
        ({"error_types": ["gender", "no_such_type"]}, "no_such_type"),
        ({"caption": "something else"}, "caption differs"),
        ({"item": "img99"}, "no caption of system 'sysA' for item 'img99'"),
        ({"label": "maybe"}, "unknown label"),
        ({"seconds": -1}, "seconds"),
        ({"saved_at": "yesterday"}, "saved_at"),
        ({"revision": 0}, "revision"),
        ({"colour": "red"}, "unknown field 'colour'"),
        ({"note": "stored already and different"}, "stored already and says something else"),
        ({"project": "another"}, "row of project 'another'"),
        ({"suggested": "yes"}, "suggested must be true, false or null"),
    ]
    for change, message in cases:
        bad = [dict(r) for r in rows]
        bad[2].update(change)
        refused(fresh, lambda p=_write(tmp_path / "bad.jsonl", bad): import_jsonl(fresh, PROJECT, p), message,
                "line 3")
    doubled = rows[:3] + [rows[2]]
    refused(fresh, lambda: import_jsonl(fresh, PROJECT, _write(tmp_path / "twice.jsonl", doubled)),
            "also on line 3", "line 4")
    mixed = rows[:2] + [{"key": "img0", "captions": []}]
    refused(fresh, lambda: import_jsonl(fresh, PROJECT, _write(tmp_path / "mixed.jsonl", mixed)),
            "not a judgement row", "line 3")


def test_suggested_says_whether_a_judges_suggestion_was_shown_in_every_format(store, fresh, tmp_path):
    """A revision saved with the panel pre-filled from a judge (True), one saved without (False) and one where nothing
    was recorded (None): the rows carry them, CSV and XLSX as true / false / empty, JSONL as true / false / null, and
    the JSONL file brings them back on import."""
    ids = build(store)
    with store.transaction() as conn:
        ann1, ann2 = user_id(conn, "ann1"), user_id(conn, "ann2")
        insert_judgement(conn, ids[2], ann1, label="accurate", suggested=True)
        insert_judgement(conn, ids[2], ann2, label="inaccurate", error_types=["gender"], suggested=False)
    export = export_judgements(store, PROJECT, history=True)
    rows = export.rows
    img2 = rows[(rows.item == "img2") & (rows.system == "sysA")]
    newest = {a: img2[img2.annotator == a].sort_values("revision").iloc[-1] for a in ("ann1", "ann2", "ann3")}
    assert [newest[a].suggested for a in ("ann1", "ann2", "ann3")] == [True, False, None]
    assert all(s is None for s in img2[img2.revision == 1].suggested)  # build_project's saves recorded nothing
    assert {type(s) for s in rows.suggested} == {bool, type(None)} and sum(s is True for s in rows.suggested) == 1

    def cell(table, annotator):
        return table[(table["item"] == "img2") & (table["system"] == "sysA") & (table["annotator"] == annotator)
                     ]["suggested"].tolist()[-1]

    csv = pd.read_csv(io.BytesIO(export.to_bytes("csv")), keep_default_na=False, dtype=str)
    sheet = pd.read_excel(io.BytesIO(export.to_bytes("xlsx")), sheet_name="Judgements", dtype=str,
                          keep_default_na=False)
    for table in (csv, sheet):
        assert list(table.columns) == list(COLUMNS) and list(table.columns)[-1] == "suggested"
        assert [cell(table, a) for a in ("ann1", "ann2", "ann3")] == ["true", "false", ""]
    lines = [json.loads(line) for line in export.to_bytes("jsonl").decode("utf-8").splitlines()]
    img2_lines = [r for r in lines if (r["item"], r["system"]) == ("img2", "sysA")]
    assert [[r["suggested"] for r in img2_lines if r["annotator"] == a][-1] for a in ("ann1", "ann2", "ann3")] == [
        True, False, None]
    # Read back: the same judgements, suggestions included.
    before, _ = _copy(store, fresh, tmp_path, history=True)
    pd.testing.assert_frame_equal(export_judgements(fresh, PROJECT, history=True).rows, before.rows)
    assert export_judgements(fresh, PROJECT, history=True).rows.suggested.tolist() == rows.suggested.tolist()


def test_rows_without_revision_are_appended_unless_they_say_the_same(sqlite_store, tmp_path):
    build_project(sqlite_store)
    rows = _lines(export_judgements(sqlite_store, PROJECT, annotators=["ann2"], system="sysB"))
    plain = [{k: v for k, v in r.items() if k not in ("revision", "saved_at", "line", "project")} for r in rows]
    plain[0]["label"], plain[0]["error_types"] = "accurate", []
    result = import_jsonl(sqlite_store, PROJECT, _write(tmp_path / "plain.jsonl", plain))
    assert (result.judgements, result.unchanged) == (1, len(plain) - 1)
    now = export_judgements(sqlite_store, PROJECT, annotators=["ann2"], system="sysB").rows.iloc[0]
    assert (now["item"], now["label"], now["revision"]) == ("img0", "accurate", 2)


def test_csv_and_xlsx_are_the_same_table_for_people(store):
    build(store)
    export = export_judgements(store, PROJECT)
    table = pd.read_csv(io.BytesIO(export.to_bytes("csv")), keep_default_na=False, dtype=str)
    assert list(table.columns) == list(COLUMNS) and len(table) == len(export)
    row = table[(table["item"] == "img0") & (table["annotator"] == "ann1") & (table["system"] == "sysA")].iloc[0]
    assert row["error_types"] == "age;gender" and row["note"] == "'" + TRICKY  # a formula stays text
    assert row["seconds"] == "12.25" and row["revision"] == "2" and row["line"] == "0"
    assert table[(table["item"] == "img6") & (table["annotator"] == "ann3")]["label"].tolist() == [""]
    raw = pd.read_csv(io.BytesIO(export.to_bytes("csv", raw_csv=True)), keep_default_na=False, dtype=str)
    assert TRICKY in raw["note"].tolist()
    sheet = pd.read_excel(io.BytesIO(export.to_bytes("xlsx")), sheet_name="Judgements", dtype=str,
                          keep_default_na=False)
    assert list(sheet.columns) == list(COLUMNS) and len(sheet) == len(export)
    assert TRICKY in sheet["note"].tolist() and "age;gender" in sheet["error_types"].tolist()
    assert export.file_name("xlsx") == "study-judgements.xlsx"
    assert export_judgements(store, PROJECT, history=True).file_name("jsonl") == "study-judgements-history.jsonl"


def _cli(db: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m annotator --db db *args`` as a separate process."""
    return subprocess.run([sys.executable, "-m", "annotator", "--db", db, *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_command_line_export_and_import_round_trip(sqlite_store, tmp_path, capsys):
    # the export and the final export to a pipe run as real processes (the entry point, the bytes written to
    # standard output); the steps between call the command line in this process
    build(sqlite_store)
    out = tmp_path / "j.jsonl"
    proc = _cli(sqlite_store.url, "judgements", "export", "--project", PROJECT, "--history", "--format", "jsonl",
                "--output", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["rows"] == len(export_judgements(sqlite_store, PROJECT, history=True)) and summary["history"]
    target = f"sqlite:///{tmp_path / 'target.db'}"
    assert run_cli(capsys, "--db", sqlite_store.url, "export", "--project", PROJECT, "--format", "jsonl", "--output",
                   str(tmp_path / "p.jsonl"))[0] == 0
    assert run_cli(capsys, "--db", target, "import", "jsonl", "--project", PROJECT, str(tmp_path / "p.jsonl"))[0] == 0
    code, stdout, stderr = run_cli(capsys, "--db", target, "import", "jsonl", "--project", PROJECT, str(out))
    assert code == 0 and "judgement revisions with" in stdout, stderr
    proc = _cli(target, "judgements", "export", "--project", PROJECT, "--history", "--format", "jsonl")
    assert proc.returncode == 0 and proc.stdout == out.read_text(encoding="utf-8")
    code, csv, _ = run_cli(capsys, "--db", sqlite_store.url, "judgements", "export", "--project", PROJECT,
                           "--annotator", "ann3", "ann2", "--system", "sysB", "--format", "csv")
    assert code == 0 and set(pd.read_csv(io.StringIO(csv))["annotator"]) == {"ann2"}
    code, _, stderr = run_cli(capsys, "--db", sqlite_store.url, "judgements", "export", "--project", PROJECT,
                              "--layer", "annotator:", "--format", "csv")
    assert code == 2 and "names no annotator" in stderr


def test_data_page_prepares_the_judgements_download(sqlite_store):
    from tests.apptest_helpers import page_test, visible
    build(sqlite_store)
    at = page_test("data", sqlite_store.url, user="lea", role="lead", project=PROJECT, create_user=False).run()
    assert not at.exception
    at.selectbox(key="data_judgements_system").set_value("sysB")
    at.radio(key="data_judgements_format").set_value("jsonl")
    at.button(key="data_judgements_prepare").click().run()
    assert not at.exception and not at.error
    labels = [visible(b.label) for b in at.get("download_button")]
    assert "Download study-judgements.jsonl (20 rows)" in labels
    data = at.session_state["data_judgements"][2]
    assert data == export_judgements(sqlite_store, PROJECT, system="sysB").to_bytes("jsonl")


def test_a_missing_file_or_project_is_a_message(sqlite_store, tmp_path):
    build_project(sqlite_store)
    with pytest.raises(NotFound):
        export_judgements(sqlite_store, "nope")
    rows = _lines(export_judgements(sqlite_store, PROJECT))[:1]
    with pytest.raises(NotFound):
        import_jsonl(sqlite_store, "nope", _write(tmp_path / "r.jsonl", rows))
    with pytest.raises(InputError, match="no judgement rows|no items"):
        import_jsonl(sqlite_store, PROJECT, _write(tmp_path / "empty.jsonl", []))


def test_gaps_future_times_and_adjudications_under_annotators_are_refused(store, fresh, tmp_path):
    # The rules of docs/formats.md: each refused with the file and line, and nothing stored.
    build(store)
    _copy(store, fresh, tmp_path, history=False)  # fresh holds the current judgements, each its own revision
    rows = _lines(export_judgements(store, PROJECT))
    ann = next(k for k, r in enumerate(rows) if r["kind"] == "annotation" and r["revision"] == 1)
    adj = next(k for k, r in enumerate(rows) if r["kind"] == "adjudication")

    def bad_file(*changed: tuple[int, dict], extra: tuple[dict, ...] = ()) -> Path:
        out = [dict(r) for r in rows]
        for k, change in changed:
            out[k].update(change)
        return _write(tmp_path / "bad.jsonl", out + list(extra))

    # A revision beyond the stored one by two: revision 2 would be missing.
    refused(fresh, lambda: import_jsonl(fresh, PROJECT, bad_file((ann, {"revision": 3}))), "bad.jsonl",
            f"line {ann + 1}", "revision 3 of", "leaves a gap: revision 2 is neither stored nor in the file")
    # Within the file: a new annotator's revisions 1 and 4 (2 and 3 missing), named at the row of revision 4.
    newbie = [dict(rows[ann], annotator="newbie", revision=1), dict(rows[ann], annotator="newbie", revision=4)]
    refused(fresh, lambda: import_jsonl(fresh, PROJECT, bad_file(extra=tuple(newbie))), f"line {len(rows) + 2}",
            "newbie", "leaves a gap: revisions 2, 3 are neither stored nor in the file")
    for when in ("9999-12-31T23:59:59+00:00", "9999-12-31T23:59:59-05:00", "2999-01-01T00:00:00"):
        refused(fresh, lambda w=when: import_jsonl(fresh, PROJECT, bad_file((ann, {"saved_at": w}))),
                f"line {ann + 1}", "saved_at", "9999" if when.startswith("9999") else "2999")
    # An adjudication under an annotator's account.
    refused(fresh, lambda: import_jsonl(fresh, PROJECT, bad_file((adj, {"annotator": "ann1"}))), f"line {adj + 1}",
            "an adjudication under 'ann1', whose account is an annotator's", "only a lead or an admin adjudicates")
    # Allowed: a time a few hours ahead (clocks differ), and a new name whose rows include an adjudication (a lead).
    from datetime import timedelta
    soon = (datetime.now(timezone.utc) + timedelta(hours=3)).isoformat()
    lead_rows = (dict(rows[ann], annotator="newlead", revision=1), dict(rows[adj], annotator="newlead", revision=1))
    result = import_jsonl(fresh, PROJECT, bad_file((ann, {"saved_at": soon, "revision": 2}), extra=lead_rows))
    assert result.judgements == 3
    with fresh.read() as conn:
        from annotator.store.users import get_user
        assert get_user(conn, "newlead").role.value == "lead"
