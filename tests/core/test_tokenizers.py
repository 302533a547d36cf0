"""Every tokeniser behind one interface (annotator.tokenize): by name from the registry, called with one text,
each gives exactly the tokens of the batch form the measures and metrics use."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from annotator.tokenize import REGISTRY, Tokenizer, get_tokenizer
from annotator.tokenize.ptb import clear_cache, ptb_tokenize
from annotator.tokenize.whitespace import ref_tokens
from annotator.tokenize.words import TokenSettings, tokenize

TEXTS = ["A man's T-shirt, on the beach.", "  Two dogs\tplay\x1cin   the ＳＮＯＷ — 3 balls!", "", "naïve café déjà-vu"]


def test_the_registry_names_every_tokeniser():
    assert sorted(REGISTRY) == ["ptb", "whitespace", "words"]
    for name, kind in REGISTRY.items():
        assert issubclass(kind, Tokenizer) and kind.name == name
        assert get_tokenizer(name).signature().startswith(name)
    with pytest.raises(ValueError, match="unknown tokeniser 'spacy'; choose one of words, whitespace, ptb"):
        get_tokenizer("spacy")


def test_words_are_the_diversity_tokens():
    assert get_tokenizer("words")(TEXTS[0]) == ["a", "man's", "t-shirt", "on", "the", "beach"]
    kept = TokenSettings(lowercase=False, strip_punctuation=False)
    words = get_tokenizer("words", settings=kept)
    assert words.signature() == "words (NFKC, case kept, split on whitespace only)"
    for text in TEXTS:
        assert get_tokenizer("words")(text) == tokenize(text)
        assert words(text) == tokenize(text, kept)


def test_whitespace_tokens_are_the_ones_bleu_and_cider_number():
    whitespace = get_tokenizer("whitespace")
    voc, ids, lens = ref_tokens(TEXTS)
    by_id = {i: w for w, i in voc.words.items()}
    numbered = np.split(ids, np.cumsum(lens)[:-1])
    for text, text_ids in zip(TEXTS, numbered):
        assert whitespace(text) == text.split() == [by_id[i] for i in text_ids.tolist()]


@pytest.mark.skipif(shutil.which("java") is None, reason="PTB tokenisation needs Java (no `java` on PATH)")
def test_ptb_tokens_are_the_scorers_ptb_text_split():
    clear_cache()
    ptb = get_tokenizer("ptb")
    assert ptb("A man's hat (red), isn't it?") == ["a", "man", "'s", "hat", "-lrb-", "red", "-rrb-", "is", "n't", "it"]
    for text, line in zip(TEXTS, ptb_tokenize(TEXTS)):
        assert ptb(text) == line.split()
