"""COCO importer: references, boxes, results in file order, and clear errors that write nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.io import import_coco
from annotator.model import Box
from annotator.store.projects import captions_of_system, load_project, project_id
from tests.store_helpers import refused

FIX = Path(__file__).parent.parent / "fixtures" / "coco"
CAPS, INST, RES = FIX / "captions.json", FIX / "instances.json", FIX / "results.json"


def _write(tmp_path, name, data) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_import_references_boxes_and_results(store):
    r = import_coco(store, "c", CAPS, INST, results=RES, system="nic")
    assert (r.items_created, r.references, r.boxes, r.captions) == (3, 5, 3, 3)
    proj = load_project(store, "c")
    assert [i.key for i in proj.items] == ["COCO_val2014_000000000042.jpg", "COCO_val2014_000000000073.jpg",
                                           "COCO_val2014_000000000074.jpg"]
    first = proj.items[0]
    assert (first.width, first.height, first.image) == (640, 480, "COCO_val2014_000000000042.jpg")
    # Surrounding whitespace and the newline of the COCO caption are trimmed; order of the file kept.
    assert [x.text for x in first.references] == ["A man riding a wave on top of a surfboard.", "A surfer rides a large wave"]
    assert [x.text for x in proj.items[1].references] == ["A motorcycle parked next to a wall.", "A red motorbike by a brick wall."]
    assert sorted(first.boxes, key=lambda b: b.box_id) == [Box("1001", "person", 100.5, 50, 200, 300),
                                                           Box("1002", "surfboard", 90, 300, 250, 60)]
    assert proj.items[2].boxes == []
    # Caption line numbers follow the results file, not the image order.
    with store.read() as conn:
        rows = captions_of_system(conn, project_id(conn, "c"), "nic")
    assert [r.text for r in rows] == ["a motorcycle parked in front of a building", "a man riding a wave on a surfboard",
                                      "a cat laying on a couch"]


def test_results_of_a_second_system_attach(store):
    import_coco(store, "c", CAPS, INST, results=RES, system="nic")
    r = import_coco(store, "c", CAPS, INST, results=RES, system="other")
    assert (r.items_created, r.references, r.boxes, r.captions) == (0, 0, 0, 3)
    assert load_project(store, "c").systems == ["nic", "other"]


def test_results_require_system(store):
    refused(store, lambda: import_coco(store, "c", CAPS, INST, results=RES), "--results and --system")


@pytest.mark.parametrize("mutate, fragments", [
    (lambda c, i, r: r.append({"image_id": 999, "caption": "x"}), ["results.json, record 3", "unknown image_id 999"]),
    (lambda c, i, r: r.append({"image_id": 42}), ["record 3", "missing field 'caption'"]),
    (lambda c, i, r: c["annotations"].append({"id": 9, "image_id": 5, "caption": "x"}), ["captions.json, annotations[5]", "unknown image_id 5"]),
    (lambda c, i, r: c["annotations"].append({"id": 1, "image_id": 42, "caption": "x"}), ["annotations[5]", "duplicate annotation id 1"]),
    (lambda c, i, r: c["images"].append({"id": 42, "file_name": "x.jpg"}), ["images[3]", "two file names"]),
    (lambda c, i, r: c["images"].append({"file_name": "x.jpg"}), ["images[3]", "missing field 'id'"]),
    (lambda c, i, r: c["images"].append({"id": 5, "file_name": "../x.jpg"}), ["images[3]", "leaves the image root"]),
    (lambda c, i, r: i["annotations"].append({"id": 1001, "image_id": 42, "category_id": 1, "bbox": [0, 0, 1, 1]}),
     ["instances.json, annotations[3]", "duplicate annotation id 1001"]),
    (lambda c, i, r: i["annotations"].append({"id": 7, "image_id": 42, "category_id": 99, "bbox": [0, 0, 1, 1]}),
     ["annotations[3]", "unknown category_id 99"]),
    (lambda c, i, r: i["annotations"].append({"id": 7, "image_id": 42, "category_id": 1, "bbox": [0, 0, 1]}),
     ["annotations[3]", "bbox must be [x, y, width, height]"]),
    (lambda c, i, r: i["annotations"].append({"id": 7, "image_id": 42, "category_id": 1, "bbox": [0, 0, -1, 5]}),
     ["annotations[3]", "negative size"]),
    (lambda c, i, r: i["annotations"].append({"id": 7, "image_id": 42, "category_id": 1, "bbox": [0, "a", 1, 5]}),
     ["annotations[3]", "bbox value must be a number"]),
    (lambda c, i, r: i["annotations"].append({"id": 7, "image_id": 500, "category_id": 1, "bbox": [0, 0, 1, 5]}),
     ["annotations[3]", "unknown image_id 500"]),
])
def test_bad_records_are_named_and_nothing_is_written(store, tmp_path, mutate, fragments):
    import_coco(store, "existing", CAPS, INST)  # a store with data in it, to prove nothing changes
    c, i, r = (json.loads(p.read_text()) for p in (CAPS, INST, RES))
    mutate(c, i, r)
    paths = [_write(tmp_path, n, d) for n, d in (("captions.json", c), ("instances.json", i), ("results.json", r))]
    refused(store, lambda: import_coco(store, "c", paths[0], paths[1], results=paths[2], system="nic"), *fragments)


def test_repeated_image_ids_become_samples_in_file_order(store, tmp_path):
    """A results file that names an image again gives the system several descriptions of it: n = 0, 1, 2 in file
    order; annotation keeps reading the first."""
    records = json.loads(RES.read_text())
    records += [{"image_id": 42, "caption": "a surfer on a wave"}, {"image_id": 73, "caption": "a red motorbike"},
                {"image_id": 42, "caption": "a person surfing"}]
    r = import_coco(store, "c", CAPS, INST, results=_write(tmp_path, "results.json", records), system="nic")
    assert r.captions == 6
    first = load_project(store, "c", all_samples=True).items[0]
    assert [(c.n, c.text) for c in first.captions] == [(0, "a man riding a wave on a surfboard"),
                                                       (1, "a surfer on a wave"), (2, "a person surfing")]
    # Each sample counts its own lines, images in the order they first appear: n = 0 as a file without repeats
    # (73, 42, 74), n = 1 of 73 then 42, n = 2 of 42.
    assert [c.line for c in first.captions] == [1, 1, 0]
    with store.read() as conn:
        rows = captions_of_system(conn, project_id(conn, "c"), "nic")
    assert [r.line_no for r in rows] == [0, 1, 2] and len(load_project(store, "c").items[0].captions) == 1
    # The same file again: every (image, system, n) is taken, nothing is stored.
    refused(store, lambda: import_coco(store, "c", CAPS, INST, results=_write(tmp_path, "results.json", records),
                                       system="nic"), "results.json", "already has a caption for this item")


def test_invalid_json_names_line(store, tmp_path):
    p = tmp_path / "captions.json"
    p.write_text('{"images": [\n  {"id": 1,}\n]}', encoding="utf-8")
    refused(store, lambda: import_coco(store, "c", p, INST), "captions.json, line 2", "invalid JSON")


def test_wrong_top_level_shape(store, tmp_path):
    p = _write(tmp_path, "captions.json", [1, 2])
    refused(store, lambda: import_coco(store, "c", p, INST), "'images' list")
    p = _write(tmp_path, "results.json", {"image_id": 42})
    refused(store, lambda: import_coco(store, "c", CAPS, INST, results=p, system="s"), "expected a list")
