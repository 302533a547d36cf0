"""Judgement frames kept on disk between server starts (annotator.frames.snapshots).

A new LiveJudgementFrame (a restarted server) starts from the snapshot the last one wrote, reads only what
was saved since, and must then equal a full read row for row; a snapshot that no longer matches the store
(a backup restored, the database emptied and imported again, a user renamed) is never used; a damaged file
is ignored; and the background check replaces a frame that differs from the store even when the snapshot
passed the fingerprint.
"""

from __future__ import annotations

import random
import time

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import update

from annotator.backup import backup, restore
from annotator.store import open_store
from annotator.frames.live import LiveJudgementFrame, same_judgements
from annotator.frames.snapshots import folder_for, load, save
from annotator.store.analysis_queries import judgement_frame
from annotator.store.frame_versions import fingerprint
from annotator.store.judgements import save_judgement
from annotator.store.schema import users
from tests.apptest_helpers import seed_project
from tests.store.test_live_frame import KINDS, _save, _uid, assert_same


def _wait_for(path, timeout=20.0, *, newer_than=None):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and (newer_than is None or path.stat().st_mtime_ns > newer_than):
            return path.stat().st_mtime_ns
        time.sleep(0.02)
    raise AssertionError(f"no snapshot written at {path}")


def _live(store, folder, **kw):
    return LiveJudgementFrame(store, "demo", kinds=KINDS, snapshots=folder, **kw)


def _seeded(store, n=60, seed=3):
    caps = seed_project(store, "demo", n_items=20, systems=("sys-a", "sys-b"))
    rng = random.Random(seed)
    for _ in range(n):
        _save(store, rng, caps, ["ann1", "ann2", "ann3"], kind="adjudication" if rng.random() < 0.2 else "annotation")
    return caps, rng


def _snapshot_path(live, store):
    from annotator.store.projects import project_id
    with store.read() as conn:
        return live.snapshots.path(project_id(conn, "demo"), live.snapshot_kind)


@pytest.mark.parametrize("timing", [False, True])
def test_a_restarted_frame_starts_from_the_snapshot_and_equals_a_full_read(store, tmp_path, timing):
    caps, rng = _seeded(store)
    folder = folder_for(store.url, tmp_path / "frames")
    kw = {"include_skipped": True, "with_timing": True} if timing else {}
    first = _live(store, folder, **kw)
    first.get()
    path = _wait_for(_snapshot_path(first, store))
    assert first.full_reads == 1 and first.snapshot_loads == 0

    for _ in range(25):  # saves while no server runs: new keys, revisions, skips
        _save(store, rng, caps, ["ann1", "ann2", "ann4"])
    second = _live(store, folder, verify_after=3600, lookback=0, **kw)  # the delta: only the saves since
    frame, version = second.get()
    assert (second.snapshot_loads, second.full_reads, second.delta_reads) == (1, 0, 1)
    full = judgement_frame(store, "demo", kinds=KINDS, **kw)
    assert_same(frame, full)
    assert same_judgements(frame, full)
    if timing:
        by_id = lambda f: f.sort_values("judgement_id")[["seconds", "saved_at"]].to_numpy()  # noqa: E731
        np.testing.assert_array_equal(by_id(frame), by_id(full))
    assert version[-1] == 0


def test_the_background_check_finds_nothing_to_change_after_a_good_start(store, tmp_path):
    caps, rng = _seeded(store)
    folder = folder_for(store.url, tmp_path / "frames")
    _live(store, folder).get()
    written = _wait_for(_snapshot_path(_live(store, folder), store))
    _save(store, rng, caps, ["ann1"])
    live = _live(store, folder, verify_after=0.05)
    frame, version = live.get()
    _wait_for(_snapshot_path(live, store), newer_than=written)  # the check rewrote the snapshot
    again, version_after = live.get()
    assert live.snapshot_loads == 1 and live.snapshot_mismatches == 0 and live.full_reads == 1
    assert version_after == version  # nothing derived from the frame needs computing again
    assert_same(again, judgement_frame(store, "demo", kinds=KINDS))


def test_the_background_check_replaces_a_frame_that_differs(store, tmp_path):
    # A snapshot that passes the fingerprint but is wrong (here: doctored by hand) is replaced by the check,
    # and the version changes so that pages compute their tables again.
    _seeded(store)
    folder = folder_for(store.url, tmp_path / "frames")
    first = _live(store, folder)
    frame, version = first.get()
    path = _snapshot_path(first, store)
    _wait_for(path)
    _, meta = load(path)
    doctored = frame.copy()
    doctored["label"] = doctored["label"].cat.set_categories(["accurate", "inaccurate"])
    doctored.loc[doctored.index[0], "label"] = ("accurate" if doctored["label"].iloc[0] == "inaccurate"
                                                else "inaccurate")
    save(path, doctored, meta)
    live = _live(store, folder, verify_after=0.05, lookback=0)  # (else the delta read covers every row here)
    started, v1 = live.get()
    assert live.snapshot_loads == 1 and not same_judgements(started, frame)
    end = time.monotonic() + 20
    while live.snapshot_mismatches == 0 and time.monotonic() < end:
        time.sleep(0.02)
    fixed, v2 = live.get()
    assert live.snapshot_mismatches == 1
    assert v2[:-1] == v1[:-1] and v2[-1] == v1[-1] + 1
    assert same_judgements(fixed, judgement_frame(store, "demo", kinds=KINDS))


