"""AppTest of the error-analysis page on the hand-made project."""

from __future__ import annotations

import pytest

from tests.apptest_helpers import page_test, texts
from tests.store.test_agreement_store import PROJECT, build_project


@pytest.fixture
def project_store(sqlite_store):
    build_project(sqlite_store)
    return sqlite_store


def _frames(at):
    return [d.value for d in at.dataframe]


def test_adjudicated_layer_side_by_side(project_store):
    at = page_test("analysis", project_store.url, user="ana", role="analyst", project=PROJECT).run()
    assert not at.exception
    assert "5 captions are left out" in texts(at)
    assert "3 inaccurate captions have no known error types" in texts(at)
    errors = _frames(at)[0]
    assert list(errors.columns)[:3] == ["errors", "sysA", "sysB"]
    # Adjudicated typed captions: sysA c0, c1 (2 types), c4, c8; sysB c10, c15, c16.
    assert errors["sysA"].tolist() == [3, 1, 0, 0] and errors["sysB"].tolist() == [3, 0, 0, 0]
    assert len(at.get("download_button")) == 5


def test_one_annotator_one_system_and_examples(project_store):
    at = page_test("analysis", project_store.url, user="ana", role="analyst", project=PROJECT).run()
    at.selectbox(key="ana_layer").set_value("annotator:ann1").run()
    at.multiselect(key="ana_systems").set_value(["sysA"]).run()
    assert not at.exception
    m = {x.label: x.value for x in at.metric}
    assert m["Captions judged"] == "10" and m["Inaccurate"] == "70%"
    errors = _frames(at)[0]
    assert errors["descriptions"].tolist() == [6, 1, 0, 0]
    types = _frames(at)[1].set_index("name")
    assert types.loc["Gender", "count"] == 2 and types.loc["Wrong subject", "count"] == 0
    # Issue 24 item 9: one of id or name, and every table full width, none squeezed beside a chart.
    assert "type" not in types.columns
    assert all(len(c.dataframe) == 0 for c in at.columns), "a table sits in a column beside a chart"
    at.selectbox(key="ana_ex_type").set_value("gender").run()
    ex = _frames(at)[-1]
    assert ex["item_key"].tolist() == ["img0", "img1"]
    assert ex["text"].tolist()[0] == "caption A0: a man in a *red* shirt | 0"
    assert not any("*red*" in str(md.value) for md in at.markdown)
    assert "caption A0: a man in a *red* shirt | 0" in [t.value for t in at.text]
    at.toggle(key="ana_no_practice").set_value(True).run()
    assert {x.label: x.value for x in at.metric}["Captions judged"] == "9"


@pytest.mark.parametrize("role,allowed", [("lead", True), ("admin", True), ("annotator", False)])
def test_roles(project_store, role, allowed):
    at = page_test("analysis", project_store.url, user="someone", role=role, project=PROJECT).run()
    refused = any("Not allowed" in e.value for e in at.error)
    assert refused is (not allowed)


def test_every_bar_labelled_upright_and_whole(project_store):
    """Issue 38 item 9: the 20-type chart names every bar (no label dropped for lack of room, none cut like
    "Scene / event / lo…"), and the errors-per-description chart's labels stand upright."""
    import json

    from annotator.taxonomy import taxonomy
    at = page_test("analysis", project_store.url, user="ana", role="analyst", project=PROJECT).run()
    assert not at.exception
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    errors = next(s for s in specs if s["encoding"]["x"]["field"] == "errors")
    assert errors["encoding"]["x"]["axis"]["labelAngle"] == 0
    types = next(s for s in specs if s["encoding"]["y"]["field"] == "type")
    axis = types["encoding"]["y"]["axis"]
    assert axis["labelOverlap"] is False and axis["labelLimit"] == 0
    bars = len(taxonomy().types) * 2  # two systems side by side
    assert types["height"] >= 24 * bars  # a bar's row holds its label's line
