"""The Label Studio export streams: tasks are read from the store a chunk of items at a time and written to the
file a task at a time, and the file is byte for byte the one the list-based export wrote before (kept here as
the reference, tests/label_studio_reference.py). The memory figure is measured on a 10,000-item project in a process of its
own (marked slow)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from annotator.exchange import label_studio as exchange
from annotator.io.judgement_rows import import_judgement_rows
from annotator.io.label_studio import write_label_studio
from annotator.sample import load_sample
from tests.cli_helpers import run_cli
from tests.label_studio_reference import list_export, reference_text
from tests.memory_helpers import PEAK_KIB, run_child

CAPTION = "A man in an orange jacket smiling in front of an american flag"


def _streamed_text(store, project, **options) -> str:
    buf = io.StringIO()
    write_label_studio(exchange.label_studio_tasks(store, project, **options), buf)
    return buf.getvalue()


def _team_project(store, tmp_path):
    """The sample with its judgements, plus: spans with fixes, a note with a newline and non-ASCII text, a
    skip, a lead's decision, a second annotator and a revision of a judgement (two imports of it)."""
    load_sample(store, project="a")
    man = {"system": "sat-attn", "item": "astronaut.jpg", "caption": CAPTION}
    first = [{**man, "annotator": "ali", "label": "accurate", "seconds": 3.0},
             {**man, "annotator": "bo", "label": "inaccurate", "error_types": ["gender"],
              "spans": [{"start": 1, "end": 2, "type": "gender"}], "seconds": 4.25}]
    second = [{**man, "annotator": "ali", "label": "inaccurate", "error_types": ["gender", "clothing_color"],
               "note": "femme — « suit »,\nnot jacket", "seconds": 12.5,
               "spans": [{"start": 1, "end": 2, "type": "gender", "fix": "woman"},
                         {"start": 4, "end": 6, "type": "clothing_color"}]},
              {**man, "annotator": "lea", "kind": "adjudication", "label": "inaccurate", "error_types": ["gender"],
               "spans": [{"start": 0, "end": 2, "type": "gender"}]},
              {"system": "nic-beam", "item": "astronaut.jpg", "annotator": "ali", "label": None}]
    for k, rows in enumerate((first, second)):
        path = tmp_path / f"rows{k}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        import_judgement_rows(store, "a", path)


@pytest.fixture
def team(store, tmp_path, monkeypatch):
    monkeypatch.setattr(exchange, "CHUNK", 2)  # several chunks of items, a caption's judgements in one of them
    _team_project(store, tmp_path)
    return store


OPTIONS = [
    {},
    {"blind": True},
    {"system": "sat-attn", "image_prefix": "/data/local-files/?d=sample/"},
    {"layer": "adjudicated"},
    {"layer": "annotator:ali"},
    {"predictions": True},
]


@pytest.mark.parametrize("options", OPTIONS, ids=[",".join(o) or "plain" for o in OPTIONS])
def test_the_streamed_export_is_the_list_exports_file_byte_for_byte(team, options):
    reference = reference_text(list_export(team, "a", email_domain="lab.example.org", **options))
    streamed = _streamed_text(team, "a", email_domain="lab.example.org", **options)
    assert streamed == reference
    tasks = json.loads(streamed)
    assert len(tasks) > 4 and [t["id"] for t in tasks] == list(range(1, len(tasks) + 1))
    if not options:  # the file holds the revision, the second annotator, the decision and the skip
        text = json.dumps(tasks, ensure_ascii=False)
        assert "femme — « suit »,\\nnot jacket" in text
        assert all(f"{who}@lab.example.org" in text for who in ("ali", "bo", "lea"))


def test_an_empty_selection_writes_an_empty_array(store):
    from annotator.io.jsonl import import_jsonl
    from annotator.sample import SAMPLE_DIR
    import_jsonl(store, "b", SAMPLE_DIR / "sample.jsonl")
    assert _streamed_text(store, "b", layer="adjudicated") == reference_text(list_export(store, "b",
                                                                                            layer="adjudicated"))
    buf = io.StringIO()
    assert write_label_studio(iter(()), buf) == (0, 0) and buf.getvalue() == "[]\n" == reference_text([])


