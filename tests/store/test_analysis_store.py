"""Error tables through the store (SQLite and PostgreSQL) and the ``annotator tables`` command."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from openpyxl import load_workbook

from annotator.analysis import compare_systems, error_tables
from annotator.cli import main
from annotator.layers import build_layer
from annotator.model import Caption, Item, Project, Role
from annotator.store.analysis_queries import judgement_frame
from annotator.store.judgements import insert_judgement
from annotator.store.projects import load_project, write_project
from annotator.store.users import create_user
from annotator.taxonomy import ERROR_TYPE_IDS
from tests.cli_helpers import run_cli as _run
from tests.store.test_agreement_store import PROJECT, build_project
from tests.core.test_analysis import TABLE1, study_captions


def _frame(store):
    return judgement_frame(store, PROJECT, kinds=("annotation", "adjudication"))


def test_annotator_layer_tables_hand_made(store):
    build_project(store)
    t = error_tables(build_layer(_frame(store), "annotator:ann1"))
    # ann1 judged all 20: 13 inaccurate (two of them with two types), practice items included.
    assert (t.total, t.accurate, t.inaccurate, t.untyped) == (20, 7, 13, 0)
    assert t.errors_per_description == {"1": 11, "2": 2, "3": 0, "4+": 0}
    expected = {"gender": 3, "activity": 3, "unrelated": 2, "clothing_color": 1, "color": 1, "age": 1, "number": 1,
                "scene": 1, "stance": 1, "position": 1}
    assert t.type_counts == {k: expected.get(k, 0) for k in ERROR_TYPE_IDS}
    sys_a = error_tables(build_layer(_frame(store), "ann1"), system="sysA")
    assert (sys_a.total, sys_a.inaccurate) == (10, 7)
    no_practice = error_tables(build_layer(_frame(store), "ann1"), exclude_practice=True)
    assert (no_practice.total, no_practice.inaccurate, no_practice.practice_excluded) == (18, 12, 2)


def test_adjudicated_layer_tables_hand_made(store):
    build_project(store)
    t = error_tables(build_layer(_frame(store), "adjudicated"))
    # Resolved: 15 captions (c1, c4 adjudicated); unresolved c2, c5, c9, c12, c19; types open c3, c13, c18.
    assert (t.total, t.accurate, t.inaccurate, t.untyped, t.unresolved) == (15, 5, 10, 3, 5)
    assert t.errors_per_description == {"1": 6, "2": 1, "3": 0, "4+": 0}
    assert {k: v for k, v in t.type_counts.items() if v} == {"gender": 3, "activity": 3, "color": 1, "number": 1}
    cmp = compare_systems(build_layer(_frame(store), "adjudicated"))
    assert cmp.tables["sysA"].unresolved == 3 and cmp.tables["sysB"].unresolved == 2
    assert cmp.tables["sysA"].total + cmp.tables["sysB"].total == 15


def test_study_tables_through_the_store(store):
    captions = study_captions()
    items = [Item(key=f"im{i}", captions=[Caption("show-attend-tell", f"caption {i}")]) for i in range(len(captions))]
    with store.transaction() as conn:
        write_project(conn, Project("study1014", items=items))
        uid = create_user(conn, "main", Role.ANNOTATOR)
    ids = [c.caption_id for it in load_project(store, "study1014").items for c in it.captions]
    with store.transaction() as conn:
        for cid, (label, types) in zip(ids, captions):
            insert_judgement(conn, cid, uid, label=label, error_types=types)
    t = error_tables(build_layer(judgement_frame(store, "study1014"), "main"))
    assert (t.total, t.inaccurate) == (1014, 812)
    assert t.errors_per_description == TABLE1 and t.total_errors == 1265
    assert t.type_counts["unrelated"] == 264 and t.type_counts["clothing_color"] == 195
    assert t.type_counts["subject_wrong"] == 1 and t.type_counts["object_extra"] == 1


def test_tables_cli_json(store, capsys):
    build_project(store)
    code, out, _ = _run(capsys, "--db", store.url, "tables", "--project", PROJECT, "--annotator", "ann1", "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["total"], data["inaccurate"]) == (20, 13)
    assert data["errors_per_description"] == {"1": 11, "2": 2, "3": 0, "4+": 0}
    assert list(data["type_counts"]) == list(ERROR_TYPE_IDS) and data["type_counts"]["gender"] == 3
    assert data["type_counts"]["subject_wrong"] == 0
    code, out, _ = _run(capsys, "--db", store.url, "tables", "--project", PROJECT, "--layer", "adjudicated",
                        "--system", "sysB", "--json")
    data = json.loads(out)
    assert data["system"] == "sysB" and data["unresolved"] == 2 and data["layer"] == "adjudicated"
    code, out, _ = _run(capsys, "--db", store.url, "tables", "--project", PROJECT, "--layer", "adjudicated",
                        "--system", "sysA", "--system", "sysB", "--json")
    assert set(json.loads(out)["systems"]) == {"sysA", "sysB"}


def test_tables_cli_formats(store, capsys, tmp_path):
    build_project(store)
    base = ["--db", store.url, "tables", "--project", PROJECT, "--annotator", "ann1"]
    code, out, _ = _run(capsys, *base, "--format", "csv", "--order", "count")
    assert code == 0
    sections = out.split("\n\n")
    assert sections[0].startswith("# Accuracy\njudgement,captions,share\naccurate,7,0.35")
    types = pd.read_csv(io.StringIO(sections[2].split("\n", 1)[1]))
    assert types["type"].tolist()[:2] == ["gender", "activity"] and types["count"].tolist()[:2] == [3, 3]
    code, out, _ = _run(capsys, *base, "--format", "latex")
    assert "\\toprule" in out and "Gender & 3" in out
    code, out, _ = _run(capsys, *base, "--format", "md")
    assert "### Errors per description" in out and "| 2 | 2 |" in out
    target = tmp_path / "t.xlsx"
    code, _, err = _run(capsys, *base, "--format", "xlsx", "--output", str(target))
    assert code == 0 and "wrote" in err
    wb = load_workbook(target)
    assert wb.sheetnames == ["Accuracy", "Errors per description", "Error types", "Error groups"]
    assert wb["Accuracy"]["B3"].value == 13


def test_tables_cli_errors(store, capsys):
    build_project(store)
    code, _, err = _run(capsys, "--db", store.url, "tables", "--project", PROJECT, "--annotator", "ghost", "--json")
    assert code == 2 and "'ghost' has no judgements" in err
    code, _, err = _run(capsys, "--db", store.url, "tables", "--project", PROJECT, "--layer", "adjudicated",
                        "--system", "sysZ")
    assert code == 2 and "no system 'sysZ'" in err
    code, _, err = _run(capsys, "--db", store.url, "tables", "--project", "nope", "--layer", "adjudicated")
    assert code == 2 and "no project called 'nope'" in err


def test_tables_cli_xlsx_to_standard_output(sqlite_store, capsysbinary):
    build_project(sqlite_store)
    code = main(["--db", sqlite_store.url, "tables", "--project", PROJECT, "--layer", "adjudicated", "--format", "xlsx"])
    data = capsysbinary.readouterr().out
    assert code == 0 and data[:2] == b"PK"
    wb = load_workbook(io.BytesIO(data))
    types = {row[1]: row[3] for row in wb["Error types"].iter_rows(min_row=2, values_only=True)}
    assert types["gender"] == 3 and types["activity"] == 3 and types["age"] == 0
