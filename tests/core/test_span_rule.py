"""The span rule of the correction guards (annotator.correction.span_rule) and the pre-filled correction."""

from __future__ import annotations

from annotator.correction import check_correction
from annotator.correction.span_rule import bracketed, prefill, span_violations
from annotator.spans import merge_spans as merge
from annotator.spans import Span

CAPTION = "a man in a red shirt rides two horses ."
SHIRT = Span(4, 6, "clothing_color", "blue shirt")
HORSES = Span(7, 9, "number", "one horse")


def test_edits_inside_the_spans_pass_and_outside_are_named():
    assert span_violations("number", CAPTION, "a man in a red shirt rides one horse .", [HORSES]) == []
    (msg,) = span_violations("number", CAPTION, "a woman in a red shirt rides one horse .", [HORSES])
    assert msg.startswith("'man' → 'woman': changed outside the words marked with Number ('two horses')")
    # The other type's span does not open its words to this correction.
    assert span_violations("number", CAPTION, "a man in a blue shirt rides one horse .", [HORSES, SHIRT]) != []


def test_agreement_words_and_plural_endings_may_change_outside():
    caption = "two dogs are chasing their ball"
    dogs = [Span(0, 1, "number", "one")]
    assert span_violations("number", caption, "one dog is chasing its ball", dogs) == []
    (msg,) = span_violations("number", caption, "one dog is eating its ball", dogs)
    assert msg.startswith("'chasing' replaced: changed outside")
    # An insertion next to a span extends it; elsewhere only agreement words may come in.
    assert span_violations("number", caption, "only one dog is chasing its ball", dogs) == []
    assert span_violations("number", caption, "one dog is chasing its red ball", dogs)[0].startswith("'red' added")


def test_the_guard_takes_the_span_rule_when_the_caption_has_spans_of_the_type():
    # Without spans the colour word-class rule refuses "red shirt" -> "blue jacket" (a garment changed) …
    plain = check_correction("clothing_color", CAPTION, "a man in a blue jacket rides two horses .")
    assert not plain.ok and plain.rule != "spans"
    # … with the span over "red shirt" the marked words decide, and only they may change.
    marked = check_correction("clothing_color", CAPTION, "a man in a blue jacket rides two horses .", spans=[SHIRT])
    assert marked.ok and marked.rule == "spans"
    out = check_correction("clothing_color", CAPTION, "a man in a blue jacket walks two horses .", spans=[SHIRT])
    assert not out.ok and "'rides' replaced: changed outside the words marked with Color of clothing ('red shirt')" in out.violations[0]
    # Spans of another type leave the word-class rule in place.
    assert check_correction("clothing_color", CAPTION, "a man in a blue shirt rides two horses .", spans=[HORSES]).rule != "spans"


def test_prefill_merge_and_brackets():
    assert prefill(CAPTION, [SHIRT, HORSES], "number") == "a man in a red shirt rides one horse ."
    assert prefill(CAPTION, [SHIRT, HORSES]) == "a man in a blue shirt rides one horse ."
    assert prefill(CAPTION, [Span(7, 9, "number")], "number") == CAPTION  # no fix suggested: the caption as it is
    # Two annotators' spans of a type: overlapping ones joined, a fix kept only when it covers the whole run.
    assert merge([Span(7, 8, "number", "one"), Span(7, 9, "number", "one horse"), Span(4, 5, "color")]) == (
        Span(4, 5, "color"), Span(7, 9, "number", "one horse"))
    assert merge([Span(1, 3, "number", "x"), Span(2, 4, "number", "y")]) == (Span(1, 4, "number"),)
    assert bracketed(CAPTION, [HORSES]) == "a man in a red shirt rides [two horses → one horse] ."
