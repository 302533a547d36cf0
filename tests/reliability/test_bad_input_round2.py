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


# ---------------------------------------------------------------- text that does not fit its column (issue item 10)

@pytest.mark.parametrize("header, fragments", [
    ("item,system,q\x00x", ["scores.csv, line 1", "NUL"]),
    ("item,system," + "q" * 101, ["scores.csv, line 1", "101 characters long; at most 100"]),
    ("item,system,q\x1b[31m", ["scores.csv, line 1", "control character U+001B"]),
])
def test_human_score_names_in_the_header(seeded, capsys, tmp_path, header, fragments):
    path = tmp_path / "scores.csv"
    path.write_text(f"{header}\ndog.jpg,sys-a,1\n", encoding="utf-8")
    cli_refused(seeded, capsys, *human_scores_cli(path), fragments=fragments)


@pytest.mark.parametrize("cells, fragments", [
    ("dog.jpg,sys-a," + "n" * 101 + ",1", ["scores.csv, line 3", "score name is 101 characters long"]),
    ("dog.jpg,sys-a,a\x00b,1", ["scores.csv, line 3", "NUL"]),
    ("dog.jpg,sys\x00a,q,1", ["scores.csv, line 3", "system name cannot contain", "NUL"]),
    ("dog\x00.jpg,sys-a,q,1", ["scores.csv, line 3", "item key cannot contain", "NUL"]),
    ("dog.jpg,sys-a,\u200b\u2060,1", ["scores.csv, line 3", "visible character"]),
])
def test_human_score_names_in_the_long_form(seeded, capsys, tmp_path, cells, fragments):
    path = tmp_path / "scores.csv"
    path.write_text(f"item,system,name,value\nbikes.jpg,sys-a,q,2\n{cells}\n", encoding="utf-8")
    cli_refused(seeded, capsys, *human_scores_cli(path), fragments=fragments)


def test_one_score_per_line_with_a_bad_name(seeded, capsys, tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("1\n2\n3\n", encoding="utf-8")
    cli_refused(seeded, capsys, "import", "human-scores", "--project", "p", path, "--system", "sys-a", "--name", "q\x00",
                fragments=["--name", "NUL"])


# ---------------------------------------------------------------- control characters in text (issue item 7, import side)

def test_caption_with_an_escape_character(store, capsys, tmp_path):
    caps = tmp_path / "caps.txt"
    caps.write_text("a dog\na \x1b[2Jcat\na car\n", encoding="utf-8")
    refs = tmp_path / "refs.txt"
    refs.write_text("r1\nr2\nr3\n", encoding="utf-8")
    cli_refused(store, capsys, "import", "lines", "--project", "p", "--system", "s", "--captions", caps,
                "--references", refs, fragments=["caps.txt, line 2", "control character U+001B"])


@pytest.mark.parametrize("field, value", [("text", "line\u000bbreak"), ("text", "bell\u0007"), ("text", "c1 \u009b"),
                                          ("text", "not a character \uffff")])
def test_jsonl_caption_with_control_characters(store, capsys, tmp_path, field, value):
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"key": "a.jpg"}) + "\n" + json.dumps({"key": "b.jpg", "captions": [
        {"system": "s", field: value}]}) + "\n", encoding="utf-8")
    cli_refused(store, capsys, "import", "jsonl", "--project", "j", path, fragments=["items.jsonl, line 2", "U+"])


def test_tabs_and_line_breaks_stay_allowed_in_text(store, tmp_path):
    from annotator.io import import_jsonl
    from annotator.store.projects import load_project
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"key": "a.jpg", "references": ["two\tcolumns\r\nand lines"],
                                "captions": [{"system": "s", "text": "a\tb"}]}) + "\n", encoding="utf-8")
    import_jsonl(store, "j", path)
    item = load_project(store, "j").items[0]
    assert (item.references[0].text, item.captions[0].text) == ("two\tcolumns\r\nand lines", "a\tb")


def test_corrected_caption_with_a_control_character(seeded, capsys, tmp_path):
    path = tmp_path / "fixed.txt"
    lines = (FIX / "lines" / "captions_a.txt").read_text(encoding="utf-8").splitlines()
    lines[1] = "a\x08 man"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cli_refused(seeded, capsys, "import", "corrections", "--project", "p", "--system", "sys-a", "--error-type",
                "gender", "--captions", path, fragments=["fixed.txt, line 2", "U+0008"])


# ---------------------------------------------------------------- names and paths (issue item 18)

