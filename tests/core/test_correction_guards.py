"""Conservative-correction guards, word alignment and diff (pure functions, no database)."""

from __future__ import annotations

import pytest

from annotator.correction import (
    align, check_correction, correction_words, diff_html, diff_text, enforce, load_correction_words,
    merge_corrections, rule_description, tokenize, word_diff,
)
from annotator.errors import GuardViolation, InputError
from annotator.layers import ADJUDICATED, Layer
from annotator.layers import optional_layer as parse_layer  # corrections take None/blank as "no layer"
from annotator.taxonomy import ERROR_TYPE_IDS, taxonomy
from tests.property_helpers import examples


def ok(t, a, b, **kw):
    return check_correction(t, a, b, **kw).ok


# ---------------------------------------------------------------- word lists

def test_word_lists_cover_the_required_swaps():
    w = correction_words()
    assert w.rule_for("clothing_color").name == "colour" and w.rule_for("color").name == "object_colour"
    assert w.rule_for("color").words == w.rule_for("clothing_color").words
    assert w.rule_for("gender").name == "gender" and w.rule_for("age").name == "age"
    assert w.rule_for("clothing_type").name == "clothing"
    # Activity and scene follow phrase rules; no cap on changed words unless one is asked for.
    assert w.rule_for("activity").kind == "verb_phrase" and w.rule_for("scene").kind == "location_phrase"
    assert w.rule_for("number").kind == "number" and w.max_changed_words is None
    gender = w.rules["gender"].pairs
    for a, b in [("man", "woman"), ("boy", "girl"), ("men", "women"), ("boys", "girls"), ("he", "she"),
                 ("his", "her"), ("him", "her"), ("gentleman", "lady"), ("husband", "wife"), ("father", "mother")]:
        assert frozenset((a, b)) in gender
    assert frozenset(("man", "girl")) not in gender
    age = w.rules["age"].pairs
    for a, b in [("man", "boy"), ("woman", "girl"), ("men", "boys"), ("women", "girls"), ("lady", "girl")]:
        assert frozenset((a, b)) in age
    assert frozenset(("man", "girl")) not in age and frozenset(("man", "woman")) not in age
    for word in ["shirt", "t-shirt", "jacket", "coat", "dress", "skirt", "jeans", "shorts", "hat", "cap", "helmet"]:
        assert word in w.rules["clothing"].words
    assert {"blue", "red", "white", "black", "orange"} <= w.rules["colour"].words
    # Patterns are deliberately not colours.
    assert not {"striped", "checkered", "plaid"} & w.rules["colour"].words
    # Every rule names a real error type.
    assert set(w.type_rules) <= set(ERROR_TYPE_IDS)


def test_word_list_file_errors_name_the_file(refuses):
    refuses(load_correction_words, "w.toml", '[rules]\nnot_a_type = "x"\n[x]\nrule = "class"\nwords = ["a"]\n',
            "w.toml.*not_a_type")
    refuses(load_correction_words, "w.toml", '[x]\nrule = "weird"\n', "rule must be")
    refuses(load_correction_words, "w.toml", '[x]\nrule = "pairs"\npairs = [["man", "man"]]\n', "two different words")


def test_guard_reads_rules_from_data(tmp_path):
    """A custom word list changes what the guard allows, without code changes."""
    f = tmp_path / "w.toml"
    f.write_text('[meta]\nmax_changed_words = 1\n[rules]\ncolor = "hues"\n[hues]\nrule = "class"\nwords = ["teal", "mauve"]\n')
    words = load_correction_words(f)
    assert check_correction("color", "a teal car", "a mauve car", words=words).ok
    assert not check_correction("color", "a blue car", "a red car", words=words).ok
    assert not check_correction("activity", "a dog runs fast", "a dog sits still", words=words).ok  # 2 > 1
    assert check_correction("activity", "a dog runs fast", "a dog sits fast", words=words).ok


# ---------------------------------------------------------------- tokens, alignment, diff

def test_tokenize_keeps_hyphens_apostrophes_and_splits_punctuation():
    toks = tokenize("A man's t-shirt, red.")
    assert [t.text for t in toks] == ["A", "man's", "t-shirt", ",", "red", "."]
    assert [(t.start, t.end) for t in toks][:2] == [(0, 1), (2, 7)]


