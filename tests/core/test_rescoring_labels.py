"""The by-type table's "All corrections" row is the tool's addition to the study's Table 3, and says so:
row label, footnote in the text output, JSON meta, the Rescoring page and its export caption."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from annotator.cli import main
from annotator.correction import correct_caption
from annotator.io.tables import write_table
from annotator.rescoring import ALL_CORRECTIONS_NOTE, ALL_CORRECTIONS_ROW, by_type_table, format_by_type, table_frame
from tests.store.test_correction_store import build_demo

from tests.apptest_helpers import page_test, texts

CC = "A man in an orange shirt is climbing a rock."       # clothing_color of line 0
GEN = "A boy playing soccer on the grass."                # gender of line 1
FAST = ("Bleu_4", "CIDEr")


def test_label_and_note_name_the_addition():
    assert ALL_CORRECTIONS_ROW.startswith("All corrections") and "tool's addition" in ALL_CORRECTIONS_ROW
    assert ALL_CORRECTIONS_NOTE.startswith(ALL_CORRECTIONS_ROW + ":")
    assert "one error type at a time" in ALL_CORRECTIONS_NOTE and "not a row of the error-analysis study" in ALL_CORRECTIONS_NOTE


@pytest.fixture
def corrected(sqlite_store):
    ids = build_demo(sqlite_store)
    correct_caption(sqlite_store, ids[0], "clothing_color", "alice", CC)
    correct_caption(sqlite_store, ids[1], "gender", "alice", GEN)
    return sqlite_store


def test_frame_text_and_exports_label_the_row(corrected):
    out = by_type_table(corrected, "demo", "sys", resamples=20, metrics=FAST)
    assert out["meta"]["all_corrections"] == ALL_CORRECTIONS_NOTE
    df = table_frame(out)
    assert df["row"].tolist() == ["Baseline", "Gender", "Color of clothing", ALL_CORRECTIONS_ROW]
    assert df["changed"].tolist() == [0, 1, 1, 2]  # the numbers are those of the unlabelled row before
    text = format_by_type(out).splitlines()
    row_at = next(n for n, ln in enumerate(text) if ln.startswith(ALL_CORRECTIONS_ROW))
    assert text[row_at + 1] == ALL_CORRECTIONS_NOTE  # the footnote right under the table
    back = pd.read_csv(io.BytesIO(write_table(df, "csv")))
    assert back["row"].iloc[-1] == ALL_CORRECTIONS_ROW
    assert "All corrections (tool's addition)" in write_table(df, "latex").decode()
    latex = write_table(df, "latex", caption=f"Rescoring. {ALL_CORRECTIONS_NOTE}").decode()
    assert "\\caption{Rescoring. All corrections (tool's addition): not a row" in latex


@pytest.mark.java  # corrections delta scores with the default metrics: METEOR too
def test_rescore_by_type_cli_shows_the_label(corrected, capsys):
    base = ["--db", corrected.url, "rescore", "--project", "demo", "--system", "sys", "--by-type", "--resamples", "20",
            "--metrics", "bleu,cider"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert any(ln.startswith(ALL_CORRECTIONS_ROW) for ln in out.splitlines())
    assert f"  {ALL_CORRECTIONS_ROW}: BLEU-1" in out and ALL_CORRECTIONS_NOTE in out
    assert main(base + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["meta"]["all_corrections"] == ALL_CORRECTIONS_NOTE and data["all"]["changed"] == 2
    assert main(["--db", corrected.url, "corrections", "delta", "--project", "demo", "--system", "sys",
                 "--resamples", "20"]) == 0
    assert ALL_CORRECTIONS_NOTE in capsys.readouterr().out


def test_rescoring_page_shows_the_label_and_note(corrected, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no Java: METEOR left out, the rest is quick
    at = page_test("rescore", corrected.url, user="lead", role="lead", project="demo")
    at.session_state["rescore_resamples"] = 50
    at.run()
    assert not at.exception, at.exception
    assert at.dataframe[0].value["row"].tolist()[-1] == ALL_CORRECTIONS_ROW
    shown = texts(at)
    assert ALL_CORRECTIONS_NOTE in shown and "an addition of this tool" in shown
