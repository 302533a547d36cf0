"""The team dashboard's figures equal a hand count on a constructed team (SQLite and PostgreSQL).

The team, project "crew" (one system, captions c0…c7, item img7 a practice item):

* amy, first annotator of c0…c5: c0 inaccurate (gender) 10 s day 1 09:00; c1 accurate 20 s day 1 09:01,
  saved again 40 s day 2 11:00; c2 inaccurate (scene) 30 s day 1 09:02; c3 skipped day 1 09:03;
  c4 accurate, imported without a time (0 s), day 2 10:00; c5 not started.
* bob, blind second annotator of c0…c3 (staged) and first of c6, c7: c0 inaccurate, types not given yet
  (amy said inaccurate: waiting for the fine pass) 12 s; c1 inaccurate without types (amy said accurate:
  no fine pass) 8 s; c2 inaccurate (scene, number) 25 s; c3 accurate 15 s — all day 2 12:00…12:03;
  c6 skipped day 3 08:00; c7 not started.
* cat, nothing assigned, judged c5 accurate 6 s on day 3 09:30 (an imported judgement).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from sklearn.metrics import cohen_kappa_score

from annotator.agreement import agreement_report
from annotator.cli import main
from annotator.model import Role
from annotator.store.analysis_queries import judgement_frame
from annotator.store.assignments import add_assignments
from annotator.store.judgements import insert_judgement
from annotator.store.projects import project_id, set_practice
from annotator.store.users import create_user, user_id
from annotator.team import read_team_report, team_frame
from tests.apptest_helpers import seed_project
from tests.conftest import join_background_readers

DAY1 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
DAY2 = DAY1 + timedelta(days=1)
DAY3 = DAY1 + timedelta(days=2)
I, A = "inaccurate", "accurate"


def build_team(store) -> list[int]:
    c = seed_project(store, "crew", n_items=8)
    set_practice(store, "crew", ["img7.jpg"])
    with store.transaction() as conn:
        pid = project_id(conn, "crew")
        uid = {n: create_user(conn, n, Role.ANNOTATOR) for n in ("amy", "bob", "cat")}
        rows = [{"caption_id": c[i], "user_id": uid["amy"], "position": i, "is_second": False} for i in range(6)]
        rows += [{"caption_id": c[i], "user_id": uid["bob"], "position": i, "is_second": True} for i in range(4)]
        rows += [{"caption_id": c[i], "user_id": uid["bob"], "position": p, "is_second": False}
                 for p, i in ((4, 6), (5, 7))]
        add_assignments(conn, pid, rows)

        def save(i, who, label, types=(), seconds=0.0, at=DAY1):
            insert_judgement(conn, c[i], uid[who], label=label, error_types=list(types), seconds=seconds, at=at)

        m = timedelta(minutes=1)
        save(0, "amy", I, ["gender"], 10, DAY1)
        save(1, "amy", A, (), 20, DAY1 + m)
        save(2, "amy", I, ["scene"], 30, DAY1 + 2 * m)
        save(3, "amy", None, (), 5, DAY1 + 3 * m)
        save(4, "amy", A, (), 0, DAY2 + timedelta(hours=1))
        save(1, "amy", A, (), 40, DAY2 + timedelta(hours=2))          # a second revision: its time counts
        noon = DAY2 + timedelta(hours=3)
        save(0, "bob", I, (), 12, noon)
        save(1, "bob", I, (), 8, noon + m)
        save(2, "bob", I, ["scene", "number"], 25, noon + 2 * m)
        save(3, "bob", A, (), 15, noon + 3 * m)
        save(6, "bob", None, (), 3, DAY3 - timedelta(hours=1))
        save(5, "cat", A, (), 6, DAY3 + timedelta(minutes=30))
    return c


@pytest.fixture
def team(store):
    return store, build_team(store)


def _rows(report):
    return {r["annotator"]: r for r in report.annotators.to_dict(orient="records")}


def test_figures_equal_a_hand_count(team):
    store, c = team
    report = read_team_report(store, "crew", n_resamples=500)
    rows = _rows(report)
    assert list(report.annotators["annotator"]) == ["amy", "bob", "cat"]
    pick = ["assigned", "done", "skipped", "fine pass pending", "not started"]
    assert {k: rows["amy"][k] for k in pick} == {"assigned": 6, "done": 4, "skipped": 1, "fine pass pending": 0,
                                                  "not started": 1}
    assert {k: rows["bob"][k] for k in pick} == {"assigned": 6, "done": 3, "skipped": 1, "fine pass pending": 1,
                                                  "not started": 1}
    assert {k: rows["cat"][k] for k in pick} == {"assigned": 0, "done": 0, "skipped": 0, "fine pass pending": 0,
                                                  "not started": 0}
    # Timed labelled captions: amy 10, 40 (c1's current revision), 30 (c4 has no time); bob 12, 8, 25, 15.
    assert rows["amy"]["median seconds"] == pytest.approx(30.0)
    assert rows["amy"]["captions per hour"] == pytest.approx(3 / 80 * 3600)
    assert rows["bob"]["median seconds"] == pytest.approx(13.5)
    assert rows["bob"]["captions per hour"] == pytest.approx(4 / 60 * 3600)
    assert rows["cat"]["median seconds"] == pytest.approx(6.0)
    assert rows["amy"]["last active (UTC)"] == "2026-03-02 11:00:00"
    assert rows["bob"]["last active (UTC)"] == "2026-03-03 08:00:00"   # the skip counts as activity
    assert rows["cat"]["last active (UTC)"] == "2026-03-03 09:30:00"
    assert report.totals == {"assigned": 12, "done": 7, "skipped": 2, "fine pass pending": 1, "not started": 2}

    # Assigned captions judged per day (c1 counts on the day of its newest revision).
    assert report.progress.to_dict(orient="records") == [
        {"day": "2026-03-01", "annotator": "amy", "judged": 2, "cumulative": 2},
        {"day": "2026-03-02", "annotator": "amy", "judged": 2, "cumulative": 4},
        {"day": "2026-03-02", "annotator": "bob", "judged": 4, "cumulative": 4},
    ]

    # Agreement so far: amy and bob share c0, c1, c2 with labels (c3 amy skipped); cat shares nothing.
    assert len(report.agreement) == 1
    pair = report.agreement.iloc[0]
    assert (pair["annotator A"], pair["annotator B"], pair["shared captions"]) == ("amy", "bob", 3)
    assert pair["observed agreement"] == pytest.approx(2 / 3)
    assert pair["kappa"] == pytest.approx(cohen_kappa_score([I, A, I], [I, I, I]))
    ref = agreement_report(judgement_frame(store, "crew"), ["amy", "bob"], n_resamples=500)
    assert (pair["kappa low"], pair["kappa high"]) == pytest.approx(ref.first.kappa_ci)


def test_live_frame_refresh_reads_only_the_new_save(team):
    store, c = team
    live = team_frame(store, "crew")
    before = _rows(read_team_report(store, "crew", live=live, n_resamples=50))
    assert (before["bob"]["done"], before["bob"]["fine pass pending"]) == (3, 1)
    with store.transaction() as conn:
        bob = user_id(conn, "bob")
        insert_judgement(conn, c[0], bob, label=I, error_types=["gender"], seconds=20, at=DAY3 + timedelta(hours=2))
        insert_judgement(conn, c[7], bob, label=A, seconds=4, at=DAY3 + timedelta(hours=3))
    after = _rows(read_team_report(store, "crew", live=live, n_resamples=50))
    assert (live.full_reads, live.delta_reads) == (1, 1)
    assert {k: after["bob"][k] for k in ("done", "fine pass pending", "not started", "skipped")} == {
        "done": 5, "fine pass pending": 0, "not started": 0, "skipped": 1}
    assert after["bob"]["median seconds"] == pytest.approx(15.0)      # 4, 8, 15, 20, 25
    assert after["bob"]["last active (UTC)"] == "2026-03-03 12:00:00"
    # A skip saved over a judgement leaves the labelled ones.
    with store.transaction() as conn:
        insert_judgement(conn, c[3], bob, label=None, seconds=1, at=DAY3 + timedelta(hours=4))
    again = _rows(read_team_report(store, "crew", live=live, n_resamples=50))
    assert (again["bob"]["done"], again["bob"]["skipped"]) == (4, 2)


def test_cli_prints_the_same_figures(team, capsys):
    store, _ = team
    assert main(["--db", store.url, "team", "--project", "crew", "--resamples", "500", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    report = read_team_report(store, "crew", n_resamples=500)
    assert out["totals"] == report.totals
    assert out["annotators"][1]["fine pass pending"] == 1 and out["annotators"][2]["assigned"] == 0
    assert out["annotators"][2]["captions per hour"] == pytest.approx(600.0)
    assert out["agreement"][0]["kappa"] == pytest.approx(report.agreement.iloc[0]["kappa"])
    assert main(["--db", store.url, "team", "--project", "crew", "--resamples", "500"]) == 0
    text = capsys.readouterr().out
    assert "bob" in text and "fine pass pending 1" in text and "amy vs bob: 3 shared captions" in text


def test_progress_over_far_apart_days_counts_the_same(team):
    # Save times centuries apart (an import's odd dates) take the counting path for sparse days; the
    # figures are those of the dense path: one row per (day, annotator) with a save that day.
    store, c = team
    with store.transaction() as conn:
        bob = user_id(conn, "bob")
        insert_judgement(conn, c[7], bob, label=A, seconds=4, at=datetime(1900, 1, 2, 3, tzinfo=timezone.utc))
        insert_judgement(conn, c[6], bob, label=A, seconds=4, at=datetime(2900, 5, 6, 7, tzinfo=timezone.utc))
    report = read_team_report(store, "crew", n_resamples=50)
    assert report.progress.to_dict(orient="records") == [
        {"day": "1900-01-02", "annotator": "bob", "judged": 1, "cumulative": 1},
        {"day": "2026-03-01", "annotator": "amy", "judged": 2, "cumulative": 2},
        {"day": "2026-03-02", "annotator": "amy", "judged": 2, "cumulative": 4},
        {"day": "2026-03-02", "annotator": "bob", "judged": 4, "cumulative": 5},
        {"day": "2900-05-06", "annotator": "bob", "judged": 1, "cumulative": 6},
    ]


def test_the_assignment_frame_survives_a_restart_and_follows_every_change(team, tmp_path):
    from annotator.frames.assignments import assignment_frame
    from annotator.frames.snapshots import folder_for
    from annotator.store.frame_versions import assignment_version

    store, c = team
    folder = folder_for(store.url, tmp_path / "frames")

    def read():
        version = assignment_version(store, "crew")
        frame = assignment_frame(store, "crew", snapshots=folder, version=version)
        join_background_readers()  # the snapshot written
        return version, frame

    def plain(frame):
        return sorted(zip(frame["caption_id"], frame["user"].astype(str), frame["is_second"], frame["is_practice"]))

    v1, first = read()
    path = folder.path(v1[0], "assignments")
    assert path.exists()
    stamp = path.stat().st_mtime_ns
    v2, again = read()  # a restarted server: the same version, from the file (not written again)
    assert v2 == v1 and plain(again) == plain(first) and path.stat().st_mtime_ns == stamp
    assert plain(first) == plain(assignment_frame(store, "crew"))

    set_practice(store, "crew", ["img6.jpg"])  # one more practice item (marks travel in the frame): a new version
    v3, marked = read()
    assert v3 != v1
    assert {cid for cid, _, _, p in plain(marked) if p} == {c[6], c[7]}  # img7 was one already
    with store.transaction() as conn:  # every assignment replaced by as many others (ids may start again)
        from sqlalchemy import delete

        from annotator.store.schema import assignments
        pid = project_id(conn, "crew")
        cat, amy = user_id(conn, "cat"), user_id(conn, "amy")
        conn.execute(delete(assignments).where(assignments.c.project_id == pid))
        add_assignments(conn, pid, [{"caption_id": c[i], "user_id": cat, "position": i, "is_second": False}
                                    for i in range(8)]
                        + [{"caption_id": c[i], "user_id": amy, "position": i, "is_second": True} for i in range(4)])
    v4, replaced = read()
    assert v4 != v3 and len(replaced) == len(marked)  # as many rows as before, a new stamp
    assert plain(replaced) == plain(assignment_frame(store, "crew"))
    assert {u for _, u, _, _ in plain(replaced)} == {"cat", "amy"}


def test_every_assignment_write_gives_a_new_stamp_and_a_store_without_one_is_read_from_its_rows(team):
    """The assignment version is one look-up of the stamp the writers leave; a project whose assignments carry
    no stamp (written before stamps existed) gets a version made of its rows, which still tells a change."""
    from sqlalchemy import delete, func, select

    from annotator.store.assignments import replace_assignments
    from annotator.store.project_settings import ASSIGNMENT_STAMP
    from annotator.store.schema import assignments, project_settings
    from annotator.store.frame_versions import assignment_version

    store, c = team
    v1 = assignment_version(store, "crew")
    assert v1[1] == "stamp" and len(v1[2]) == 32
    with store.transaction() as conn:
        pid, amy = project_id(conn, "crew"), user_id(conn, "amy")
        add_assignments(conn, pid, [])  # nothing written: the stamp stays
    assert assignment_version(store, "crew") == v1
    with store.transaction() as conn:
        add_assignments(conn, pid, [{"caption_id": c[7], "user_id": amy, "position": 99, "is_second": False}])
    v2 = assignment_version(store, "crew")
    assert v2[1] == "stamp" and v2 != v1
    with store.transaction() as conn:
        rows = [dict(r._mapping) for r in conn.execute(
            select(assignments.c.caption_id, assignments.c.user_id, assignments.c.position, assignments.c.is_second)
            .where(assignments.c.project_id == pid))]
        replace_assignments(conn, pid, rows)  # the same rows again: still a change of rows, a new stamp
    v3 = assignment_version(store, "crew")
    assert v3 != v2 and v3[1] == "stamp"

    with store.transaction() as conn:  # as a store from before stamps
        conn.execute(delete(project_settings).where(project_settings.c.project_id == pid,
                                                    project_settings.c.key == ASSIGNMENT_STAMP))
        n = conn.execute(select(func.count()).select_from(assignments).where(assignments.c.project_id == pid)).scalar()
    v4 = assignment_version(store, "crew")
    assert v4[1] == "rows" and v4[2] == n
    with store.transaction() as conn:  # moved to another annotator by hand (no stamp written): seen in the rows
        conn.execute(assignments.update().where(assignments.c.caption_id == c[7], assignments.c.user_id == amy)
                     .values(user_id=user_id(conn, "cat")))
    v5 = assignment_version(store, "crew")
    assert v5[1] == "rows" and v5 != v4


def test_recent_activity_within_the_hour_by_hand(team):
    """Issue 24 item 10: progress within the day, counted by hand from the saves of build_team."""
    from annotator.team import recent_activity
    store, _ = team
    frame, _ = team_frame(store, "crew").get()
    ts = lambda d: d.timestamp()  # noqa: E731
    # 55 min before DAY3: bob's skip 5 min ago (no label: not judged, but active); nothing else in the hour
    # (cat's save is 85 min later, amy's and bob's others a day earlier).
    r = recent_activity(frame, ts(DAY3 - timedelta(minutes=55)))
    assert r.to_dict(orient="records") == [
        {"annotator": "bob", "judged in the last hour": 0, "active in the last 10 minutes": True}]
    # 35 and 45 min after DAY3: cat judged one caption 5 (active) and 15 minutes ago (not active any more).
    assert recent_activity(frame, ts(DAY3 + timedelta(minutes=35))).to_dict(orient="records") == [
        {"annotator": "cat", "judged in the last hour": 1, "active in the last 10 minutes": True}]
    assert recent_activity(frame, ts(DAY3 + timedelta(minutes=45))).to_dict(orient="records") == [
        {"annotator": "cat", "judged in the last hour": 1, "active in the last 10 minutes": False}]
    # Noon of day 2 plus 4 min: bob's four labelled saves and amy's revision (at 2 h, 64 min ago: outside).
    r = recent_activity(frame, ts(DAY2 + timedelta(hours=3, minutes=4))).set_index("annotator")
    assert r.loc["bob", "judged in the last hour"] == 4 and r.loc["bob", "active in the last 10 minutes"]
    assert list(r.index) == ["bob"]


def test_assigned_captions_nobody_judged_yet(store):
    # A first start: the local admin has every caption of the sample assigned and has judged none yet.
    c = seed_project(store, "fresh", n_items=3)
    with store.transaction() as conn:
        pid, uid = project_id(conn, "fresh"), create_user(conn, "amy", Role.ANNOTATOR)
        add_assignments(conn, pid, [{"caption_id": cid, "user_id": uid, "position": i, "is_second": False}
                                    for i, cid in enumerate(c)])
    rows = _rows(read_team_report(store, "fresh"))
    assert {k: rows["amy"][k] for k in ("assigned", "done", "skipped", "fine pass pending", "not started")} == {
        "assigned": 3, "done": 0, "skipped": 0, "fine pass pending": 0, "not started": 3}
