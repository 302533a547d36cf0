"""The project's chosen sample index (setting ``annotated_sample``): with captions n = 0, 1, 2 of each image and
the index set to 1, every part of the human work reads the n = 1 captions; the choice is refused once human work
exists on the project's captions, and for an index no caption has, leaving the setting as it was. SQLite and
PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotator.annotation import Queue
from annotator.assignment import annotated_sample_index, assign, set_annotated_sample_index
from annotator.accounts.auth import add_user
from annotator.cli import main
from annotator.errors import PermissionDenied
from annotator.io import import_judgements
from annotator.model import Caption, Item, Project
from annotator.rescoring import rescore_lines
from annotator.store.diversity import caption_texts
from annotator.store.exchange import project_caption_index
from annotator.store.human_scores import caption_keys
from annotator.store.judgements import caption_id_for_line, current_frame
from annotator.store.projects import captions_of_system, load_project, project_id, write_project
from annotator.store.samples import annotated_sample, is_annotated
from annotator.store.schema import captions
from tests.apptest_helpers import seed_project
from tests.store_helpers import refused

FIX = Path(__file__).parent.parent / "fixtures"
COARSE = FIX / "judgements" / "coarse.json"  # lines 0, 1, 2: accurate, inaccurate, inaccurate


def _text(n: int, k: int) -> str:
    return f"sample {n} of image {k}: a dog runs on the grass"


def _pool(store) -> dict[int, list[int]]:
    """Three images of one system with captions n = 0, 1, 2; returns n → caption ids in image order."""
    seed_project(store, "demo", n_items=3)
    keys = [i.key for i in load_project(store, "demo", with_captions=False).items]
    with store.transaction() as conn:
        for n in (1, 2):
            write_project(conn, Project("demo", items=[Item(key=key, captions=[Caption("sys-a", _text(n, k), n=n)])
                                                       for k, key in enumerate(keys)]))
    by_n: dict[int, list[int]] = {}
    for item in load_project(store, "demo", all_samples=True).items:
        for c in item.captions:
            by_n.setdefault(c.n, []).append(c.caption_id)
    return by_n


def test_the_chosen_index_is_what_annotation_assignment_rescoring_and_imports_read(store):
    by_n = _pool(store)
    assert annotated_sample_index(store, "demo") == 0
    assert set_annotated_sample_index(store, "demo", 1) == 1
    assert annotated_sample_index(store, "demo") == 1
    # Assignment and the annotator's queue.
    add_user(store, "ann1", "annotator")
    assign(store, "demo", ["ann1"], double_fraction=0)
    q = Queue.open(store, "ann1", "annotator", "demo")
    seen = [q.task(k) for k in range(q.size())]
    assert [t.caption_id for t in seen] == by_n[1]
    assert [t.caption.text for t in seen] == [_text(1, k) for k in range(3)]
    # The project as pages read it, correction and rescoring sets, --line look-ups, exchange and score keys.
    assert [[c.caption_id for c in i.captions] for i in load_project(store, "demo").items] == [[c] for c in by_n[1]]
    # The per-caption metric scores correlated with human judgements; diversity still reads the whole pool.
    assert [c.caption_id for c in caption_texts(store, "demo", annotated_only=True)["sys-a"]] == by_n[1]
    assert len(caption_texts(store, "demo")["sys-a"]) == 9
    with store.read() as conn:
        pid = project_id(conn, "demo")
        assert [r.id for r in captions_of_system(conn, pid, "sys-a")] == by_n[1]
        assert [caption_id_for_line(conn, pid, "sys-a", k) for k in range(3)] == by_n[1]
        assert sorted(cid for cid, _, _ in project_caption_index(conn, pid).values()) == by_n[1]
        assert sorted(caption_keys(conn, pid).by_item_system.values()) == by_n[1]
        assert [r.n for r in conn.execute(captions.select().where(annotated_sample(1)))] == [1, 1, 1]
    assert is_annotated(1, 1) and not is_annotated(0, 1)
    # Rescoring compares a file with the system's n = 1 captions: the same texts change nothing.
    res = rescore_lines(store, "demo", [_text(1, k) for k in range(3)], system="sys-a", metrics=["Bleu_4"], resamples=20)
    assert res["compare"]["changed"] == 0
    # The study's judgement files key their lines to the n = 1 captions.
    import_judgements(store, "demo", "sys-a", "alice", COARSE)
    frame = current_frame(store, "demo")
    assert sorted(frame["caption_id"]) == by_n[1]


def test_changing_the_index_moves_assignments_made_before_any_judgement(store):
    by_n = _pool(store)
    add_user(store, "ann1", "annotator")
    assign(store, "demo", ["ann1"], double_fraction=0)
    assert [Queue.open(store, "ann1", "annotator", "demo").task(k).caption_id for k in range(3)] == by_n[0]
    set_annotated_sample_index(store, "demo", 2)
    q = Queue.open(store, "ann1", "annotator", "demo")
    assert q.size() == 3 and [q.task(k).caption_id for k in range(3)] == by_n[2]


def test_the_index_cannot_change_once_a_judgement_or_correction_exists(store):
    by_n = _pool(store)
    set_annotated_sample_index(store, "demo", 1)
    import_judgements(store, "demo", "sys-a", "alice", COARSE)
    refused(store, lambda: set_annotated_sample_index(store, "demo", 0),
            "project 'demo' already holds 3 judgements", "sample n = 1", "stays 1")
    refused(store, lambda: set_annotated_sample_index(store, "demo", 2), "3 judgements")
    assert annotated_sample_index(store, "demo") == 1
    # Setting the index it has already is no change, and is accepted.
    assert set_annotated_sample_index(store, "demo", 1) == 1
    assert by_n[1] == sorted(current_frame(store, "demo")["caption_id"])


def test_a_correction_alone_blocks_the_change(store):
    from annotator.correction import leave_untouched
    by_n = _pool(store)
    add_user(store, "cora", "lead")
    leave_untouched(store, by_n[0][0], "scene", "cora")
    refused(store, lambda: set_annotated_sample_index(store, "demo", 1), "project 'demo' already holds 1 correction")
    assert annotated_sample_index(store, "demo") == 0


@pytest.mark.parametrize("index, message", [
    (3, "project 'demo' has no caption with sample index n = 3 (its sample indices: 0, 1, 2)"),
    (-1, "must be a non-negative integer, got -1"),
])
def test_an_index_no_caption_has_is_refused(store, index, message):
    _pool(store)
    set_annotated_sample_index(store, "demo", 2)
    refused(store, lambda: set_annotated_sample_index(store, "demo", index), message)
    assert annotated_sample_index(store, "demo") == 2


def test_only_leads_choose_the_index(store):
    _pool(store)
    refused(store, lambda: set_annotated_sample_index(store, "demo", 1, actor_role="annotator"), error=PermissionDenied)
    assert annotated_sample_index(store, "demo") == 0


def test_the_settings_command_shows_sets_and_refuses(store, capsys):
    import json
    _pool(store)
    assert main(["--db", store.url, "settings", "--project", "demo", "--annotated-sample", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["annotated_sample"] == 2
    assert main(["--db", store.url, "settings", "--project", "demo"]) == 0
    assert "annotated sample: n = 2" in capsys.readouterr().out
    assert main(["--db", store.url, "settings", "--project", "demo", "--annotated-sample", "7"]) == 2
    assert "no caption with sample index n = 7" in capsys.readouterr().err
    assert annotated_sample_index(store, "demo") == 2


def test_assignments_without_a_caption_at_the_new_index_block_the_change(store):
    by_n = _pool(store)
    keys = [i.key for i in load_project(store, "demo", with_captions=False).items]
    with store.transaction() as conn:
        write_project(conn, Project("demo", items=[Item(key=keys[0], captions=[Caption("sys-a", "only here", n=3)])]))
    add_user(store, "ann1", "annotator")
    assign(store, "demo", ["ann1"], double_fraction=0)
    refused(store, lambda: set_annotated_sample_index(store, "demo", 3),
            "project 'demo' has 2 assigned captions with no caption of sample n = 3")
    assert annotated_sample_index(store, "demo") == 0
    q = Queue.open(store, "ann1", "annotator", "demo")
    assert [q.task(k).caption_id for k in range(3)] == by_n[0]
