"""LiveJudgementFrame and merge_judgement_frames: reading only what changed gives exactly what a full read gives.

After every batch of random saves (new judgements, revisions, skips over judgements, adjudications, new
users, a second system) the live frame must equal a fresh ``judgement_frame`` row for row, on SQLite and
PostgreSQL, and it must have got there by an incremental read.
"""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from annotator.model import Caption, Item, Project, Role
from annotator.frames.live import LiveJudgementFrame, merge_judgement_frames
from annotator.store.analysis_queries import FRAME_COLUMNS, annotators_in, empty_frame, judgement_frame
from annotator.store.frame_versions import data_version
from annotator.store.judgements import save_judgement
from annotator.store.projects import set_practice, write_project
from annotator.store.users import user_id
from tests.apptest_helpers import seed_project

KINDS = ("annotation", "adjudication")
TYPES = ["gender", "age", "scene", "activity", "number"]


def canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as plain values, in key order, for comparing two reads."""
    plain = pd.DataFrame({c: frame[c].astype(object) if isinstance(frame[c].dtype, pd.CategoricalDtype)
                          else frame[c] for c in FRAME_COLUMNS})
    plain["label"] = plain["label"].where(plain["label"].notna(), None)
    return plain.sort_values(["caption_id", "user", "kind"]).reset_index(drop=True)


def assert_same(live: pd.DataFrame, full: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(canonical(live), canonical(full), check_dtype=False)


def _uid(store, name: str) -> int:
    with store.transaction() as conn:
        return user_id(conn, name, create_role=Role.ANNOTATOR)


def _save(store, rng, caps, users, kind="annotation"):
    cap = rng.choice(caps)
    uid = _uid(store, rng.choice(users))
    roll = rng.random()
    if roll < 0.15:
        label, types = None, ()  # a skip, possibly over an earlier judgement
    elif roll < 0.55:
        label, types = "accurate", ()
    else:
        label, types = "inaccurate", tuple(sorted(rng.sample(TYPES, rng.randint(1, 3)), key=TYPES.index))
    save_judgement(store, cap, uid, label=label, error_types=types, kind=kind)


def test_live_frame_equals_a_full_read_after_every_batch(store):
    caps = seed_project(store, "demo", n_items=25, systems=("sys-a", "sys-b"))
    rng = random.Random(7)
    users = ["ann1", "ann2", "ann3"]
    for _ in range(60):
        _save(store, rng, caps, users)
    live = LiveJudgementFrame(store, "demo", kinds=KINDS)
    frame, version = live.get()
    assert_same(frame, judgement_frame(store, "demo", kinds=KINDS))
    assert (live.full_reads, live.delta_reads) == (1, 0)
    again, same_version = live.get()
    assert again is frame and same_version == version  # nothing changed: the same object, no read

    for batch in range(6):
        if batch == 2:
            users.append("newcomer")  # a user the frame has never seen
        if batch == 3:
            with store.transaction() as conn:  # a system the frame has never seen, judged at once
                write_project(conn, Project("demo", items=[Item(key="img0.jpg", captions=[Caption("sys-c", "late")])]))
            from annotator.store.assignments import project_captions
            from annotator.store.projects import project_id
            with store.read() as conn:
                caps = [r.caption_id for r in project_captions(conn, project_id(conn, "demo"))]
        for _ in range(rng.randint(5, 25)):
            _save(store, rng, caps, users, kind="adjudication" if rng.random() < 0.2 else "annotation")
        before = frame
        frame, version = live.get()
        assert_same(frame, judgement_frame(store, "demo", kinds=KINDS))
        assert version == (*data_version(store, "demo"), 0)  # the data version, then the generation
        assert before is not frame
    assert live.full_reads == 1 and live.delta_reads == 6


def test_practice_marks_and_the_clock_force_a_full_read(store):
    caps = seed_project(store, "demo", n_items=6)
    uid = _uid(store, "ann1")
    now = [0.0]
    live = LiveJudgementFrame(store, "demo", full_every=60.0, clock=lambda: now[0])
    save_judgement(store, caps[0], uid, label="accurate")
    live.get()
    save_judgement(store, caps[1], uid, label="accurate")
    live.get()
    assert (live.full_reads, live.delta_reads) == (1, 1)
    set_practice(store, "demo", ["img0.jpg"])  # practice flags live in every row: read everything
    frame, _ = live.get()
    assert (live.full_reads, live.delta_reads) == (2, 1)
    assert frame.loc[frame["caption_id"] == caps[0], "is_practice"].tolist() == [True]
    now[0] = 61.0
    save_judgement(store, caps[2], uid, label="accurate")
    live.get()
    assert (live.full_reads, live.delta_reads) == (3, 1)


def test_a_save_committed_late_within_the_lookback_is_picked_up(store):
    # A save that took an older id than the version already read (PostgreSQL hands ids out before commit)
    # is still found: the changed keys are read from ``lookback`` ids before the last version.
    caps = seed_project(store, "demo", n_items=4)
    uid = _uid(store, "ann1")
    for c in caps[:2]:
        save_judgement(store, c, uid, label="accurate")
    live = LiveJudgementFrame(store, "demo", lookback=5)
    live.get()
    save_judgement(store, caps[2], uid, label="accurate")
    live._version = (live._version[0], live._version[1] + 1, *live._version[2:])  # the version ran ahead of it
    save_judgement(store, caps[3], uid, label="inaccurate", error_types=("age",))
    frame, _ = live.get()
    assert live.delta_reads == 1
    assert_same(frame, judgement_frame(store, "demo"))


def _hand_frame(rows) -> pd.DataFrame:
    """rows: (caption_id, user, kind, label, types, judgement_id)."""
    return pd.DataFrame({
        "caption_id": np.array([r[0] for r in rows], np.int64), "item_id": np.array([r[0] for r in rows], np.int64),
        "is_practice": np.zeros(len(rows), bool), "system": pd.Categorical(["s"] * len(rows)),
        "user": pd.Categorical([r[1] for r in rows]),
        "kind": pd.Categorical([r[2] for r in rows], categories=["annotation", "adjudication"]),
        "label": pd.Categorical([r[3] for r in rows], categories=["accurate", "inaccurate"]),
        "error_types": pd.Categorical([r[4] for r in rows]), "judgement_id": np.array([r[5] for r in rows], np.int64)})


def test_merge_replaces_keys_drops_skips_and_unites_categories():
    old = _hand_frame([(1, "a", "annotation", "accurate", "", 1), (1, "b", "annotation", "inaccurate", "age", 2),
                       (2, "a", "annotation", "inaccurate", "gender", 3), (2, "a", "adjudication", "accurate", "", 4)])
    changed = _hand_frame([(1, "b", "annotation", "accurate", "", 5),      # revised
                           (2, "a", "annotation", None, "", 6),            # skipped over a judgement
                           (3, "zoe", "annotation", "inaccurate", "scene number", 7)])  # new user, new type string
    merged = merge_judgement_frames(old, changed)
    got = sorted(zip(merged["caption_id"], merged["user"].astype(str), merged["kind"].astype(str),
                     merged["label"].astype(object), merged["error_types"].astype(str), merged["judgement_id"]))
    assert got == [(1, "a", "annotation", "accurate", "", 1), (1, "b", "annotation", "accurate", "", 5),
                   (2, "a", "adjudication", "accurate", "", 4), (3, "zoe", "annotation", "inaccurate", "scene number", 7)]
    assert list(merged["user"].cat.categories) == ["a", "b", "zoe"]
    assert len(old) == 4 and old["judgement_id"].tolist() == [1, 2, 3, 4]  # the old frame is untouched
    with_skips = merge_judgement_frames(old, changed, include_skipped=True)
    assert len(with_skips) == 5 and with_skips["label"].isna().sum() == 1
    assert merge_judgement_frames(old, changed.iloc[:0]) is old


@pytest.mark.parametrize("seed", range(3))
def test_merge_equals_rebuilding_from_the_union(seed):
    rng = np.random.default_rng(seed)
    users, kinds = ["u1", "u2", "u3", "u4"], ["annotation", "adjudication"]

    def random_rows(n, start_id):
        return [(int(rng.integers(1, 40)), users[rng.integers(0, 4)], kinds[rng.integers(0, 2)],
                 [None, "accurate", "inaccurate"][rng.integers(0, 3)], "", start_id + k) for k in range(n)]

    def latest(rows):
        out = {}
        for r in rows:
            out[(r[0], r[1], r[2])] = r
        return list(out.values())

    first, second = random_rows(300, 0), random_rows(80, 1000)
    old = _hand_frame([r for r in latest(first) if r[3] is not None])
    changed = _hand_frame(latest(second))
    expected = _hand_frame([r for r in latest(first + second) if r[3] is not None])
    assert_same(merge_judgement_frames(old, changed), expected)


def test_annotators_are_users_with_annotations_only():
    frame = _hand_frame([(1, "zed", "annotation", "accurate", "", 1), (1, "lea", "adjudication", "accurate", "", 2),
                         (2, "amy", "annotation", None, "", 3), (3, "zed", "annotation", "inaccurate", "age", 4)])
    assert annotators_in(frame) == ["amy", "zed"]  # lea only adjudicated
    assert annotators_in(frame[frame["kind"] == "adjudication"]) == []
    assert annotators_in(empty_frame()) == []
