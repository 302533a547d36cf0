"""Imports stream their input: a batch of items is read, checked and written at a time inside the import's one
transaction, so memory holds a batch and not the file, and bad input in a later batch still leaves the store
unchanged. The memory figure itself is measured on a 100,000-item file in a process of its own (marked slow);
bench/import_bench.py prints it at 100,000 and 1,000,000 items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.io import export_jsonl, import_jsonl, import_lines, jsonl, lines
from annotator.store.exchange import caption_lines
from annotator.store.projects import load_project, project_id, table_counts
from tests.memory_helpers import PEAK_KIB, run_child
from tests.store_helpers import refused



@pytest.fixture
def small_batches(monkeypatch):
    """Batches of three items, so that a file of ten spans four of them."""
    monkeypatch.setattr(jsonl, "BATCH", 3)
    monkeypatch.setattr(lines, "BATCH", 3)


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _item(i: int, **extra) -> dict:
    return {"key": f"k{i}", "references": [f"reference {i}"], "captions": [{"system": "s", "text": f"caption {i}"}],
            **extra}


def test_a_bad_line_in_the_last_batch_leaves_the_store_unchanged(store, tmp_path, small_batches):
    import_jsonl(store, "other", _jsonl(tmp_path / "ok.jsonl", [_item(0)]))
    rows = [_item(i) for i in range(10)]
    rows[8]["captions"][0]["text"] = 7
    refused(store, lambda: import_jsonl(store, "p", _jsonl(tmp_path / "bad.jsonl", rows)), "bad.jsonl", "line 9")
    rows[8] = _item(3)  # a key of the first batch again
    refused(store, lambda: import_jsonl(store, "p", _jsonl(tmp_path / "twice.jsonl", rows)),
            "item 'k3' appears twice", "line 9")


def test_a_caption_line_given_twice_in_different_batches_is_refused(store, tmp_path, small_batches):
    rows = [{"key": f"k{i}", "captions": [{"system": "a", "text": f"a{i}", "line": i}]} for i in range(10)]
    rows[7]["captions"][0]["line"] = 1
    rows[9]["captions"][0]["line"] = 2
    refused(store, lambda: import_jsonl(store, "p", _jsonl(tmp_path / "p.jsonl", rows)), "p.jsonl", "line 8",
            "system 'a' has caption line 1 twice")


def test_lines_files_of_unequal_length_are_refused_after_batches_were_written(store, tmp_path, small_batches):
    caps, refs = tmp_path / "caps.txt", tmp_path / "refs.txt"
    caps.write_text("".join(f"caption {i}\n" for i in range(10)), encoding="utf-8")
    refs.write_text("".join(f"reference {i}\n" for i in range(9)), encoding="utf-8")
    refused(store, lambda: import_lines(store, "p", "s", caps, [refs]),
            f"line counts differ: {refs} has 9 lines but the captions file {caps} has 10")
    refs.write_text("".join(f"reference {i}\n" for i in range(11)), encoding="utf-8")
    refused(store, lambda: import_lines(store, "p", "s", caps, [refs]),
            f"line counts differ: {refs} has 11 lines but the captions file {caps} has 10")
    refs.write_text("".join(f"reference {i}\n" for i in range(10)), encoding="utf-8")
    result = import_lines(store, "p", "s", caps, [refs])
    assert (result.items_created, result.captions, result.references, result.items_read) == (10, 10, 10, 10)
    assert [i.key for i in load_project(store, "p").items] == [f"line-{k:06d}" for k in range(1, 11)]


def test_given_caption_lines_order_the_captions_across_batches(store, tmp_path, small_batches):
    """Lines given in the file order each system's captions, whichever batch an item came in; a second system
    without lines keeps the file's order; an export and import again gives the same project."""
    order = [7, 2, 9, 0, 5, 1, 8, 3, 6, 4]
    rows = [{"key": f"k{i}", "captions": [{"system": "a", "text": f"a{i}", "line": 10 * line},
                                          {"system": "b", "text": f"b{i}"}]} for i, line in enumerate(order)]
    result = import_jsonl(store, "p", _jsonl(tmp_path / "p.jsonl", rows))
    assert (result.items_created, result.captions, result.systems) == (10, 20, ["a", "b"])
    with store.read() as conn:
        stored = caption_lines(conn, project_id(conn, "p"))
    by_system = {}
    for system, line in stored.values():
        by_system.setdefault(system, []).append(line)
    assert sorted(by_system["a"]) == sorted(by_system["b"]) == list(range(10))
    captions = {c.text: c.line for item in load_project(store, "p").items for c in item.captions}
    assert [captions[f"a{i}"] for i in range(10)] == order
    assert [captions[f"b{i}"] for i in range(10)] == list(range(10))
    out = tmp_path / "out.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        export_jsonl(store, "p", fh)
    import_jsonl(store, "q", out)
    again = {c.text: c.line for item in load_project(store, "q").items for c in item.captions}
    assert again == captions


