"""The bundled sample: loads once, covers all 20 error types, and its files agree with each other."""

from __future__ import annotations

import json
import re

import pytest
from PIL import Image

from annotator.config import SAMPLE_DIR
from annotator.io.jsonl import read_jsonl_project
from annotator.io.judgements import read_legacy_judgements
from annotator.model import Label
from annotator.sample import DEMO_ANNOTATORS, SAMPLE_SYSTEMS, answer_key, ensure_sample, load_sample, sample_enabled
from annotator.store.judgements import current_frame
from annotator.store.projects import load_project, project_names, project_summaries, table_counts
from annotator.taxonomy import ERROR_TYPE_IDS, taxonomy


@pytest.fixture(scope="module")
def sample():
    return read_jsonl_project("sample", SAMPLE_DIR / "sample.jsonl").project


def test_answer_key_covers_all_20_types():
    key = answer_key()
    assert set(key) == set(SAMPLE_SYSTEMS)
    covered = {t for lines in key.values() for types in lines.values() for t in types}
    assert covered == set(ERROR_TYPE_IDS)
    assert len(covered) == 20
    accurate = [(s, i) for s, lines in key.items() for i, types in lines.items() if not types]
    assert len(accurate) >= 2  # some captions are correct, too
    for lines in key.values():
        for types in lines.values():
            assert taxonomy().validate_ids(types) == tuple(types)  # known ids, taxonomy order


def test_readme_table_matches_answer_key(sample):
    """The README's answer key (the guideline for humans) says the same as answer_key.json."""
    text = (SAMPLE_DIR / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\S+\.jpg) \| (\S+) \| (\d+) \| ([^|]+) \| ([^|]+) \|", text, flags=re.M)
    assert len(rows) == 16
    key = answer_key()
    captions = {(c.system, n): c.text for n, item in enumerate(sample.items) for c in item.captions}
    for item_key, system, line, caption, types in rows:
        line = int(line)
        assert sample.items[line].key == item_key
        assert captions[(system, line)] == caption.strip()
        assert tuple(re.findall(r"`([a-z_]+)`", types)) == key[system][line]


def test_items_boxes_and_references_are_consistent(sample):
    assert len(sample.items) >= 8
    assert sample.systems == list(SAMPLE_SYSTEMS)
    for item in sample.items:
        path = SAMPLE_DIR / "images" / item.image
        with Image.open(path) as im:
            assert im.format == "JPEG"
            assert im.size == (item.width, item.height)
        assert len(item.references) == 5
        assert 3 <= len(item.boxes) <= 6
        for b in item.boxes:
            assert b.x >= 0 and b.y >= 0 and b.x + b.w <= item.width and b.y + b.h <= item.height, (item.key, b)
            assert b.w > 0 and b.h > 0 and b.label and b.synset and re.match(r"^[a-z_]+\.n\.\d\d$", b.synset)
        mentioned = set().union(*(r.box_ids for r in item.references))
        assert mentioned == {b.box_id for b in item.boxes}, item.key  # every gold box is named by some reference
        assert len(item.captions) == 2


def test_licences_name_every_image(sample):
    text = (SAMPLE_DIR / "LICENSES.md").read_text(encoding="utf-8")
    for item in sample.items:
        assert f"`{item.image}`" in text
    assert sorted(p.name for p in (SAMPLE_DIR / "images").iterdir()) == sorted(i.image for i in sample.items)


def test_demo_judgement_files_agree_with_the_key_where_intended():
    key = answer_key()
    ann_diffs = 0
    for annotator in DEMO_ANNOTATORS:
        for system in SAMPLE_SYSTEMS:
            base = SAMPLE_DIR / "judgements" / annotator
            js = read_legacy_judgements(base / f"{system}.coarse.json", base / f"{system}.fine.json")
            assert [j.index for j in js] == list(range(8))
            for j in js:
                assert (j.label is Label.INACCURATE) == bool(j.error_types)
                if annotator == "sample-ann" and j.error_types != key[system][j.index]:
                    ann_diffs += 1
    assert ann_diffs == 2


def test_ensure_sample_loads_once(store):
    assert ensure_sample(store, environ={}) is True
    assert project_names(store) == ["sample"]
    (summary,) = project_summaries(store)
    assert (summary["items"], summary["captions"], summary["references"]) == (8, 16, 40)
    assert summary["systems"] == ["sat-attn", "nic-beam"]
    assert summary["judgements"] == 32
    proj = load_project(store, "sample")
    # Stored relative to the installation, so a moved checkout still finds the photographs.
    assert proj.image_root == "data/sample/images"
    from annotator.images import resolve_image_path
    assert resolve_image_path(proj.image_root, proj.items[0].image) == (SAMPLE_DIR / "images" / proj.items[0].image).resolve()
    assert sum(len(i.boxes) for i in proj.items) == 42
    df = current_frame(store, "sample")
    ann = df[(df.user == "sample-ann") & (df.system == "nic-beam")].sort_values("line_no")
    assert list(ann["error_types"]) == [" ".join(t) for t in answer_key()["nic-beam"].values()]
    before = table_counts(store)
    assert ensure_sample(store, environ={}) is False
    assert load_sample(store) is False  # a project exists: nothing happens
    assert table_counts(store) == before


def test_ensure_sample_respects_the_switch(store):
    assert sample_enabled({"ANNOTATOR_SAMPLE": "0"}) is False
    assert sample_enabled({"ANNOTATOR_SAMPLE": "1"}) is True
    assert sample_enabled({}) is True
    assert ensure_sample(store, environ={"ANNOTATOR_SAMPLE": "0"}) is False
    assert project_names(store) == []


def test_no_sample_when_another_project_exists(store, tmp_path):
    from annotator.io import import_lines
    caps = tmp_path / "c.txt"
    caps.write_text("a caption\n", encoding="utf-8")
    import_lines(store, "mine", "s", caps, [caps])
    assert ensure_sample(store, environ={}) is False
    assert project_names(store) == ["mine"]


def test_answer_key_file_is_plain_json():
    raw = json.loads((SAMPLE_DIR / "answer_key.json").read_text(encoding="utf-8"))
    assert all(isinstance(v, list) for lines in raw.values() for v in lines.values())


def test_a_first_start_gives_the_sample_to_the_local_admin(store):
    """Issue 24 item 22: the sample opens on work for the local user, not on "Nothing … assigned yet"."""
    from annotator.annotation import Queue
    assert ensure_sample(store, environ={}, assign_to="local") is True
    progress = Queue.open(store, "local", "admin", "sample").progress()
    assert (progress.done, progress.assigned) == (0, 16)
