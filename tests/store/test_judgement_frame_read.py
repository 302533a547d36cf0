"""The columnar judgement read (annotator.store.analysis_queries.judgement_frame) gives, on SQLite and PostgreSQL,
exactly the rows, labels, type texts, working times and save times the tables hold, read row by row here for
comparison: with masks and without (text written by another program), with skips, adjudications, a second
project whose captions interleave, every filter and the read of what changed."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import select, text

from annotator.model import Caption, Item, Project, Role
from annotator.frames.live import LiveJudgementFrame
from annotator.store.analysis_queries import epoch_seconds, judgement_frame
from annotator.store.judgements import save_judgement
from annotator.store.projects import project_id, set_practice, write_project
from annotator.store.schema import captions, current_judgements, items, systems, users
from annotator.store.schema import judgements as judgement_rows
from annotator.store.users import user_id

TYPES = [(), ("age",), ("gender", "number"), ("unrelated",), ("clothing_color", "scene", "color")]
SECONDS = [0.0, 3.0, 12.34, 0.1 + 0.2, 1e-7, 7.125, 1234.5678901234]


def _build(store):
    # Two projects written item by item in turns, so their caption ids interleave.
    with store.transaction() as conn:
        for i in range(12):
            for name in ("p", "q"):
                write_project(conn, Project(name, items=[Item(key=f"{name}{i}", captions=[
                    Caption("sys-a", f"{name} a {i}"), Caption("sys-b", f"{name} b {i}")])]))
        uids = [user_id(conn, u, create_role=Role.ANNOTATOR) for u in ("ann", "bea", "cy")]
        lead = user_id(conn, "lead", create_role=Role.LEAD)
        cids = {name: [r[0] for r in conn.execute(
            select(captions.c.id).join(systems, systems.c.id == captions.c.system_id)
            .join(items, items.c.id == captions.c.item_id)
            .where(items.c.project_id == project_id(conn, name)).order_by(captions.c.id))] for name in ("p", "q")}
    rng = np.random.default_rng(5)
    start = datetime(2026, 2, 28, 23, 59, 58, 999_999, tzinfo=timezone.utc)
    n = 0
    for name in ("p", "q"):
        for cid in cids[name]:
            for uid in uids:
                if rng.random() < 0.25:
                    continue
                n += 1
                label = [None, "accurate", "inaccurate", "inaccurate"][int(rng.integers(4))]
                types = TYPES[int(rng.integers(1, len(TYPES)))] if label == "inaccurate" else ()
                save_judgement(store, cid, uid, label=label, error_types=types, seconds=SECONDS[n % len(SECONDS)],
                               at=start + timedelta(seconds=float(rng.integers(0, 400 * 86400)),
                                                    microseconds=int(rng.integers(0, 1_000_000))))
            if rng.random() < 0.3:
                save_judgement(store, cid, lead, kind="adjudication", label="inaccurate", error_types=("stance",),
                               seconds=2.5)
    with store.transaction() as conn:
        # Rows as another program might have written them: no mask (odd texts), no working time in hundredths.
        odd = ["color age", "retired_type", "age,gender:x", ""]
        keys = conn.execute(select(current_judgements.c.caption_id, current_judgements.c.user_id)
                            .where(current_judgements.c.kind == "annotation")
                            .order_by(current_judgements.c.judgement_id).limit(8)).all()
        for k, (cid, uid) in enumerate(keys):
            conn.execute(text("UPDATE current_judgements SET type_mask = NULL, error_types = :t, label = 'inaccurate'"
                              " WHERE caption_id = :c AND user_id = :u AND kind = 'annotation'"),
                         {"t": odd[k % len(odd)], "c": cid, "u": uid})
        conn.execute(text("UPDATE current_judgements SET hundredths = 0 WHERE caption_id = :c"), {"c": keys[0][0]})
    set_practice(store, "p", ["p0", "p3"], True)
    return cids


def _expected(store, project, *, kinds=("annotation",), system=None, users_=None, include_skipped=False,
              with_timing=False, changed_after=None) -> pd.DataFrame:
    """The same rows read one by one through SQLAlchemy."""
    cj, j = current_judgements, judgement_rows
    with store.read() as conn:
        pid = project_id(conn, project)
        q = (select(cj.c.caption_id, captions.c.item_id, items.c.is_practice, systems.c.name, users.c.name,
                    cj.c.kind, cj.c.label, cj.c.error_types, cj.c.judgement_id, j.c.seconds, j.c.created_at)
             .select_from(cj.join(captions, captions.c.id == cj.c.caption_id)
                          .join(systems, systems.c.id == captions.c.system_id)
                          .join(items, items.c.id == captions.c.item_id).join(users, users.c.id == cj.c.user_id)
                          .join(j, j.c.id == cj.c.judgement_id))
             .where(systems.c.project_id == pid, cj.c.kind.in_(kinds)))
        if system is not None:
            q = q.where(systems.c.name == system)
        if users_ is not None:
            q = q.where(users.c.name.in_(users_))
        if not include_skipped:
            q = q.where(cj.c.label.is_not(None))
        if changed_after is not None:
            q = q.where(cj.c.judgement_id > changed_after)
        rows = conn.execute(q).all()
    cols = ["caption_id", "item_id", "is_practice", "system", "user", "kind", "label", "error_types", "judgement_id",
            "seconds", "saved_at"]
    df = pd.DataFrame([tuple(r) for r in rows], columns=cols).astype(
        {"caption_id": np.int64, "item_id": np.int64, "is_practice": bool, "judgement_id": np.int64,
         "seconds": np.float64})
    df["saved_at"] = epoch_seconds(df["saved_at"]) if len(df) else np.array([], np.float64)
    return df if with_timing else df.drop(columns=["seconds", "saved_at"])


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for c in ("system", "user", "kind", "label", "error_types"):
        out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out.sort_values(["caption_id", "user", "kind"]).reset_index(drop=True)


OPTIONS = [dict(), dict(kinds=("annotation", "adjudication")), dict(include_skipped=True, with_timing=True),
           dict(system="sys-b", kinds=("annotation", "adjudication")), dict(users_=["bea", "lead"], kinds=("adjudication",)),
           dict(users_=["cy"], include_skipped=True, with_timing=True), dict(system="nope"), dict(users_=["nobody"])]


@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
def test_the_read_gives_what_the_tables_hold(store, options):
    _build(store)
    for project in ("p", "q"):
        got = judgement_frame(store, project, **options)
        want = _expected(store, project, **options)
        assert list(got.columns) == list(want.columns)
        pd.testing.assert_frame_equal(_plain(got), _plain(want))
        assert got["error_types"].dtype == "category" and got["user"].dtype == "category"
        if options.get("with_timing"):
            # Bit for bit, the awkward ones included (0.1 + 0.2, 1e-7, a time from the revision's row).
            assert set(np.round(got["seconds"], 9)) <= {round(s, 9) for s in SECONDS + [2.5]}


@pytest.mark.parametrize("options", OPTIONS[:3] + OPTIONS[5:6], ids=[str(o) for o in OPTIONS[:3] + OPTIONS[5:6]])
def test_the_read_in_parts_gives_the_same_rows(sqlite_store, options, monkeypatch):
    # A big SQLite table is read as row-id ranges side by side, joined in order: forced here on a small one.
    from annotator.store import analysis_queries
    _build(sqlite_store)
    monkeypatch.setattr(analysis_queries, "PARALLEL_FROM_ROWS", 1)
    monkeypatch.setattr(analysis_queries.os, "cpu_count", lambda: 3)
    with sqlite_store.read() as conn:
        parts = analysis_queries._table_parts(conn)
    assert len(parts) == 3 and parts[0][1] + 1 == parts[1][0] and parts[1][1] + 1 == parts[2][0]
    for project in ("p", "q"):
        got = judgement_frame(sqlite_store, project, **options)
        pd.testing.assert_frame_equal(_plain(got), _plain(_expected(sqlite_store, project, **options)))


def test_the_read_of_what_changed(store):
    _build(store)
    for project in ("p", "q"):
        ids = np.sort(_expected(store, project, kinds=("annotation", "adjudication"), include_skipped=True)["judgement_id"])
        after = int(ids[len(ids) // 2])
        for options in (dict(kinds=("annotation", "adjudication")), dict(include_skipped=True, with_timing=True)):
            got = judgement_frame(store, project, changed_after=after, **options)
            want = _expected(store, project, changed_after=after, **options)
            assert 0 < len(want) < len(ids)
            pd.testing.assert_frame_equal(_plain(got), _plain(want))


def test_a_live_frame_after_saves_equals_a_fresh_read(store):
    cids = _build(store)
    live = LiveJudgementFrame(store, "p", kinds=("annotation",), include_skipped=True, with_timing=True)
    live.get()
    with store.read() as conn:
        uid = user_id(conn, "bea")
    save_judgement(store, cids["p"][1], uid, label="inaccurate", error_types=("gender",), seconds=0.7)
    save_judgement(store, cids["p"][2], uid, label=None, seconds=1.5)
    merged, _ = live.get()
    assert live.delta_reads == 1
    fresh = judgement_frame(store, "p", include_skipped=True, with_timing=True)
    pd.testing.assert_frame_equal(_plain(merged), _plain(fresh))


def test_the_assignment_read_gives_what_the_table_holds(store):
    from annotator.store.schema import assignments
    from annotator.frames.assignments import assignment_frame
    from tests.core.test_team import build_team
    build_team(store)
    got = assignment_frame(store, "crew")
    with store.read() as conn:
        rows = conn.execute(select(assignments.c.caption_id, users.c.name, assignments.c.is_second, items.c.is_practice)
                            .join(users, users.c.id == assignments.c.user_id)
                            .join(captions, captions.c.id == assignments.c.caption_id)
                            .join(items, items.c.id == captions.c.item_id)).all()
    want = sorted((int(c), u, bool(s), bool(p)) for c, u, s, p in rows)
    assert sorted(zip(got["caption_id"].tolist(), got["user"].astype(str), got["is_second"].tolist(),
                      got["is_practice"].tolist())) == want
    assert list(got["user"].cat.categories) == ["amy", "bob"] and got["is_practice"].any()
