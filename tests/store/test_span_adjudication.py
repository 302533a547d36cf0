"""Adjudication shows both annotators' spans, pre-fills their union per type and keeps what the lead keeps
(annotator.adjudication on SQLite and PostgreSQL; the Adjudication page through AppTest)."""

from __future__ import annotations

import json

import pytest

from annotator.adjudication import adjudicate, caption_case, span_voters, suggested_decision
from annotator.errors import InputError
from annotator.model import Role
from annotator.spans import Span, parse_spans
from annotator.store.judgements import current_judgement, insert_judgement
from annotator.store.users import user_id
from tests.apptest_helpers import page_test
from tests.store.test_agreement_store import PROJECT, build_project

# c13 is "caption B3: two dogs on grass 3": ann1 ticked stance and position, ann2 stance.
ANN1 = (Span(3, 4, "stance", "dogs lying"), Span(4, 6, "position", "beside grass"))
ANN2 = (Span(2, 4, "stance"),)


def build(store) -> list[int]:
    ids = build_project(store)
    with store.transaction() as conn:
        insert_judgement(conn, ids[13], user_id(conn, "ann1"), label="inaccurate", error_types=["stance", "position"],
                         spans=ANN1)
        insert_judgement(conn, ids[13], user_id(conn, "ann2"), label="inaccurate", error_types=["stance"], spans=ANN2)
    return ids


def test_the_decision_starts_from_the_union_of_the_spans_and_stores_what_is_kept(store):
    ids = build(store)
    case = caption_case(store, PROJECT, ids[13])
    start = suggested_decision(case, ["ann1", "ann2"])
    # stance: ann1's "dogs" lies inside ann2's "two dogs": joined, no fix (only ann1's shorter span had one).
    assert start.spans == (Span(2, 4, "stance"), Span(4, 6, "position", "beside grass"))
    assert span_voters(case, ["ann1", "ann2"]) == [(Span(2, 4, "stance"), ("ann2",)), (ANN1[0], ("ann1",)),
                                                   (ANN1[1], ("ann1",))]
    assert suggested_decision(case, ["ann2"]).spans == ANN2
    rev = adjudicate(store, ids[13], "lea", Role.LEAD, "inaccurate", ["stance"], spans=[Span(2, 4, "stance", "two dogs lie")])
    with store.read() as conn:
        decided = current_judgement(conn, ids[13], user_id(conn, "lea"), "adjudication")
    assert decided.revision == rev and decided.spans == (Span(2, 4, "stance", "two dogs lie"),)
    # Adjudicated: the form starts from the decision, its spans included.
    assert suggested_decision(caption_case(store, PROJECT, ids[13])).spans == decided.spans
    with pytest.raises(InputError, match=r"span 1 \(tokens 4-6, type 'position'\): its type is not among"):
        adjudicate(store, ids[13], "lea", Role.LEAD, "inaccurate", ["stance"], spans=[ANN1[1]])


def _page(store, ids):
    """The Adjudication page of lea on c13 with ann1 and ann2 chosen."""
    at = page_test("adjudicate", store.url, user="lea", role="lead", project=PROJECT).run()
    at.multiselect(key="adj_annotators").set_value(["ann1", "ann2"]).run()
    at.selectbox(key="adj_caption").set_value(ids[13]).run()
    assert not at.exception, at.exception
    return at


def _field(at) -> tuple:
    return parse_spans(at.text_input(key="adj_spans").value)


def _decided(store, caption_id):
    with store.read() as conn:
        return current_judgement(conn, caption_id, user_id(conn, "lea"), "adjudication")


def test_adjudication_page_shows_who_marked_what_and_keeps_the_chosen_spans(sqlite_store):
    ids = build(sqlite_store)
    at = _page(sqlite_store, ids)
    shown = next(h.proto.body for h in at.get("html") if 'data-testid="adj-spans"' in h.proto.body)
    assert "<th>ann1</th>" in shown and "<th>ann2</th>" in shown
    assert "Stance: “dogs” (words 3–3) → dogs lying" in shown
    # The caption once, with one row of marks per annotator under its words (the page's script draws them).
    import html as html_
    import re
    caption = next(h.proto.body for h in at.get("html") if 'data-testid="adj-caption"' in h.proto.body)
    marks = json.loads(html_.unescape(re.search(r'data-marks="([^"]*)"', caption).group(1)))
    assert marks["rows"] == ["ann1", "ann2"]
    assert [m[:3] + [m[4]] for m in marks["marks"] if m[0] == 0 and m[1] == 3] == [[0, 3, 4, "ann1: Stance → dogs lying"]]
    # The decision's spans start as the union per type, in the field the page's script draws and redraws.
    assert _field(at) == (Span(2, 4, "stance"), Span(4, 6, "position", "beside grass"))
    listed = next(h.proto.body for h in at.get("html") if 'data-testid="adj-decision-spans"' in h.proto.body)
    assert "“on grass” (words 4–5) → beside grass · ann1" in listed
    # The lead drops the position span (the type stays, not localised).
    at.text_input(key="adj_spans").input(json.dumps([{"start": 2, "end": 4, "type": "stance"}])).run()
    at.button(key="adj_save").click().run()
    decided = _decided(sqlite_store, ids[13])
    assert decided.error_types == ("stance", "position") and decided.spans == (Span(2, 4, "stance"),)


def test_adjudicate_command_takes_spans(store, capsys):
    import json

    from tests.cli_helpers import run_cli
    ids = build(store)
    code, out, _ = run_cli(capsys, "--db", store.url, "adjudicate", "--project", PROJECT, "--caption", str(ids[13]),
                           "--user", "lea", "--label", "inaccurate", "--types", "stance", "--json",
                           "--spans", '[{"start": 2, "end": 4, "type": "stance", "fix": "two dogs lie"}]')
    assert code == 0 and json.loads(out)["spans"] == [{"start": 2, "end": 4, "type": "stance", "fix": "two dogs lie"}]
    code, _, err = run_cli(capsys, "--db", store.url, "adjudicate", "--project", PROJECT, "--caption", str(ids[13]),
                           "--user", "lea", "--label", "inaccurate", "--types", "stance", "--spans", "[oops")
    assert code == 2 and "--spans: spans must be a JSON list" in err
