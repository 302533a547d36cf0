"""Captions are text unless their import says they carry [words|box ids] markup.

A caption with ``[UNK]`` (or any bracket that is not a mention) must never stop
content selection; a system whose stored mentions do not fit its items is named
and left out while every other system is still scored (CLI and page).
"""

from __future__ import annotations

import json

import pytest

from annotator.cli import main
from annotator.correspondence import parse_markup
from annotator.errors import InputError
from annotator.model import Mention
from annotator.store.projects import load_project, project_names
from tests.apptest_helpers import page_test, texts, visible


@pytest.mark.parametrize("text", ["a dog [UNK] .", "[sic] a dog", "a [ b", "a ] b", "[[x]]", "a [b] [c|"[:-1]])
def test_brackets_that_are_not_mentions_are_plain_text(text):
    assert parse_markup(text) == (text, ())


def test_mentions_and_plain_brackets_mix():
    assert parse_markup("A [dog|1] chews a [UNK] near [the ball|2] [sic]") == (
        "A dog chews a [UNK] near the ball [sic]", (Mention(1, 2, ("1",)), Mention(6, 8, ("2",))))


REFERENCES = [{"text": "A dog with a ball", "mentions": [{"start": 1, "end": 2, "boxes": ["1"]},
                                                       {"start": 4, "end": 5, "boxes": ["2"]}]},
              {"text": "A dog", "mentions": [{"start": 1, "end": 2, "boxes": ["1"]}]}]
BOXES = [{"id": "1", "label": "dog", "x": 0, "y": 0, "w": 50, "h": 50},
         {"id": "2", "label": "ball", "x": 60, "y": 60, "w": 10, "h": 10}]


def _item(key: str, *captions: dict, boxes: bool = True, references: bool = True) -> dict:
    return {"key": key, "image": key, "width": 100, "height": 100, "boxes": BOXES if boxes else [],
            "references": REFERENCES if references else [], "captions": list(captions)}


def _mention(start: int, end: int, box: str) -> dict:
    return {"start": start, "end": end, "boxes": [box]}


