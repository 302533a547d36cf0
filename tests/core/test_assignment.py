"""Assignment: deterministic split, blind double sample, practice items, storage and CLI."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from annotator.assignment import (
    CaptionRef, assign, assignment_overview, double_pairs, double_sample_size, mark_practice, plan_assignment,
    second_pass_mode, set_second_pass_mode,
)
from annotator.accounts.auth import add_user
from annotator.cli import main
from annotator.errors import InputError, NotFound, PermissionDenied
from annotator.store.assignments import user_queue
from annotator.store.projects import project_id
from annotator.store.users import user_id
from tests.apptest_helpers import seed_project


def test_blocks_are_contiguous_and_balanced():
    plan = plan_assignment(list(range(100, 110)), ["a", "b", "c"], double_fraction=0)
    by = {n: [p.caption_id for p in plan if p.annotator == n] for n in "abc"}
    # 10 = 4 + 3 + 3, in order, no overlap.
    assert by == {"a": [100, 101, 102, 103], "b": [104, 105, 106], "c": [107, 108, 109]}
    assert [p.position for p in plan if p.annotator == "b"] == [0, 1, 2]


def test_round_robin():
    plan = plan_assignment(list(range(7)), ["a", "b"], double_fraction=0, split="round-robin")
    assert [p.caption_id for p in plan if p.annotator == "a"] == [0, 2, 4, 6]
    assert [p.caption_id for p in plan if p.annotator == "b"] == [1, 3, 5]


def test_sample_size_rounds_half_up():
    assert double_sample_size(1014, 0.1) == 101
    assert double_sample_size(1000, 0.1) == 100
    assert double_sample_size(5, 0.1) == 1      # 0.5 rounds up
    assert double_sample_size(4, 0.1) == 0
    assert double_sample_size(3, 1.0) == 3


def test_double_sample_is_seeded_blind_and_balanced():
    caps = list(range(1000))
    names = ["a", "b", "c", "d"]
    plan = plan_assignment(caps, names, double_fraction=0.1, seed=7)
    assert plan == plan_assignment(caps, names, double_fraction=0.1, seed=7)  # deterministic
    other = plan_assignment(caps, names, double_fraction=0.1, seed=8)
    second = [p for p in plan if p.is_second]
    assert len(second) == 100
    assert {p.caption_id for p in second} != {p.caption_id for p in other if p.is_second}
    # Same sample as Python's seeded random.sample over indices (an independent re-computation).
    assert sorted(p.caption_id for p in second) == sorted(random.Random(7).sample(range(1000), 100))
    first_of = {p.caption_id: p.annotator for p in plan if not p.is_second}
    assert len(first_of) == 1000  # every caption has exactly one first annotator
    assert all(first_of[p.caption_id] != p.annotator for p in second)
    # Rotation: each first annotator's sampled captions go to the other three about equally.
    pairs = Counter((first_of[p.caption_id], p.annotator) for p in second)
    for a in names:
        counts = [pairs[(a, b)] for b in names if b != a]
        assert max(counts) - min(counts) <= 1
    # Double captions are interleaved in project order inside the second annotator's queue.
    for n in names:
        queue = [p.caption_id for p in sorted((p for p in plan if p.annotator == n), key=lambda p: p.position)]
        assert queue == sorted(queue)


def test_practice_first_for_everyone_and_never_double():
    caps = [CaptionRef(1, True), CaptionRef(2, False), CaptionRef(3, True)] + [CaptionRef(i) for i in range(10, 30)]
    plan = plan_assignment(caps, ["a", "b"], double_fraction=0.5, seed=1)
    for n in "ab":
        queue = sorted((p for p in plan if p.annotator == n), key=lambda p: p.position)
        assert [p.caption_id for p in queue[:2]] == [1, 3] and not any(p.is_second for p in queue[:2])
        assert [p.position for p in queue] == list(range(len(queue)))
    assert not any(p.is_second and p.caption_id in (1, 3) for p in plan)
    assert sum(p.is_second for p in plan) == double_sample_size(21, 0.5)


@pytest.mark.parametrize("kwargs, message", [
    ({"annotators": []}, "at least one annotator"),
    ({"annotators": ["a"], "double_fraction": 0.1}, "at least two annotators"),
    ({"annotators": ["a", "b"], "double_fraction": 1.5}, "between 0 and 1"),
    ({"annotators": ["a", "b"], "split": "random"}, "unknown split"),
])
def test_plan_rejects_bad_input(kwargs, message):
    with pytest.raises(InputError, match=message):
        plan_assignment(list(range(20)), **kwargs)


def test_single_annotator_without_double():
    plan = plan_assignment(list(range(5)), ["solo"], double_fraction=0)
    assert [p.caption_id for p in plan] == [0, 1, 2, 3, 4]


def _users(store, *names, role="annotator"):
    for n in names:
        add_user(store, n, role)


def test_assign_writes_queues(store):
    caps = seed_project(store, "demo", n_items=12, practice=2)
    _users(store, "ann1", "ann2", "ann3")
    summary = assign(store, "demo", ["ann1", "ann2", "ann3"], double_fraction=0.2, seed=3)
    assert (summary.captions, summary.practice, summary.double) == (12, 2, 2)
    with store.read() as conn:
        pid = project_id(conn, "demo")
        queues = {n: user_queue(conn, user_id(conn, n), pid) for n in ("ann1", "ann2", "ann3")}
    firsts = [c for q in queues.values() for (_, c, second) in q if not second and c not in caps[:2]]
    assert sorted(firsts) == sorted(caps[2:])
    for q in queues.values():
        assert [r[1] for r in q[:2]] == caps[:2]  # practice first for everyone
        assert [r[0] for r in q] == list(range(len(q)))
    pairs = double_pairs(store, "demo")
    assert len(pairs) == 2 and all(a != b for _, a, b in pairs)
    assert second_pass_mode(store, "demo") == "staged"
    over = {r["name"]: r for r in assignment_overview(store, "demo")}
    assert sum(r["assigned"] for r in over.values()) == 10 + 2 * 3 + 2  # regular + practice for each + double
    assert all(r["practice"] == 2 and r["done"] == 0 for r in over.values())


def test_assign_guards(store):
    seed_project(store, "demo", n_items=4)
    _users(store, "ann1", "ann2")
    with pytest.raises(PermissionDenied):
        assign(store, "demo", ["ann1", "ann2"], actor_role="annotator")
    with pytest.raises(PermissionDenied):
        assign(store, "demo", ["ann1", "ann2"], actor_role="analyst")
    with pytest.raises(InputError, match="no user called 'ghost'"):
        assign(store, "demo", ["ann1", "ghost"])
    with pytest.raises(NotFound):
        assign(store, "nope", ["ann1", "ann2"])
    with pytest.raises(NotFound, match="no system"):
        assign(store, "demo", ["ann1", "ann2"], systems=["other"])
    assign(store, "demo", ["ann1", "ann2"], double_fraction=0.5, seed=1)
    with pytest.raises(InputError, match="has assignments already"):
        assign(store, "demo", ["ann1", "ann2"])
    again = assign(store, "demo", ["ann2", "ann1"], double_fraction=0, replace=True, second_pass="full")
    assert again.double == 0 and second_pass_mode(store, "demo") == "full"
    with pytest.raises(PermissionDenied):
        set_second_pass_mode(store, "demo", "staged", actor_role="annotator")
    with pytest.raises(PermissionDenied):
        mark_practice(store, "demo", ["img0.jpg"], actor_role="annotator")
    assert mark_practice(store, "demo", ["img0.jpg", "img1.jpg"]) == 2


def test_assign_one_system_only(sqlite_store):
    caps = seed_project(sqlite_store, "demo", n_items=3, systems=("s1", "s2"))
    _users(sqlite_store, "ann1")
    summary = assign(sqlite_store, "demo", ["ann1"], double_fraction=0, systems=["s2"])
    assert summary.captions == 3
    with sqlite_store.read() as conn:
        queue = user_queue(conn, user_id(conn, "ann1"), project_id(conn, "demo"))
    # caps alternate s1, s2 per item (item order, then system order).
    assert [r[1] for r in queue] == caps[1::2]


def test_assign_cli(sqlite_store, capsys):
    seed_project(sqlite_store, "demo", n_items=10)
    _users(sqlite_store, "ann1", "ann2")
    url = sqlite_store.url
    assert main(["--db", url, "assign", "--project", "demo", "--annotators", "ann1", "ann2",
                 "--double-fraction", "0.3", "--seed", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["double"] == 3 and out["per_annotator"]["ann1"]["first"] == 5
    assert main(["--db", url, "assign", "--project", "demo", "--annotators", "ann1", "ann2"]) == 2
    assert "--replace" in capsys.readouterr().err
    assert main(["--db", url, "assign", "--project", "demo", "--annotators", "ann1", "--double-fraction", "0",
                 "--replace", "--second-pass", "full"]) == 0
    assert "10 captions" in capsys.readouterr().out
