"""Judgement files, judge files and Label Studio blind exports are imported a batch at a time: their checked rows
wait in a spool (a scratch file apart from the store), not in memory, and are written in batches inside the
import's one transaction; a bad row in any batch names file and line and leaves the store unchanged. The
project's captions are looked up a batch at a time too (a blind export's keys from a spool filled a chunk of
captions at a time), never loaded whole."""

from __future__ import annotations

import json

import pytest

from annotator.exchange import judge_files
from annotator.exchange import label_studio as ls_exchange
from annotator.exchange.judge_files import import_judge
from annotator.exchange.label_studio import export_label_studio, import_label_studio
from annotator.io import import_judgements, judgements
from annotator.judges import load_judge
from annotator.store import exchange as store_exchange
from annotator.store import judges as store_judges
from annotator.store import legacy_judgements
from annotator.store.judgements import current_frame
from tests.core.test_judge_files import HEADER, judges_of, sample, write  # noqa: F401  (sample: a fixture)
from tests.io.test_label_studio_people import _later, _rows, _team, _write
from tests.store_helpers import lines_project, refused

CAPTIONS = [f"caption number {i} of a dog" for i in range(7)]


@pytest.fixture
def seven(store, tmp_path):
    """Project p: system s with seven captions (lines 0..6)."""
    lines_project(store, tmp_path, CAPTIONS, [f"reference {i}" for i in range(7)], system="s")
    return store


