"""Page downloads: CSV of several tables is a zip of one CSV per table that pandas reads back as written;
one table (or any other format) is one file."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd

from annotator.io.tables import download_file, write_table

T1 = pd.DataFrame({"type": ["gender", "=cmd"], "count": [3, 1], "share": [0.75, 0.25]})
T2 = pd.DataFrame({"errors": ["1", "4+"], "sysA": [3, np.nan]})


def test_several_csv_tables_download_as_a_zip_pandas_reads():
    data, name, mime = download_file({"Error types": T1, "Errors per description": T2}, "csv", "study-tables")
    assert (name, mime) == ("study-tables.zip", "application/zip")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.namelist() == ["Error_types.csv", "Errors_per_description.csv"]
        types = pd.read_csv(zf.open("Error_types.csv"))
        errors = pd.read_csv(zf.open("Errors_per_description.csv"), dtype={"errors": str})
    assert types["type"].tolist() == ["gender", "'=cmd"]          # the formula guard of every CSV export
    assert types["count"].tolist() == [3, 1] and types["share"].tolist() == [0.75, 0.25]
    assert errors["errors"].tolist() == ["1", "4+"] and errors["sysA"].isna().tolist() == [False, True]


def test_one_table_or_another_format_is_one_file():
    data, name, mime = download_file({"Error types": T1}, "csv", "study-types")
    assert (name, mime) == ("study-types.csv", "text/csv")
    assert pd.read_csv(io.BytesIO(data))["count"].tolist() == [3, 1]
    data, name, mime = download_file({"a": T1, "b": T2}, "json", "study")
    assert name == "study.json" and data == write_table({"a": T1, "b": T2}, "json")
    assert json.loads(data)["b"][1]["sysA"] is None                # strict JSON: no NaN


def test_clashing_member_names_stay_apart():
    data, _, _ = download_file({"a/b": T1, "a:b": T2}, "csv", "x")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert len(set(zf.namelist())) == 2


def test_a_named_table_keeps_its_name_in_its_file():
    # The Rescoring page's table is one DataFrame named "rescoring": its JSON key and XLSX sheet carry the name.
    data, name, _ = download_file(T1, "json", "study", name="rescoring")
    assert name == "study.json" and data == write_table(T1, "json", name="rescoring")
    assert list(json.loads(data)) == ["rescoring"]