def _jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _cli(store, capsys, *args):
    rc = main(["--db", store.url, *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def build_projects(store, tmp_path, capsys):
    """eval: system 'good' (mentions), 'unk' (plain text with [UNK], imported as lines), 'stale' (a mention of
    box 9, stored while the items had no boxes yet); train: the same items without captions. All imported."""
    first = [_item("a.jpg", {"system": "good", "text": "A dog", "mentions": [_mention(1, 2, "1")]},
                   {"system": "stale", "text": "A dog plays", "mentions": [_mention(1, 2, "9")]}, boxes=False),
             _item("b.jpg", {"system": "good", "text": "A ball", "mentions": [_mention(1, 2, "2")]},
                   {"system": "stale", "text": "A dog plays", "mentions": [_mention(1, 2, "1")]}, boxes=False)]
    boxes = [_item("a.jpg", references=False), _item("b.jpg", references=False)]
    for name, rows in (("eval-1", first), ("eval-2", boxes)):
        rc, _, err = _cli(store, capsys, "import", "jsonl", "--project", "eval", _jsonl(tmp_path / f"{name}.jsonl", rows))
        assert rc == 0, err
    unk = _write(tmp_path / "unk.txt", ["A dog [UNK] a [UNK] .", "[UNK] [UNK]"])
    refs = [_write(tmp_path / f"refs{k}.txt", [r["text"]] * 2) for k, r in enumerate(REFERENCES)]
    images = _write(tmp_path / "images.txt", ["a.jpg", "b.jpg"])
    rc, _, err = _cli(store, capsys, "import", "lines", "--project", "eval", "--system", "unk", "--captions", unk,
                      "--references", *refs, "--images", images)
    assert rc == 0, err
    rc, _, err = _cli(store, capsys, "import", "jsonl", "--project", "train",
                      _jsonl(tmp_path / "train.jsonl", [_item("t1.jpg"), _item("t2.jpg")]))
    assert rc == 0, err


def test_import_keeps_brackets_as_text_unless_asked(store, tmp_path, capsys):
    caps = _write(tmp_path / "caps.txt", ["A [dog|1] and a [UNK] .", "two [cats|2,3] [sic]"])
    refs = _write(tmp_path / "refs.txt", ["r1", "r2"])
    rc, _, err = _cli(store, capsys, "import", "lines", "--project", "p", "--system", "plain", "--captions", caps,
                      "--references", refs)
    assert rc == 0, err
    rc, _, err = _cli(store, capsys, "import", "lines", "--project", "p", "--system", "marked", "--captions", caps,
                      "--references", refs, "--mentions", "inline")
    assert rc == 0, err
    caps_of = {(c.system, i): c for i, it in enumerate(load_project(store, "p").items) for c in it.captions}
    assert caps_of[("plain", 0)].text == "A [dog|1] and a [UNK] ." and caps_of[("plain", 0)].mentions == ()
    assert caps_of[("marked", 0)].text == "A dog and a [UNK] ."
    assert caps_of[("marked", 0)].mentions == (Mention(1, 2, ("1",)),)
    assert caps_of[("marked", 1)].text == "two cats [sic]"
    assert caps_of[("marked", 1)].mentions == (Mention(1, 2, ("2", "3")),)


def test_broken_markup_is_refused_with_file_line_and_column(store, tmp_path, capsys):
    caps = _write(tmp_path / "caps.txt", ["A [dog|1] .", "a [cat|] sits"])
    refs = _write(tmp_path / "refs.txt", ["r1", "r2"])
    rc, _, err = _cli(store, capsys, "import", "lines", "--project", "p", "--system", "s", "--captions", caps,
                      "--references", refs, "--mentions", "inline")
    assert rc == 2
    assert "caps.txt, line 2, column 8" in err and "bad box id list" in err
    assert project_names(store) == []


def test_inline_mentions_of_boxes_the_items_lack_are_refused(store, tmp_path, capsys):
    assert _cli(store, capsys, "import", "jsonl", "--project", "p", _jsonl(tmp_path / "p.jsonl", [_item("a.jpg")]))[0] == 0
    caps = _write(tmp_path / "caps.txt", ["A [dog|7] ."])
    refs = [_write(tmp_path / f"refs{k}.txt", [r["text"]]) for k, r in enumerate(REFERENCES)]
    images = _write(tmp_path / "images.txt", ["a.jpg"])
    rc, _, err = _cli(store, capsys, "import", "lines", "--project", "p", "--system", "s", "--captions", caps,
                      "--references", *refs, "--images", images, "--mentions", "inline")
    assert rc == 2 and "'7'" in err and "'a.jpg'" in err and "caps.txt" in err
    assert load_project(store, "p").systems == []


def test_cli_scores_every_system_despite_unk_and_names_the_broken_one(store, tmp_path, capsys):
    build_projects(store, tmp_path, capsys)
    rc, out, err = _cli(store, capsys, "content-selection", "--project", "eval", "--train-project", "train",
                        "--system", "all", "--baselines", "size", "--k", "1", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert set(data["systems"]) == {"good", "unk"}
    # good: a {dog} vs {dog, ball}, {dog} → P = 1, R = 3/4; b {ball} → P = 1/2, R = 1/4.
    assert data["systems"]["good"]["P"] == pytest.approx(0.75)
    assert data["systems"]["unk"]["F"] == 0.0
    assert data["meta"]["systems_without_mentions"] == ["unk"]
    reason = data["meta"]["systems_skipped"]["stale"]
    assert "caption line 0" in reason and "'a.jpg'" in reason and "'9'" in reason
    assert "system 'stale' not scored" in err
    rc, out, _ = _cli(store, capsys, "content-selection", "--project", "eval", "--train-project", "train",
                      "--system", "all", "--baselines", "none")
    assert rc == 0
    assert "system good" in out and "system unk" in out and "not scored" in out and "--mentions inline" in out


def test_page_scores_every_system_despite_unk_and_warns_about_the_broken_one(sqlite_store, tmp_path, capsys):
    build_projects(sqlite_store, tmp_path, capsys)
    at = page_test("content_selection", sqlite_store.url, user="ana", role="analyst", project="eval").run()
    assert not at.exception
    at.radio(key="cs_source").set_value("another project").run()
    at.selectbox(key="cs_train").set_value("train").run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    methods = set(at.dataframe[0].value["method"])
    assert {"good", "unk", "upper bound"} <= methods and "stale" not in methods
    warnings = " ".join(visible(w.value) for w in at.warning)
    assert "stale" in warnings and "caption line 0" in warnings and "'9'" in warnings
    assert "--mentions inline" in texts(at)
    # The one-image view offers the scored systems and shows the [UNK] caption as written.
    at.selectbox(key="cs_method").set_value("system:unk").run()
    at.selectbox(key="cs_image").set_value("a.jpg").run()
    assert not at.exception
    assert "A dog [UNK] a [UNK] ." in texts(at)


def test_coco_results_with_inline_mentions_of_instance_ids(store, tmp_path, capsys):
    images = [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}]
    caps = tmp_path / "captions.json"
    caps.write_text(json.dumps({"images": images, "annotations": [{"id": 10, "image_id": 1, "caption": "A dog"}]}),
                    encoding="utf-8")
    inst = tmp_path / "instances.json"
    inst.write_text(json.dumps({"images": images, "categories": [{"id": 18, "name": "dog"}],
                                "annotations": [{"id": 5, "image_id": 1, "category_id": 18, "bbox": [0, 0, 50, 50]}]}),
                    encoding="utf-8")
    args = ["import", "coco", "--captions-json", str(caps), "--instances-json", str(inst), "--system", "s"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"image_id": 1, "caption": "A [dog|6] and [UNK]"}]), encoding="utf-8")
    rc, _, err = _cli(store, capsys, *args, "--project", "p", "--results", str(bad), "--mentions", "inline")
    assert rc == 2 and "'6'" in err and "bad.json" in err
    assert project_names(store) == []
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"image_id": 1, "caption": "A [dog|5] and [UNK] "}]), encoding="utf-8")
    rc, _, err = _cli(store, capsys, *args, "--project", "p", "--results", str(good), "--mentions", "inline")
    assert rc == 0, err
    (cap,) = load_project(store, "p").items[0].captions
    assert (cap.text, cap.mentions) == ("A dog and [UNK]", (Mention(1, 2, ("5",)),))
