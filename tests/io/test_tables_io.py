"""annotator.io.tables: every format, escaping, several tables, report objects."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from openpyxl import load_workbook

from annotator.errors import InputError
from annotator.io.tables import FORMATS, as_tables, escape_latex, escape_markdown, file_name, mime_type, write_table


@pytest.fixture
def df():
    return pd.DataFrame({"type": ["gender", "a_b & c"], "count": [98, 3], "share": [0.5, float("nan")]})


def test_registry_has_the_five_formats():
    assert list(FORMATS) == ["csv", "xlsx", "latex", "md", "json"]
    assert file_name("my table/1", "latex") == "my_table_1.tex"
    assert mime_type("csv") == "text/csv"


def test_unknown_format_and_bad_input_raise():
    with pytest.raises(InputError, match="unknown table format 'docx'"):
        write_table(pd.DataFrame({"a": [1]}), "docx")
    with pytest.raises(InputError, match="not a DataFrame"):
        write_table({"x": [1, 2]}, "csv")
    with pytest.raises(InputError, match="no table"):
        write_table({}, "csv")


def test_csv_single_round_trip(df):
    data = write_table(df, "csv")
    back = pd.read_csv(io.BytesIO(data))
    assert list(back.columns) == ["type", "count", "share"]
    assert back["count"].tolist() == [98, 3]
    assert back["type"].tolist() == ["gender", "a_b & c"]
    assert math.isnan(back["share"][1])
    assert data.decode().splitlines()[0] == "type,count,share"


def test_csv_several_tables_are_sections(df):
    data = write_table({"First": df, "Second": pd.DataFrame({"x": [1]})}, "csv").decode()
    assert data.startswith("# First\ntype,count,share\n")
    assert "\n\n# Second\nx\n1\n" in data


def test_xlsx_sheets_values_and_formula_safety():
    evil = pd.DataFrame({"caption": ["=1+1", "plain"], "n": [1, 2], "p": [0.25, None]})
    long_name = "A very long table name that Excel cannot take"
    data = write_table({long_name: evil, long_name + " too": evil, "bad/name?": evil}, "xlsx")
    wb = load_workbook(io.BytesIO(data))
    assert wb.sheetnames == [long_name[:31], long_name[:27] + " (2)", "bad_name_"]
    ws = wb[wb.sheetnames[0]]
    assert [c.value for c in ws[1]] == ["caption", "n", "p"]
    assert ws["A2"].value == "=1+1" and ws["A2"].data_type == "s"  # text, not a formula
    assert ws["B3"].value == 2 and ws["C2"].value == 0.25 and ws["C3"].value is None
    assert ws["A1"].font.bold


def test_latex_booktabs_and_escaping():
    t = pd.DataFrame({"type & name": ["50% of $x_1$ #{a}~^\\"], "count": [7], "share": [0.12345]})
    tex = write_table(t, "latex", caption="Errors_1", label="tab:err").decode()
    assert "\\begin{tabular}{lrr}" in tex
    assert tex.index("\\toprule") < tex.index("\\midrule") < tex.index("\\bottomrule")
    assert "type \\& name & count & share \\\\" in tex
    assert ("50\\% of \\$x\\_1\\$ \\#\\{a\\}\\textasciitilde{}\\textasciicircum{}\\textbackslash{} & 7 & 0.123 \\\\"
            in tex)
    assert "\\caption{Errors\\_1}" in tex and "\\label{tab:err}" in tex
    # Nothing unescaped: every special character in the body is preceded by a backslash or is a command.
    body = tex.split("\\midrule")[1].split("\\bottomrule")[0]
    for ch in "%$#_":
        assert all(body[i - 1] == "\\" for i, c in enumerate(body) if c == ch)


def test_latex_float_format_and_several_tables(df):
    tex = write_table({"One": df, "Two": df}, "latex", float_format="{:.1f}").decode()
    assert tex.count("\\begin{table}") == 2
    assert "\\caption{One}" in tex and "\\caption{Two}" in tex
    assert "gender & 98 & 0.5 \\\\" in tex
    assert "a\\_b \\& c & 3 &  \\\\" in tex  # NaN → empty cell


def test_markdown_escaping_and_alignment():
    t = pd.DataFrame({"caption": ["a | b *bold* <script>"], "n": [3]})
    md = write_table(t, "md").decode().splitlines()
    assert md[0] == "| caption | n |"
    assert md[1] == "| :--- | ---: |"
    assert md[2] == "| a \\| b \\*bold\\* \\<script\\> | 3 |"
    assert escape_markdown("x\ny") == "x y"


def test_markdown_several_tables_have_headings(df):
    md = write_table({"Errors per description": df, "Types": df}, "md").decode()
    assert "### Errors per description\n\n| type | count | share |" in md
    assert "### Types" in md
    assert "| gender | 98 | 0.500 |" in md


def test_json_single_and_named(df):
    rows = json.loads(write_table(df, "json"))
    assert rows == [{"type": "gender", "count": 98, "share": 0.5}, {"type": "a_b & c", "count": 3, "share": None}]
    named = json.loads(write_table(df, "json", name="Types"))
    assert list(named) == ["Types"] and named["Types"] == rows
    several = json.loads(write_table({"A": df, "B": df.head(1)}, "json"))
    assert list(several) == ["A", "B"] and len(several["B"]) == 1


def test_numpy_scalars_and_infinities_are_plain():
    t = pd.DataFrame({"k": [np.int64(3)], "x": [np.float64(np.inf)], "flag": [np.bool_(True)]})
    rows = json.loads(write_table(t, "json"))
    assert rows == [{"k": 3, "x": None, "flag": True}]


def test_objects_with_to_tables_are_accepted(df):
    class Report:
        def to_tables(self):
            return {"Only": df}

    tables, single = as_tables(Report())
    assert list(tables) == ["Only"] and not single
    assert write_table(Report(), "csv").decode().startswith("type,count,share")


def test_escape_latex_plain_text_unchanged():
    assert escape_latex("Colour of clothing 12") == "Colour of clothing 12"