def test_a_user_renamed_since_the_snapshot_means_a_full_read(store, tmp_path):
    _seeded(store)
    folder = folder_for(store.url, tmp_path / "frames")
    first = _live(store, folder)
    first.get()
    _wait_for(_snapshot_path(first, store))
    with store.transaction() as conn:
        conn.execute(update(users).where(users.c.name == "ann1").values(name="ann1-renamed"))
    live = _live(store, folder, verify_after=3600)
    frame, _ = live.get()
    assert live.snapshot_loads == 0 and live.full_reads == 1
    assert "ann1-renamed" in set(frame["user"].astype(str))


def test_a_store_emptied_and_filled_again_is_not_mistaken_for_the_snapshot(tmp_path):
    # The same URL, the same number of judgements, other contents: the fingerprint tells them apart.
    url = f"sqlite:///{tmp_path / 'a.db'}"
    folder = folder_for(url, tmp_path / "frames")
    store = open_store(url)
    _seeded(store, seed=1)
    first = _live(store, folder)
    first.get()
    _wait_for(_snapshot_path(first, store))
    store.dispose()
    (tmp_path / "a.db").unlink()
    store = open_store(url)
    _seeded(store, seed=2)
    live = _live(store, folder, verify_after=3600)
    frame, _ = live.get()
    assert live.snapshot_loads == 0 and live.full_reads == 1
    assert_same(frame, judgement_frame(store, "demo", kinds=KINDS))
    store.dispose()


def test_a_restored_backup_is_not_mistaken_for_the_snapshot(tmp_path):
    url = f"sqlite:///{tmp_path / 'a.db'}"
    folder = folder_for(url, tmp_path / "frames")
    store = open_store(url)
    caps, rng = _seeded(store)
    old = backup(url, tmp_path / "old.db").path
    for _ in range(10):
        _save(store, rng, caps, ["ann1", "ann2"])
    first = _live(store, folder)
    first.get()
    _wait_for(_snapshot_path(first, store))
    restore(old, url, safety_copy=False)
    for _ in range(10):  # as many saves again, so the newest id is where the snapshot's was
        _save(store, random.Random(99), caps, ["ann3"])
    live = _live(store, folder, verify_after=3600)
    frame, _ = live.get()
    assert live.snapshot_loads == 0 and live.full_reads == 1
    assert_same(frame, judgement_frame(store, "demo", kinds=KINDS))
    store.dispose()


def test_a_damaged_snapshot_is_ignored(store, tmp_path, caplog):
    _seeded(store)
    folder = folder_for(store.url, tmp_path / "frames")
    first = _live(store, folder)
    first.get()
    path = _snapshot_path(first, store)
    _wait_for(path)
    path.write_bytes(path.read_bytes()[:200])
    live = _live(store, folder, verify_after=3600)
    frame, _ = live.get()
    assert live.snapshot_loads == 0 and live.full_reads == 1
    assert "frame snapshot" in caplog.text and str(path) in caplog.text
    assert_same(frame, judgement_frame(store, "demo", kinds=KINDS))


def test_the_fingerprint_changes_with_any_judgement_row_up_to_its_id(store):
    caps = seed_project(store, "demo", n_items=4)
    uid = _uid(store, "ann1")
    for c in caps:
        save_judgement(store, c, uid, label="accurate")
    from annotator.store.projects import project_id
    with store.read() as conn:
        pid = project_id(conn, "demo")
        before = fingerprint(conn, pid, 4)
    save_judgement(store, caps[0], uid, label="inaccurate", error_types=("age",))  # a newer row: same print
    with store.read() as conn:
        assert fingerprint(conn, pid, 4) == before
        assert fingerprint(conn, pid, 5) != before


def test_snapshots_are_off_when_the_settings_say_so(tmp_path):
    from annotator.config import load_settings
    assert load_settings({"ANNOTATOR_FRAME_CACHE": "off"}).frame_cache is None
    assert load_settings({"ANNOTATOR_DATA_DIR": str(tmp_path)}).frame_cache == tmp_path / "cache" / "frames"
    assert folder_for("sqlite:///x.db", None) is None
    a = folder_for("postgresql+psycopg://u:secret@h/db", tmp_path)
    assert "secret" not in str(a.root)
    assert a != folder_for("postgresql+psycopg://u@h/other", tmp_path)


def test_save_and_load_keep_every_column(tmp_path):
    frame = pd.DataFrame({
        "caption_id": np.array([3, 1], np.int64), "flag": np.array([True, False]),
        "user": pd.Categorical(["b", "a"], categories=["b", "a", "unused"]),
        "label": pd.Categorical.from_codes([-1, 0], categories=["accurate", "inaccurate"]),
        "empty": pd.Categorical.from_codes([-1, -1], categories=[]),
        "seconds": np.array([1.5, np.nan]),
    })
    save(tmp_path / "f.npz", frame, {"x": 1})
    back, meta = load(tmp_path / "f.npz")
    assert meta["x"] == 1
    pd.testing.assert_frame_equal(back, frame, check_categorical=True, check_dtype=False)
    assert list(back["user"].cat.categories) == ["b", "a", "unused"]
