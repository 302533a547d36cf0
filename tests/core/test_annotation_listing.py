"""The caption list of an annotator's queue: filters, paging, jump by number, privacy (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from annotator.annotation import CAPTION_FILTERS, Queue
from annotator.assignment import assign, set_second_pass_mode
from annotator.accounts.auth import add_user
from annotator.errors import InputError
from tests.apptest_helpers import seed_project


@pytest.fixture
def queues(store):
    seed_project(store, "demo", n_items=7)
    add_user(store, "ann1", "annotator")
    add_user(store, "ann2", "annotator")
    assign(store, "demo", ["ann1", "ann2"], double_fraction=1.0)  # both judge every caption
    set_second_pass_mode(store, "demo", "full")
    q1 = Queue.open(store, "ann1", "annotator", "demo")
    q2 = Queue.open(store, "ann2", "annotator", "demo")
    return q1, q2


def _numbers(entries):
    return [e.number for e in entries]


def test_filters_page_and_jump(queues):
    q1, q2 = queues
    n = q1.size()
    assert n == 7
    # ann1: caption 1 accurate, 2 inaccurate with a note, 3 skipped with a note, 4 inaccurate then revised
    # to accurate, 5 inaccurate without a note; 6 and 7 never opened.
    q1.save(q1.task(0), "accurate")
    q1.save(q1.task(1), "inaccurate", ["gender"], "  a boy, not a girl ")
    q1.skip(q1.task(2), "blurry photo")
    q1.save(q1.task(3), "inaccurate", ["age"], "first thought")
    q1.save(q1.task(3), "accurate", [], "")
    q1.save(q1.task(4), "inaccurate", ["scene", "age"])
    # ann2's own work never shows in ann1's list (and the reverse).
    q2.save(q2.task(5), "inaccurate", ["other"], "ann2's private note")

    expected = {"all": [1, 2, 3, 4, 5, 6, 7], "todo": [6, 7], "skipped": [3], "judged": [1, 2, 4, 5],
                "inaccurate": [2, 5], "note": [2, 3]}
    assert set(expected) == set(CAPTION_FILTERS)
    for status, numbers in expected.items():
        assert _numbers(q1.listing(status)) == numbers, status
        assert q1.listing_count(status) == len(numbers), status
    assert q1.listing_counts() == {status: len(numbers) for status, numbers in expected.items()}
    assert _numbers(q2.listing("judged")) == [6] and _numbers(q2.listing("note")) == [6]
    assert q2.listing_counts() == {"all": 7, "todo": 6, "skipped": 0, "judged": 1, "inaccurate": 1, "note": 1}

    entries = {e.number: e for e in q1.listing("all")}
    assert entries[2].status == "inaccurate" and entries[2].error_types == ("gender",)
    assert entries[2].note == "a boy, not a girl" and entries[2].revision == 1
    assert entries[3].status == "skipped" and entries[3].note == "blurry photo"
    assert entries[4].status == "accurate" and entries[4].revision == 2 and entries[4].note == ""  # the current revision
    assert entries[5].error_types == ("age", "scene")  # taxonomy order, as stored
    assert entries[6].status == "to do" and entries[6].revision is None and entries[6].note == ""
    assert entries[6].caption.endswith("number 5") and entries[6].item_key == "img5.jpg"
    assert entries[6].caption_id == q1.task(5).caption_id

    # Paging: in order, no overlap, nothing missed.
    pages = [q1.listing("all", offset=o, limit=3) for o in (0, 3, 6)]
    assert [_numbers(p) for p in pages] == [[1, 2, 3], [4, 5, 6], [7]]

    # Jump by number (as the page counts: "Caption 4 of 7").
    assert q1.position_of(4) == 3 and q1.task(q1.position_of(4)).caption_id == entries[4].caption_id
    assert [q1.position_of(x) for x in (0, 8, -1, "x", None)] == [None] * 5


def test_an_unknown_filter_is_refused(queues):
    q1, _ = queues
    with pytest.raises(InputError, match="unknown caption filter 'done'"):
        q1.listing("done")
    with pytest.raises(InputError):
        q1.listing_count("")
