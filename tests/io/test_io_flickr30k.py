"""Flickr30K Entities importer: phrase markup → mentions, chains → boxes, safe XML."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from annotator.errors import InputError
from annotator.io import import_flickr30k, import_lines
from annotator.io.flickr30k import parse_annotation, parse_sentence
from annotator.model import Box, Mention
from annotator.store.projects import load_project
from tests.store_helpers import refused

FIX = Path(__file__).parent.parent / "fixtures" / "flickr30k"


def _copy(tmp_path) -> Path:
    root = tmp_path / "f30k"
    shutil.copytree(FIX, root)
    return root


def test_parse_sentence_spans_over_plain_text():
    text, phrases = parse_sentence("[/EN#10/people A young girl] in [/EN#11/clothing a pink dress] climbs "
                                   "[/EN#12/other a set of stairs] .")
    assert text == "A young girl in a pink dress climbs a set of stairs ."
    assert phrases == [(0, 3, 10, "people", "A young girl"), (4, 7, 11, "clothing", "a pink dress"),
                       (8, 12, 12, "other", "a set of stairs")]
    tokens = text.split()
    assert tokens[4:7] == ["a", "pink", "dress"]
    text, phrases = parse_sentence("[/EN#10/people/other A kid] climbing")
    assert phrases == [(0, 2, 10, "people/other", "A kid")]


@pytest.mark.parametrize("line", ["[/EN#1/people a dog climbs", "a dog ] runs", "[/EN#1/people ] x", "[a] [/EN#2/other b]"])
def test_malformed_markup_is_refused(line):
    with pytest.raises(InputError) as info:
        parse_sentence(line, source="s.txt", location=4)
    assert "s.txt, line 4" in str(info.value)


def test_parse_annotation_boxes_are_zero_based():
    width, height, chains = parse_annotation(FIX / "Annotations" / "1001.xml")
    assert (width, height) == (500, 375)
    # xmin=101..xmax=200 (1-based, inclusive) → x=100, w=100.
    assert chains[10] == [(100.0, 50.0, 100.0, 300.0), (120.0, 150.0, 70.0, 150.0)]
    assert chains[11] == [(120.0, 150.0, 70.0, 150.0)]  # one object shared by chains 11 and 10
    assert 13 not in chains  # <nobndbox>: no box


def test_import_with_ids_file(store):
    r = import_flickr30k(store, "f", FIX, ids=FIX / "ids.txt")
    assert (r.items_created, r.references, r.boxes) == (2, 10, 7)
    proj = load_project(store, "f")
    assert [i.key for i in proj.items] == ["1002.jpg", "1001.jpg"]  # order of the id list
    musicians, girl = proj.items
    assert (girl.width, girl.height, girl.image) == (500, 375, "1001.jpg")
    by_id = {b.box_id: b for b in girl.boxes}
    # Chain 10 has two boxes → 10.1, 10.2; single-box chains keep the chain id.
    assert sorted(by_id) == ["10.1", "10.2", "11", "12"]
    assert by_id["10.1"] == Box("10.1", "girl", 100, 50, 100, 300)
    assert by_id["11"].label == "dress" and by_id["12"].label == "stairs"
    first = girl.references[0]
    assert first.text == "A young girl in a pink dress climbs a set of stairs ."
    assert first.mentions == (Mention(0, 3, ("10.1", "10.2"), "people"), Mention(4, 7, ("11",), "clothing"),
                              Mention(8, 12, ("12",), "other"))
    fourth = girl.references[3]  # chain 0 (not visual) keeps its span but points at nothing
    assert fourth.mentions[1] == Mention(4, 5, (), "notvisual")
    second = girl.references[1]  # chain 13 is a scene without a box
    assert second.mentions[2] == Mention(8, 10, (), "scene")
    assert second.text.split()[8:10] == ["a", "house"]
    assert sorted(b.box_id for b in musicians.boxes) == ["20.1", "20.2", "21"]
    assert {b.label for b in musicians.boxes} == {"men", "guitars"}


def test_import_all_sentence_files_and_attach_captions(store, tmp_path):
    import_flickr30k(store, "f", FIX)
    assert [i.key for i in load_project(store, "f").items] == ["1001.jpg", "1002.jpg"]
    # A system's captions with the image list attach to the same items (key = image file name).
    caps, imgs, refs = tmp_path / "caps.txt", tmp_path / "imgs.txt", tmp_path / "refs.txt"
    caps.write_text("a girl on stairs\ntwo men with guitars\n", encoding="utf-8")
    imgs.write_text("1001.jpg\n1002.jpg\n", encoding="utf-8")
    refs.write_text("A young girl in a pink dress climbs a set of stairs .\nTwo men play guitars on a stage .\n", encoding="utf-8")
    # References must equal the stored ones; here only the first reference is given, so it differs → refused.
    refused(store, lambda: import_lines(store, "f", "sys", caps, [refs], images=imgs), "references differ")


def test_entity_expansion_is_refused(store, tmp_path):
    root = _copy(tmp_path)
    (root / "Annotations" / "1001.xml").write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>\n'
        "<annotation><filename>&lol2;</filename></annotation>\n", encoding="utf-8")
    refused(store, lambda: import_flickr30k(store, "f", root), "1001.xml", "refused XML", "entity")


def test_external_entity_is_refused(store, tmp_path):
    root = _copy(tmp_path)
    (root / "Annotations" / "1002.xml").write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY ext SYSTEM "file:///etc/passwd">]>\n<annotation>&ext;</annotation>\n',
        encoding="utf-8")
    refused(store, lambda: import_flickr30k(store, "f", root), "1002.xml", "refused XML")


@pytest.mark.parametrize("file, content, fragments", [
    ("Annotations/1001.xml", "<annotation><object><name>10</name>\n<bndbox><xmin>1</xmin></bndbox></annotation>",
     ["1001.xml", "invalid XML"]),
    ("Annotations/1001.xml", "<annotation><object><name>x</name></object></annotation>", ["1001.xml", "not a chain id"]),
    ("Annotations/1001.xml", "<annotation><object><name>1</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>9</xmax>"
                             "</bndbox></object></annotation>", ["<object> #1", "missing <ymax>"]),
    ("Annotations/1001.xml", "<annotation><object><name>1</name><bndbox><xmin>9</xmin><ymin>1</ymin><xmax>2</xmax>"
                             "<ymax>5</ymax></bndbox></object></annotation>", ["reversed"]),
    ("Sentences/1002.txt", "[/EN#20/people Two men] play .\n[/EN#21/instruments guitars .\n", ["1002.txt, line 2", "malformed"]),
])
def test_bad_files_are_named(store, tmp_path, file, content, fragments):
    root = _copy(tmp_path)
    (root / file).write_text(content, encoding="utf-8")
    refused(store, lambda: import_flickr30k(store, "f", root), *fragments)


def test_missing_annotation_and_bad_ids(store, tmp_path):
    root = _copy(tmp_path)
    (root / "Annotations" / "1002.xml").unlink()
    refused(store, lambda: import_flickr30k(store, "f", root), "1002.xml", "no annotation file")
    ids = tmp_path / "ids.txt"
    ids.write_text("1001\n../../etc/passwd\n", encoding="utf-8")
    refused(store, lambda: import_flickr30k(store, "f", FIX, ids=ids), "ids.txt, line 2", "not an image id")
    ids.write_text("1001\n1001.jpg\n", encoding="utf-8")
    refused(store, lambda: import_flickr30k(store, "f", FIX, ids=ids), "ids.txt, line 2", "listed twice")
    ids.write_text("1001\n4242\n", encoding="utf-8")
    refused(store, lambda: import_flickr30k(store, "f", FIX, ids=ids), "4242.txt", "no sentence file")
