"""AppTest of the adjudication page on the hand-made project."""

from __future__ import annotations

import pytest

from annotator.store.analysis_queries import judgement_frame
from tests.apptest_helpers import page_test, texts
from tests.test_agreement_store import PROJECT, build_project


@pytest.fixture
def ids(sqlite_store):
    return build_project(sqlite_store)


def _adjudications(store):
    f = judgement_frame(store, PROJECT, kinds=("adjudication",))
    return {(int(r.caption_id), str(r.user)): (str(r.label), str(r.error_types)) for r in f.itertuples()}


def test_queue_counts_and_side_by_side(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    assert not at.exception
    # Three annotators: label disagreements c2 c4 c5 c9 c12 c19, type disagreements c1 c3 c13 c18; c1, c4 adjudicated.
    assert "10 disagreements: 8 open, 2 adjudicated." in texts(at)
    assert len(at.selectbox(key="adj_caption").options) == 8
    at.selectbox(key="adj_caption").set_value(ids[19]).run()
    shown = [t.value for t in at.text]
    assert "caption B9: two dogs on grass 9" in shown
    assert "Note: a dog <b>with</b> *wings*" in shown  # notes are plain text
    assert not any("wings" in str(m.value) for m in at.markdown)
    assert "System sysB, line 10, item img9 (practice item)" in shown
    assert len(at.image) == 1


def test_lead_saves_a_decision(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    at.selectbox(key="adj_caption").set_value(ids[12]).run()
    cid = ids[12]
    at.radio(key=f"adj_label_{cid}").set_value("inaccurate").run()
    at.multiselect(key=f"adj_types_{cid}").set_value(["scene"]).run()
    at.text_area(key=f"adj_note_{cid}").input("clearly a kitchen").run()
    at.button(key=f"adj_save_{cid}").click().run()
    assert not at.exception and not at.error
    assert _adjudications(sqlite_store)[(cid, "lea")] == ("inaccurate", "scene")
    assert f"Caption {cid} adjudicated as inaccurate (revision 1)." in texts(at)
    assert "10 disagreements: 7 open, 3 adjudicated." in texts(at)
    # The queue moved on to the next open caption (by caption id; the systems' ids interleave).
    still_open = {ids[i] for i in (2, 3, 5, 9, 13, 18, 19)}
    assert at.selectbox(key="adj_caption").value == min(c for c in still_open if c > cid)


def test_rules_are_enforced(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    cid = ids[12]
    at.selectbox(key="adj_caption").set_value(cid).run()
    at.radio(key=f"adj_label_{cid}").set_value("inaccurate").run()
    at.multiselect(key=f"adj_types_{cid}").set_value([]).run()
    at.button(key=f"adj_save_{cid}").click().run()
    assert any("at least one error type" in e.value for e in at.error)
    assert (cid, "lea") not in _adjudications(sqlite_store)


def test_show_adjudicated_prefills_the_form(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    at.selectbox(key="adj_show").set_value("done").run()
    assert at.selectbox(key="adj_caption").options == [f"caption {ids[1]} · sysA · types disagreement · adjudicated",
                                                       f"caption {ids[4]} · sysA · label disagreement · adjudicated"]
    at.selectbox(key="adj_caption").set_value(ids[4]).run()
    assert at.radio(key=f"adj_label_{ids[4]}").value == "inaccurate"
    assert at.multiselect(key=f"adj_types_{ids[4]}").value == ["color"]
    assert "Adjudicated by lea (revision 1)." in texts(at)


@pytest.mark.parametrize("role", ["annotator", "analyst"])
def test_other_roles_are_refused(sqlite_store, ids, role):
    at = page_test("adjudicate", sqlite_store.url, user="ann1", role=role, project=PROJECT).run()
    assert any("Not allowed" in e.value for e in at.error)
    assert not at.radio
