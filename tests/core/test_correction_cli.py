"""``annotator corrections …`` from the command line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from annotator.cli import main
from tests.store.test_correction_store import CAPTIONS, build_demo


def run(capsys, url, *argv):
    rc = main(["--db", url, *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_save_check_list_history(sqlite_store, capsys):
    build_demo(sqlite_store)
    url = sqlite_store.url
    rc, out, err = run(capsys, url, "corrections", "save", "--project", "demo", "--system", "sys", "--line", "1",
                       "--type", "gender", "--user", "alice", "--text", "A man playing soccer on the grass.")
    assert rc == 2 and "age as well as gender" in err and "give a reason to override" in err
    rc, out, _ = run(capsys, url, "corrections", "save", "--project", "demo", "--system", "sys", "--line", "1",
                     "--type", "gender", "--user", "alice", "--text", "A man playing soccer on the grass.",
                     "--override-reason", "adult player", "--json")
    assert rc == 0
    saved = json.loads(out)
    assert saved["revision"] == 1 and saved["override_reason"] == "adult player" and saved["violations"]
    rc, out, _ = run(capsys, url, "corrections", "untouched", "--project", "demo", "--system", "sys", "--line", "0",
                     "--type", "clothing_color", "--user", "bob")
    assert rc == 0 and "left untouched" in out
    rc, out, _ = run(capsys, url, "corrections", "list", "--project", "demo")
    assert rc == 0
    assert "sys:0 clothing_color by bob (rev 1): left untouched" in out
    assert "sys:1 gender by alice (rev 1): A [-girl-] {+man+} playing soccer on the grass.  [override: adult player]" in out
    rc, out, _ = run(capsys, url, "corrections", "list", "--project", "demo", "--type", "gender", "--json")
    (row,) = json.loads(out)
    assert row["corrected_text"] == "A man playing soccer on the grass." and row["original_text"] == CAPTIONS[1]
    rc, out, _ = run(capsys, url, "corrections", "history", "--project", "demo", "--system", "sys", "--line", "1", "--json")
    (h,) = json.loads(out)
    assert h["override_reason"] == "adult player" and h["revision"] == 1


def test_check_exit_codes(sqlite_store, capsys):
    rc, out, _ = run(capsys, sqlite_store.url, "corrections", "check", "--type", "gender", "--original", "A man runs",
                     "--corrected", "A woman runs")
    assert rc == 0 and "allowed" in out
    rc, out, _ = run(capsys, sqlite_store.url, "corrections", "check", "--type", "activity", "--original",
                     "A man is holding a sign", "--corrected", "A sign is holding a man", "--json")
    assert rc == 1 and json.loads(out)["violations"][0].startswith("word order changed")


def test_queue(sqlite_store, capsys):
    build_demo(sqlite_store)
    rc, out, _ = run(capsys, sqlite_store.url, "corrections", "queue", "--project", "demo", "--system", "sys",
                     "--type", "clothing_color", "--layer", "annotator:alice", "--json")
    assert rc == 0 and [r["line_no"] for r in json.loads(out)] == [0, 3]
    rc, _, err = run(capsys, sqlite_store.url, "corrections", "queue", "--project", "demo", "--system", "sys",
                     "--type", "unrelated", "--layer", "adjudicated")
    assert rc == 2 and "not corrected" in err


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "md", "latex", "json"])
def test_export_formats_include_override_reason(sqlite_store, capsys, tmp_path, fmt):
    build_demo(sqlite_store)
    run(capsys, sqlite_store.url, "corrections", "save", "--project", "demo", "--system", "sys", "--line", "5",
        "--type", "scene", "--user", "alice", "--text", "A scientist is standing in a big bright laboratory.",
        "--override-reason", "the | reason & more")
    ext = {"latex": "tex"}.get(fmt, fmt)
    target = tmp_path / f"c.{ext}"
    rc, out, _ = run(capsys, sqlite_store.url, "corrections", "export", "--project", "demo", "--out", str(target))
    assert rc == 0 and "wrote 1 corrections" in out
    if fmt == "csv":
        df = pd.read_csv(target)
        assert df.loc[0, "override_reason"] == "the | reason & more" and df.loc[0, "error_type"] == "scene"
    elif fmt == "xlsx":
        df = pd.read_excel(target)
        assert df.loc[0, "override_reason"] == "the | reason & more"
    elif fmt == "json":
        data = json.loads(target.read_text())
        assert data["corrections"][0]["override_reason"] == "the | reason & more"
    elif fmt == "md":
        assert "the \\| reason & more" in target.read_text()
    else:
        assert "the | reason \\& more" in target.read_text()


def test_export_unknown_format_and_bad_line(sqlite_store, capsys, tmp_path):
    build_demo(sqlite_store)
    rc, _, err = run(capsys, sqlite_store.url, "corrections", "export", "--project", "demo", "--out", str(tmp_path / "x.doc"))
    assert rc == 2 and "unknown table format 'doc'" in err
    rc, _, err = run(capsys, sqlite_store.url, "corrections", "save", "--project", "demo", "--system", "sys", "--line", "99",
                     "--type", "gender", "--user", "alice", "--text", "x")
    assert rc == 2 and "out of range" in err
