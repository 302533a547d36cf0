"""A type's share of errors and its share of descriptions, labelled apart in frames, CLI text/JSON and exports.

The error-analysis study's 26 % unrelated descriptions is 264 of its 1,014 descriptions; the same count is
264 of 1,265 errors (20.9 %). Both shares are shown, each under its own label.
"""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from openpyxl import load_workbook

from annotator.analysis import SHARE_OF_DESCRIPTIONS, SHARE_OF_ERRORS, compare_systems, error_tables
from annotator.io.tables import write_table
from annotator.layers import build_layer
from tests.apptest_helpers import page_test, texts
from tests.cli_helpers import run_cli as _run
from tests.store.test_agreement_store import PROJECT, build_project
from tests.core.test_analysis import frame, study_captions

I, A = "inaccurate", "accurate"


def test_study_unrelated_share_of_descriptions_is_26_percent():
    rows = [(cid, "ann", label, types) for cid, (label, types) in enumerate(study_captions())]
    t = error_tables(build_layer(frame(rows), "ann"))
    assert t.known_descriptions == 1014
    df = t.types_frame().set_index("type")
    assert df.loc["unrelated", SHARE_OF_DESCRIPTIONS] == pytest.approx(264 / 1014)
    assert round(100 * df.loc["unrelated", SHARE_OF_DESCRIPTIONS]) == 26  # the study's headline figure
    assert df.loc["unrelated", SHARE_OF_ERRORS] == pytest.approx(264 / 1265)
    assert df.loc["clothing_color", SHARE_OF_DESCRIPTIONS] == pytest.approx(195 / 1014)
    assert df[SHARE_OF_ERRORS].sum() == pytest.approx(1.0)  # errors add up; descriptions do not (several per caption)
    assert df[SHARE_OF_DESCRIPTIONS].sum() == pytest.approx(1265 / 1014)
    assert list(t.types_frame().columns) == ["group", "type", "name", "count", SHARE_OF_ERRORS, SHARE_OF_DESCRIPTIONS]


def test_untyped_captions_are_left_out_of_the_descriptions_denominator():
    # Two annotators: c1, c2 accurate; c3 gender+age; c4 gender; c5 both inaccurate with different types (untyped).
    rows = [(1, "x", A, ()), (1, "y", A, ()), (2, "x", A, ()), (2, "y", A, ()),
            (3, "x", I, ("gender", "age")), (3, "y", I, ("age", "gender")), (4, "x", I, ("gender",)),
            (4, "y", I, ("gender",)), (5, "x", I, ("color",)), (5, "y", I, ("stance",))]
    t = error_tables(build_layer(frame(rows), "adjudicated"))
    assert (t.total, t.untyped, t.known_descriptions, t.total_errors) == (5, 1, 4, 3)
    assert t.type_share_of_errors()["gender"] == pytest.approx(2 / 3)
    assert t.type_share_of_descriptions()["gender"] == pytest.approx(2 / 4)
    assert t.type_share_of_descriptions()["age"] == pytest.approx(1 / 4) and t.type_share_of_errors()["color"] == 0
    df = t.types_frame().set_index("type")
    assert df.loc["gender", SHARE_OF_ERRORS] == pytest.approx(2 / 3) and df.loc["gender", SHARE_OF_DESCRIPTIONS] == 0.5
    assert list(t.groups_frame().columns) == ["group", "count", SHARE_OF_ERRORS]


def test_no_judgement_gives_no_share():
    t = error_tables(build_layer(frame([(1, "x", None, ())]), "x"))
    assert set(t.type_share_of_errors().values()) == {None} == set(t.type_share_of_descriptions().values())