def test_align_is_case_insensitive_and_monotone():
    assert align("A Man runs", "a man runs") == []
    (e,) = align("A man in a blue shirt", "A man in a RED shirt")
    assert (e.tag, e.i1, e.i2, e.old, e.new) == ("replace", 4, 5, ("blue",), ("RED",))
    edits = align("a man is holding a sign", "a sign is holding a man")
    assert [e.tag for e in edits] and all(e.i1 <= e.i2 for e in edits)


def test_word_diff_segments():
    segs = word_diff("A man in a blue shirt.", "A woman in a blue shirt and hat.")
    assert [(s.tag, s.old, s.new) for s in segs] == [
        ("equal", "A", "A"), ("replace", "man", "woman"), ("equal", "in a blue shirt", "in a blue shirt"),
        ("insert", "", "and hat"), ("equal", ".", ".")]


def test_diff_html_escapes_and_marks():
    out = diff_html("A <b>man</b> & dog", "A <b>woman</b> & dog")
    assert "<del>man</del>" in out and "<ins>woman</ins>" in out
    assert "<b>" not in out and "&lt;" in out and "&amp;" in out
    # A script-like caption never survives as markup.
    assert "<script>" not in diff_html("a cat", "a <script>alert(1)</script> cat")


def test_diff_text_plain():
    assert diff_text("A man runs", "A woman runs") == "A [-man-] {+woman+} runs"
    assert diff_text("A man runs", "A man runs") == "A man runs"


# ---------------------------------------------------------------- colour

@pytest.mark.parametrize("etype", ["clothing_color", "color"])
def test_colour_changes_only_colour_words(etype):
    # Colour of clothing is a garment's colour; Color is anything else's (the study's two types).
    thing, other = ("shirt", "car") if etype == "clothing_color" else ("car", "shirt")
    assert ok(etype, f"A man in a blue {thing}", f"A man in a red {thing}")
    assert ok(etype, f"A man in a blue {thing}", f"a man in a Red {thing}")  # case-insensitive
    assert ok(etype, f"A black and white {thing}", f"A brown {thing}")
    assert ok(etype, f"A blue {thing}", f"A blue and white {thing}")  # colour phrase grows next to a colour
    assert ok(etype, f"A light blue {thing}", f"A dark green {thing}")
    assert not ok(etype, f"A man in a blue {other}", f"A man in a red {other}")
    r = check_correction(etype, "A man in a blue shirt", "A man in a red jacket")
    assert not r.ok and "jacket" in r.violations[0]
    assert not ok(etype, "A man in a white shirt", "A man in a checkered shirt")  # patterns are not colours
    assert not ok(etype, "A man in a shirt", "A man in a blue shirt")  # no colour to change
    assert not ok(etype, "A man in a blue shirt", "A man in a shirt")  # colour dropped, not changed
    assert not ok(etype, "A man in a blue shirt", "A woman in a red shirt")


def test_article_may_switch_only_with_an_allowed_change():
    assert ok("clothing_color", "A man in a blue shirt", "A man in an orange shirt")
    assert ok("clothing_color", "A man in an orange shirt", "A man in a blue shirt")
    # The article alone may not change.
    r = check_correction("clothing_color", "a orange shirt", "an orange shirt")
    assert not r.ok and "article" in r.violations[0]
    # Nor may an article appear or disappear, or change to "the".
    assert not ok("clothing_color", "a blue shirt", "blue shirt")
    assert not ok("clothing_color", "the blue shirt", "a red shirt")
    # With age: "a man" -> "an old man" adds an adjective and switches the article.
    assert ok("age", "A man sits", "An old man sits")


# ---------------------------------------------------------------- gender

def test_gender_swaps_keep_age():
    assert ok("gender", "A man is climbing a rock", "A woman is climbing a rock")
    assert ok("gender", "A girl playing soccer with her ball", "A boy playing soccer with his ball")
    assert ok("gender", "Two MEN walk", "Two women walk")
    assert ok("gender", "He holds him", "She holds her")
    assert ok("gender", "The man's dog", "The woman's dog")  # possessive kept
    assert not ok("gender", "The man's dog", "The woman dog")


