"""The process's live dashboard frames and their warm-up at server start (annotator.frames).

After the warm-up, the frames the pages ask for are the ones it read: no further full read, and each equals a
fresh read of the store; the Team page's assignments come from the snapshot it left. The most recently active
projects are warmed first; a server on a URL with no database yet warms nothing and creates nothing; the
agreement page itself uses the warmed frame.
"""

from __future__ import annotations

import random

import pytest

from annotator.frames import shared as live_frames
from annotator.frames.assignments import assignment_frame
from annotator.frames.shared import MAX_FRAMES, dashboard_frame, forget_frames, team_live_frame
from annotator.frames.snapshots import folder_for
from annotator.frames.warm import recently_active_projects, warm_up, warm_up_in_background
from annotator.startup import SERVER_START, TASKS
from annotator.store.analysis_queries import judgement_frame
from annotator.store.assignments import add_assignments
from annotator.store.frame_versions import assignment_version
from annotator.store.projects import project_id
from tests.apptest_helpers import page_test, seed_project
from tests.conftest import join_background_readers
from tests.store.test_live_frame import KINDS, _save, _uid, assert_same


@pytest.fixture(autouse=True)
def _no_frames_kept():
    forget_frames()
    yield
    join_background_readers()
    forget_frames()


def _project(store, name, n_saves, seed):
    caps = seed_project(store, name, n_items=12, systems=("sys-a", "sys-b"))
    rng = random.Random(seed)
    for _ in range(n_saves):
        _save(store, rng, caps, ["ann1", "ann2"], kind="adjudication" if rng.random() < 0.2 else "annotation")
    uid = _uid(store, "ann1")
    with store.transaction() as conn:
        add_assignments(conn, project_id(conn, name), [
            {"caption_id": c, "user_id": uid, "position": i, "is_second": False} for i, c in enumerate(caps)])
    return caps


def test_the_pages_get_the_frames_the_warm_up_read(store, tmp_path):
    caps = _project(store, "demo", 80, 1)
    folder = folder_for(store.url, tmp_path / "frames")
    assert warm_up(store, snapshots=folder, projects=["demo"]) == ["demo"]
    join_background_readers()  # the snapshots the full reads write

    dash, team = dashboard_frame(store, "demo"), team_live_frame(store, "demo")
    assert (dash.full_reads, team.full_reads) == (1, 1)
    frame, _ = dash.get()
    team_frame_, _ = team.get()
    assert (dash.full_reads, dash.delta_reads, team.full_reads) == (1, 0, 1)  # nothing read again
    assert_same(frame, judgement_frame(store, "demo", kinds=KINDS))
    assert_same(team_frame_, judgement_frame(store, "demo", kinds=("annotation",), include_skipped=True,
                                             with_timing=True))
    # Both frames and the assignments were written for the next start.
    with store.read() as conn:
        pid = project_id(conn, "demo")
    assert {p.name for p in folder.root.iterdir()} == {
        folder.path(pid, dash.snapshot_kind).name, folder.path(pid, team.snapshot_kind).name,
        folder.path(pid, "assignments").name}
    version = assignment_version(store, "demo")
    assert sorted(assignment_frame(store, "demo", snapshots=folder, version=version)["caption_id"]) == sorted(caps)

    # A save after the warm-up: the page's next get merges it in (no full read).
    _save(store, random.Random(9), caps, ["ann2"])
    fresh, _ = dash.get()
    assert (dash.full_reads, dash.delta_reads) == (1, 1)
    assert_same(fresh, judgement_frame(store, "demo", kinds=KINDS))


def test_the_most_recently_active_projects_are_warmed_first(store):
    _project(store, "alpha", 10, 2)
    _project(store, "beta", 10, 3)
    seed_project(store, "gamma", n_items=2)  # no judgement at all
    _save(store, random.Random(4), _project(store, "delta", 0, 5), ["ann1"])  # the newest save
    assert recently_active_projects(store, 3) == ["delta", "beta", "alpha"]
    assert recently_active_projects(store, 10) == ["delta", "beta", "alpha", "gamma"]
    assert recently_active_projects(store, 0) == []
    assert warm_up(store) == ["delta", "beta", "alpha"]


def test_one_frame_per_project_and_kind_and_at_most_max_frames(store):
    seed_project(store, "demo", n_items=2)
    first = dashboard_frame(store, "demo")
    assert dashboard_frame(store, "demo") is first and team_live_frame(store, "demo") is not first
    for i in range(MAX_FRAMES):
        dashboard_frame(store, f"p{i}")  # created lazily: nothing is read for an unknown project here
    assert dashboard_frame(store, "demo") is not first  # the least recently used was dropped
    assert len(live_frames._frames) == MAX_FRAMES


def test_no_database_no_warm_up_and_nothing_created(tmp_path):
    target = tmp_path / "none" / "annotator.db"
    warm_up_in_background(f"sqlite:///{target}", snapshot_base=tmp_path / "frames").join(30)
    assert not target.exists() and not (tmp_path / "none").exists() and not (tmp_path / "frames").exists()
    assert not live_frames._frames


def test_the_setting_turns_the_warm_up_off():
    task = next(t for t in TASKS if t.name == "dashboards")
    assert task.switch == "ANNOTATOR_WARM_DASHBOARDS" and task.starts == SERVER_START
    assert task.enabled({}) is True and task.enabled({"ANNOTATOR_WARM_DASHBOARDS": "0"}) is False


def test_the_agreement_page_uses_the_warmed_frame(sqlite_store):
    store = sqlite_store
    caps = _project(store, "demo", 60, 6)
    warm_up(store, projects=["demo"])
    _save(store, random.Random(7), caps, ["ann1"])
    at = page_test("agreement", store.url, project="demo").run()
    assert not at.exception
    live = dashboard_frame(store, "demo")
    # The page brought the warmed frame up to date (one save merged in) instead of reading a frame of its own.
    assert (live.full_reads, live.delta_reads) == (1, 1)


def test_a_small_database_is_not_warmed_unless_projects_are_named(sqlite_store):
    _project(sqlite_store, "demo", 30, 8)
    warm_up_in_background(sqlite_store.url).join(30)
    assert not live_frames._frames  # under WARM_FROM_JUDGEMENTS: the server start is left alone
    warm_up_in_background(sqlite_store.url, projects=["demo"]).join(30)
    assert dashboard_frame(sqlite_store, "demo").full_reads == 1
