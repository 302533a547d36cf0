"""Label Studio in and out: the task list and labeling config checked by Label Studio's own SDK and converter,
an exact round trip on SQLite and PostgreSQL, and refusals that name the task and store nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from annotator.errors import InputError
from annotator.io.judgement_rows import import_judgement_rows
from annotator.exchange.label_studio import export_label_studio, import_label_studio
from annotator.io.label_studio import labeling_config, token_offsets, token_span, write_label_studio
from annotator.judgement_export import export_judgements
from annotator.io.jsonl import import_jsonl
from annotator.sample import SAMPLE_DIR, load_sample
from annotator.spans import Span, spans_json
from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
# Label Studio's SDK pins an older numpy than the app uses, so it lives in a virtualenv of its own that
# `make test` builds (requirements-labelstudio.txt); the checks run there through label_studio_check.py.
LS_PYTHON = os.environ.get("ANNOTATOR_LABEL_STUDIO_PYTHON", str(ROOT / ".venv-labelstudio" / "bin" / "python"))
CAPTION = "A man in an orange jacket smiling in front of an american flag"


def _label_studio(config: Path, tasks: Path) -> dict:
    if not Path(LS_PYTHON).exists():
        if os.environ.get("CI"):
            pytest.fail(f"Label Studio's SDK environment is missing ({LS_PYTHON}); `make test` builds it")
        pytest.skip(f"no Label Studio SDK environment at {LS_PYTHON} (`make test` builds it)")
    done = subprocess.run([LS_PYTHON, str(Path(__file__).with_name("label_studio_check.py")), str(config), str(tasks)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _with_spans(store, tmp_path, project="a"):
    """The sample as project ``project`` with its judgements, plus judgements carrying spans, fixes, notes, a skip
    and a lead's decision."""
    load_sample(store, project=project)
    rows = [
        {"system": "sat-attn", "item": "astronaut.jpg", "caption": CAPTION, "annotator": "ali", "label": "inaccurate",
         "error_types": ["gender", "clothing_color"], "note": "woman; suit, not jacket",
         "spans": [{"start": 1, "end": 2, "type": "gender", "fix": "woman"},
                   {"start": 4, "end": 6, "type": "clothing_color"}], "seconds": 12.5},
        {"system": "sat-attn", "item": "astronaut.jpg", "caption": CAPTION, "annotator": "lea", "kind": "adjudication",
         "label": "inaccurate", "error_types": ["gender"], "spans": [{"start": 0, "end": 2, "type": "gender"}]},
        {"system": "nic-beam", "item": "astronaut.jpg", "annotator": "ali", "label": None},
    ]
    path = tmp_path / f"{project}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_judgement_rows(store, project, path)


def _empty_copy(store, project="b"):
    """The sample's items and captions (no judgements) as another project of the same store."""
    import_jsonl(store, project, SAMPLE_DIR / "sample.jsonl")


_KEEP = ["system", "item", "line", "caption", "annotator", "kind", "label", "error_types", "spans", "note", "seconds"]


def _current(store, project):
    rows = export_judgements(store, project).rows[_KEEP].copy()
    rows["spans"] = rows["spans"].map(spans_json)
    return sorted(json.loads(rows.to_json(orient="records", default_handler=str)), key=json.dumps)


def test_characters_and_tokens_map_both_ways():
    text = "Two  dogs, on\ta beach"
    offsets = token_offsets(text)
    assert [text[a:b] for a, b in offsets] == ["Two", "dogs,", "on", "a", "beach"]
    assert token_span(text, 5, 13, offsets) == (1, 3)
    assert token_span(text, 4, 14, offsets) == (1, 3)  # white space around the words is forgiven
    assert token_span(text, 5, 9, offsets) == (1, 2)  # "dogs" of "dogs,": the comma left out, as Label Studio does
    with pytest.raises(InputError, match="cuts inside a word"):
        token_span(text, 6, 13, offsets)  # starts inside "dogs,"


def test_label_studio_reads_our_config_and_tasks(sqlite_store, tmp_path):
    _with_spans(sqlite_store, tmp_path)
    tasks = export_label_studio(sqlite_store, "a", predictions=True, email_domain="lab.example.org")
    config, path = tmp_path / "config.xml", tmp_path / "tasks.json"
    config.write_text(labeling_config(), encoding="utf-8")
    with path.open("w", encoding="utf-8") as fh:
        write_label_studio(tasks, fh)
    checked = _label_studio(config, path)
    assert checked["errors"] == []
    assert checked["controls"] == ["error_span", "error_types", "fix", "judgement", "note"]
    # Label Studio's converter reads our character offsets back to the words of the token spans
    mine = [r for r in checked["min"] if r.get("caption") == CAPTION and r.get("annotator") == "ali@lab.example.org"]
    assert len(mine) == 1
    assert sorted((s["text"], s["labels"][0]) for s in mine[0]["error_span"]) == [("man", "gender"),
                                                                                  ("orange jacket", "clothing_color")]
    assert mine[0]["judgement"] == "inaccurate"
    assert sorted(mine[0]["error_types"]["choices"]) == ["clothing_color", "gender"]
    assert mine[0]["note"] == "woman; suit, not jacket"
    # a broken file is caught by the same check: the test can fail
    broken = json.loads(path.read_text(encoding="utf-8"))
    broken[0]["annotations"][0]["result"][0]["value"]["choices"] = ["wrong"]
    path.write_text(json.dumps(broken), encoding="utf-8")
    assert _label_studio(config, path)["errors"]