def test_gender_refuses_man_to_girl_with_reason():
    r = check_correction("gender", "A man is climbing a rock", "A girl is climbing a rock")
    assert not r.ok
    assert "'man' → 'girl'" in r.violations[0] and "age as well as gender" in r.violations[0]
    # A pure age swap under the gender type names the other rule.
    r = check_correction("gender", "A man is climbing", "A boy is climbing")
    assert not r.ok and "changes age" in r.violations[0]
    # Anything else changed is refused too.
    assert not ok("gender", "A girl playing soccer", "A boy playing football")
    assert not ok("gender", "A man runs", "A tall woman runs")


# ---------------------------------------------------------------- age

def test_age_swaps_keep_gender():
    assert ok("age", "A man is climbing", "A boy is climbing")
    assert ok("age", "Two women smile", "Two girls smile")
    assert ok("age", "A lady waves", "A girl waves")
    assert ok("age", "A young man is climbing", "A man is climbing")
    assert ok("age", "An old man sits", "A little boy sits")
    assert not ok("age", "A man is climbing", "A girl is climbing")
    assert not ok("age", "A man is climbing", "A woman is climbing")
    assert not ok("age", "A man is climbing", "Two boys are climbing")
    # An age adjective must stand next to a person word.
    assert not ok("age", "A man climbs a young tree", "A man climbs a tree")


# ---------------------------------------------------------------- clothing type

def test_clothing_type_garments_only():
    assert ok("clothing_type", "A girl in a yellow shirt", "A girl in a yellow swimsuit")
    assert ok("clothing_type", "A man wearing a hat", "A man wearing a helmet")
    assert ok("clothing_type", "A boy in a shirt", "A boy in a tank top")  # multi-word garment
    assert not ok("clothing_type", "A girl in a yellow shirt", "A girl in a blue shirt")
    assert not ok("clothing_type", "A man in a shirt", "A man in a shirt and hat")  # adds a garment
    assert not ok("clothing_type", "A man in a shirt", "A man in a car")
    assert not ok("clothing_type", "A man in a jacket", "A man in a big jacket")


# ---------------------------------------------------------------- other types: limit and order

def test_limit_counts_changed_words():
    # The study's activity example: 3 changed words, allowed with or without a cap of 3.
    r = check_correction("activity", "A man in a suit is holding a sign.", "A man in a suit is talking.")
    assert r.ok and r.changed_words == 3
    assert ok("activity", "A man in a suit is holding a sign.", "A man in a suit is talking.", max_changed_words=3)
    # The cap is an option: off by default, it refuses more changed words when asked for.
    r = check_correction("number", "A man is holding a sign", "Two men are holding signs", max_changed_words=4)
    assert not r.ok and r.changed_words == 5 and "at most 4" in r.violations[0]
    assert ok("number", "A man is holding a sign", "Two men are holding signs")
    assert not ok("scene", "A man in a kitchen", "A man in an office", max_changed_words=0)
    # Punctuation does not count as a word.
    assert check_correction("scene", "A dog in a hallway.", "A dog in a kitchen!").changed_words == 1


def test_limit_refuses_reordering():
    r = check_correction("activity", "A man is holding a sign", "A sign is holding a man")
    assert not r.ok and "word order" in r.violations[0] and "'man'" in r.violations[0]
    r = check_correction("position", "A dog sits on the bench near a tree", "A dog sits near a tree on the bench")
    assert not r.ok and "word order" in " ".join(r.violations)
    # Function words appearing in one place and disappearing in another are not a move.
    r = check_correction("number", "Two dogs run on a beach", "A dog runs on the beach", max_changed_words=4)
    assert r.ok and r.changed_words == 4


def test_unrelated_is_not_correctable():
    with pytest.raises(InputError, match="not corrected"):
        check_correction("unrelated", "a cat", "a dog")
    with pytest.raises(InputError, match="unknown error type"):
        check_correction("nonsense", "a cat", "a dog")


def test_empty_correction_is_a_violation():
    assert not ok("activity", "a dog runs", "   ")


def test_enforce_override():
    bad = check_correction("gender", "A man runs", "A girl runs")
    with pytest.raises(GuardViolation) as info:
        enforce(bad, None)
    assert info.value.violations == bad.violations and info.value.exit_code == 2
    with pytest.raises(GuardViolation):
        enforce(bad, "   ")
    assert enforce(bad, " the person is a girl; age was wrong too ") == "the person is a girl; age was wrong too"
    good = check_correction("gender", "A man runs", "A woman runs")
    assert enforce(good, "unneeded") is None


