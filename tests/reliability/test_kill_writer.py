"""SIGKILL a process while it writes to SQLite.

A killed writer must leave a sound database: ``PRAGMA integrity_check`` ok,
every save it had acknowledged present (the writer logs each revision with
fsync right after the save returned, so a logged save was committed first),
no half-written save (history and current pointer always agree), and a big
import killed mid-transaction leaves nothing behind.
"""

from __future__ import annotations

import os
import random
import signal
import time

import pytest

import reliability_helpers as H
from annotator.store import open_store
from annotator.store.projects import table_counts

pytestmark = [pytest.mark.serial, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def ctx():
    return H.mp_context()


@pytest.mark.slow
def test_sigkill_writers_mid_loop_loses_no_acknowledged_save(tmp_path, ctx):
    url = f"sqlite:///{tmp_path / 'kill.db'}"
    store = open_store(url)
    names = ["ann", "bob", "cy", "dee"]
    cids, uids = H.seed_project(store, n_items=40, users=[(n, "annotator") for n in names])
    store.dispose()
    rng = random.Random(11)
    # Each writer has its own keys plus 5 captions all of them save as "ann": contended keys survive kills too.
    shared = [H.Save(c, uids["ann"], "annotation", None, ()) for c in cids[20:25]]
    plans = []
    for n in names:
        own = [H.Save(c, uids[n], "annotation", None, ()) for c in cids[:20]]
        plans.append([s for k in range(5) for s in (*own[4 * k:4 * k + 4], shared[k])])

    kills = 0
    logs = []
    for round_ in range(4):
        procs = []
        for n, plan in enumerate(plans):
            log = tmp_path / f"r{round_}-w{n}.log"
            logs.append(log)
            p = ctx.Process(target=H.write_plan, args=(url, plan, str(log)),
                            kwargs={"fsync": True, "loop": True, "seed": 100 * round_ + n})
            p.start()
            procs.append((p, log))
        # Kill each writer at a random moment once it has acknowledged something.
        for p, log in procs:
            deadline = time.monotonic() + 60
            while not H.read_log(log)[0]:
                assert p.is_alive() and time.monotonic() < deadline, "a writer never acknowledged a save"
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.4))
            os.kill(p.pid, signal.SIGKILL)
            kills += 1
        for p, _ in procs:
            p.join(30)
            assert p.exitcode == -signal.SIGKILL

    acks, fails = [], []
    for log in logs:
        a, f = H.read_log(log)
        acks += a
        fails += f
    assert not fails
    assert len(acks) > 100, "too few saves to mean anything"
    fresh = open_store(url)  # recovery of the WAL happens here, as on the next app start
    assert fresh.integrity_check() == "ok"
    # Killed between commit and log line: at most one stored-but-unlogged save per kill.
    H.check_against_acks(fresh, acks, unacked_allowed=kills)
    assert any(a["key"][0] in cids[20:25] for a in acks), "no contended save happened"
    fresh.dispose()


def _import_big_project(url: str, marker: str, n_items: int) -> None:
    """Process target: import a large project in one transaction, touching ``marker``.begun/.committed."""
    from annotator.model import Caption, Item, Project
    from annotator.store.projects import write_project
    store = open_store(url)
    items = [Item(key=f"k{i}", captions=[Caption("sys", f"caption {i} " * 5)]) for i in range(n_items)]
    with store.transaction() as conn:
        open(marker + ".begun", "w").close()
        write_project(conn, Project(name="big", items=items))
    open(marker + ".committed", "w").close()


def test_sigkill_during_a_large_import_leaves_nothing(tmp_path, ctx):
    url = f"sqlite:///{tmp_path / 'imp.db'}"
    store = open_store(url)
    H.seed_project(store, n_items=3, users=[("ann", "annotator")], project="small")
    before = table_counts(store)
    marker = str(tmp_path / "imp")
    p = ctx.Process(target=_import_big_project, args=(url, marker, 200_000))
    p.start()
    deadline = time.monotonic() + 60
    while not os.path.exists(marker + ".begun"):
        assert p.is_alive() and time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.3)
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    assert not os.path.exists(marker + ".committed"), "the import finished before the kill; make it bigger"
    store.dispose()
    fresh = open_store(url)
    assert fresh.integrity_check() == "ok"
    assert table_counts(fresh) == before
    # The store is writable straight away (no stale lock left behind by the killed process).
    H.seed_project(fresh, n_items=2, users=[("bob", "annotator")], project="after")
    fresh.dispose()
