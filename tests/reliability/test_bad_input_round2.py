"""Named bad-input traps found after the property tests: each is refused with exit 2, the file and the line,
and the store is left as it was.

* numbers that Python's ``int()``/``float()`` would choke on or wrongly accept (5000 digits, other scripts'
  digits, ``1_000``, ``nan``) in every importer;
* a key given twice in one JSON object (``json`` keeps the last one silently);
* a JSONL file that is not UTF-8 on some line.

Runs through the command line, as a user meets it, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.io import import_lines
from annotator.store.projects import table_counts

FIX = Path(__file__).resolve().parents[1] / "fixtures"
HUGE = "7" * 5000


def cli_refused(store, capsys, *argv, fragments=()) -> str:
    """Run the CLI: it must exit 2 with one message holding every fragment, and write nothing."""
    before = table_counts(store)
    code = main(["--db", store.url, *[str(a) for a in argv]])
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    assert err.startswith("annotator: error: ") and "Traceback" not in err, err
    for f in fragments:
        assert f in err, err
    assert len(err) < 600, "a message about huge input must not repeat all of it"
    assert table_counts(store) == before
    return err


@pytest.fixture
def seeded(store):
    """A project with three captions of system sys-a (items dog.jpg, bikes.jpg, car.jpg)."""
    L = FIX / "lines"
    import_lines(store, "p", "sys-a", L / "captions_a.txt", [L / "refs1.txt"], images=L / "images.txt")
    return store


def judgements_cli(coarse, fine=None):
    argv = ["import", "judgements", "--project", "p", "--system", "sys-a", "--annotator", "ann", "--coarse", coarse]
    return argv + (["--fine", fine] if fine else [])


# ---------------------------------------------------------------- numbers (issue item 8)

def test_judgement_key_of_5000_digits(seeded, capsys, tmp_path):
    coarse = tmp_path / "coarse.json"
    coarse.write_text('{"0": "congruent",\n "%s": "incongruent"}' % HUGE, encoding="utf-8")
    cli_refused(seeded, capsys, *judgements_cli(coarse), fragments=["coarse.json, line 2", "too large"])


def test_fine_file_key_of_5000_digits(seeded, capsys, tmp_path):
    coarse = tmp_path / "coarse.json"
    coarse.write_text('{"0": "incongruent"}', encoding="utf-8")
    fine = tmp_path / "fine.json"
    fine.write_text('{\n"0": ["wrong-subject"],\n"%s": ["wrong-subject"]}' % HUGE, encoding="utf-8")
    cli_refused(seeded, capsys, *judgements_cli(coarse, fine), fragments=["fine.json, line 3", "too large"])


def test_json_integer_value_of_5000_digits(seeded, capsys, tmp_path):
    coarse = tmp_path / "coarse.json"
    coarse.write_text('{"0": "congruent",\n"1":\n%s}' % HUGE, encoding="utf-8")
    cli_refused(seeded, capsys, *judgements_cli(coarse), fragments=["coarse.json, line 3", "5000 digits"])


@pytest.mark.parametrize("key", ["١", "+1", "1_0", "0x1", "1.0"])
def test_judgement_keys_in_other_forms_are_not_line_numbers(seeded, capsys, tmp_path, key):
    coarse = tmp_path / "coarse.json"
    coarse.write_text(json.dumps({"0": "congruent", key: "congruent"}, ensure_ascii=False, indent=1), encoding="utf-8")
    cli_refused(seeded, capsys, *judgements_cli(coarse), fragments=["coarse.json, line 3", "not a non-negative integer"])


def test_jsonl_width_of_5000_digits(store, capsys, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"key": "a.jpg"}\n{"key": "b.jpg", "width": %s}\n' % HUGE, encoding="utf-8")
    cli_refused(store, capsys, "import", "jsonl", "--project", "j", path, fragments=["items.jsonl, line 2", "5000 digits"])


def _coco(tmp_path, captions: str) -> Path:
    d = tmp_path / "coco"
    d.mkdir()
    shutil.copy(FIX / "coco" / "instances.json", d / "instances.json")
    (d / "captions.json").write_text(captions, encoding="utf-8")
    return d


def coco_cli(d: Path):
    return ["import", "coco", "--project", "c", "--captions-json", d / "captions.json", "--instances-json",
            d / "instances.json"]


def test_coco_id_of_5000_digits(store, capsys, tmp_path):
    d = _coco(tmp_path, '{"images": [\n{"id": 42, "file_name": "a.jpg"},\n{"id": %s, "file_name": "b.jpg"}],\n'
                        '"annotations": []}' % HUGE)
    cli_refused(store, capsys, *coco_cli(d), fragments=["captions.json, line 3", "5000 digits"])


@pytest.mark.parametrize("image_id", ["٤٢", "4_2", " 42", "42.0", "9" * 40])
def test_coco_string_ids_in_other_forms(store, capsys, tmp_path, image_id):
    text = json.dumps({"images": [{"id": 42, "file_name": "a.jpg"}],
                       "annotations": [{"id": 1, "image_id": image_id, "caption": "a dog"}]}, ensure_ascii=False)
    d = _coco(tmp_path, text)
    cli_refused(store, capsys, *coco_cli(d), fragments=["captions.json, annotations[0]", "image_id"])


def human_scores_cli(path):
    return ["import", "human-scores", "--project", "p", path]


@pytest.mark.parametrize("cell, fragment", [
    ("1_0", "not a number"), ("１.５", "not a number"), ("٣", "not a number"), ("nan", "not a finite number"),
    ("-inf", "not a finite number"), ("1e999", "not a finite number"), (HUGE, "not a finite number"),
])
def test_human_score_values(seeded, capsys, tmp_path, cell, fragment):
    path = tmp_path / "scores.csv"
    path.write_text(f"item,system,q\ndog.jpg,sys-a,1\nbikes.jpg,sys-a,{cell}\n", encoding="utf-8")
    cli_refused(seeded, capsys, *human_scores_cli(path), fragments=["scores.csv, line 3", fragment])


@pytest.mark.parametrize("cell", ["١", "1_0", "+ 1", HUGE, "0x1"])
def test_human_score_caption_lines(seeded, capsys, tmp_path, cell):
    path = tmp_path / "scores.csv"
    path.write_text(f"system,line,q\nsys-a,0,1\nsys-a,{cell},2\n", encoding="utf-8")
    cli_refused(seeded, capsys, *human_scores_cli(path), fragments=["scores.csv, line 3", "line (the 0-based caption line)"])


def test_flickr30k_size_in_other_digits(store, capsys, tmp_path):
    root = tmp_path / "f30k"
    shutil.copytree(FIX / "flickr30k", root)
    xml = root / "Annotations" / "1001.xml"
    xml.write_text(xml.read_text(encoding="utf-8").replace("<width>500</width>", "<width>٥٠٠</width>", 1), encoding="utf-8")
    assert "٥٠٠" in xml.read_text(encoding="utf-8")
    cli_refused(store, capsys, "import", "flickr30k", "--project", "f", "--root", root,
                fragments=["1001.xml", "not a whole number"])


# ---------------------------------------------------------------- keys given twice (issue item 9)

def test_coarse_file_with_a_key_twice(seeded, capsys, tmp_path):
    coarse = tmp_path / "coarse.json"
    coarse.write_text('{"0": "incongruent",\n "1": "congruent",\n "0": "congruent"}', encoding="utf-8")
    cli_refused(seeded, capsys, *judgements_cli(coarse), fragments=["coarse.json, line 3", "key '0' appears twice"])


def test_fine_file_with_a_key_twice(seeded, capsys, tmp_path):
    coarse = tmp_path / "coarse.json"
    coarse.write_text('{"0": "incongruent"}', encoding="utf-8")
    fine = tmp_path / "fine.json"
    fine.write_text('{"0": ["wrong-subject"], "0": ["wrong-object"]}', encoding="utf-8")
    cli_refused(seeded, capsys, *judgements_cli(coarse, fine), fragments=["fine.json, line 1", "key '0' appears twice"])


def test_jsonl_item_with_key_twice(store, capsys, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"key": "a.jpg"}\n\n{"key": "b.jpg", "captions": [], "key": "c.jpg"}\n', encoding="utf-8")
    cli_refused(store, capsys, "import", "jsonl", "--project", "j", path,
                fragments=["items.jsonl, line 3", "key 'key' appears twice"])


def test_jsonl_nested_object_with_a_field_twice(store, capsys, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"key": "a.jpg", "captions": [{"system": "s", "text": "a dog", "text": "a cat"}]}\n', encoding="utf-8")
    cli_refused(store, capsys, "import", "jsonl", "--project", "j", path,
                fragments=["items.jsonl, line 1", "key 'text' appears twice"])


def test_coco_record_with_a_field_twice(store, capsys, tmp_path):
    d = _coco(tmp_path, '{"images": [{"id": 42, "file_name": "a.jpg"}],\n "annotations": [\n'
                        '  {"id": 1, "image_id": 42, "caption": "a dog"},\n'
                        '  {"id": 2, "image_id": 42, "caption": "a cat", "image_id": 43}]}')
    cli_refused(store, capsys, *coco_cli(d), fragments=["captions.json, line 4", "key 'image_id' appears twice"])


def test_coco_results_with_a_field_twice(store, capsys, tmp_path):
    C = FIX / "coco"
    results = tmp_path / "results.json"
    results.write_text('[{"image_id": 73, "caption": "a motorcycle", "caption": "a bicycle"}]', encoding="utf-8")
    cli_refused(store, capsys, "import", "coco", "--project", "c", "--captions-json", C / "captions.json",
                "--instances-json", C / "instances.json", "--results", results, "--system", "nic",
                fragments=["results.json, line 1", "key 'caption' appears twice"])


# ---------------------------------------------------------------- JSONL that is not UTF-8 (issue item 17)

def test_jsonl_bad_utf8_names_the_line(store, capsys, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"key": "a.jpg"}\n{"key": "b.jpg"}\n{"key": "caf\xe9.jpg"}\n{"key": "d.jpg"}\n')
    cli_refused(store, capsys, "import", "jsonl", "--project", "j", path, fragments=["items.jsonl, line 3", "not UTF-8"])
