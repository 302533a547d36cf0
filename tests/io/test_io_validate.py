"""Values the database could not store are refused by the importers with a named location."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from annotator.errors import InputError
from annotator.io import import_coco, import_flickr30k, import_jsonl, import_judgements, import_lines
from annotator.io.validate import LIMITS, check_coordinate, check_dimension, check_text, fit_box
from annotator.model import Box
from annotator.store.projects import load_project
from tests.store_helpers import refused

FIX = Path(__file__).parent.parent / "fixtures"


def test_limits_come_from_the_schema():
    assert LIMITS == {"project": 200, "key": 500, "box id": 100, "label": 200, "synset": 200, "system": 200, "user": 100,
                      "score name": 100}


@pytest.mark.parametrize("value, fragment", [
    ("a\x00b", "NUL"), ("\ud800x", "unpaired surrogate"), (5, "must be a string"), ("x" * 11, "11 characters long"),
])
def test_check_text(value, fragment):
    with pytest.raises(InputError) as info:
        check_text(value, "thing", "f.txt", 3, max_len=10)
    assert fragment in str(info.value) and "f.txt, line 3" in str(info.value)
    assert check_text("café ok", "thing") == "café ok"


@pytest.mark.parametrize("value", [0, -1, 0.5, float("inf"), float("nan"), 2**31, 10**30, True, "640"])
def test_bad_dimensions(value):
    with pytest.raises(InputError):
        check_dimension(value, "width")


def test_good_dimensions():
    assert check_dimension(640.0, "width") == 640 and check_dimension(None, "w") is None
    assert check_dimension(2**31 - 1, "w") == 2**31 - 1


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 1e10, 10**400, None, "3"])
def test_bad_coordinates(value):
    with pytest.raises(InputError):
        check_coordinate(value, "x")


def test_boxes_near_the_edge_are_clipped_far_outside_refused():
    assert fit_box(Box("1", "a", 10, 10, 20, 20), 100, 100) == Box("1", "a", 10, 10, 20, 20)
    # 1.5 px over the right edge and 1 px above the top: rounding in the source, clipped.
    assert fit_box(Box("1", "a", 50, -1, 51.5, 30), 100, 100) == Box("1", "a", 50, 0, 50, 29)
    # 1 % of a 1000 px side is 10 px of tolerance.
    assert fit_box(Box("1", "a", 990, 0, 19, 5), 1000, 50) == Box("1", "a", 990, 0, 10, 5)
    with pytest.raises(InputError) as info:
        fit_box(Box("7", "a", 500, 500, 400, 400), 100, 100, "f.json", "record 2")
    assert "box '7'" in str(info.value) and "outside the 100 x 100 image" in str(info.value)
    assert fit_box(Box("1", "a", 500, 500, 1, 1), None, None).x == 500  # unknown size: nothing to check against


def test_jsonl_values_refused(store, tmp_path):
    item = {"key": "k", "width": 100, "height": 100, "boxes": [{"id": "1", "label": "x", "x": 1, "y": 1, "w": 5, "h": 5}],
            "captions": [{"system": "s", "text": "a"}]}
    p = tmp_path / "x.jsonl"
    cases = [
        ({"key": "a\x00b"}, "NUL"),
        ({"key": "k" * 501}, "501 characters long"),
        ({"captions": [{"system": "s" * 201, "text": "a"}]}, "201 characters long"),
        ({"captions": [{"system": "s", "text": "bad \ud800"}]}, "unpaired surrogate"),
        ({"width": 2**40}, "between 1 and"),
        ({"boxes": [{"id": "1", "label": "x", "x": 1000, "y": 1000, "w": 5, "h": 5}]}, "outside the 100 x 100 image"),
        ({"boxes": [{"id": "1" * 101, "label": "x", "x": 1, "y": 1, "w": 5, "h": 5}]}, "101 characters"),
    ]
    for change, fragment in cases:
        p.write_text(json.dumps({**item, **change}) + "\n", encoding="utf-8")
        refused(store, lambda: import_jsonl(store, "x", p), "x.jsonl, line 1", fragment)
    p.write_text('{"key": "k", "boxes": [{"id": "1", "label": "x", "x": NaN, "y": 1, "w": 5, "h": 5}]}\n', encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "line 1", "NaN")
    p.write_text('{"key": "k", "width": 1e400, "height": 5}\n', encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "line 1", "width")


def test_jsonl_image_through_a_symlink_out_of_the_root(store, tmp_path):
    root = tmp_path / "imgs"
    root.mkdir()
    os.symlink("/etc", root / "escape")
    p = tmp_path / "x.jsonl"
    p.write_text(json.dumps({"format": "annotator-jsonl", "version": 1, "image_root": "imgs"}) + "\n"
                 + json.dumps({"key": "k", "image": "escape/hostname"}) + "\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "x.jsonl, line 2", "outside the image root")


def test_near_edge_boxes_are_stored_clipped(store, tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text(json.dumps({"key": "k", "width": 100, "height": 100,
                             "boxes": [{"id": "1", "label": "x", "x": 90, "y": 0, "w": 11, "h": 10}]}) + "\n", encoding="utf-8")
    import_jsonl(store, "x", p)
    assert load_project(store, "x").items[0].boxes == [Box("1", "x", 90, 0, 10, 10)]


def test_lines_values_refused(store, tmp_path):
    caps = tmp_path / "c.txt"
    caps.write_bytes(b"a dog\nthe \x00cat\n")
    refused(store, lambda: import_lines(store, "p", "s", caps, []), "c.txt, line 2", "NUL")
    caps.write_text("a\nb\n", encoding="utf-8")
    refused(store, lambda: import_lines(store, "p", "s" * 201, caps, []), "--system", "201 characters")
    refused(store, lambda: import_lines(store, "p" * 201, "s", caps, []), "--project", "201 characters")
    root = tmp_path / "imgs"
    root.mkdir()
    os.symlink(root / "loop.jpg", root / "loop.jpg")
    imgs = tmp_path / "i.txt"
    imgs.write_text("ok.jpg\nloop.jpg\n", encoding="utf-8")
    refused(store, lambda: import_lines(store, "p", "s", caps, [], images=imgs, image_root=root), "i.txt, line 2",
            "cannot be resolved")


def test_coco_values_refused(store, tmp_path):
    cap = json.loads((FIX / "coco" / "captions.json").read_text())
    inst = json.loads((FIX / "coco" / "instances.json").read_text())
    cap["images"][0]["width"] = 10**30
    (tmp_path / "c.json").write_text(json.dumps(cap))
    refused(store, lambda: import_coco(store, "c", tmp_path / "c.json", FIX / "coco" / "instances.json"), "images[0]", "width")
    inst["annotations"][0]["bbox"] = [5000, 5000, 10, 10]
    (tmp_path / "i.json").write_text(json.dumps(inst))
    refused(store, lambda: import_coco(store, "c", FIX / "coco" / "captions.json", tmp_path / "i.json"),
            "captions.json, image id 42", "box '1001'", "outside the 640 x 480 image")


@pytest.mark.parametrize("xml, fragment", [
    (b"<annotation><size><width>1e400</width><height>5</height></size></annotation>", "not a whole number"),
    (b"<annotation><size><width>99999999999999999999999</width><height>5</height></size></annotation>", "out of range"),
    (b"<annotation><size><width>100</width><height>100</height></size><object><name>10</name><bndbox><xmin>500</xmin>"
     b"<ymin>500</ymin><xmax>900</xmax><ymax>900</ymax></bndbox></object></annotation>", "outside the 100 x 100 image"),
])
def test_flickr30k_values_refused(store, tmp_path, xml, fragment):
    import shutil
    data = tmp_path / "f"
    shutil.copytree(FIX / "flickr30k", data)
    (data / "Annotations" / "1001.xml").write_bytes(xml)
    refused(store, lambda: import_flickr30k(store, "f", data), fragment)
    ids = tmp_path / "ids.txt"
    ids.write_text("x" * 300 + "\n", encoding="utf-8")
    refused(store, lambda: import_flickr30k(store, "f", FIX / "flickr30k", ids=ids), "ids.txt, line 1", "not an image id")


def test_judgement_keys_and_names(store, tmp_path):
    import_lines(store, "p", "s", FIX / "lines" / "captions_a.txt", [])
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"²": "congruent"}), encoding="utf-8")
    refused(store, lambda: import_judgements(store, "p", "s", "ann", c), "key '²'", "not a non-negative integer")
    c.write_text(json.dumps({"0": "congruent"}), encoding="utf-8")
    refused(store, lambda: import_judgements(store, "p", "s", "u" * 101, c), "--annotator", "101 characters")
    refused(store, lambda: import_judgements(store, "p", "s", "   ", c), "annotator name is required")