def test_the_config_names_every_type_with_its_key():
    from annotator.taxonomy import taxonomy
    xml = labeling_config()
    for t in taxonomy().types:
        assert f'<Choice value="{t.id}"' in xml and f'hotkey="{t.key}"' in xml and t.name in xml
        assert f'<Label value="{t.id}"' in xml


def test_round_trip_gives_the_same_judgements(store, tmp_path):
    _with_spans(store, tmp_path, "a")
    _empty_copy(store)
    path = tmp_path / "tasks.json"
    with path.open("w", encoding="utf-8") as fh:
        write_label_studio(export_label_studio(store, "a", email_domain="lab.example.org"), fh)
    result = import_label_studio(store, "b", path)
    before = _current(store, "a")
    assert result.judgements == len(before)
    assert _current(store, "b") == before
    spans = [r["spans"] for r in before if r["annotator"] == "ali" and r["spans"]]
    assert spans == [[{"start": 1, "end": 2, "type": "gender", "fix": "woman"},
                      {"start": 4, "end": 6, "type": "clothing_color"}]]
    # importing the same file again changes nothing
    assert import_label_studio(store, "b", path).judgements == 0


def test_the_command_line_exports_and_imports(sqlite_store, tmp_path, capsys):
    _with_spans(sqlite_store, tmp_path, "a")
    _empty_copy(sqlite_store)
    tasks, config = tmp_path / "out" / "tasks.json", tmp_path / "out" / "config.xml"
    code, out, _ = run_cli(capsys, "--db", sqlite_store.url, "export", "label-studio", "--project", "a", "--system",
                           "sat-attn", "--output", str(tasks), "--config", str(config), "--email-domain",
                           "lab.example.org", "--json")
    assert code == 0, out
    summary = json.loads(out)
    written = json.loads(tasks.read_text(encoding="utf-8"))
    assert summary["tasks"] == len(written) == 8 and {t["data"]["system"] for t in written} == {"sat-attn"}
    assert config.read_text(encoding="utf-8").startswith("<View>")
    code, out, _ = run_cli(capsys, "--db", sqlite_store.url, "import", "label-studio", "--project", "b", str(tasks),
                           "--json")
    assert code == 0 and json.loads(out)["judgements"] == summary["annotations"]


@pytest.mark.parametrize("change, fragment", [
    (lambda t: t[0]["annotations"][0]["result"][1]["value"].update(choices=["no-such-type"]), "no-such-type"),
    (lambda t: next(r for r in t[0]["annotations"][0]["result"] if r["from_name"] == "error_span")["value"]
     .update(start=3), "cuts inside a word"),
    (lambda t: t[0]["annotations"][0]["result"].append({"from_name": "rating", "value": {}}), "rating"),
    (lambda t: t[0]["data"].pop("system"), "names no system"),
    (lambda t: t[0]["annotations"][0].pop("completed_by"), "completed_by"),
])
def test_what_cannot_be_mapped_is_refused_naming_the_task(sqlite_store, tmp_path, change, fragment):
    _with_spans(sqlite_store, tmp_path, "a")
    _empty_copy(sqlite_store)
    tasks = [t for t in export_label_studio(sqlite_store, "a", email_domain="lab.example.org")
             if t["data"]["caption"] == CAPTION and t["data"]["system"] == "sat-attn"]
    tasks[0]["annotations"].sort(key=lambda a: a["completed_by"]["email"] != "ali@lab.example.org")
    change(tasks)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    before = _current(sqlite_store, "b")
    with pytest.raises(InputError, match="task") as err:
        import_label_studio(sqlite_store, "b", path)
    assert fragment in str(err.value) and str(path) in str(err.value)
    assert _current(sqlite_store, "b") == before


def test_spans_export_as_character_offsets():
    from annotator.io.label_studio import annotation_results
    results = annotation_results(CAPTION, "inaccurate", ["gender"], [Span(1, 2, "gender", "woman")], "")
    span = next(r for r in results if r["from_name"] == "error_span")
    fix = next(r for r in results if r["from_name"] == "fix")
    assert span["value"] == {"start": 2, "end": 5, "text": "man", "labels": ["gender"]}
    assert fix["id"] == span["id"] and fix["value"]["text"] == ["woman"]