def _lines_files(tmp_path, images: list[str], tag: str = "") -> dict:
    n = len(images)
    (tmp_path / f"imgs{tag}.txt").write_text("".join(f"{i}\n" for i in images), encoding="utf-8")
    (tmp_path / f"caps{tag}.txt").write_text("".join(f"caption {k}\n" for k in range(n)), encoding="utf-8")
    (tmp_path / f"refs{tag}.txt").write_text("".join(f"reference {k}\n" for k in range(n)), encoding="utf-8")
    return {"captions": tmp_path / f"caps{tag}.txt", "references": [tmp_path / f"refs{tag}.txt"],
            "images": tmp_path / f"imgs{tag}.txt"}


@pytest.mark.parametrize("bad, fragment", [
    (".", "names no file"), ("./", "names a folder"), ("sub/", "names a folder"), ("a.jpg ", "white space"),
    (" a.jpg", "white space"), ("sub /a.jpg", "white space"), ("a\tb.jpg", "U+0009"), ("a\u202egpj.exe", "U+202E"),
])
def test_image_paths_that_name_no_file(store, capsys, tmp_path, bad, fragment):
    f = _lines_files(tmp_path, ["dog.jpg", bad, "car.jpg"])
    cli_refused(store, capsys, "import", "lines", "--project", "p", "--system", "s", "--captions", f["captions"],
                "--references", *f["references"], "--images", f["images"], fragments=["imgs.txt, line 2", fragment])


def test_one_image_written_two_ways_is_one_item(store, capsys, tmp_path):
    f = _lines_files(tmp_path, ["a.jpg", "./a.jpg"])
    cli_refused(store, capsys, "import", "lines", "--project", "p", "--system", "s", "--captions", f["captions"],
                "--references", *f["references"], "--images", f["images"], fragments=["imgs.txt, line 2", "listed twice"])


def test_later_imports_attach_to_the_same_items(store, tmp_path):
    from annotator.io import import_jsonl
    from annotator.store.projects import load_project
    nfd, nfc = "cafe\u0301.jpg", "caf\u00e9.jpg"
    import_lines(store, "p", "sys-a", **_lines_files(tmp_path, ["a.jpg", "sub/b.jpg", nfd], "1"))
    import_lines(store, "p", "sys-b", **_lines_files(tmp_path, ["./a.jpg", "sub\\.\\b.jpg", nfc], "2"))
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text(json.dumps({"key": "a.jpg", "image": "./a.jpg", "captions": [{"system": "sys-c", "text": "x"}]})
                     + "\n", encoding="utf-8")
    import_jsonl(store, "p", jsonl)
    items = load_project(store, "p").items
    assert [i.key for i in items] == ["a.jpg", "sub/b.jpg", nfc]
    assert [i.image for i in items] == ["a.jpg", "sub/b.jpg", nfd]  # the file as it is called on disk
    assert [len(i.captions) for i in items] == [3, 2, 2]


def test_coco_file_names_written_two_ways(store, capsys, tmp_path):
    d = _coco(tmp_path, json.dumps({"images": [{"id": 1, "file_name": "x.jpg"}, {"id": 2, "file_name": "./x.jpg"}],
                                    "annotations": []}))
    cli_refused(store, capsys, *coco_cli(d), fragments=["share the file name 'x.jpg'"])


@pytest.mark.parametrize("option, name, fragment", [
    ("--project", "\u200b\u200c\u2060", "project name needs at least one visible character"),
    ("--project", "\u00a0\u3164", "project name"),
    ("--system", "evil\u202egnp", "system name cannot contain the control character U+202E"),
    ("--system", "a\x1b]0;title\x07", "system name cannot contain the control character U+001B"),
    ("--project", "p\u2066x\u2069", "U+2066"),
])
def test_invisible_and_direction_changing_names(store, capsys, tmp_path, option, name, fragment):
    f = _lines_files(tmp_path, ["a.jpg"])
    args = {"--project": "p", "--system": "s", option: name}
    cli_refused(store, capsys, "import", "lines", "--project", args["--project"], "--system", args["--system"],
                "--captions", f["captions"], "--references", *f["references"], fragments=[option, fragment])


def test_annotator_made_of_zero_width_characters(seeded, capsys, tmp_path):
    coarse = tmp_path / "coarse.json"
    coarse.write_text('{"0": "congruent"}', encoding="utf-8")
    argv = judgements_cli(coarse)
    argv[argv.index("ann")] = "\u200b\ufeff"
    cli_refused(seeded, capsys, *argv, fragments=["--annotator", "visible character"])


def test_names_are_stored_in_one_unicode_form(store, tmp_path):
    from annotator.store.projects import project_names, system_names
    f = _lines_files(tmp_path, ["a.jpg"])
    import_lines(store, " Rene\u0301 ", "sys\u0301", f["captions"], f["references"])
    f2 = _lines_files(tmp_path, ["a.jpg"], "b")
    import_lines(store, "Ren\u00e9", "other", f2["captions"], f2["references"])
    assert project_names(store) == ["Ren\u00e9"]
    assert system_names(store, "Ren\u00e9") == ["sy\u015b", "other"]
