"""Inline correspondence markup: parsing, formatting, round trips and errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


from annotator.correspondence import (
    caption_mentions, check_box_ids, escape, format_markup, has_markup, mentioned_box_ids, parse_markup,
)
from annotator.errors import InputError
from annotator.model import Box, Caption, Item, Mention, Reference
from tests.property_helpers import examples


def test_parse_simple_caption():
    text, mentions = parse_markup("A [woman|2] leans on a [car|3]")
    assert text == "A woman leans on a car"
    assert mentions == (Mention(1, 2, ("2",)), Mention(5, 6, ("3",)))
    assert text.split()[1] == "woman" and text.split()[5] == "car"


def test_parse_several_ids_and_phrases():
    text, mentions = parse_markup("Two [young people|1, 4] ride a [police car|3,3] .")
    assert text == "Two young people ride a police car ."
    # Ids keep their order, duplicates dropped; a phrase spans every token it covers.
    assert mentions == (Mention(1, 3, ("1", "4")), Mention(5, 7, ("3",)))


def test_mention_covers_the_whole_token_with_punctuation():
    text, mentions = parse_markup("gold [boots|5], and (a [car|3]).")
    assert text == "gold boots, and (a car)."
    assert mentions == (Mention(1, 2, ("5",)), Mention(4, 5, ("3",)))
    assert text.split()[4] == "car)."


def test_escapes_give_literal_characters():
    text, mentions = parse_markup(r"a \[b\] c\|d \\ e | f [x\|y \[z\]|7] \q")
    assert text == r"a [b] c|d \ e | f x|y [z] \q"
    assert mentions == (Mention(7, 9, ("7",)),)
    assert not has_markup(r"only \[escaped\] brackets")
    assert has_markup("a [b|1]")


@pytest.mark.parametrize("bad, fragment", [
    ("A [woman|2 leans", "never closed"),
    ("A [woman|2 [car|3] leans", "never closed"),
    ("A [woman|] leans", "bad box id list"),
    ("A [woman|1,,2] leans", "bad box id list"),
    ("A [woman|1 2] leans", "bad box id list"),
    ("A [woman|1|2] leans", "bad box id list"),
    ("A [ |2] leans", "empty phrase"),
    ("A [wo|1][man|2] leans", "share a word"),
])
def test_syntax_errors_are_input_errors_with_a_column(bad, fragment):
    with pytest.raises(InputError) as exc:
        parse_markup(bad, source="captions.txt line 4")
    assert fragment in str(exc.value)
    assert "captions.txt line 4" in str(exc.value) and "column" in str(exc.value)


def test_unknown_box_id_names_caption_and_id():
    with pytest.raises(InputError) as exc:
        parse_markup("A [woman|2] by a [car|7]", box_ids=["0", "2", "3"], source="caption of system 'nic' for item 'img9'")
    msg = str(exc.value)
    assert "'7'" in msg and "caption of system 'nic' for item 'img9'" in msg and "0, 2, 3" in msg
    # Known ids pass.
    assert parse_markup("A [woman|2]", box_ids=["2"])[1] == (Mention(1, 2, ("2",)),)


def test_format_puts_edge_punctuation_outside():
    text = "A blonde woman wearing gold boots, a white top and (a car)."
    mentions = (Mention(2, 3, ("2",)), Mention(5, 6, ("5",)), Mention(8, 9, ("0",)), Mention(10, 12, ("3", "9")))
    marked = format_markup(text, mentions)
    assert marked == "A blonde [woman|2] wearing gold [boots|5], a white [top|0] and ([a car|3,9])."
    assert parse_markup(marked) == (text, mentions)


def test_format_escapes_and_round_trips_special_characters():
    text = "a [b] c|d \\ e"
    mentions = (Mention(1, 2, ("x1",)), Mention(2, 3, ("2",)))
    marked = format_markup(text, mentions)
    # Brackets around a word count as edge punctuation and stay outside (escaped).
    assert marked == "a \\[[b|x1]\\] [c\\|d|2] \\\\ e"
    assert parse_markup(marked) == (text, mentions)
    assert escape("[a|b]\\") == "\\[a\\|b\\]\\\\"


def test_format_refuses_overlapping_or_unwritable_mentions():
    with pytest.raises(ValueError):
        format_markup("a b c", (Mention(0, 2, ("1",)), Mention(1, 3, ("2",))))
    with pytest.raises(ValueError):
        format_markup("a b c", (Mention(2, 4, ("1",)),))
    with pytest.raises(ValueError):
        format_markup("a b c", (Mention(0, 1, ("1,2",)),))


_TOKEN_CHARS = st.sampled_from(list("abcXY019") + list("[]|\\,.()\"'!?"))
_TOKENS = st.lists(st.text(_TOKEN_CHARS, min_size=1, max_size=6), min_size=1, max_size=12)
_IDS = st.lists(st.text(st.sampled_from(list("0123456789abc._-")), min_size=1, max_size=4), min_size=1, max_size=3, unique=True)


@st.composite
def _text_and_mentions(draw):
    tokens = draw(_TOKENS)
    seps = draw(st.lists(st.sampled_from([" ", "  ", "\t", " \n "]), min_size=len(tokens) + 1, max_size=len(tokens) + 1))
    lead = draw(st.sampled_from(["", " "]))
    text = lead + "".join(t + s for t, s in zip(tokens, seps[1:]))
    mentions = []
    pos = 0
    while pos < len(tokens):
        if draw(st.booleans()):
            length = draw(st.integers(1, min(3, len(tokens) - pos)))
            mentions.append(Mention(pos, pos + length, tuple(draw(_IDS))))
            pos += length + draw(st.integers(0, 2))
        else:
            pos += 1
    return text, tuple(mentions)


@settings(max_examples=examples(300), deadline=None)
@given(_text_and_mentions())
def test_round_trip_plain_to_markup_and_back(case):
    text, mentions = case
    marked = format_markup(text, mentions)
    assert parse_markup(marked) == (text, mentions)
    # Formatting the parse of canonical markup gives the same markup.
    assert format_markup(*parse_markup(marked)) == marked


def test_mentioned_box_ids_of_reference_caption_and_mentions():
    ms = (Mention(0, 1, ("1", "4")), Mention(2, 3, ("4",)))
    assert mentioned_box_ids(Reference("a b c", ms)) == {"1", "4"}
    assert mentioned_box_ids(Caption("s", "a b c", ms)) == {"1", "4"}
    assert mentioned_box_ids(ms) == {"1", "4"}
    assert mentioned_box_ids(Caption("s", "no mentions")) == frozenset()


def test_caption_mentions_are_the_stored_ones_checked_against_the_boxes():
    item = Item("img1", boxes=[Box("2", "woman", 0, 0, 1, 1), Box("3", "car", 0, 0, 1, 1)])
    stored = Caption("sysA", "A woman", (Mention(1, 2, ("2",)),))
    assert caption_mentions(stored, item) == (Mention(1, 2, ("2",)),)
    # Text is text: brackets in a stored caption are never read as markup.
    assert caption_mentions(Caption("sysB", "A [woman|2] near a [car|3]"), item) == ()
    assert caption_mentions(Caption("sysC", "A woman near a car"), item) == ()
    with pytest.raises(InputError) as exc:
        caption_mentions(Caption("sysE", "A woman", (Mention(1, 2, ("8",)),), line=4), item)
    assert "sysE" in str(exc.value) and "'8'" in str(exc.value) and "caption line 4" in str(exc.value)
    assert "img1" in str(exc.value)
    with pytest.raises(InputError):
        check_box_ids([Mention(0, 1, ("x",))], ["2"], "somewhere")


def test_caption_correspondences_keeps_the_text():
    from annotator.correspondence import caption_correspondences
    item = Item("img1", boxes=[Box("2", "woman", 0, 0, 1, 1)])
    assert caption_correspondences(Caption("s", "A [woman|2] [UNK]"), item) == ("A [woman|2] [UNK]", ())
    stored = Caption("s", "A woman", (Mention(1, 2, ("2",)),))
    assert caption_correspondences(stored, item) == ("A woman", (Mention(1, 2, ("2",)),))
