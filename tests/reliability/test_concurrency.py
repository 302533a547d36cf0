"""Many processes saving judgements at once, on SQLite and on PostgreSQL.

Each writer is its own process with its own Store on the shared URL (as
several app processes would be). Afterwards the database must hold exactly
the acknowledged saves: revisions 1..n per key with no gap or duplicate, one
current row per key pointing at the highest revision, and — where a key has a
single writer — the value that writer sent last.
"""

from __future__ import annotations

import random
import time
from collections import Counter, defaultdict

import pytest

import reliability_helpers as H

pytestmark = [pytest.mark.serial, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def ctx():
    return H.mp_context()


def _last_values(plans) -> dict:
    last = {}
    for plan in plans:
        for s in plan:
            last[s.key] = (s.label, " ".join(s.error_types))
    return last


def test_eight_processes_times_50_saves(store, ctx, tmp_path, reliability_report):
    """8 writers × 50 saves: 40 on 10 keys of their own (4 revisions each), 10 on 8 keys all of them share.

    Sized to show the property (every acknowledged save stored, in order, nothing extra) in seconds; the full
    size, 20 writers × 500 saves, is ``python bench/concurrency_bench.py``."""
    n_proc, n_saves, own_keys = 8, 50, 10
    users = [(f"u{n:02d}", "annotator") for n in range(n_proc)] + [("shared0", "annotator"), ("shared1", "annotator")]
    cids, uids = H.seed_project(store, n_items=100, users=users)
    shared_keys = [(cids[c], uids[f"shared{u}"]) for c in range(4) for u in range(2)]

    def key(rng, n: int, j: int) -> tuple[int, int]:
        # every fifth save on a shared key, the others cycling over the writer's own keys
        return rng.choice(shared_keys) if j % 5 == 4 else (cids[(j - j // 5) % own_keys], uids[f"u{n:02d}"])

    plans = H.random_plans(n_proc, n_saves, key)

    t0 = time.perf_counter()
    acks = H.run_writers(ctx, store.url, plans, tmp_path)
    wall = time.perf_counter() - t0

    assert len(acks) == n_proc * n_saves
    fig = H.latency_summary(acks, wall)
    reliability_report(f"{store.dialect}: {n_proc} processes x {n_saves} saves: {fig['saves_per_s']} saves/s, "
                       f"latency median {fig['p50_ms']} ms, p95 {fig['p95_ms']} ms, max {fig['max_ms']} ms")
    summary = H.check_against_acks(store, acks)
    assert summary == {"keys": n_proc * own_keys + len(shared_keys), "revisions": n_proc * n_saves, "extra": 0}
    hist, cur = H.db_state(store)
    planned = Counter(s.key for plan in plans for s in plan)
    for key, n in planned.items():
        assert cur[key].revision == n, f"{key}: {cur[key].revision} revisions stored, {n} saves made"
    own_last = {k: v for k, v in _last_values(plans).items() if (k[0], k[1]) not in shared_keys}
    assert len(own_last) == n_proc * own_keys
    for key, (label, types) in own_last.items():
        assert (cur[key].label, cur[key].error_types) == (label, types), f"{key} lost its last update"
    _assert_rising_per_writer(tmp_path, n_proc)


def _assert_rising_per_writer(log_dir, n_proc) -> None:
    """Logs are per process, in save order: within one process a key's revisions rise strictly."""
    for n in range(n_proc):
        mine = defaultdict(list)
        for a in H.read_log(log_dir / f"w{n}.log")[0]:
            mine[tuple(a["key"])].append(a["rev"])
        for key, rs in mine.items():
            assert rs == sorted(set(rs)), f"writer {n} got revisions of {key} out of order: {rs}"


def test_same_keys_hammered_from_fresh(store, ctx, tmp_path):
    """10 processes march through the same 12 brand-new keys, 8 saves per key each.

    Every key is created by a race (nobody holds its current row yet), then
    updated under contention. Revisions must come out as exactly 1..80 per
    key, each process must see its own revisions of a key strictly rise, and
    the current row must carry the values of revision 80.
    """
    n_proc, per_key = 10, 8
    cids, uids = H.seed_project(store, n_items=6, users=[("ann", "annotator"), ("bob", "annotator")])
    keys = [(c, u) for c in cids for u in uids.values()]
    plans = []
    for n in range(n_proc):
        rng = random.Random(100 + n)
        plans.append([H.Save(c, u, "annotation", *H.random_values(rng)) for c, u in keys for _ in range(per_key)])

    acks = H.run_writers(ctx, store.url, plans, tmp_path)

    assert len(acks) == n_proc * len(keys) * per_key
    summary = H.check_against_acks(store, acks)
    assert summary == {"keys": len(keys), "revisions": len(acks), "extra": 0}
    revs = defaultdict(list)
    for a in acks:
        revs[tuple(a["key"])].append(a["rev"])
    for key, rs in revs.items():
        assert sorted(rs) == list(range(1, n_proc * per_key + 1)), f"{key}: acknowledged revisions are not 1..n"
    _assert_rising_per_writer(tmp_path, n_proc)


def test_two_annotators_and_a_lead_on_the_same_captions(store, ctx, tmp_path):
    """Annotators ann and bob, and the lead (both annotating and adjudicating) save the same 25 captions at once.

    Each of the four (user, kind) records per caption is kept apart: its own
    revisions 1..4 and, as current value, what that writer sent last.
    """
    from annotator.store.judgements import current_frame, current_judgement
    cids, uids = H.seed_project(store, n_items=25, users=[("ann", "annotator"), ("bob", "annotator"), ("lea", "lead")])
    writers = [("ann", "annotation"), ("bob", "annotation"), ("lea", "adjudication"), ("lea", "annotation")]
    plans = []
    for n, (user, kind) in enumerate(writers):
        rng = random.Random(200 + n)
        plans.append([H.Save(c, uids[user], kind, *H.random_values(rng)) for _ in range(4) for c in cids])

    acks = H.run_writers(ctx, store.url, plans, tmp_path)

    assert H.check_against_acks(store, acks) == {"keys": 4 * 25, "revisions": 4 * 4 * 25, "extra": 0}
    last = _last_values(plans)
    with store.read() as conn:
        for c in cids:
            for user, kind in writers:
                j = current_judgement(conn, c, uids[user], kind)
                assert j is not None and j.user == user and j.kind.value == kind and j.revision == 4
                label, types = last[(c, uids[user], kind)]
                assert ((j.label.value if j.label else None), " ".join(j.error_types)) == (label, types)
    ann = current_frame(store, "load", kind="annotation", include_skipped=True)
    adj = current_frame(store, "load", kind="adjudication", include_skipped=True)
    assert sorted(Counter(ann["user"]).items()) == [("ann", 25), ("bob", 25), ("lea", 25)]
    assert list(Counter(adj["user"]).items()) == [("lea", 25)]
