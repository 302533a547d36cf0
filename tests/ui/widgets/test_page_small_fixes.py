"""The smaller fixes of the lead's pages: charts of counts on whole-number axes with systems told apart by hue,
signed changes with a neutral zero, one line-number rule."""

from __future__ import annotations

import json

import pytest

from annotator.ui.widgets.deltas import metric_delta
from tests.apptest_helpers import page_test
from tests.store.test_agreement_store import PROJECT, build_project


@pytest.fixture
def project_store(sqlite_store):
    build_project(sqlite_store)
    return sqlite_store


def _specs(at):
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def _encoding(spec):
    return spec.get("encoding") or spec["layer"][0]["encoding"]


def test_error_type_chart_counts_whole_numbers_and_systems_by_hue(project_store):
    at = page_test("analysis", project_store.url, user="ana", role="analyst", project=PROJECT).run()
    assert not at.exception
    specs = [_encoding(s) for s in _specs(at)]
    types = next(e for e in specs if e.get("y", {}).get("field") == "type")
    assert types["x"]["field"] == "count"
    assert types["x"]["axis"]["format"] == "d" and types["x"]["axis"]["tickMinStep"] == 1
    assert types["x"]["scale"]["domain"][0] == 0 and types["x"]["scale"]["domain"][1] >= 2  # counts, not shares
    assert types["color"]["field"] == "system" and "opacity" not in types          # two systems: two hues
    errors = next(e for e in specs if e.get("x", {}).get("field") == "errors")
    assert errors["y"]["axis"]["format"] == "d"
    # One system: the bars are coloured by group again.
    at.multiselect(key="ana_systems").set_value(["sysA"]).run()
    types = next(e for e in map(_encoding, _specs(at)) if e.get("y", {}).get("field") == "type")
    assert types["color"]["field"] == "group"


@pytest.mark.parametrize("change, expected", [
    (1.254, {"delta": "+1.25"}), (-0.4, {"delta": "-0.40"}),
    (0.0, {"delta": "±0.00", "delta_color": "off", "delta_arrow": "off"}),
    (-0.004, {"delta": "±0.00", "delta_color": "off", "delta_arrow": "off"}),   # rounds to zero: no red arrow
    (None, {"delta": None}), (float("nan"), {"delta": None})])
def test_metric_delta_is_signed_and_zero_is_neutral(change, expected):
    assert metric_delta(change) == expected


def test_projects_without_an_image_root_show_an_empty_cell(project_store):
    at = page_test("data", project_store.url, user="boss", role="admin").run()
    projects = at.dataframe[0].value
    assert projects["image_root"].tolist() == [""]
    assert not any(v is None for col in projects.columns for v in projects[col])
