"""AppTest of the agreement dashboard on the hand-made project."""

from __future__ import annotations

import pytest

from annotator.store.caption_queries import practice_items
from tests.apptest_helpers import page_test, refused, texts, visible
from tests.store.test_agreement_store import PROJECT, build_project


def ids_of(store) -> list[int]:
    from annotator.store.projects import load_project
    project = load_project(store, PROJECT)
    by_key = {(c.system, it.key): c.caption_id for it in project.items for c in it.captions}
    return [by_key[("sysA", f"img{i}")] for i in range(10)] + [by_key[("sysB", f"img{i}")] for i in range(10)]


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.fixture
def project_store(sqlite_store):
    build_project(sqlite_store)
    return sqlite_store


def test_lead_sees_the_figures_of_a_pair(project_store):
    at = page_test("agreement", project_store.url, user="lea", role="lead", project=PROJECT).run()
    assert not at.exception
    at.multiselect(key="agr_annotators").set_value(["ann1", "ann2"]).run()
    m = _metrics(at)
    assert m["Shared captions"] == "18" and m["Cohen's kappa"] == "0.64" and m["Raw agreement"] == "0.83"
    assert m["Type precision"] == "0.69" and m["Type recall"] == "0.75" and m["Both inaccurate"] == "10"
    assert "2 captions of 1 practice items (4 judgements) are left out" in texts(at)
    assert "Judged inaccurate: ann1 12, ann2 11, both 10" in texts(at)
    # Issue 24 item 8: the per-type table beside its chart (not folded away), the chart as tall as its rows.
    assert "Per-type figures" not in [e.label for e in at.expander]
    beside = [c for c in at.columns if len(c.dataframe) and len(c.get("vega_lite_chart")) == 0]
    (table,) = [c.dataframe[0].value for c in beside if "name" in c.dataframe[0].value.columns]
    rows = int(((table.iloc[:, 3] + table.iloc[:, 4]) > 0).sum())  # the types the chart shows
    import json
    (spec,) = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart") if "Per-type" in c.proto.spec]
    assert rows >= 4 and spec["height"] >= 24 * rows, (spec["height"], rows)
    # The other annotator as reference swaps precision and recall.
    at.selectbox(key="agr_pair").set_value(("ann2", "ann1")).run()
    m = _metrics(at)
    assert m["Type precision"] == "0.75" and m["Type recall"] == "0.69"
    assert len(at.get("download_button")) == 1


def test_disagreement_opens_with_caption_as_plain_text(project_store):
    at = page_test("agreement", project_store.url, user="lea", role="lead", project=PROJECT).run()
    at.multiselect(key="agr_annotators").set_value(["ann1", "ann2"]).run()
    opened = at.selectbox(key="agr_open")
    assert len(opened.options) == 3  # label disagreements outside practice: c4, c5, c12
    at.toggle(key="agr_with_types").set_value(True).run()
    assert len(at.selectbox(key="agr_open").options) == 8
    ids = ids_of(project_store)
    assert at.selectbox(key="agr_open").value == ids[12]  # lowest caption id first; it stays open
    at.selectbox(key="agr_open").set_value(ids[1]).run()  # a type disagreement
    shown = [t.value for t in at.text]
    assert "caption A1: a man in a *red* shirt | 1" in shown
    assert not any("*red*" in str(md.value) for md in at.markdown)
    # The project has no pictures: one compact line names it, no grey canvas (issue 38 item 15).
    assert len(at.image) == 0 and any("no image root is set" in c.value for c in at.caption)


def test_marking_practice_items_changes_the_figures(project_store):
    at = page_test("agreement", project_store.url, user="lea", role="lead", project=PROJECT).run()
    at.multiselect(key="agr_annotators").set_value(["ann1", "ann2"]).run()
    at.text_area(key="agr_practice_keys").input("img0\nimg1").run()
    at.button(key="agr_practice_set").click().run()
    assert not at.exception
    assert practice_items(project_store, PROJECT) == ["img0", "img1", "img9"]
    assert _metrics(at)["Shared captions"] == "14"
    assert "2 items marked as practice." in texts(at)
    at.text_area(key="agr_practice_keys").input("img1\nnope").run()
    at.button(key="agr_practice_unset").click().run()
    assert any("no item 'nope'" in visible(e.value) for e in at.error)
    assert practice_items(project_store, PROJECT) == ["img0", "img1", "img9"]


@pytest.mark.parametrize("role", ["annotator", "analyst"])
def test_other_roles_are_refused(project_store, role):
    at = refused("agreement", project_store.url, user="someone", role=role, project=PROJECT)
    assert not at.metric


def test_needs_two_annotators(sqlite_store):
    at = page_test("agreement", sqlite_store.url, user="lea", role="lead").run()
    assert "There is no project yet" in texts(at)


def test_where_section_shows_the_span_figures_of_the_pair(project_store):
    from annotator.spans import Span
    from annotator.store.judgements import insert_judgement
    from annotator.store.users import user_id
    ids = ids_of(project_store)
    at = page_test("agreement", project_store.url, user="lea", role="lead", project=PROJECT).run()
    at.multiselect(key="agr_annotators").set_value(["ann1", "ann2"]).run()
    at.toggle(key="agr_spans").set_value(True).run()
    assert "No error spans marked by these two yet." in texts(at)
    # "caption A0: a man in a *red* shirt | 0": ann1 marks "man" (3), ann2 "a man" (2-4), both as gender.
    with project_store.transaction() as conn:
        for name, span in (("ann1", Span(3, 4, "gender")), ("ann2", Span(2, 4, "gender", "a woman"))):
            insert_judgement(conn, ids[0], user_id(conn, name), label="inaccurate", error_types=["gender"], spans=[span])
    at = page_test("agreement", project_store.url, user="lea", role="lead", project=PROJECT).run()
    at.multiselect(key="agr_annotators").set_value(["ann1", "ann2"]).run()
    at.toggle(key="agr_spans").set_value(True).run()
    m = _metrics(at)
    assert m["Token micro F1"] == "0.67" and m["Exact span F1"] == "0.00"
    assert m["Typed errors not localised"] == "13 / 13"
