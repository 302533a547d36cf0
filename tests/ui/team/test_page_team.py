"""AppTest of the Team page on the constructed team of tests/core/test_team.py: the page shows the report's figures."""

from __future__ import annotations

from datetime import timedelta

import pytest

from annotator.store.judgements import insert_judgement
from annotator.store.users import user_id
from tests.apptest_helpers import page_test, refused
from tests.conftest import join_background_readers
from tests.core.test_team import DAY3, build_team


@pytest.fixture
def crew(sqlite_store):
    return sqlite_store, build_team(sqlite_store)


def _metrics(at):
    return {m.label: m.value for m in at.metric}


def test_page_shows_the_hand_counted_figures(crew):
    store, c = crew
    at = page_test("team", store.url, user="lea", role="lead", project="crew").run()
    assert not at.exception and not at.error
    assert _metrics(at) == {"Assigned": "12", "Done": "7", "Skipped": "2", "Fine pass pending": "1", "Not started": "2"}
    people = at.dataframe[0].value
    rows = {r["annotator"]: r for r in people.to_dict(orient="records")}
    assert (rows["amy"]["done"], rows["bob"]["fine pass pending"], rows["cat"]["assigned"]) == (4, 1, 0)
    # one format per column, as the page writes it (one decimal)
    assert rows["bob"]["median seconds"] == "13.5"
    assert rows["amy"]["captions per hour"] == "135.0"
    assert rows["bob"]["last active (UTC)"] == "2026-03-03 08:00:00"
    pair = at.dataframe[1].value.iloc[0]
    assert (pair["annotator A"], pair["annotator B"], pair["shared captions"]) == ("amy", "bob", 3)
    assert len(at.get("vega_lite_chart")) == 1

    # A save elsewhere, then Refresh: the figures follow.
    with store.transaction() as conn:
        insert_judgement(conn, c[0], user_id(conn, "bob"), label="inaccurate", error_types=["gender"], seconds=20,
                         at=DAY3 + timedelta(hours=2))
    at.button(key="team_refresh").click().run()
    assert _metrics(at)["Done"] == "8" and _metrics(at)["Fine pass pending"] == "0"


def test_no_none_cells(sqlite_store):
    """Annotators without timed judgements: "—" in the cells, not "None" or an empty cell."""
    from tests.store.test_agreement_store import PROJECT, build_project
    build_project(sqlite_store)
    at = page_test("team", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    for frame in (d.value for d in at.dataframe):
        assert not any(v is None for col in frame.columns for v in frame[col]), frame
    people = at.dataframe[0].value
    assert (people["median seconds"] == "—").all() and (people["last active (UTC)"] != "").all()


@pytest.mark.parametrize("role", ["annotator", "analyst"])
def test_other_roles_are_refused(crew, role):
    store, _ = crew
    at = refused("team", store.url, user="amy", role=role, project="crew")
    assert not at.metric


def test_a_restarted_server_opens_the_dashboards_from_their_snapshots(crew, tmp_path, monkeypatch):
    # The pages keep their frames in ANNOTATOR_FRAME_CACHE; after a restart (the processes' caches emptied)
    # Team and Agreement read only what was saved since, and show the same figures.
    import streamlit as st

    from annotator.frames import assignments, live
    store, _ = crew
    folder = tmp_path / "frames"
    monkeypatch.setenv("ANNOTATOR_FRAME_CACHE", str(folder))
    first = page_test("team", store.url, user="lea", role="lead", project="crew").run()
    agreement = page_test("agreement", store.url, user="lea", role="lead", project="crew").run()
    assert not first.exception and not agreement.exception
    join_background_readers()
    assert len(list(folder.rglob("*.npz"))) == 3  # the team frame, the dashboards' frame, the assignments

    st.cache_resource.clear()  # a new server process
    full_reads = []
    real_frame, real_assignments = live.judgement_frame, assignments.read_assignment_frame
    monkeypatch.setattr(live, "judgement_frame", lambda *a, **k: (
        full_reads.append("judgements") if k.get("changed_after") is None else None) or real_frame(*a, **k))
    monkeypatch.setattr(assignments, "read_assignment_frame",
                        lambda *a, **k: full_reads.append("assignments") or real_assignments(*a, **k))
    again = page_test("team", store.url, user="lea", role="lead", project="crew").run()
    agreement_again = page_test("agreement", store.url, user="lea", role="lead", project="crew").run()
    assert not again.exception and not agreement_again.exception
    assert full_reads == []
    assert _metrics(again) == _metrics(first)
    pd_equal = [a.value.equals(b.value) for a, b in zip(first.dataframe, again.dataframe)]
    assert pd_equal and all(pd_equal)
    assert [m.value for m in agreement_again.metric] == [m.value for m in agreement.metric]


def test_the_page_refreshes_itself_and_shows_the_last_hour(crew):
    """Issue 24 item 10: a switch (on by default) that re-reads the figures every 30 s, and within-day progress."""
    store, c = crew
    at = page_test("team", store.url, user="lea", role="lead", project="crew").run()
    assert not at.exception
    assert at.toggle(key="team_auto_refresh").value is True
    assert "Within the hour: nobody saved a judgement in the last hour." in [x.value for x in at.caption]
    with store.transaction() as conn:
        insert_judgement(conn, c[5], user_id(conn, "amy"), label="accurate", error_types=[], seconds=4.0)
    join_background_readers()
    at.toggle(key="team_auto_refresh").set_value(False)
    at.button(key="team_refresh").click().run()
    assert not at.exception
    (recent,) = [d.value for d in at.dataframe if "judged in the last hour" in d.value.columns]
    assert recent.to_dict(orient="records") == [
        {"annotator": "amy", "judged in the last hour": 1, "active in the last 10 minutes": True}]
