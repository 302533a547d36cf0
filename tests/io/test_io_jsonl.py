"""Native JSONL: export → import gives an identical project; bad lines are named and write nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from annotator.images import effective_image_root
from annotator.io import export_jsonl, import_coco, import_flickr30k, import_jsonl
from annotator.io.jsonl import FORMAT_NAME, iter_records
from annotator.sample import load_sample
from annotator.store import open_store
from annotator.store.exchange import caption_lines
from annotator.store.projects import load_project, project_id, set_practice
from tests.store_helpers import refused

FIX = Path(__file__).parent.parent / "fixtures"


def snapshot(store, name):
    """A project as comparable plain data: items without database ids, and each caption's line."""
    proj = load_project(store, name)
    with store.read() as conn:
        lines = caption_lines(conn, project_id(conn, name))
    items = []
    for i in proj.items:
        caps = [(c.system, lines[c.caption_id][1], c.text, c.mentions) for c in i.captions]
        items.append((i.key, i.image, i.width, i.height, i.is_practice, sorted(i.boxes, key=lambda b: b.box_id),
                      i.references, caps))
    root = effective_image_root(proj.image_root) if proj.image_root else None
    return root, proj.systems, items


def round_trip(store, name, tmp_path):
    out = tmp_path / f"{name}.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        n = export_jsonl(store, name, fh)
    fresh = open_store(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        result = import_jsonl(fresh, name, out)
        assert result.items_created == n
        assert snapshot(fresh, name) == snapshot(store, name)
        # And once more into the original store under another name.
        import_jsonl(store, name + "-copy", out)
        assert snapshot(store, name + "-copy") == snapshot(store, name)
    finally:
        fresh.dispose()
    return out


def test_round_trip_of_the_sample(store, tmp_path):
    assert load_sample(store, with_judgements=False)
    set_practice(store, "sample", ["chelsea.jpg"])
    out = round_trip(store, "sample", tmp_path)
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["format"] == FORMAT_NAME and header["version"] == 1
    records = list(iter_records(out))
    assert [r["key"] for r in records][:2] == ["astronaut.jpg", "chelsea.jpg"]
    assert records[1]["is_practice"] is True


def test_round_trip_keeps_caption_order_that_differs_from_item_order(store, tmp_path):
    # COCO results are stored in results-file order (73, 42, 74) while items are in image order (42, 73, 74).
    import_coco(store, "c", FIX / "coco" / "captions.json", FIX / "coco" / "instances.json",
                results=FIX / "coco" / "results.json", system="nic")
    _, _, items = snapshot(store, "c")
    assert [caps[0][1] for *_, caps in items] == [1, 0, 2]
    round_trip(store, "c", tmp_path)


def test_round_trip_of_flickr30k_mentions(store, tmp_path):
    import_flickr30k(store, "f", FIX / "flickr30k")
    round_trip(store, "f", tmp_path)


def test_relative_image_root_is_taken_from_the_file_location(store, tmp_path):
    (tmp_path / "sub").mkdir()
    p = tmp_path / "sub" / "p.jsonl"
    p.write_text(json.dumps({"format": FORMAT_NAME, "version": 1, "image_root": "imgs"}) + "\n"
                 + json.dumps({"key": "a", "image": "a.jpg"}) + "\n", encoding="utf-8")
    import_jsonl(store, "p", p)
    assert load_project(store, "p").image_root == str((tmp_path / "sub" / "imgs").resolve())
    import_jsonl(store, "q", p, image_root=tmp_path)
    assert load_project(store, "q").image_root == str(tmp_path.resolve())


def test_minimal_lines_and_plain_string_references(store, tmp_path):
    p = tmp_path / "m.jsonl"
    p.write_text('{"key": "k1", "references": ["a dog", "a puppy"], "captions": [{"system": "s", "text": "a cat"}]}\n\n'
                 '{"key": "k2", "captions": [{"system": "s", "text": "two dogs"}]}\n', encoding="utf-8")
    r = import_jsonl(store, "m", p)
    assert (r.items_created, r.references, r.captions) == (2, 2, 2)
    proj = load_project(store, "m")
    assert [x.text for x in proj.items[0].references] == ["a dog", "a puppy"]
    assert proj.image_root is None


GOOD = {"key": "k", "image": "k.jpg", "width": 10, "height": 10,
        "boxes": [{"id": "1", "label": "dog", "x": 0, "y": 0, "w": 5, "h": 5}],
        "references": [{"text": "a dog runs", "mentions": [{"start": 0, "end": 2, "boxes": ["1"]}]}],
        "captions": [{"system": "s", "text": "a dog", "mentions": []}]}


def _with(**changes):
    rec = json.loads(json.dumps(GOOD))
    for path, value in changes.items():
        target = rec
        *parents, last = path.split("__")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if value is KeyError:
            del target[int(last) if last.isdigit() else last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return rec


@pytest.mark.parametrize("record, fragments", [
    (_with(key=KeyError), ["line 2", "missing field 'key'"]),
    (_with(key=""), ["line 2", "key cannot be empty"]),
    (_with(colour="red"), ["line 2", "unknown field 'colour'"]),
    (_with(image="../../x.jpg"), ["line 2", "leaves the image root"]),
    (_with(image="/etc/passwd"), ["line 2", "absolute"]),
    (_with(width=-3), ["line 2", "width must be between 1 and"]),
    (_with(is_practice="yes"), ["line 2", "is_practice"]),
    (_with(boxes__0__x="3"), ["line 2, boxes[0]", "x must be a number"]),
    (_with(boxes__0__w=-1), ["line 2, boxes[0]", "must not be negative"]),
    (_with(boxes__0__label=KeyError), ["line 2, boxes[0]", "missing field 'label'"]),
    (_with(boxes=[GOOD["boxes"][0], GOOD["boxes"][0]]), ["line 2", "box id '1' is used twice"]),
    (_with(references__0__mentions__0__end=9), ["line 2, references[0].mentions[0]", "outside the text's 3 tokens"]),
    (_with(references__0__mentions__0__boxes=["7"]), ["references[0].mentions[0]", "unknown box '7'"]),
    (_with(references__0__mentions__0__start=True), ["mentions[0]", "integers"]),
    (_with(captions=[{"system": "s", "text": "a"}, {"system": "s", "text": "b"}]), ["captions[1]", "two captions"]),
    (_with(captions=[{"system": "s"}]), ["captions[0]", "must be an object {system, text"]),
    (_with(captions=[{"system": "s", "text": "a", "line": -1}]), ["captions[0]", "non-negative integer"]),
    (_with(captions=[{"system": "s", "text": "a", "n": -1}]), ["line 2, captions[0]", "n (the sample index) must be a non-negative integer, got -1"]),
    (_with(captions=[{"system": "s", "text": "a", "n": "1"}]), ["line 2, captions[0]", "n (the sample index)"]),
    (_with(captions=[{"system": "s", "text": "a", "n": 2}, {"system": "s", "text": "b", "n": 2}]),
     ["line 2, captions[1]", "system 's' has two captions with n = 2 for this item"]),
    (_with(captions=[{"system": "s", "text": "a"}, {"system": "s", "text": "b", "n": 0}]),
     ["line 2, captions[1]", "two captions with n = 0"]),
])
def test_bad_records(store, tmp_path, record, fragments):
    load_sample(store, with_judgements=False)
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps(_with(key="first")) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    e = refused(store, lambda: import_jsonl(store, "x", p), "bad.jsonl", *fragments)
    assert e.source.endswith("bad.jsonl")


def test_captions_with_a_sample_index_are_stored_as_samples_and_exported_with_it(store, tmp_path):
    p = tmp_path / "pool.jsonl"
    items = [{"key": k, "references": [f"a photo of {k}"],
              "captions": [{"system": "beam", "text": f"{k} sample {n}", "n": n} for n in (2, 0, 1)]
              + [{"system": "greedy", "text": f"{k} greedy"}]} for k in ("a", "b")]
    p.write_text("\n".join(json.dumps(i) for i in items) + "\n", encoding="utf-8")
    assert import_jsonl(store, "pool", p).captions == 8
    first = load_project(store, "pool", all_samples=True).items[0]
    assert [(c.system, c.n, c.text) for c in first.captions] == [
        ("beam", 0, "a sample 0"), ("beam", 1, "a sample 1"), ("beam", 2, "a sample 2"), ("greedy", 0, "a greedy")]
    # Annotation reads n = 0 only, and its lines are 0, 1 as if the file held no other sample.
    assert [(c.system, c.line) for c in load_project(store, "pool").items[1].captions] == [("beam", 1), ("greedy", 1)]
    # The export carries n and reads back the same; a second import of it is refused (every sample is taken).
    out = tmp_path / "out.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        export_jsonl(store, "pool", fh)
    records = list(iter_records(out))
    assert [(c["system"], c["n"], c["line"]) for c in records[0]["captions"]] == [
        ("beam", 0, 0), ("beam", 1, 0), ("beam", 2, 0), ("greedy", 0, 0)]
    import_jsonl(store, "pool-copy", out)
    again = load_project(store, "pool-copy", all_samples=True)
    assert [[(c.system, c.n, c.text, c.line) for c in i.captions] for i in again.items] == \
        [[(c.system, c.n, c.text, c.line) for c in i.captions] for i in load_project(store, "pool", all_samples=True).items]
    refused(store, lambda: import_jsonl(store, "pool", p), "pool.jsonl", "item 'a'",
            "system 'beam' already has a caption for this item")


def test_file_level_errors(store, tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_text(json.dumps(GOOD) + "\n{not json\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "f.jsonl, line 2", "invalid JSON")
    p.write_text(json.dumps(GOOD) + "\n" + json.dumps({"format": FORMAT_NAME}) + "\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "line 2", "header is only allowed on the first line")
    p.write_text(json.dumps({"format": "other"}) + "\n" + json.dumps(GOOD) + "\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "unknown format")
    p.write_text(json.dumps({"format": FORMAT_NAME, "version": 7}) + "\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "unsupported version")
    p.write_text("\n\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "no items")
    a = _with(key="a", captions=[{"system": "s", "text": "x", "line": 0}])
    b = _with(key="b", captions=[{"system": "s", "text": "y"}])
    p.write_text(json.dumps(a) + "\n" + json.dumps(b) + "\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "line 2", "'line' is given for some captions")
    b = _with(key="b", captions=[{"system": "s", "text": "y", "line": 0}])
    p.write_text(json.dumps(a) + "\n" + json.dumps(b) + "\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "line 2", "line 0 twice")
    p.write_text(json.dumps(_with(key="a")) + "\n" + json.dumps(_with(key="a")) + "\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "appears twice")


def test_merge_conflict_with_stored_boxes_rolls_back(store, tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    import_jsonl(store, "x", p)
    moved = _with(boxes__0__x=4, captions=[{"system": "t", "text": "new"}])
    p.write_text(json.dumps(moved) + "\n", encoding="utf-8")
    refused(store, lambda: import_jsonl(store, "x", p), "gold boxes differ")


def test_export_to_stream_writes_header_and_items(store):
    load_sample(store, with_judgements=False)
    buf = io.StringIO()
    assert export_jsonl(store, "sample", buf) == 8
    lines = buf.getvalue().splitlines()
    assert len(lines) == 9
    rec = json.loads(lines[1])
    assert set(rec) == {"key", "image", "width", "height", "is_practice", "boxes", "references", "captions"}
    assert [(c["system"], c["line"]) for c in rec["captions"]] == [("sat-attn", 0), ("nic-beam", 0)]


def test_snapshot_detects_differences(store, tmp_path):
    # Guard against a round-trip test that cannot fail: a changed caption must show up.
    load_sample(store, with_judgements=False)
    root, systems, items = snapshot(store, "sample")
    key, image, w, h, practice, boxes, refs, caps = items[0]
    changed = (key, image, w, h, practice, boxes, refs, [replace_text(caps[0])] + caps[1:])
    assert (root, systems, [changed] + items[1:]) != snapshot(store, "sample")


def replace_text(cap):
    system, line, text, mentions = cap
    return system, line, text + "!", mentions


def test_sample_mentions_point_at_the_right_words(store):
    load_sample(store, with_judgements=False)
    item = load_project(store, "sample").items[0]
    ref = item.references[0]
    assert ref.box_ids == frozenset({"1", "2", "4", "5"})
    words = ref.text.split()
    spans = {" ".join(words[m.start:m.end]): m.box_ids for m in ref.mentions}
    assert spans == {"A smiling woman": ("1",), "an orange space suit": ("2",), "a flag": ("4",),
                     "a model of the space shuttle": ("5",)}


def test_documented_example_item_is_valid():
    """The example item in docs/formats.md is accepted as written (the doc cannot drift from the code)."""
    from annotator.io.jsonl import parse_item
    doc = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in doc.split("```json\n")[1:]]
    items = [json.loads(b) for b in blocks if '"key"' in b]
    assert items
    for obj in items:
        item, lines = parse_item(obj, "formats.md", 1)
        assert item.key == "astronaut.jpg" and lines == {("sat-attn", 0): 0}
        ref = item.references[0]
        assert ref.text.split()[ref.mentions[0].start:ref.mentions[0].end] == ["A", "smiling", "woman"]


def test_relative_header_root_can_be_ignored(store, tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text(json.dumps({"format": FORMAT_NAME, "version": 1, "image_root": "imgs"}) + "\n"
                 + json.dumps({"key": "a", "image": "a.jpg"}) + "\n", encoding="utf-8")
    import_jsonl(store, "p", p, relative_header_root=False)
    assert load_project(store, "p").image_root is None
