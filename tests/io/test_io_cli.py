"""The import/export command line: stable forms, --json summaries, exit code 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.config import SAMPLE_DIR
from annotator.store.projects import load_project, project_summaries, table_counts

FIX = Path(__file__).parent.parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]


def run(store, capsys, *argv):
    code = main(["--db", store.url, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_import_form_with_json(store, capsys, tmp_path):
    L = FIX / "lines"
    code, out, err = run(store, capsys, "import", "lines", "--project", "p", "--system", "sys-a",
                         "--captions", str(L / "captions_a.txt"), "--references", str(L / "refs1.txt"), str(L / "refs2.txt"),
                         "--images", str(L / "images.txt"), "--image-root", str(tmp_path), "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert (summary["format"], summary["items_created"], summary["references"], summary["captions"]) == ("lines", 3, 6, 3)

    C = FIX / "coco"
    code, out, err = run(store, capsys, "import", "coco", "--project", "c", "--captions-json", str(C / "captions.json"),
                         "--instances-json", str(C / "instances.json"), "--results", str(C / "results.json"),
                         "--system", "nic", "--json")
    assert code == 0, err
    assert json.loads(out)["boxes"] == 3

    code, out, err = run(store, capsys, "import", "flickr30k", "--project", "f", "--root", str(FIX / "flickr30k"),
                         "--ids", str(FIX / "flickr30k" / "ids.txt"), "--json")
    assert code == 0, err
    assert json.loads(out)["items_created"] == 2

    code, out, err = run(store, capsys, "import", "jsonl", "--project", "s", str(SAMPLE_DIR / "sample.jsonl"), "--json")
    assert code == 0, err
    assert json.loads(out)["systems"] == ["sat-attn", "nic-beam"]

    J = FIX / "judgements"
    code, out, err = run(store, capsys, "import", "judgements", "--project", "p", "--system", "sys-a", "--annotator", "ann",
                         "--coarse", str(J / "coarse.json"), "--fine", str(J / "fine.json"), "--json")
    assert code == 0, err
    assert (json.loads(out)["judgements"], json.loads(out)["user"]) == (3, "ann")

    fixed = tmp_path / "fixed.txt"
    fixed.write_text("A dog runs on the grass\nTwo  people   ride bikes \nA green car parked by a tree\n", encoding="utf-8")
    code, out, err = run(store, capsys, "import", "corrections", "--project", "p", "--system", "sys-a",
                         "--error-type", "color", "--captions", str(fixed), "--annotator", "fixer", "--json")
    assert code == 0, err
    assert json.loads(out)["corrections"] == 1

    # Without --json the summary is one readable line.
    code, out, err = run(store, capsys, "import", "corrections", "--project", "p", "--system", "sys-a",
                         "--error-type", "color", "--captions", str(fixed), "--annotator", "fixer")
    assert code == 0 and out.startswith("corrections import into 'p'") and "already stored unchanged" in out


@pytest.mark.parametrize("argv, fragment", [
    (["import", "lines", "--project", "p", "--system", "s", "--captions", "{L}/captions_a.txt", "--references", "{L}/short.txt"],
     "short.txt"),
    (["import", "lines", "--project", "p", "--system", "s", "--captions", "{L}/captions_a.txt", "--references",
      "{L}/refs1.txt", "--images", "{L}/short.txt"], "image list"),
    (["import", "coco", "--project", "p", "--captions-json", "{C}/results.json", "--instances-json", "{C}/instances.json"],
     "'images' list"),
    (["import", "coco", "--project", "p", "--captions-json", "{C}/captions.json", "--instances-json", "{C}/instances.json",
      "--results", "{C}/results.json"], "--results and --system"),
    (["import", "flickr30k", "--project", "p", "--root", "{L}"], "no Sentences/"),
    (["import", "jsonl", "--project", "p", "{L}/captions_a.txt"], "invalid JSON"),
    (["import", "judgements", "--project", "existing", "--system", "sys-a", "--annotator", "x", "--coarse", "{C}/results.json"],
     "results.json, line 1 (key '0'): unknown coarse label"),
    (["import", "corrections", "--project", "existing", "--system", "sys-a", "--error-type", "nope", "--captions",
      "{L}/captions_a.txt"], "unknown error type label 'nope'"),
    (["import", "judgements", "--project", "ghost", "--system", "s", "--annotator", "x", "--coarse", "{J}/coarse.json"],
     "no project called 'ghost'"),
    (["export", "--project", "ghost", "--format", "jsonl"], "no project called 'ghost'"),
])
def test_bad_input_exits_2_with_message_and_writes_nothing(store, capsys, argv, fragment):
    L, C, J = FIX / "lines", FIX / "coco", FIX / "judgements"
    assert run(store, capsys, "import", "lines", "--project", "existing", "--system", "sys-a",
               "--captions", str(L / "captions_a.txt"), "--references", str(L / "refs1.txt"))[0] == 0
    before = table_counts(store)
    argv = [a.format(L=L, C=C, J=J) for a in argv]
    code, out, err = run(store, capsys, *argv)
    assert code == 2
    assert err.startswith("annotator: error: ") and fragment in err, err
    assert out == ""
    assert table_counts(store) == before


def test_export_to_file_and_stdout(store, capsys, tmp_path):
    assert run(store, capsys, "import", "jsonl", "--project", "s", str(SAMPLE_DIR / "sample.jsonl"))[0] == 0
    target = tmp_path / "out" / "s.jsonl"
    code, out, err = run(store, capsys, "export", "--project", "s", "--format", "jsonl", "--output", str(target), "--json")
    assert code == 0, err
    assert json.loads(out) == {"project": "s", "format": "jsonl", "items": 8, "output": str(target)}
    assert len(target.read_text(encoding="utf-8").splitlines()) == 9
    assert [p.name for p in target.parent.iterdir()] == ["s.jsonl"]  # no temporary file left behind
    code, out, err = run(store, capsys, "export", "--project", "s", "--format", "jsonl")
    assert code == 0
    assert out == target.read_text(encoding="utf-8")
    # Round trip through the CLI into another project.
    assert run(store, capsys, "import", "jsonl", "--project", "t", str(target))[0] == 0
    a, b = load_project(store, "s"), load_project(store, "t")
    assert [(i.key, i.boxes, i.references, [(c.system, c.text) for c in i.captions]) for i in a.items] == \
           [(i.key, i.boxes, i.references, [(c.system, c.text) for c in i.captions]) for i in b.items]


def test_python_dash_m_entry_point(sqlite_store, tmp_path):
    """The real process: exit status 2 and stderr message, stdout export is UTF-8 and closes cleanly."""
    env_cmd = [sys.executable, "-m", "annotator", "--db", sqlite_store.url]
    bad = subprocess.run(env_cmd + ["import", "jsonl", "--project", "x", str(tmp_path / "missing.jsonl")],
                         cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "missing.jsonl" in bad.stderr and "cannot read" in bad.stderr
    ok = subprocess.run(env_cmd + ["import", "jsonl", "--project", "x", str(SAMPLE_DIR / "sample.jsonl")],
                        cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert project_summaries(sqlite_store)[0]["items"] == 8
    # A reader that stops early (like `| head -1`) is not an error.
    proc = subprocess.Popen(env_cmd + ["export", "--project", "x", "--format", "jsonl"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0
    assert json.loads(first)["format"] == "annotator-jsonl"
    assert b"Traceback" not in proc.stderr.read()
