"""The lead redraws the decision's error spans on the Adjudication page (AppTest): the spans in the page's
field are what the decision stores, the core refuses one that breaks the span rules by naming it (nothing
stored), and unticking a type or deciding Accurate drops the spans that no longer fit."""

from __future__ import annotations

import json

import pytest

from annotator.spans import Span
from tests.apptest_helpers import visible
from tests.store.test_span_adjudication import _decided, _field, _page, build


def test_the_lead_s_own_spans_are_stored(sqlite_store):
    ids = build(sqlite_store)
    at = _page(sqlite_store, ids)
    # Redrawn: "grass" (5) as position with a fix, and "two" (2) alone as stance; ann2's span replaced.
    drawn = [{"start": 2, "end": 3, "type": "stance"}, {"start": 5, "end": 6, "type": "position", "fix": "sand"}]
    at.text_input(key="adj_spans").input(json.dumps(drawn)).run()
    assert "“grass” (words 5–5) → sand" in next(h.proto.body for h in at.get("html")
                                                  if 'data-testid="adj-decision-spans"' in h.proto.body)
    at.button(key="adj_save").click().run()
    assert not at.error
    assert _decided(sqlite_store, ids[13]).spans == (Span(2, 3, "stance"), Span(5, 6, "position", "sand"))


@pytest.mark.parametrize("drawn, message", [
    ([{"start": 5, "end": 9, "type": "position"}], "Span 1 (tokens 5-9, type 'position') ends beyond the caption, "
                                                     "which has 7 tokens."),
    ([{"start": 2, "end": 4, "type": "stance"}, {"start": 3, "end": 5, "type": "stance"}],
     "Span 2 (tokens 3-5, type 'stance') overlaps span 1 (tokens 2-4, type 'stance') of the same type."),
    ([{"start": 2, "end": 3, "type": "scene"}], "Span 1 (tokens 2-3, type 'scene'): its type is not among the "
                                                  "caption's error types"),
    ([{"start": 2, "end": 3, "type": "stance", "colour": "red"}], "Span 1: unknown field 'colour'"),
    ([{"start": 2, "end": 3, "type": "stance", "fix": "two\u202egod"}], "Span 1: the fix cannot contain the control "
                                                                       "character U+202E"),
])
def test_the_core_refuses_a_decision_s_span_that_breaks_the_rules(sqlite_store, drawn, message):
    ids = build(sqlite_store)
    at = _page(sqlite_store, ids)
    at.text_input(key="adj_spans").input(json.dumps(drawn)).run()
    at.button(key="adj_save").click().run()
    assert message in " ".join(visible(e.value) for e in at.error)
    assert _decided(sqlite_store, ids[13]) is None


def test_unticking_a_type_or_deciding_accurate_drops_the_decision_s_spans(sqlite_store):
    ids = build(sqlite_store)
    at = _page(sqlite_store, ids)
    at.checkbox(key="adj_type_position").uncheck().run()
    assert _field(at) == (Span(2, 4, "stance"),)
    at.radio(key="adj_label").set_value("accurate").run()
    assert _field(at) == ()
    at.button(key="adj_save").click().run()
    decided = _decided(sqlite_store, ids[13])
    assert decided.label.value == "accurate" and decided.spans == ()


def test_the_page_sends_annotate_s_spans_script_on_its_own_widgets(sqlite_store):
    import re

    ids = build(sqlite_store)
    at = _page(sqlite_store, ids)
    (sent,) = [h.proto.body for h in at.get("html") if "__annSpansConfig" in h.proto.body]
    scripts = re.findall(r"<script>(.*?)</script>", sent, flags=re.S)
    (spans_js,) = [js for js in scripts if "__annSpansConfig" in js]
    config = json.loads(re.search(r"const cfg = (\{.*?\});\n", spans_js).group(1))
    assert {k: config[k] for k in ("field", "prefix", "caption", "keyState", "commit")} == {
        "field": "adj_spans", "prefix": "adj", "caption": "adj-caption", "keyState": "__adjudicateKeyState",
        "commit": True}
    # The browser's HTML sanitiser drops a whole script holding text that looks like a tag's start.
    for script in scripts:
        assert not re.search(r"<[/\w!]", script)
