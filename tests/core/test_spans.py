"""Error spans: the form of a span and the rules a judgement's spans follow (annotator.spans)."""

from __future__ import annotations

import pytest

from annotator.errors import InputError
from annotator.spans import (Span, check_spans, decode_spans, encode_spans, marked_tokens, not_localised,
                             parse_spans, spans_json)

CAPTION = "a man in a red shirt rides two horses"  # 9 tokens


def test_spans_parse_in_order_and_round_trip_through_the_stored_form():
    spans = check_spans([{"start": 4, "end": 6, "type": "clothing_color", "fix": "  blue   shirt "},
                         {"start": 7, "end": 8, "type": "number"}],
                        label="inaccurate", error_types=("number", "clothing_color"), caption=CAPTION)
    assert spans == (Span(4, 6, "clothing_color", "blue shirt"), Span(7, 8, "number"))
    assert decode_spans(encode_spans(spans)) == spans
    assert spans_json(spans) == [{"start": 4, "end": 6, "type": "clothing_color", "fix": "blue shirt"},
                                 {"start": 7, "end": 8, "type": "number"}]
    assert encode_spans(()) is None and decode_spans(None) == () and parse_spans("") == ()
    assert parse_spans('[{"start": 0, "end": 2, "type": "gender"}]') == (Span(0, 2, "gender"),)


def test_a_span_whose_type_is_not_ticked_is_refused_naming_the_span():
    with pytest.raises(InputError, match=r"span 2 \(tokens 7-8, type 'number'\): its type is not among"):
        check_spans([{"start": 1, "end": 2, "type": "gender"}, {"start": 7, "end": 8, "type": "number"}],
                    label="inaccurate", error_types=("gender",), caption=CAPTION)


@pytest.mark.parametrize("label, word", [("accurate", "an accurate"), (None, "a skipped")])
def test_accurate_and_skipped_judgements_have_no_spans(label, word):
    with pytest.raises(InputError, match=f"{word} caption has no error spans"):
        check_spans([{"start": 1, "end": 2, "type": "gender"}], label=label, error_types=(), caption=CAPTION)
    assert check_spans([], label=label, error_types=()) == ()


def test_spans_of_one_type_do_not_overlap_but_of_two_types_may():
    both = [{"start": 4, "end": 6, "type": "clothing_color"}, {"start": 5, "end": 6, "type": "clothing_type"}]
    assert len(check_spans(both, label="inaccurate", error_types=("clothing_type", "clothing_color"))) == 2
    with pytest.raises(InputError, match=r"span 2 \(tokens 5-7, type 'color'\) overlaps span 1 \(tokens 1-6"):
        check_spans([{"start": 1, "end": 6, "type": "color"}, {"start": 5, "end": 7, "type": "color"}],
                    label="inaccurate", error_types=("color",))
    # Touching is not overlapping.
    assert len(check_spans([{"start": 1, "end": 3, "type": "color"}, {"start": 3, "end": 4, "type": "color"}],
                           label="inaccurate", error_types=("color",))) == 2


def test_bounds_and_form_are_checked():
    with pytest.raises(InputError, match="ends beyond the caption, which has 9 tokens"):
        check_spans([{"start": 8, "end": 10, "type": "number"}], label="inaccurate", error_types=("number",),
                    caption=CAPTION)
    for bad, match in [({"start": 3, "end": 3, "type": "number"}, "end \\(3\\) must be greater than start"),
                       ({"start": -1, "end": 2, "type": "number"}, "start must be a whole number"),
                       ({"start": True, "end": 2, "type": "number"}, "start must be a whole number"),
                       ({"start": 0, "end": 2, "type": "nope"}, "unknown error type 'nope'"),
                       ({"start": 0, "end": 2}, "missing field 'type'"),
                       ({"start": 0, "end": 2, "type": "number", "why": 1}, "unknown field 'why'"),
                       ({"start": 0, "end": 2, "type": "number", "fix": "a\nb"}, "fix cannot contain"),
                       ({"start": 0, "end": 2, "type": "number", "fix": 3}, "fix must be text"),
                       ("x", "span 1 must be an object")]:
        with pytest.raises(InputError, match=match):
            parse_spans([bad])
    with pytest.raises(InputError, match="JSON list"):
        parse_spans("[oops")


def test_token_helpers():
    spans = (Span(0, 2, "gender"), Span(4, 6, "clothing_color"), Span(5, 7, "clothing_type"), Span(8, 9, "gender"))
    assert marked_tokens(spans) == {"gender": {0, 1, 8}, "clothing_color": {4, 5}, "clothing_type": {5, 6}}
    assert marked_tokens(spans, "gender") == {"gender": {0, 1, 8}}
    assert not_localised(spans, ("gender", "unrelated", "clothing_type")) == ("unrelated",)
