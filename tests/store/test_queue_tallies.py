"""Each queue's counts are kept as saves happen (annotator.store.queue_tallies, migration 20): after any mix of
saves, skips, notes, revisions, a staged second pass and practice marks they equal a count made afresh; and the
work of a save, a resume, the progress line and the caption list's counts does not grow with the queue (SQLite's
virtual-machine steps counted through the connection's progress handler, at 200 and 2,000 captions)."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import event

from annotator.accounts.auth import add_user
from annotator.annotation import Queue
from annotator.assignment import assign
from annotator.store import open_store
from annotator.store.bulk import bulk_judgements
from annotator.store.projects import project_id, set_practice
from annotator.store.queue_tallies import recount, tally
from annotator.store.users import user_id
from tests.apptest_helpers import seed_project


def _afresh(store, uid: int, pid: int):
    """The tally a full count gives now (counted in a transaction that is rolled back)."""
    with store.engine.connect() as conn:
        trans = conn.begin()
        try:
            recount(conn, pid)
            return tally(conn, uid, pid)
        finally:
            trans.rollback()


def _stored(store, uid: int, pid: int):
    with store.read() as conn:
        return tally(conn, uid, pid)


@pytest.mark.parametrize("mode", ["staged", "full"])
def test_tallies_follow_every_kind_of_save(store, mode):
    seed_project(store, "demo", n_items=12)
    for name in ("ann1", "ann2"):
        add_user(store, name, "annotator")
    assign(store, "demo", ["ann1", "ann2"], double_fraction=0.5, seed=1, second_pass=mode)
    with store.read() as conn:
        pid = project_id(conn, "demo")
        uids = {name: user_id(conn, name) for name in ("ann1", "ann2")}
    queues = {name: Queue.open(store, name, "annotator", "demo") for name in uids}
    rng = random.Random(3)
    for step in range(120):
        name = rng.choice(sorted(queues))
        queue = queues[name]
        task = queue.task(rng.randrange(queue.size()))
        choice = rng.random()
        note = rng.choice(["", "", "look again"])
        if choice < 0.15:
            queue.skip(task, note=note)
        elif choice < 0.5:
            queue.save(task, "accurate", note=note)
        elif task.stage == "coarse":
            queue.save(task, "inaccurate", note=note)
        else:
            queue.save(task, "inaccurate", ["gender"], note=note)
        if step == 60:
            set_practice(store, "demo", ["img0.jpg", "img1.jpg"])
        for uid in uids.values():
            assert _stored(store, uid, pid) == _afresh(store, uid, pid), step
    counts = queues["ann1"].listing_counts()
    assert counts == {k: len(queues["ann1"].listing(k, limit=1000)) for k in counts}


def _steps_of_a_session(store, n: int) -> dict[str, int]:
    """SQLite VM steps (in hundreds) of each step of an annotator's session on a queue of ``n`` captions, half
    of them judged already."""
    seed_project(store, "big", n_items=n)
    add_user(store, "ann", "annotator")
    assign(store, "big", ["ann"], double_fraction=0.0, seed=0)
    queue = Queue.open(store, "ann", "annotator", "big")
    with store.transaction() as conn:
        bulk_judgements(conn, [(queue.task(p).caption_id, queue.user_id, "accurate", ()) for p in range(n // 2)])
    steps = [0]

    def counter():
        steps[0] += 1
        return 0

    store.engine.dispose()

    @event.listens_for(store.engine, "connect")
    def _count(dbapi_conn, _):
        dbapi_conn.set_progress_handler(counter, 100)

    out = {}

    def measure(what, call):
        steps[0] = 0
        result = call()
        out[what] = steps[0]
        return result

    queue = measure("open", lambda: Queue.open(store, "ann", "annotator", "big"))
    position = measure("resume", queue.first_todo)
    assert position == n // 2
    measure("progress", queue.progress)
    measure("list counts", queue.listing_counts)
    task = measure("task", lambda: queue.task(position))
    measure("save", lambda: queue.save(task, "inaccurate", ["gender"]))
    measure("next", lambda: queue.next_todo(position))
    measure("progress after", queue.progress)
    return out


def test_a_session_costs_the_same_on_a_queue_ten_times_longer(tmp_path):
    sizes = {}
    for n in (200, 2000):
        store = open_store(f"sqlite:///{tmp_path / f'{n}.db'}")
        try:
            sizes[n] = _steps_of_a_session(store, n)
        finally:
            store.dispose()
    small, large = sizes[200], sizes[2000]
    for what in small:
        assert large[what] <= 1.5 * small[what] + 20, (what, small, large)
