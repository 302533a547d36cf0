"""Two sample draws of one system at once (SQLite and PostgreSQL): the one overtaken while it was being planned
ends in a message that says what happened and writes nothing, never in a database error."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import text

from annotator.assignment import assign_sample, plan_sample, record_sample, sample_draws
from annotator.errors import Conflict
from annotator.store.assignments import draw_members
from annotator.store.judgements import lock_key
from annotator.store.projects import project_id
from tests.core.test_assign_sample import PROJECT, street


def _queues(store):
    with store.read() as conn:
        return sorted(conn.execute(text("SELECT caption_id, user_id, position FROM assignments")).all())


def _plan(store, seed, systems=("poor",)):
    return plan_sample(store, PROJECT, ["ann", "bea"], 30, systems=list(systems), layer="annotator:ann", seed=seed)


def test_a_plan_overtaken_by_another_draw_is_refused_and_writes_nothing(store):
    street(store, labelled=range(20))
    first, second = _plan(store, 1), _plan(store, 2)
    assert record_sample(store, first).draws[0].number == 1
    before = (_queues(store), sample_draws(store, PROJECT))
    with store.read() as conn:
        members = draw_members(conn, project_id(conn, PROJECT))
    with pytest.raises(Conflict) as err:
        record_sample(store, second)
    msg = str(err.value)
    assert "another sample draw of system 'poor' was recorded while this one was being planned" in msg
    assert "it now has 1 draw, 0 when this one started" in msg and "nothing was drawn or queued" in msg
    assert (_queues(store), sample_draws(store, PROJECT)) == before
    with store.read() as conn:
        assert draw_members(conn, project_id(conn, PROJECT)) == members
    # Planned afresh, the next draw goes through as the system's second.
    assert record_sample(store, _plan(store, 2)).draws[0].number == 2


def test_a_plan_for_another_system_is_not_overtaken(store):
    street(store, labelled=range(20))
    poor, good = _plan(store, 1, ["poor"]), _plan(store, 1, ["good"])
    record_sample(store, poor)
    assert [d.system for d in record_sample(store, good).draws] == ["good"]


def _race(store, gate=None):
    """Two draws of system poor started together; ``gate`` (optional) runs while both are under way."""
    out: list = []
    start = threading.Barrier(3)

    def draw(seed):
        start.wait()
        try:
            out.append(assign_sample(store, PROJECT, ["ann", "bea"], 30, systems=["poor"], layer="annotator:ann",
                                     seed=seed))
        except Exception as exc:  # noqa: BLE001 - the test looks at what comes out, whatever it is
            out.append(exc)

    threads = [threading.Thread(target=draw, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    start.wait()
    if gate is not None:
        gate()
    for t in threads:
        t.join(timeout=120)
    return out


def test_racing_draws_end_in_a_draw_and_a_message(store):
    street(store, labelled=range(20))
    out = _race(store)
    assert len(out) == 2
    assert all(not isinstance(o, Exception) or isinstance(o, Conflict) for o in out), out
    done = [o for o in out if not isinstance(o, Exception)]
    assert done and [d["number"] for d in sample_draws(store, PROJECT)] == list(range(1, len(done) + 1))


def test_racing_draws_on_postgresql_held_at_the_lock(pg_store):
    """Both draws are planned before either records (the test holds the project's draw lock until both wait):
    exactly one is recorded, the other is told why (before the fix: a unique-constraint violation)."""
    street(pg_store, labelled=range(20))
    with pg_store.read() as conn:
        pid = project_id(conn, PROJECT)

    def hold_until_both_wait():
        with pg_store.transaction() as conn:
            lock_key(conn, f"sample-draw:{pid}")
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                with pg_store.read() as watch:
                    waiting = watch.execute(text(
                        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                        "AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(current_schema() || '/' || :key, 0)"),
                        {"key": f"sample-draw:{pid}"}).scalar()
                if waiting == 2:
                    break
                time.sleep(0.05)
            else:
                pytest.fail("the two draws never both waited for the lock")

    out = _race(pg_store, hold_until_both_wait)
    conflicts = [o for o in out if isinstance(o, Conflict)]
    assert len(conflicts) == 1 and len(out) == 2, out
    assert [d["number"] for d in sample_draws(pg_store, PROJECT)] == [1]