def test_a_second_system_attaches_batch_by_batch(store, tmp_path, small_batches):
    rows = [_item(i) for i in range(10)]
    import_jsonl(store, "p", _jsonl(tmp_path / "a.jsonl", rows))
    before = table_counts(store)
    for r in rows:
        r["captions"] = [{"system": "t", "text": "another " + r["captions"][0]["text"]}]
    result = import_jsonl(store, "p", _jsonl(tmp_path / "b.jsonl", rows))
    assert (result.items_created, result.references, result.captions) == (0, 0, 10)
    assert table_counts(store)["captions"] == before["captions"] + 10
    for r in rows:
        r["captions"][0]["system"] = "u"
    rows[9]["captions"][0]["system"] = "s"  # a caption the store holds, in the last batch
    refused(store, lambda: import_jsonl(store, "p", _jsonl(tmp_path / "c.jsonl", rows)),
            "system 's' already has a caption for this item", "item 'k9'")


_CHILD = """
import json, sys
from annotator.exchange.label_studio import import_label_studio
from annotator.io import import_coco, import_jsonl, import_lines
from annotator.io.jsonl import read_jsonl_project
from annotator.io.textfiles import read_json
from annotator.store import open_store
mode, path, db = sys.argv[1:4]
store = open_store("sqlite:///" + db)
""" + PEAK_KIB + """
before = peak_kib()
if mode == "jsonl":
    import_jsonl(store, "p", path)
elif mode == "lines":
    import_lines(store, "p", "s", path, [path])
elif mode == "coco":
    import_coco(store, "p", path)
elif mode == "label-studio":
    import_label_studio(store, "bench", path)  # the project bench/import_bench.py's files hold
elif mode == "json":
    read_json(path)  # a JSON document parsed whole: what the COCO and Label Studio imports read before
else:
    read_jsonl_project("p", path)  # the whole file in memory: the reference a streaming import must beat
print((peak_kib() - before) / 1024)
"""

#: Growth of the peak resident memory allowed while 100,000 items are imported (the reader that holds the
#: whole file grows by about 95 MiB on the same file; the streaming imports by about 20 MiB, most of it the
#: keys seen and SQLite's page cache).
BOUND_MIB = 45


def _peak_growth(mode: str, path: Path, db: Path) -> float:
    return float(run_child(_CHILD, mode, path, db, timeout=600).split()[-1])


@pytest.mark.slow
def test_a_100k_item_import_stays_within_a_bound_the_whole_file_exceeds(tmp_path):
    items, text = tmp_path / "items.jsonl", tmp_path / "captions.txt"
    with items.open("w", encoding="utf-8") as fh:
        for i in range(100_000):
            fh.write(json.dumps(_item(i, references=[f"a reference number {i} about a dog"])) + "\n")
    text.write_text("".join(f"caption {i} of a cat on a mat\n" for i in range(100_000)), encoding="utf-8")
    whole = _peak_growth("read", items, tmp_path / "r.db")
    streamed = {mode: _peak_growth(mode, path, tmp_path / f"{mode}.db")
                for mode, path in (("jsonl", items), ("lines", text))}
    assert whole > BOUND_MIB, whole
    assert all(growth <= BOUND_MIB for growth in streamed.values()), (streamed, whole)


#: How much more the peak may grow while 250,000 items are imported than while 50,000 are (4 captions each, with
#: the lines the file gives them): nothing is kept per item, so the two peaks differ by noise (0.2 MiB measured).
#: The importer before grew by 54 MiB more: each batch's statements, reference cycles that the paused collector
#: kept to the end of the import, and the caption lines given, kept in arrays to find a line given twice.
FLAT_MIB = 6


def _numbered_items(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"key": f"k{i}", "captions": [
                {"system": "s", "n": k, "line": i, "text": f"caption {i}"} for k in range(4)]}) + "\n")
    return path


@pytest.mark.slow
def test_the_peak_of_a_jsonl_import_is_flat_in_its_item_count(tmp_path):
    small = _peak_growth("jsonl", _numbered_items(tmp_path / "small.jsonl", 50_000), tmp_path / "small.db")
    large = _peak_growth("jsonl", _numbered_items(tmp_path / "large.jsonl", 250_000), tmp_path / "large.db")
    assert large - small <= FLAT_MIB, (small, large)
