"""JSON documents are read a piece at a time (annotator.io.json_stream) and imported a batch at a time: COCO files
(through a spool that groups captions, boxes and results by image whatever the order of the file), Label Studio
exports (annotations grouped by caption and person across the whole file), judgement files and Flickr30K
folders. The reader keeps the strict reader's rules and names file and line; bad input anywhere leaves the store
unchanged. The memory figures are measured on 100,000-item files in processes of their own (marked slow);
bench/import_bench.py prints them at 100,000 and 1,000,000 items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.errors import InputError
from bench.import_bench import write_coco_file, write_label_studio_files
from annotator.exchange import label_studio as ls_exchange
from annotator.exchange.label_studio import import_label_studio
from annotator.io import coco, flickr30k, import_coco, import_flickr30k, json_stream
from annotator.io.json_stream import JsonStream
from annotator.io.judgements import read_coarse
from annotator.judgement_export import export_judgements
from annotator.store.projects import captions_of_system, load_project, project_id
from tests.io.test_streaming_import import _peak_growth
from tests.io.test_label_studio_people import ANN, BEN, _annotation, _later, _task, _team, _write
from tests.store_helpers import refused

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"
CAPS, INST, RES = (FIX / "coco" / n for n in ("captions.json", "instances.json", "results.json"))


def _read_all(path: Path, chunk: int):
    """Every member (and the elements of its array) of a document, as the stream gives them."""
    doc = JsonStream(path, chunk=chunk)
    assert doc.opens() == "{"
    out = []
    for key, line in doc.members():
        if doc.peek() == "[":
            out.append((key, line, [v for v, _ in doc.elements()]))
        else:
            out.append((key, line, doc.value()))
    doc.close()
    return out


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64, json_stream.CHUNK])
def test_every_piece_size_reads_the_same_document(tmp_path, chunk):
    """Values cut anywhere by the end of a piece (a number, an escape, a character of several bytes, a literal)
    read as json reads the whole text."""
    doc = {"numbers": [0, -12, 3.5e-7, 123456789012345678901234567890, 1e5],
           "texts": ["plain", "é∂🐈 in UTF-8", "escapes \\u00e9 \" \\\\ \n \t", ""],
           "nested": [{"a": [True, False, None], "b": {"c": []}}, [], {}],
           "object": {"x": 1, "y": [1, 2]}}
    path = tmp_path / "d.json"
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    got = _read_all(path, chunk)
    assert {k: v for k, _, v in got} == doc
    text = path.read_text(encoding="utf-8").splitlines()
    assert [line for _, line, _ in got] == [n for n, t in enumerate(text, 1) if t.startswith(' "')]


@pytest.mark.parametrize("text, fragments", [
    ('{"a": [1,\n {"x": 1, "x": 2}]}', ["line 2", "key 'x' appears twice in one object"]),
    ('{"a": [1,\n\n {"x": NaN}]}', ["line 3", "NaN is not a number JSON allows"]),
    ('{"a": [1],\n "a": [2]}', ["line 2", "key 'a' appears twice in one object"]),
    ('{"a": [1,\n 2\n 3]}', ["line 3", "invalid JSON: Expecting ',' delimiter (column 2)"]),
    ('{"a": [1,\n {"x": 1,}]}', ["line 2", "Expecting property name enclosed in double quotes"]),
    ('{"a": [1, 2]}\n[]', ["line 2", "Extra data"]),
    ('{"a": [1, 2', ["line 1", "invalid JSON"]),
    ('{"a": [\n"x\n"]}', ["line 2", "Invalid control character"]),
    ('{"a": [' + "[" * 5000 + "]" * 5000 + "]}", ["line 1", "nested too deeply"]),
    ("", ["the file is empty"]),
])
def test_bad_json_is_named_by_file_and_line_whatever_the_pieces(tmp_path, text, fragments):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    for chunk in (3, json_stream.CHUNK):
        with pytest.raises(InputError) as err:
            _read_all(path, chunk)
        assert str(err.value).startswith(f"{path}, ") or str(err.value).startswith(str(path))
        for f in fragments:
            assert f in str(err.value), str(err.value)


def test_a_byte_that_is_not_utf8_is_named_by_its_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"a": [1,\n2,\n"\xff"]}')
    for chunk in (2, 1000):
        with pytest.raises(InputError, match=r"line 3: the file is not UTF-8 text \(byte 14"):
            _read_all(path, chunk)


# ------------------------------------------------------------------ COCO

@pytest.fixture
def small_batches(monkeypatch):
    """Two images (or results' images, or Label Studio annotations) a batch, one character a piece."""
    monkeypatch.setattr(coco.CocoReader, "BATCH", 2)
    monkeypatch.setattr(ls_exchange, "BATCH", 2)
    monkeypatch.setattr(flickr30k, "BATCH", 1)
    monkeypatch.setattr(json_stream, "CHUNK", 7)


def _coco_files(tmp_path, *, reverse: bool):
    """The fixture's three files, with every top-level object's members in reverse order when asked (the images
    after the annotations, the categories after the boxes) and one line per record."""
    paths = []
    for path in (CAPS, INST, RES):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and reverse:
            data = dict(reversed(list(data.items())))
        out = tmp_path / path.name
        if isinstance(data, dict):
            out.write_text("{" + ",\n".join(f"{json.dumps(k)}: [\n" + ",\n".join(json.dumps(r) for r in v) + "]"
                                            if isinstance(v, list) else f"{json.dumps(k)}: {json.dumps(v)}"
                                            for k, v in data.items()) + "}", encoding="utf-8")
        else:
            out.write_text("[\n" + ",\n".join(json.dumps(r) for r in data) + "]", encoding="utf-8")
        paths.append(out)
    return paths


def _stored(store, project):
    proj = load_project(store, project)
    with store.read() as conn:
        lines = [(r.line_no, r.text) for r in captions_of_system(conn, project_id(conn, project), "nic")]
    return [(i.key, i.width, [r.text for r in i.references], sorted((b.box_id, b.label) for b in i.boxes))
            for i in proj.items], lines


def test_coco_in_any_member_order_and_in_small_batches_imports_the_same_project(store, tmp_path, small_batches):
    import_coco(store, "whole", CAPS, INST, results=RES, system="nic")
    (tmp_path / "r").mkdir()
    caps, inst, res = _coco_files(tmp_path / "r", reverse=True)
    result = import_coco(store, "streamed", caps, inst, results=res, system="nic")
    assert (result.items_read, result.items_created, result.references, result.boxes, result.captions,
            result.systems) == (3, 3, 5, 3, 3, ["nic"])
    assert _stored(store, "streamed") == _stored(store, "whole")


def test_coco_errors_found_late_in_the_file_leave_the_store_unchanged(store, tmp_path, small_batches):
    import_coco(store, "existing", CAPS, INST)
    caps, inst, res = _coco_files(tmp_path, reverse=False)
    text = caps.read_text(encoding="utf-8")
    caps.write_text(text[:-2] + ',\n{"id": 9, "image_id": 42, "caption": "late", "caption": "twice"}]}',
                    encoding="utf-8")
    last = f"{caps}, line {len(text.splitlines()) + 1}"
    refused(store, lambda: import_coco(store, "c", caps, inst, results=res, system="nic"), last,
            "key 'caption' appears twice")
    # an image whose file name an image of an earlier batch has: found while the batches are written
    data = json.loads(CAPS.read_text(encoding="utf-8"))
    data["images"].append({"id": 75, "file_name": data["images"][0]["file_name"]})
    caps.write_text(json.dumps(data), encoding="utf-8")
    refused(store, lambda: import_coco(store, "c", caps, inst, results=res, system="nic"),
            "images 42 and 75 share the file name 'COCO_val2014_000000000042.jpg'")
    # a results record naming an image no list has, after the images were read
    records = json.loads(RES.read_text(encoding="utf-8")) + [{"image_id": 7, "caption": "x"}]
    res.write_text(json.dumps(records), encoding="utf-8")
    refused(store, lambda: import_coco(store, "c", CAPS, INST, results=res, system="nic"),
            f"{res}, record 3", "unknown image_id 7")


def test_the_spool_is_deleted_after_an_import_good_or_bad(store, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    import_coco(store, "c", CAPS, INST, results=RES, system="nic")
    bad = tmp_path / "bad.json"
    bad.write_text('{"images": [], "annotations": [{"image_id": 1, "caption": "x"}]}', encoding="utf-8")
    refused(store, lambda: import_coco(store, "d", bad, INST), "unknown image_id 1")
    assert not list(tmp_path.glob("annotator-spool-*"))


# ------------------------------------------------------------------ Label Studio

def test_label_studio_groups_a_persons_annotations_of_a_caption_across_batches(sqlite_store, tmp_path,
                                                                              small_batches):
    """Two annotations of one caption by one person, far apart in the file (other batches between them), the
    older one last: both are stored, in time order, as a file of one batch would store them."""
    _team(sqlite_store)
    newer = _annotation(2, ANN, "inaccurate", ["clothing_color"], at=_later(30))
    older = _annotation(1, ANN, "inaccurate", ["age"], at=_later(10))
    between = [_task(2, [_annotation(3, BEN, "inaccurate", ["age"], at=_later(5))]),
               _task(3, [_annotation(4, BEN, "inaccurate", ["gender"], at=_later(6))])]
    result = import_label_studio(sqlite_store, "sample", _write(tmp_path, [_task(1, [newer]), *between,
                                                                          _task(4, [older])]))
    assert (result.judgements, result.unchanged, result.refused) == (4, 0, [])
    rows = export_judgements(sqlite_store, "sample", history=True).rows
    mine = rows[(rows["annotator"] == "sample-ann") & (rows["item"] == "astronaut.jpg")
                & (rows["system"] == "sat-attn")].sort_values("revision")
    assert [r.error_types for r in mine.itertuples()][-2:] == [("age",), ("clothing_color",)]


def test_a_bad_task_late_in_a_label_studio_file_leaves_the_store_unchanged(sqlite_store, tmp_path, small_batches):
    _team(sqlite_store)
    tasks = [_task(k, [_annotation(k, ANN, at=_later(k))]) for k in range(1, 6)]
    path = _write(tmp_path, tasks)
    path.write_text(path.read_text(encoding="utf-8")[:-1] + ",\n7]", encoding="utf-8")
    refused(sqlite_store, lambda: import_label_studio(sqlite_store, "sample", path), f"{path}, task 6 of the list "
            "(line 2)", "a task must be an object")
    path.write_text(path.read_text(encoding="utf-8")[:-2] + '{"id": 6, "id": 7}]', encoding="utf-8")
    refused(sqlite_store, lambda: import_label_studio(sqlite_store, "sample", path), f"{path}, line 2",
            "key 'id' appears twice")


# ------------------------------------------------------------------ judgement files, Flickr30K

def test_a_judgement_file_names_the_line_and_key_of_a_bad_member(tmp_path):
    path = tmp_path / "coarse.json"
    path.write_text('{"0": "congruent",\n "1": "incongruent",\n "2": "maybe"}', encoding="utf-8")
    with pytest.raises(InputError, match=r"coarse.json, line 3 \(key '2'\): unknown coarse label 'maybe'"):
        read_coarse(path)
    path.write_text('{"0": "congruent",\n "00": "incongruent"}', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2 \(key '00'\): caption index 0 appears twice"):
        read_coarse(path)
    assert read_coarse(FIX / "judgements" / "coarse.json")


def test_flickr30k_in_batches_refuses_a_bad_image_in_the_last_one(store, tmp_path, small_batches):
    import shutil
    root = tmp_path / "f30k"
    shutil.copytree(FIX / "flickr30k", root)
    assert import_flickr30k(store, "f", root).items_created == 2  # one image a batch
    last = root / "Sentences" / "1002.txt"
    last.write_text("[/EN#1/people A man [ in a hat]\n", encoding="utf-8")
    refused(store, lambda: import_flickr30k(store, "g", root), str(last), "malformed phrase markup")


# ------------------------------------------------------------------ memory

#: Growth of the peak resident memory allowed while 100,000 COCO images with five captions each (a 53 MB file), or
#: a Label Studio export of 100,000 annotated captions (36 MB), are imported: the streaming imports grew by about
#: 40 MiB each (bench/import_bench.py, 2026-11-29), the imports before them by 364 and 356 MiB, and parsing either
#: file whole takes more than the bound.
BOUND_MIB = 100


@pytest.mark.slow
def test_a_100k_image_coco_import_stays_within_a_bound_the_whole_file_exceeds(tmp_path):
    path = tmp_path / "captions.json"
    write_coco_file(path, 100_000)
    whole = _peak_growth("json", path, tmp_path / "r.db")
    streamed = _peak_growth("coco", path, tmp_path / "c.db")
    assert whole > BOUND_MIB, whole
    assert streamed <= BOUND_MIB, (streamed, whole)


@pytest.mark.slow
def test_a_100k_annotation_label_studio_import_stays_within_a_bound_the_whole_file_exceeds(tmp_path):
    path, db = tmp_path / "ls.json", tmp_path / "ls.db"
    write_label_studio_files(path, db, 100_000)
    whole = _peak_growth("json", path, tmp_path / "r.db")
    streamed = _peak_growth("label-studio", path, db)
    assert whole > BOUND_MIB, whole
    assert streamed <= BOUND_MIB, (streamed, whole)