def test_a_refused_export_is_refused_before_any_task_is_read(team):
    from annotator.errors import InputError
    with pytest.raises(InputError, match="no e-mail address"):
        exchange.label_studio_tasks(team, "a")  # not iterated: refused when called


def test_the_command_line_writes_the_same_file(team, tmp_path, capsys):
    out = tmp_path / "tasks.json"
    code, printed, _ = run_cli(capsys, "--db", team.url, "export", "label-studio", "--project", "a", "--output",
                               str(out), "--email-domain", "lab.example.org", "--blind")
    tasks = list_export(team, "a", email_domain="lab.example.org", blind=True)
    assert code == 0 and out.read_text(encoding="utf-8") == reference_text(tasks)
    annotations = sum(len(t["annotations"]) for t in tasks)
    assert f"exported {len(tasks)} tasks with {annotations} annotations" in printed


_CHILD = """
import io, sys
from annotator.exchange.label_studio import label_studio_tasks
from annotator.io.label_studio import write_label_studio
from annotator.store import open_store
import importlib.util  # the reference by its path: a package named tests in the environment hides this one's
spec = importlib.util.spec_from_file_location("label_studio_reference", "tests/label_studio_reference.py")
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)  # the export before it streamed (pandas imported for both)
mode, db, out = sys.argv[1:4]
store = open_store("sqlite:///" + db)
""" + PEAK_KIB + """
before = peak_kib()
with open(out, "w", encoding="utf-8") as fh:
    if mode == "list":
        write_label_studio(reference.list_export(store, "p", email_domain="lab.example.org"), fh)
    else:
        write_label_studio(label_studio_tasks(store, "p", email_domain="lab.example.org"), fh)
print((peak_kib() - before) / 1024)
"""

#: Growth of the peak resident memory allowed while a 10,000-item project (two systems, one judgement of each
#: caption) is exported. The list-based export grew by 131 MiB on it (494 MiB at 40,000 items); the streamed one
#: by 9 MiB (the same at 40,000 items: it holds a chunk of items).
BOUND_MIB = 40


def _build(db: Path, n: int) -> None:
    run_child("""
import sys
from annotator.store import open_store
from annotator.io.jsonl import import_jsonl
from annotator.io.judgement_rows import import_judgement_rows
import json
db, n = sys.argv[1], int(sys.argv[2])
store = open_store("sqlite:///" + db)
items = db + ".jsonl"
with open(items, "w", encoding="utf-8") as fh:
    for i in range(n):
        fh.write(json.dumps({"key": f"k{i}", "image": f"img{i}.jpg",
                             "references": [f"a reference number {i} about a dog", f"another one {i}"],
                             "captions": [{"system": "s", "text": f"caption {i} of a cat on a mat"},
                                          {"system": "t", "text": f"the {i}th dog on a beach"}]}) + "\\n")
import_jsonl(store, "p", items)
rows = db + ".rows.jsonl"
with open(rows, "w", encoding="utf-8") as fh:
    for i in range(n):
        for system in ("s", "t"):
            fh.write(json.dumps({"system": system, "item": f"k{i}", "annotator": "ann", "label": "inaccurate",
                                 "error_types": ["gender"], "spans": [{"start": 0, "end": 1, "type": "gender"}],
                                 "note": f"note {i}", "seconds": 2.5}) + "\\n")
import_judgement_rows(store, "p", rows)
print("ok")
""", db, n, timeout=600)


def _peak_growth(mode: str, db: Path, out: Path) -> float:
    return float(run_child(_CHILD, mode, db, out, timeout=600).split()[-1])


@pytest.mark.slow
def test_a_10k_item_export_stays_within_a_bound_the_list_export_exceeds(tmp_path):
    _build(tmp_path / "p.db", 10_000)
    growth = {mode: _peak_growth(mode, tmp_path / "p.db", tmp_path / f"{mode}.json") for mode in ("list", "stream")}
    assert (tmp_path / "list.json").read_bytes() == (tmp_path / "stream.json").read_bytes()
    assert growth["stream"] <= BOUND_MIB < growth["list"], growth
