"""Every page's tables on the sample project: "—" for an empty cell (never "None" or "nan") and one number
format per column (the same decimals all the way down), as ui.show_table writes them."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from annotator.sample import SAMPLE_PROJECT
from tests.apptest_helpers import page_test
from tests.core.test_cli_output_safety import sample_url  # noqa: F401 (the sample project in a SQLite file)

# the pages that show tables on the sample project without further choices (assignment, correction and rescoring need
# assignments or corrections first; annotate's caption list opens on demand)
PAGES = ("agreement", "analysis", "estimate", "team", "content_selection", "data", "people",
         "adjudicate", "diversity")

NUMBER = re.compile(r"^[+-−]?[\d,]*(?:\.(\d+))?(?: ?%)?$")


def column_problems(table: pd.DataFrame) -> list[str]:
    """What is wrong with a shown table: missing cells written as None/nan, raw floats (their decimals vary
    with the value), or a column of numbers written with different decimals."""
    problems = []
    for col in table.columns:
        values = table[col]
        if pd.api.types.is_float_dtype(values.dtype):
            problems.append(f"{col}: raw floats {values.tolist()[:5]}")
            continue
        decimals = set()
        for v in values:
            if v is None or (isinstance(v, float) and v != v) or str(v).strip().lower() in ("none", "nan", "<na>"):
                problems.append(f"{col}: empty cell shown as {v!r}")
            elif isinstance(v, str) and v.strip() and NUMBER.match(v.strip()) and any(ch.isdigit() for ch in v):
                decimals.add(len(NUMBER.match(v.strip()).group(1) or ""))
        if len(decimals) > 1:
            problems.append(f"{col}: mixed decimals {sorted(decimals)} in {values.tolist()[:8]}")
    return problems


@pytest.mark.parametrize("page", PAGES)
def test_tables_write_missing_as_dash_and_one_format_per_column(sample_url, page):
    at = page_test(page, sample_url, user="boss", role="admin", project=SAMPLE_PROJECT).run(timeout=180)
    assert not at.exception, at.exception
    tables = [df.value for df in at.dataframe]
    assert tables, f"{page} shows no table on the sample project"
    problems = [f"table {i}: {p}" for i, t in enumerate(tables) for p in column_problems(t)]
    assert not problems, problems


def test_the_check_sees_what_it_should():
    bad = pd.DataFrame({"share": ["27.5 %", "36.23 %"], "note": [None, "x"], "kappa": [0.5, 0.3333]})
    assert len(column_problems(bad)) == 3
    good = pd.DataFrame({"share": ["27.5 %", "—"], "n": [1, 2], "kappa": ["0.500", "1,234.000"]})
    assert column_problems(good) == []
