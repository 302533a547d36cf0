"""Property-based bad input for every importer: only InputError, and the store untouched.

For each importer (lines, COCO, Flickr30K Entities, native JSONL, legacy
judgements, corrections) Hypothesis feeds files derived from the valid
fixtures by truncation, byte damage, re-encoding, structural mutation (any
JSON value in any place, fields dropped, records duplicated), very long
lines, hostile image paths (``..``, absolute, drive letters, symlinks out of
the image root or in a loop) and XML attacks. The property:

* the importer either succeeds or raises :class:`InputError` — never another
  exception type (a KeyError, OverflowError or database error reaching the
  user is a defect);
* when it raises, ``table_counts`` of the store is exactly as before.

Runs on SQLite and on PostgreSQL (the latter enforces column widths and
integer ranges SQLite ignores).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator.errors import InputError, NotFound
from annotator.io import (
    import_coco, import_corrections, import_flickr30k, import_jsonl, import_judgements, import_lines,
)
from annotator.store.projects import table_counts
from tests.property_helpers import examples

FIX = Path(__file__).resolve().parents[1] / "fixtures"
_names = itertools.count()


def _examples(store, n_sqlite: int) -> settings:
    # PostgreSQL round trips are slower; it mainly has to show the same contract holds there.
    n = examples(n_sqlite if store.is_sqlite else max(15, n_sqlite // 3))
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


def only_input_error(store, call, *, also=()) -> str:
    """Run an import: success, or InputError with the store unchanged; anything else propagates.

    ``also`` admits further AnnotatorError types where the test names a thing
    that does not exist (NotFound for an unknown system given as an argument).
    """
    before = table_counts(store)
    try:
        call()
    except (InputError, *also) as exc:
        assert str(exc), "an InputError needs a message"
        after = table_counts(store)
        assert after == before, f"a refused import changed the store: {before} -> {after}"
        return "refused"
    return "imported"


def fresh_project() -> str:
    return f"p{next(_names)}"


# ---------------------------------------------------------------- strategies

EDGE_NUMBERS = [float("inf"), float("-inf"), float("nan"), 2 ** 31, 2 ** 63, 10 ** 30, -1, 0, 0.5, -0.0, 1e308]
EDGE_STRINGS = ["", " ", "x" * 600, "\x00", "a\x00b", "../../etc/passwd", "/abs.jpg", "é", "1e400", "nan", "-1", "\ud800"]
json_scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
                | st.text(max_size=20) | st.sampled_from(EDGE_NUMBERS) | st.sampled_from(EDGE_STRINGS))
json_values = st.recursive(json_scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                           max_leaves=12)

HOSTILE_PATHS = ["../outside.jpg", "a/../../outside.jpg", "/etc/passwd", "C:\\Windows\\win.ini", "C:x.jpg",
                 "\\\\server\\share\\x.jpg", "escape_link.jpg", "escape_dir/passwd", "loop.jpg", "sub/../../x.jpg",
                 "ok.jpg", "sub/ok.jpg", "", " ", "x\x00.jpg", "a" * 300 + ".jpg", "dir/" * 60 + "x.jpg"]
image_paths = st.sampled_from(HOSTILE_PATHS) | st.text(max_size=30)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated_json(draw, obj, max_mutations: int = 3):
    """``obj`` with 1..n places replaced, dropped or duplicated (a deep copy; ``obj`` is untouched)."""
    obj = json.loads(json.dumps(obj))
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = list(_paths(obj))
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["replace", "replace", "drop", "duplicate"]))
        if not path:
            obj = draw(json_values) if op == "replace" else obj
            continue
        parent = obj
        for p in path[:-1]:
            parent = parent[p]
        last = path[-1]
        if op == "replace":
            parent[last] = draw(json_values)
        elif op == "drop":
            del parent[last]
        elif isinstance(parent, list):
            parent.insert(last, json.loads(json.dumps(parent[last])))
        else:
            parent[last] = json.loads(json.dumps(parent[last]))
    return obj


@st.composite
def damaged_bytes(draw, raw: bytes):
    """Valid bytes truncated, flipped, spliced, re-encoded, stretched — or replaced by noise."""
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "utf16", "latin1", "long_line", "noise", "empty"]))
    if kind == "truncate":
        return raw[: draw(st.integers(0, max(0, len(raw) - 1)))]
    if kind == "flip":
        b = bytearray(raw)
        for _ in range(draw(st.integers(1, 5))):
            i = draw(st.integers(0, len(b) - 1))
            b[i] = draw(st.integers(0, 255))
        return bytes(b)
    if kind == "insert":
        i = draw(st.integers(0, len(raw)))
        return raw[:i] + draw(st.binary(min_size=1, max_size=40)) + raw[i:]
    if kind == "utf16":
        return raw.decode("utf-8", "replace").encode("utf-16")
    if kind == "latin1":
        return (raw.decode("utf-8", "replace") + "\ncafé naïve").encode("latin-1", "replace")
    if kind == "long_line":
        i = draw(st.integers(0, len(raw)))
        return raw[:i] + b"w" * draw(st.sampled_from([10_000, 300_000])) + raw[i:]
    if kind == "noise":
        return draw(st.binary(max_size=300))
    return b""


def _image_root(tmp: Path) -> Path:
    """An image root with traps: a link out of it, a link to / and a symlink loop."""
    root = tmp / "images"
    if not root.exists():
        (root / "sub").mkdir(parents=True)
        os.symlink("/etc/hostname", root / "escape_link.jpg")
        os.symlink("/etc", root / "escape_dir")
        os.symlink(root / "loop.jpg", root / "loop.jpg")
    return root


# ---------------------------------------------------------------- lines

def test_lines_importer(store, tmp_path):
    caps_raw = (FIX / "lines" / "captions_a.txt").read_bytes()
    refs_raw = (FIX / "lines" / "refs1.txt").read_bytes()
    root = _image_root(tmp_path)
    caps, refs, imgs = tmp_path / "caps.txt", tmp_path / "refs.txt", tmp_path / "images.txt"

    @_examples(store, 80)
    @given(caps_bytes=st.one_of(st.just(caps_raw), damaged_bytes(caps_raw)),
           refs_bytes=st.one_of(st.just(refs_raw), damaged_bytes(refs_raw)),
           names=st.none() | st.lists(image_paths, min_size=1, max_size=4), system=st.sampled_from(["sysA", "", "s" * 300]))
    def run(caps_bytes, refs_bytes, names, system):
        caps.write_bytes(caps_bytes)
        refs.write_bytes(refs_bytes)
        if names is not None:
            imgs.write_text("\n".join(names) + "\n", encoding="utf-8", errors="surrogatepass")
        only_input_error(store, lambda: import_lines(store, fresh_project(), system, caps, [refs],
                                                     images=imgs if names is not None else None, image_root=root))
    run()


# ---------------------------------------------------------------- COCO

def test_coco_importer(store, tmp_path):
    captions = json.loads((FIX / "coco" / "captions.json").read_text())
    instances = json.loads((FIX / "coco" / "instances.json").read_text())
    results = json.loads((FIX / "coco" / "results.json").read_text())
    root = _image_root(tmp_path)
    files = {n: tmp_path / f"{n}.json" for n in ("captions", "instances", "results")}

    def doc(obj):
        return st.one_of(mutated_json(obj).map(lambda o: json.dumps(o).encode()), damaged_bytes(json.dumps(obj).encode()))

    @_examples(store, 80)
    @given(which=st.sets(st.sampled_from(sorted(files)), min_size=1), cap=doc(captions), inst=doc(instances), res=doc(results))
    def run(which, cap, inst, res):
        for name, obj, bad in (("captions", captions, cap), ("instances", instances, inst), ("results", results, res)):
            files[name].write_bytes(bad if name in which else json.dumps(obj).encode())
        only_input_error(store, lambda: import_coco(store, fresh_project(), files["captions"], files["instances"],
                                                    results=files["results"], system="sysR", image_root=root))
    run()


# ---------------------------------------------------------------- Flickr30K Entities

XML_ATTACKS = [
    # Billion laughs.
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
    b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><annotation><filename>&lol3;</filename></annotation>',
    # External entity (file disclosure).
    b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><annotation><filename>&xxe;</filename></annotation>',
    # External DTD.
    b'<?xml version="1.0"?><!DOCTYPE a SYSTEM "http://127.0.0.1:9/evil.dtd"><annotation/>',
    # Parameter entity.
    b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><annotation/>',
    # Boxes outside the image, reversed, absurd or not numbers.
    b"<annotation><size><width>100</width><height>100</height></size><object><name>10</name><bndbox><xmin>500</xmin>"
    b"<ymin>500</ymin><xmax>900</xmax><ymax>900</ymax></bndbox></object></annotation>",
    b"<annotation><size><width>1e400</width><height>nan</height></size></annotation>",
    b"<annotation><size><width>100</width><height>100</height></size><object><name>10</name><bndbox><xmin>1</xmin>"
    b"<ymin>1</ymin><xmax>1e400</xmax><ymax>inf</ymax></bndbox></object></annotation>",
    b"<annotation><size><width>99999999999999999999999</width><height>1</height></size></annotation>",
    b"<annotation><object><name>99999999999999999999999</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>2</xmax>"
    b"<ymax>2</ymax></bndbox></object></annotation>",
]


def test_flickr30k_importer(store, tmp_path):
    src = FIX / "flickr30k"
    sent_raw = (src / "Sentences" / "1001.txt").read_bytes()
    xml_raw = (src / "Annotations" / "1001.xml").read_bytes()
    root = _image_root(tmp_path)
    data = tmp_path / "f30k"
    shutil.copytree(src, data)
    ids_file = data / "ids.txt"

    @_examples(store, 80)
    @given(sent=st.one_of(st.just(sent_raw), damaged_bytes(sent_raw),
                          st.lists(st.text(alphabet="[]/EN#0123456789 abcpeople", max_size=40), min_size=1, max_size=3)
                          .map(lambda ls: "\n".join(ls).encode())),
           xml=st.one_of(st.just(xml_raw), damaged_bytes(xml_raw), st.sampled_from(XML_ATTACKS)),
           ids=st.one_of(st.just(["1001", "1002"]), st.lists(st.sampled_from(["1001", "1002", "1001", "../1001", "/etc/passwd",
                                                                                  "1001.jpg", "x" * 300, "a\\b", ""]),
                                                              min_size=1, max_size=3)))
    def run(sent, xml, ids):
        (data / "Sentences" / "1001.txt").write_bytes(sent)
        (data / "Annotations" / "1001.xml").write_bytes(xml)
        ids_file.write_text("\n".join(ids) + "\n")
        only_input_error(store, lambda: import_flickr30k(store, fresh_project(), data, ids=ids_file, image_root=root))
    run()


# ---------------------------------------------------------------- native JSONL

JSONL_ITEM = {"key": "dog.jpg", "image": "dog.jpg", "width": 640, "height": 480, "is_practice": False,
              "boxes": [{"id": "1", "label": "dog", "synset": "dog.n.01", "x": 10, "y": 20, "w": 100, "h": 80},
                        {"id": "2", "label": "grass", "x": 0, "y": 300, "w": 640, "h": 180}],
              "references": ["A dog on grass", {"text": "A brown dog runs", "mentions": [{"start": 1, "end": 3, "boxes": ["1"],
                                                                                          "type": "animals"}]}],
              "captions": [{"system": "sysA", "line": 0, "text": "A dog runs on the grass",
                            "mentions": [{"start": 0, "end": 2, "boxes": ["1"]}]}]}


def test_jsonl_importer(store, tmp_path):
    path = tmp_path / "in.jsonl"
    header = {"format": "annotator-jsonl", "version": 1, "image_root": "images"}
    _image_root(tmp_path)
    second = {**JSONL_ITEM, "key": "cat.jpg", "image": "cat.jpg",
              "captions": [{**JSONL_ITEM["captions"][0], "line": 1}]}
    valid = "\n".join(json.dumps(o) for o in (header, JSONL_ITEM, second)).encode()

    @_examples(store, 100)
    @given(body=st.one_of(
        st.tuples(mutated_json(header, 1), mutated_json(JSONL_ITEM), mutated_json(second, 1))
          .map(lambda t: "\n".join(json.dumps(o) for o in t).encode()),
        st.lists(mutated_json(JSONL_ITEM), min_size=1, max_size=3).map(lambda t: "\n".join(json.dumps(o) for o in t).encode()),
        damaged_bytes(valid)))
    def run(body):
        path.write_bytes(body)
        only_input_error(store, lambda: import_jsonl(store, fresh_project(), path))
    run()


# ---------------------------------------------------------------- legacy judgements and corrections

@pytest.fixture
def base_project(store):
    """Project 'base' with system 'sysA' of three captions (lines fixture)."""
    import_lines(store, "base", "sysA", FIX / "lines" / "captions_a.txt", [FIX / "lines" / "refs1.txt"])
    return "base"


def test_judgements_importer(store, base_project, tmp_path):
    coarse = json.loads((FIX / "judgements" / "coarse.json").read_text())
    fine = json.loads((FIX / "judgements" / "fine.json").read_text())
    cpath, fpath = tmp_path / "coarse.json", tmp_path / "fine.json"
    labels = st.sampled_from(["congruent", "incongruent", "Incongruent", "maybe", "", "CONGRUENT "])
    keys = st.sampled_from(["0", "1", "2", "3", "-1", "²", "١", " 1", "1.0", "99999999999999999999", "x"])

    @_examples(store, 50)
    @given(c=st.one_of(mutated_json(coarse), st.dictionaries(keys, labels | json_values, max_size=4)),
           f=st.none() | mutated_json(fine) | st.dictionaries(keys, st.lists(st.sampled_from(
               ["number", "wrong-object", "Color", "no-such-type", "", "object"]), max_size=3) | json_values, max_size=4),
           user=st.sampled_from(["ann", "", "   ", "u" * 300]), system=st.sampled_from(["sysA", "nosuch"]))
    def run(c, f, user, system):
        cpath.write_text(json.dumps(c))
        if f is not None:
            fpath.write_text(json.dumps(f))
        only_input_error(store, lambda: import_judgements(store, base_project, system, user, cpath,
                                                          fpath if f is not None else None),
                         also=(NotFound,) if system == "nosuch" else ())
    run()


def test_corrections_importer(store, base_project, tmp_path):
    raw = (FIX / "lines" / "captions_a.txt").read_bytes()
    path = tmp_path / "corrected.txt"

    @_examples(store, 60)
    @given(body=st.one_of(damaged_bytes(raw), st.just(raw.replace(b"dog", b"cat")), st.binary(max_size=200)),
           error_type=st.sampled_from(["object", "attribute", "Color", "no-such-type", "", "x" * 300]) | st.text(max_size=12),
           user=st.none() | st.sampled_from(["fixer", "", " ", "f" * 300]), system=st.sampled_from(["sysA", "nosuch"]))
    def run(body, error_type, user, system):
        path.write_bytes(body)
        only_input_error(store, lambda: import_corrections(store, base_project, system, error_type, path, annotator=user),
                         also=(NotFound,) if system == "nosuch" else ())
    run()


# ---------------------------------------------------------------- named cases (each one a known trap)

def _f30k(tmp: Path, *, xml: bytes | None = None, ids: str | None = None) -> tuple[Path, Path]:
    data = tmp / "f30k"
    shutil.copytree(FIX / "flickr30k", data)
    if xml is not None:
        (data / "Annotations" / "1001.xml").write_bytes(xml)
    ids_file = data / "ids.txt"
    if ids is not None:
        ids_file.write_text(ids)
    return data, ids_file


def _flickr(xml=None, ids=None):
    def call(store, tmp):
        data, ids_file = _f30k(tmp, xml=xml, ids=ids)
        return lambda: import_flickr30k(store, fresh_project(), data, ids=ids_file, image_root=_image_root(tmp))
    return call


def _coco(edit_captions=None, edit_instances=None):
    def call(store, tmp):
        cap = json.loads((FIX / "coco" / "captions.json").read_text())
        inst = json.loads((FIX / "coco" / "instances.json").read_text())
        if edit_captions:
            edit_captions(cap)
        if edit_instances:
            edit_instances(inst)
        (tmp / "c.json").write_text(json.dumps(cap))
        (tmp / "i.json").write_text(json.dumps(inst))
        return lambda: import_coco(store, fresh_project(), tmp / "c.json", tmp / "i.json")
    return call


def _jsonl(*items):
    def call(store, tmp):
        (tmp / "x.jsonl").write_text("\n".join(json.dumps(i) for i in items))
        return lambda: import_jsonl(store, fresh_project(), tmp / "x.jsonl", image_root=_image_root(tmp))
    return call


def _lines(captions: bytes, images: list[str] | None = None, system: str = "sysA"):
    def call(store, tmp):
        (tmp / "c.txt").write_bytes(captions)
        img = None
        if images is not None:
            img = tmp / "img.txt"
            img.write_text("\n".join(images) + "\n")
        return lambda: import_lines(store, fresh_project(), system, tmp / "c.txt", images=img, image_root=_image_root(tmp))
    return call


def _judgements(coarse: dict, user: str = "ann"):
    def call(store, tmp):
        import_lines(store, "base", "sysA", FIX / "lines" / "captions_a.txt")
        (tmp / "c.json").write_text(json.dumps(coarse))
        return lambda: import_judgements(store, "base", "sysA", user, tmp / "c.json")
    return call


def _set(path, value):
    def edit(doc):
        target = doc
        for p in path[:-1]:
            target = target[p]
        target[path[-1]] = value
    return edit


_BOX = {"id": "1", "label": "dog", "x": 10, "y": 10, "w": 20, "h": 20}
_ITEM = {"key": "dog.jpg", "image": "dog.jpg", "width": 100, "height": 100, "boxes": [_BOX],
         "captions": [{"system": "s", "text": "a dog"}]}
_SIZE = b"<size><width>100</width><height>100</height></size>"

# (id, builder, "refuse": must raise InputError | "either": InputError or success, never anything else)
NAMED = [
    ("xml-billion-laughs", _flickr(xml=XML_ATTACKS[0]), "refuse"),
    ("xml-external-entity", _flickr(xml=XML_ATTACKS[1]), "refuse"),
    # expat never fetches an external DTD, so a document that only names one is harmless either way.
    ("xml-external-dtd", _flickr(xml=XML_ATTACKS[2]), "either"),
    ("xml-parameter-entity", _flickr(xml=XML_ATTACKS[3]), "refuse"),
    ("flickr-size-infinite", _flickr(xml=b"<annotation><size><width>1e400</width><height>5</height></size></annotation>"), "refuse"),
    ("flickr-size-beyond-int64", _flickr(xml=b"<annotation><size><width>99999999999999999999999</width><height>5</height></size></annotation>"), "refuse"),
    ("flickr-box-outside-image", _flickr(xml=b"<annotation>" + _SIZE + b"<object><name>10</name><bndbox><xmin>500</xmin><ymin>500</ymin>"
                                         b"<xmax>900</xmax><ymax>900</ymax></bndbox></object></annotation>"), "refuse"),
    ("flickr-id-too-long-for-a-file-name", _flickr(ids="x" * 300 + "\n"), "refuse"),
    ("flickr-id-with-dotdot", _flickr(ids="../1001\n"), "refuse"),
    ("flickr-duplicate-id", _flickr(ids="1001\n1001\n"), "refuse"),
    ("coco-width-infinite", _coco(_set(["images", 0, "width"], float("inf"))), "refuse"),
    ("coco-width-beyond-int64", _coco(_set(["images", 0, "width"], 10 ** 30)), "refuse"),
    ("coco-box-nan", _coco(edit_instances=_set(["annotations", 0, "bbox"], [float("nan"), 1, 2, 3])), "refuse"),
    ("coco-box-outside-image", _coco(edit_instances=_set(["annotations", 0, "bbox"], [5000, 5000, 10, 10])), "refuse"),
    ("coco-duplicate-image-id", _coco(_set(["images", 1, "id"], 42)), "refuse"),
    ("coco-unknown-category", _coco(edit_instances=_set(["annotations", 0, "category_id"], 777)), "refuse"),
    ("coco-file-name-dotdot", _coco(_set(["images", 0, "file_name"], "../../etc/passwd")), "refuse"),
    ("jsonl-duplicate-key", _jsonl(_ITEM, _ITEM), "refuse"),
    ("jsonl-duplicate-box-id", _jsonl({**_ITEM, "boxes": [_BOX, _BOX]}), "refuse"),
    ("jsonl-width-beyond-int32", _jsonl({**_ITEM, "width": 2 ** 40}), "refuse"),
    ("jsonl-box-nan", _jsonl({**_ITEM, "boxes": [{**_BOX, "x": float("nan")}]}), "refuse"),
    ("jsonl-box-infinite", _jsonl({**_ITEM, "boxes": [{**_BOX, "w": float("inf")}]}), "refuse"),
    ("jsonl-box-outside-image", _jsonl({**_ITEM, "boxes": [{**_BOX, "x": 1000, "y": 1000}]}), "refuse"),
    ("jsonl-image-absolute", _jsonl({**_ITEM, "image": "/etc/passwd"}), "refuse"),
    # JSONL does not open images at import; images.resolve_image_path refuses the link when the item is shown.
    ("jsonl-image-symlink-out", _jsonl({**_ITEM, "image": "escape_dir/passwd"}), "either"),
    ("jsonl-key-with-nul", _jsonl({**_ITEM, "key": "a\x00b"}), "either"),
    ("jsonl-system-name-300-chars", _jsonl({**_ITEM, "captions": [{"system": "s" * 300, "text": "a dog"}]}), "either"),
    ("lines-utf16", _lines("a dog\nthe cat\n".encode("utf-16")), "refuse"),
    ("lines-latin1", _lines("un café\nune crêpe\n".encode("latin-1")), "refuse"),
    ("lines-one-megabyte-line", _lines(b"a " * 500_000 + b"\nshort\n"), "either"),
    ("lines-nul-in-caption", _lines(b"a\x00dog\nthe cat\n"), "either"),
    ("lines-image-dotdot", _lines(b"a\nb\n", ["ok.jpg", "../outside.jpg"]), "refuse"),
    ("lines-image-absolute", _lines(b"a\nb\n", ["ok.jpg", "/etc/passwd"]), "refuse"),
    ("lines-image-windows-drive", _lines(b"a\nb\n", ["ok.jpg", "C:\\boot.ini"]), "refuse"),
    ("lines-image-symlink-out", _lines(b"a\nb\n", ["ok.jpg", "escape_link.jpg"]), "refuse"),
    ("lines-image-symlink-loop", _lines(b"a\nb\n", ["ok.jpg", "loop.jpg"]), "refuse"),
    ("lines-duplicate-image", _lines(b"a\nb\n", ["ok.jpg", "ok.jpg"]), "refuse"),
    ("lines-system-name-300-chars", _lines(b"a\nb\n", system="s" * 300), "either"),
    ("judgements-unknown-label", _judgements({"0": "maybe"}), "refuse"),
    ("judgements-index-superscript-two", _judgements({"²": "congruent"}), "refuse"),
    ("judgements-index-out-of-range", _judgements({"99999999999999999999": "congruent"}), "refuse"),
    ("judgements-user-name-300-chars", _judgements({"0": "congruent"}, user="u" * 300), "either"),
]


# The cases where PostgreSQL and SQLite differ (column widths, integer ranges, NUL, NaN) run on both.
DB_SENSITIVE = ("size", "width", "nan", "infinite", "nul", "300-chars", "out-of-range")
NAMED_PG = [c for c in NAMED if any(w in c[0] for w in DB_SENSITIVE)]


@pytest.mark.parametrize("name,build,expect", NAMED, ids=[n for n, _, _ in NAMED])
def test_named_bad_input(sqlite_store, tmp_path, name, build, expect):
    _check_named(sqlite_store, tmp_path, build, expect)


@pytest.mark.parametrize("name,build,expect", NAMED_PG, ids=[n for n, _, _ in NAMED_PG])
def test_named_bad_input_postgres(pg_store, tmp_path, name, build, expect):
    _check_named(pg_store, tmp_path, build, expect)


def _check_named(store, tmp_path, build, expect):
    call = build(store, tmp_path)
    before = table_counts(store)
    if expect == "refuse":
        with pytest.raises(InputError) as err:
            call()
        assert table_counts(store) == before
        assert str(err.value)
    else:
        only_input_error(store, call)


def test_values_the_database_cannot_hold_become_input_errors(store):
    """The store's own net under the readers: no raw DataError/OverflowError, and the transaction rolled back."""
    from annotator.model import Caption, Item, Project
    from annotator.store.projects import write_project
    before = table_counts(store)
    bad_items = [Item(key="k", width=10 ** 30, captions=[Caption("s", "a dog")])]
    if not store.is_sqlite:  # SQLite stores these as they are; PostgreSQL enforces them
        bad_items += [Item(key="k" * 600), Item(key="k", captions=[Caption("s", "a\x00dog")]), Item(key="k", width=2 ** 40)]
    for item in bad_items:
        with pytest.raises(InputError, match="cannot store a value"):
            with store.transaction() as conn:
                write_project(conn, Project(name="fits-not", items=[item]))
        assert table_counts(store) == before
    with pytest.raises(OverflowError):  # other overflows are programming errors and stay visible
        with store.transaction():
            raise OverflowError("math range error")