def test_rule_descriptions():
    assert "colour" in rule_description("clothing_color")
    assert "man ↔ girl" in rule_description("gender")
    assert "at most 5" in rule_description("activity", max_changed_words=5)


# ---------------------------------------------------------------- merging

def test_merge_non_overlapping_edits():
    m = merge_corrections("A man in a blue shirt is holding a sign.", {
        "clothing_color": "A man in a red shirt is holding a sign.",
        "activity": "A man in a blue shirt is talking.",
        "gender": "A woman in a blue shirt is holding a sign."})
    assert m.text == "A woman in a red shirt is talking."
    assert m.applied == ("gender", "clothing_color", "activity") and m.conflicting == ()


def test_merge_single_correction_is_verbatim():
    m = merge_corrections("a man , here", {"gender": "a woman , here"})
    assert m.text == "a woman , here" and m.applied == ("gender",)


def test_merge_overlap_keeps_first_type_in_taxonomy_order():
    m = merge_corrections("A man in a blue shirt", {"clothing_color": "A man in a red shirt",
                                                    "clothing_type": "A man in a green jacket"})
    # clothing_type comes before clothing_color in the taxonomy; their edits both touch "blue".
    assert m.applied == ("clothing_type",) and m.conflicting == ("clothing_color",)
    assert m.text == "A man in a green jacket"


def test_merge_insertions_at_same_place_conflict():
    m = merge_corrections("A dog runs", {"activity": "A dog runs fast", "scene": "A dog runs outside"})
    assert m.applied == ("activity",) and m.conflicting == ("scene",)
    m = merge_corrections("A dog runs", {"gender": "A dog runs", "activity": "A dog walks"})
    assert m.text == "A dog walks"


# ---------------------------------------------------------------- layers

def test_parse_layer():
    assert parse_layer("adjudicated") == ADJUDICATED
    assert parse_layer("annotator:alice") == Layer("annotation", "alice")
    assert parse_layer("bob") == Layer("annotation", "bob")
    assert parse_layer(None) is None and parse_layer(" ") is None
    assert Layer("annotation", "alice").label == "annotator:alice"
    with pytest.raises(InputError):
        parse_layer("annotator:")


def test_every_correctable_type_has_a_guard():
    """Each correctable type either has a word rule or falls back to the limit rule (never crashes)."""
    for t in taxonomy().types:
        if t.correctable:
            r = check_correction(t.id, "A man in a blue shirt runs", "A man in a blue shirt walks")
            assert r.rule in correction_words().rules


# ---------------------------------------------------------------- properties

from hypothesis import given, settings, strategies as st  # noqa: E402


_words = st.sampled_from(["a", "an", "the", "man", "woman", "boy", "girl", "blue", "red", "shirt", "jacket", "runs",
                          "on", "grass", ".", ",", "<b>", "&", "dog's", "t-shirt", "Blue", "MAN"])
_texts = st.lists(_words, min_size=1, max_size=12).map(" ".join)


@settings(max_examples=examples(200), deadline=None)
@given(_texts, st.sampled_from([t.id for t in taxonomy().types if t.correctable]))
def test_unchanged_text_always_passes(text, etype):
    r = check_correction(etype, text, text.upper())
    assert r.ok and r.changed_words == 0


@settings(max_examples=examples(200), deadline=None)
@given(_texts, _texts)
def test_diff_is_escaped_and_covers_both_texts(a, b):
    out = diff_html(a, b)
    stripped = out.replace("<del>", "").replace("</del>", "").replace("<ins>", "").replace("</ins>", "")
    assert "<" not in stripped and ">" not in stripped
    segs = word_diff(a, b)
    assert [t.text.lower() for t in tokenize(" ".join(s.old for s in segs if s.old))] == [t.text.lower() for t in tokenize(a)]
    assert [t.text for t in tokenize(" ".join(s.new for s in segs if s.new))] == [t.text for t in tokenize(b)]


@settings(max_examples=examples(200), deadline=None)
@given(_texts, _texts)
def test_merge_of_one_type_is_that_correction(a, b):
    m = merge_corrections(a, {"activity": b})
    assert m.text == b and m.applied == ("activity",)