def _json(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


def test_judgement_files_are_written_batch_by_batch_in_index_order(seven, tmp_path, monkeypatch):
    """Members in any order, the fine file's apart from the coarse file's: the captions are looked up and the
    judgements written two at a time, in index order; what is stored is what one batch would store."""
    monkeypatch.setattr(judgements, "BATCH", 2, raising=False)
    asked = []

    def spy(conn, pid, by_item, by_line):
        asked.append(sorted(line for _, line in by_line))
        return store_exchange.caption_index_of(conn, pid, by_item, by_line)

    monkeypatch.setattr(legacy_judgements, "caption_index_of", spy)
    labels = {i: "incongruent" if i % 3 == 0 else "congruent" for i in range(7)}
    coarse = _json(tmp_path / "coarse.json", json.dumps({str(i): labels[i] for i in reversed(range(7))}))
    fine = _json(tmp_path / "fine.json", json.dumps({"6": ["wrong-subject"], "0": ["number"], "3": ["age"]}))
    result = import_judgements(seven, "p", "s", "ann", coarse, fine)
    assert (result.judgements, result.items_read, result.unchanged) == (7, 7, 0)
    assert asked == [[0, 1], [2, 3], [4, 5], [6]]
    frame = current_frame(seven, "p").sort_values("line_no")
    assert list(frame["label"]) == ["inaccurate" if i % 3 == 0 else "accurate" for i in range(7)]
    assert list(frame["error_types"]) == ["number", "", "", "age", "", "", "subject_wrong"]
    again = import_judgements(seven, "p", "s", "ann", coarse, fine)
    assert (again.judgements, again.unchanged) == (0, 7)


@pytest.mark.parametrize("coarse, fine, fragments", [
    # out of range in the last batch, after three batches were written
    ('{"0": "congruent", "1": "congruent", "2": "congruent", "3": "congruent", "4": "congruent", "9": "congruent"}',
     None, ["coarse.json", "key '9'", "out of range", "7 captions (0..6)"]),
    # a repeat far from its first, and a bad label after it: the repeat is named first, by its line
    ('{"5": "congruent",\n"1": "congruent",\n"2": "congruent",\n"05": "congruent",\n"3": "maybe"}', None,
     ["coarse.json, line 4 (key '05')", "caption index 5 appears twice"]),
    ('{"0": "congruent",\n"1": "congruent"}', '{"1": ["age"],\n"1": ["age"]}',
     ["fine.json, line 2", "key '1' appears twice"]),
    # the rules between the files, checked on the spool: the lowest index first
    ('{"0": "congruent", "1": "incongruent", "6": "incongruent"}', '{"6": ["age"], "5": ["age"], "4": ["age"]}',
     ["fine.json", "key '4'", "no coarse judgement"]),
    ('{"6": "congruent", "2": "incongruent", "4": "congruent"}', '{"6": ["age"]}',
     ["key '2'", "incongruent", "no error types"]),
])
def test_a_bad_judgement_file_leaves_the_store_unchanged_whatever_its_batch(seven, tmp_path, monkeypatch, coarse,
                                                                            fine, fragments):
    monkeypatch.setattr(judgements, "BATCH", 2, raising=False)
    import_judgements(seven, "p", "s", "first", _json(tmp_path / "ok.json", '{"0": "congruent"}'))
    c = _json(tmp_path / "coarse.json", coarse)
    f = None if fine is None else _json(tmp_path / "fine.json", fine)
    refused(seven, lambda: import_judgements(seven, "p", "s", "second", c, f), *fragments)


def test_a_judge_file_is_resolved_and_written_batch_by_batch(sample, tmp_path, monkeypatch):  # noqa: F811
    """One row a batch, the captions looked up a batch at a time (the project's whole caption index is never
    read): a re-import counts what changes against the stored outputs as one batch would, and a caption given
    twice, batches apart, is refused by the line of its first row with nothing stored."""
    monkeypatch.setattr(judge_files, "BATCH", 1, raising=False)
    monkeypatch.setattr(store_judges, "caption_index_all", None)
    rows = [{"item": "astronaut.jpg", "system": "sat-attn", "p_inaccurate": 0.8, "types": {"gender": 0.9}},
            {"item": "chelsea.jpg", "system": "sat-attn", "p_inaccurate": 0.2},
            {"item": "coffee.jpg", "system": "sat-attn", "p_inaccurate": 0.6}]
    first = import_judge(sample, "sample", write(tmp_path, *rows))
    assert (first.outputs, first.added, first.replaced, first.scored_types) == (3, 3, False, ["gender"])
    new = [dict(rows[0], p_inaccurate=0.4), rows[1], {"item": "rocket.jpg", "system": "nic-beam", "p_inaccurate": 1.0}]
    again = import_judge(sample, "sample", write(tmp_path, *new, header=dict(HEADER, k=3)))
    assert (again.added, again.changed, again.removed, again.unchanged, again.replaced) == (1, 1, 1, 1, True)
    judge = load_judge(sample, "sample", "vlm")
    assert sorted(o.p_inaccurate for o in judge.outputs.values()) == [0.2, 0.4, 1.0]
    assert judges_of(sample)["vlm"].signature["k"] == 3 and list(judges_of(sample)) == ["vlm"]
    twice = write(tmp_path, *rows, {"item": "rocket.jpg", "system": "nic-beam", "p_inaccurate": 0.1},
                  dict(rows[1], p_inaccurate=0.9), name="twice.jsonl")
    refused(sample, lambda: import_judge(sample, "sample", twice), "twice.jsonl, line 6",
            "this caption has an output on line 3 already")
    bad_last = write(tmp_path, *rows, {"item": "nowhere.jpg", "system": "sat-attn", "p_inaccurate": 0.1},
                     name="last.jsonl")
    refused(sample, lambda: import_judge(sample, "sample", bad_last), "last.jsonl, line 5",
            "the project has no caption of system 'sat-attn' for item 'nowhere.jpg'")
    assert sorted(o.p_inaccurate for o in load_judge(sample, "sample", "vlm").outputs.values()) == [0.2, 0.4, 1.0]


def test_a_blind_export_comes_back_through_captions_read_a_chunk_at_a_time(sqlite_store, tmp_path, monkeypatch):
    """The blind keys (hashes of system and item) are matched through a spool filled two captions at a time,
    and looked up two annotations at a time: the whole caption index is never built."""
    store = sqlite_store
    _team(store)
    monkeypatch.setattr(ls_exchange, "BATCH", 2)
    monkeypatch.setattr(ls_exchange, "project_caption_index", None, raising=False)  # the whole index: not to be used
    chunks = []
    def two_at_a_time(conn, pid, size=5000):
        for chunk in store_exchange.project_captions_in_chunks(conn, pid, 2):
            chunks.append(len(chunk))
            yield chunk

    monkeypatch.setattr(ls_exchange, "project_captions_in_chunks", two_at_a_time, raising=False)
    tasks = export_label_studio(store, "sample", blind=True)
    before = _rows(store)
    for task in tasks:
        for ann in task["annotations"]:
            ann["result"] = [{"id": "j", "from_name": "judgement", "to_name": "caption", "type": "choices",
                              "value": {"choices": ["accurate"]}}]
            ann["updated_at"] = _later(1)
    result = import_label_studio(store, "sample", _write(tmp_path, tasks))
    changed = len(set(_rows(store)) - set(before))
    assert result.refused == [] and result.judgements == changed > 2
    assert len(chunks) > 2 and set(chunks) <= {1, 2}