def test_side_by_side_columns_name_system_and_share():
    rows = [(c, "x", I if c % 2 else A, ("gender",) if c < 6 else ("activity", "age"), "annotation", "s1" if c < 6 else "s2")
            for c in range(12)]
    df = compare_systems(build_layer(frame(rows), "x")).types_frame()
    assert list(df.columns) == ["group", "type", "name", "s1", "s2", f"s1 {SHARE_OF_ERRORS}", f"s2 {SHARE_OF_ERRORS}",
                                f"s1 {SHARE_OF_DESCRIPTIONS}", f"s2 {SHARE_OF_DESCRIPTIONS}"]
    rows_ = df.set_index("type")
    # s2: 6 captions, 3 inaccurate with activity+age (6 errors).
    assert rows_.loc["age", f"s2 {SHARE_OF_ERRORS}"] == pytest.approx(3 / 6)
    assert rows_.loc["age", f"s2 {SHARE_OF_DESCRIPTIONS}"] == pytest.approx(3 / 6)
    assert rows_.loc["gender", f"s1 {SHARE_OF_ERRORS}"] == 1.0 and rows_.loc["gender", f"s1 {SHARE_OF_DESCRIPTIONS}"] == 0.5


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "latex", "md", "json"])
def test_every_export_carries_both_labels(fmt):
    rows = [(cid, "ann", label, types) for cid, (label, types) in enumerate(study_captions())]
    data = write_table(error_tables(build_layer(frame(rows), "ann")), fmt)
    if fmt == "xlsx":
        header = [c.value for c in load_workbook(io.BytesIO(data))["Error types"][1]]
        assert header[-2:] == [SHARE_OF_ERRORS, SHARE_OF_DESCRIPTIONS]
        return
    text = data.decode()
    assert SHARE_OF_ERRORS in text and SHARE_OF_DESCRIPTIONS in text
    if fmt == "json":
        (row,) = [r for r in json.loads(text)["Error types"] if r["type"] == "unrelated"]
        assert row[SHARE_OF_DESCRIPTIONS] == pytest.approx(264 / 1014) and row[SHARE_OF_ERRORS] == pytest.approx(264 / 1265)


def test_tables_cli_text_json_and_csv_label_both_shares(store, capsys):
    build_project(store)
    base = ["--db", store.url, "tables", "--project", PROJECT, "--layer", "adjudicated"]
    # Adjudicated layer: 15 captions, 3 untyped → 12 with known types; 8 errors; gender 3, activity 3.
    code, out, _ = _run(capsys, *base, "--json")
    data = json.loads(out)
    assert code == 0 and data["known_descriptions"] == 12 and data["total_errors"] == 8
    assert data["type_share_of_errors"]["gender"] == pytest.approx(3 / 8)
    assert data["type_share_of_descriptions"]["gender"] == pytest.approx(3 / 12)
    assert data["type_share_of_descriptions"]["age"] == 0
    code, out, _ = _run(capsys, *base)
    assert code == 0
    lines = out.splitlines()
    (header,) = [ln for ln in lines if ln.strip().startswith("error type")]
    assert header.split()[2:] == ["count", *SHARE_OF_ERRORS.split(), *SHARE_OF_DESCRIPTIONS.split()]
    (gender,) = [ln for ln in lines if ln.strip().startswith("Gender ")]
    assert gender.split()[1:] == ["3", "37.5%", "25.0%"]
    assert "count / 8 error types ticked" in out and "count / 12 descriptions with known types" in out
    code, out, _ = _run(capsys, *base, "--format", "csv", "--order", "count")
    types = pd.read_csv(io.StringIO(out.split("\n\n")[2].split("\n", 1)[1]))
    assert list(types.columns)[-2:] == [SHARE_OF_ERRORS, SHARE_OF_DESCRIPTIONS]
    assert types.set_index("type").loc["activity", SHARE_OF_DESCRIPTIONS] == pytest.approx(3 / 12)



def test_analysis_page_labels_both_shares(sqlite_store):
    build_project(sqlite_store)
    at = page_test("analysis", sqlite_store.url, user="ana", role="analyst", project=PROJECT).run()
    at.multiselect(key="ana_systems").set_value(["sysA"]).run()
    assert not at.exception
    (types,) = [d.value for d in at.dataframe if "group" in d.value.columns and "name" in d.value.columns]
    assert list(types.columns)[-2:] == [SHARE_OF_ERRORS, SHARE_OF_DESCRIPTIONS]
    assert "**share of errors**" in texts(at) and "**share of descriptions**" in texts(at)
