"""The diversity tokeniser (annotator.tokenize.words): its rules and the corpus of integer ids."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.tokenize.words import TokenCorpus, TokenSettings, tokenize, tokenize_corpus


def test_default_rules():
    assert tokenize("A man's T-shirt, on the beach.") == ["a", "man's", "t-shirt", "on", "the", "beach"]
    # trailing apostrophes, dashes between spaces, underscores and symbols are separators
    assert tokenize("The dogs' ball - red & blue_ish!") == ["the", "dogs", "ball", "red", "blue", "ish"]
    # typographic apostrophe and NFKC (full-width letters, ligature)
    assert tokenize("A woman\u2019s ＣＡＴ and a \ufb01sh") == ["a", "woman's", "cat", "and", "a", "fish"]
    assert tokenize("3 dogs, 12 cats") == ["3", "dogs", "12", "cats"]
    assert tokenize("Café crème à Paris") == ["café", "crème", "à", "paris"]
    assert tokenize("") == [] and tokenize(" ... ") == []


def test_settings_switch_each_rule():
    assert tokenize("Dog DOG dog", TokenSettings(lowercase=False)) == ["Dog", "DOG", "dog"]
    assert tokenize("t-shirt man's", TokenSettings(keep_inner_marks=False)) == ["t", "shirt", "man", "s"]
    assert tokenize("A dog, barking.", TokenSettings(strip_punctuation=False)) == ["a", "dog,", "barking."]
    assert tokenize("2 dogs and 3", TokenSettings(strip_digits=True)) == ["dogs", "and"]
    assert tokenize("ＣＡＴ", TokenSettings(normalization=None)) == ["ｃａｔ"]
    with pytest.raises(ValueError):
        TokenSettings(normalization="NFX")
    assert "lower-cased" in TokenSettings().describe()
    assert TokenSettings(strip_digits=True).to_dict()["strip_digits"] is True


def test_corpus_ids_and_boundaries():
    c = tokenize_corpus(["A dog.", "", "a cat and a dog"])
    assert c.vocabulary == ["a", "dog", "cat", "and"]
    assert c.ids.tolist() == [0, 1, 0, 2, 3, 0, 1]
    assert c.offsets.tolist() == [0, 2, 2, 7]
    assert (c.n_tokens, c.n_types, c.n_texts) == (7, 4, 3)
    assert c.text_tokens(1) == [] and c.text_tokens(2) == ["a", "cat", "and", "a", "dog"]
    assert c.tokens == ["a", "dog", "a", "cat", "and", "a", "dog"]
    assert c.counts().tolist() == [3, 2, 1, 1]
    assert c.settings == TokenSettings()


def test_ready_made_tokens():
    flat = TokenCorpus.from_tokens(["b", "a", "b", "c"])
    assert flat.vocabulary == ["b", "a", "c"] and flat.ids.tolist() == [0, 1, 0, 2] and flat.n_texts == 1
    empty = TokenCorpus.from_tokens([])
    assert empty.n_tokens == 0 and empty.n_types == 0
    lists = TokenCorpus.from_token_lists([["x", "y"], ["y"]])
    assert lists.ids.tolist() == [0, 1, 1] and lists.offsets.tolist() == [0, 2, 3]
    with pytest.raises(TypeError):
        TokenCorpus.from_tokens("a string")
    with pytest.raises(TypeError):
        TokenCorpus.from_token_lists(["not", "lists"])
    assert np.array_equal(tokenize_corpus(["b a b c"]).ids, flat.ids)
