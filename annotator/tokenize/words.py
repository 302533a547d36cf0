"""Word tokens for lexical diversity: the one place where caption text becomes tokens.

Every diversity measure (TTR family, HD-D, MTLD, MATTR, TTR curves, the lexical
diversity ratio) reads tokens produced here, so all of them see exactly the same
tokens. Scoring metrics (BLEU, CIDEr …) have their own tokenisation in
:mod:`annotator.tokenize.ptb`; the two are deliberately independent.

The rules, in order (each switchable in :class:`TokenSettings`):

1. Unicode normalisation (NFKC by default), so full-width letters and
   ligatures compare equal to their plain forms; typographic apostrophes
   (’ ‘ ʼ) become ``'``.
2. Lower-casing (``lowercase``, on by default): "Dog" and "dog" are one type.
3. Punctuation stripping (``strip_punctuation``, on by default): a token is a
   run of letters and digits (any script); everything else (punctuation, the
   underscore and symbols) separates tokens and is dropped. With ``keep_inner_marks``
   (default on) an apostrophe or hyphen *between* two letters or digits stays
   inside the token, so "t-shirt" and "man's" are single tokens while a
   trailing "dogs'" or a dash " - " is stripped. With punctuation stripping
   off, tokens are the whitespace-separated pieces of the text, unchanged.
4. Digit dropping (``strip_digits``, off by default): tokens made only of
   digits are removed.

Typical use::

    from annotator.tokenize.words import TokenSettings, tokenize, tokenize_corpus

    tokenize("A man's T-shirt, on the beach.")        # ['a', "man's", 't-shirt', 'on', 'the', 'beach']
    corpus = tokenize_corpus(captions, TokenSettings())  # integer ids + vocabulary + caption boundaries

A :class:`TokenCorpus` keeps tokens as integer ids (first-appearance order)
with the vocabulary and the boundaries of each text, which is what the
measures in :mod:`annotator.diversity` consume.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np

from .base import Tokenizer

__all__ = ["TokenSettings", "DEFAULT_TOKEN_SETTINGS", "TokenCorpus", "WordTokenizer", "tokenize", "tokenize_corpus",
           "tokenizer"]

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2010": "-", "\u2011": "-"})


@dataclass(frozen=True)
class TokenSettings:
    """How text becomes tokens (see the module documentation for the exact rules)."""

    lowercase: bool = True
    strip_punctuation: bool = True
    keep_inner_marks: bool = True
    strip_digits: bool = False
    normalization: str | None = "NFKC"

    def __post_init__(self):
        if self.normalization not in (None, "NFC", "NFKC", "NFD", "NFKD"):
            raise ValueError(f"unknown Unicode normalisation {self.normalization!r}")

    def describe(self) -> str:
        """A short human-readable summary, e.g. for table captions and exports."""
        parts = [self.normalization or "no normalisation",
                 "lower-cased" if self.lowercase else "case kept"]
        if self.strip_punctuation:
            parts.append("punctuation stripped" + (" (inner ' and - kept)" if self.keep_inner_marks else ""))
        else:
            parts.append("split on whitespace only")
        if self.strip_digits:
            parts.append("numbers dropped")
        return ", ".join(parts)

    def to_dict(self) -> dict:
        """The settings as a plain dict (for JSON output)."""
        return {"lowercase": self.lowercase, "strip_punctuation": self.strip_punctuation,
                "keep_inner_marks": self.keep_inner_marks, "strip_digits": self.strip_digits,
                "normalization": self.normalization}


DEFAULT_TOKEN_SETTINGS = TokenSettings()

# A "word character" here is a letter or digit of any script: [^\W_] is \w without the underscore.
_WORD = r"[^\W_]+"


@lru_cache(maxsize=32)
def _pattern(keep_inner_marks: bool) -> re.Pattern:
    if keep_inner_marks:
        return re.compile(_WORD + r"(?:['\-]" + _WORD + r")*")
    return re.compile(_WORD)


def tokenizer(settings: TokenSettings = DEFAULT_TOKEN_SETTINGS):
    """A function ``text -> list[str]`` applying ``settings`` (compiled once; reuse it in loops)."""
    norm = settings.normalization
    lower = settings.lowercase
    strip_digits = settings.strip_digits
    find = _pattern(settings.keep_inner_marks).findall if settings.strip_punctuation else None

    def tok(text: str) -> list[str]:
        if norm is not None:
            text = unicodedata.normalize(norm, text)
        text = text.translate(_APOSTROPHES)
        if lower:
            text = text.lower()
        words = find(text) if find is not None else text.split()
        if strip_digits:
            words = [w for w in words if not w.isdigit()]
        return words

    return tok


def tokenize(text: str, settings: TokenSettings = DEFAULT_TOKEN_SETTINGS) -> list[str]:
    """The tokens of one text under ``settings``."""
    return tokenizer(settings)(text)


class WordTokenizer(Tokenizer):
    """The word tokens of :func:`tokenize` under ``settings``, as a :class:`~annotator.tokenize.base.Tokenizer`."""

    name = "words"

    def __init__(self, settings: TokenSettings = DEFAULT_TOKEN_SETTINGS):
        self.settings = settings
        self._tokenize = tokenizer(settings)

    def signature(self) -> str:
        return f"{self.name} ({self.settings.describe()})"

    def __call__(self, text: str) -> list[str]:
        return self._tokenize(text)


@dataclass
class TokenCorpus:
    """Tokens of a list of texts, as integer ids.

    ``ids[k]`` is the vocabulary index of the k-th token of the concatenated
    texts; ids are given in order of first appearance. ``offsets`` has one entry
    more than there are texts: text ``i`` owns ``ids[offsets[i]:offsets[i+1]]``.
    ``settings`` records how the tokens were made (None when they were given
    ready-made).
    """

    ids: np.ndarray
    vocabulary: list[str]
    offsets: np.ndarray
    settings: TokenSettings | None = None
    _counts: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def n_tokens(self) -> int:
        """Number of tokens."""
        return int(self.ids.shape[0])

    @property
    def n_types(self) -> int:
        """Number of distinct tokens (vocabulary size)."""
        return len(self.vocabulary)

    @property
    def n_texts(self) -> int:
        """Number of texts."""
        return int(self.offsets.shape[0]) - 1

    def __len__(self) -> int:
        return self.n_tokens

    @property
    def tokens(self) -> list[str]:
        """The tokens as strings, in order (materialised on each call)."""
        vocab = self.vocabulary
        return [vocab[i] for i in self.ids.tolist()]

    def text_tokens(self, i: int) -> list[str]:
        """Tokens of text ``i``."""
        vocab = self.vocabulary
        return [vocab[k] for k in self.ids[self.offsets[i]:self.offsets[i + 1]].tolist()]

    def counts(self) -> np.ndarray:
        """How often each vocabulary entry occurs (indexed by id)."""
        if self._counts is None:
            self._counts = np.bincount(self.ids, minlength=self.n_types)
        return self._counts

    def select(self, texts: Sequence[int]) -> "TokenCorpus":
        """The corpus of texts ``texts`` (indices, in that order), ids renumbered by first appearance."""
        import pandas as pd
        idx = np.asarray(texts, dtype=np.int64).reshape(-1)
        starts, ends = self.offsets[idx], self.offsets[idx + 1]
        lengths = ends - starts
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        # Positions of every selected token: each text's start plus 0 … length−1.
        positions = np.repeat(starts - offsets[:-1], lengths) + np.arange(int(offsets[-1]))
        codes, uniques = pd.factorize(self.ids[positions], sort=False)
        return TokenCorpus(codes.astype(np.int32, copy=False), [self.vocabulary[u] for u in uniques.tolist()],
                           offsets, self.settings)

    @classmethod
    def from_token_lists(cls, token_lists: Iterable[Sequence[str]], settings: TokenSettings | None = None) -> "TokenCorpus":
        """A corpus from ready-made tokens, one list per text."""
        vocab: dict[str, int] = {}
        get = vocab.setdefault
        flat: list[int] = []
        offsets = [0]
        for toks in token_lists:
            if isinstance(toks, str):
                raise TypeError("each text must be a list of tokens, not a string (use tokenize_corpus for raw text)")
            flat.extend([get(t, len(vocab)) for t in toks])
            offsets.append(len(flat))
        return cls(np.asarray(flat, dtype=np.int32), list(vocab), np.asarray(offsets, dtype=np.int64), settings)

    @classmethod
    def from_tokens(cls, tokens: Sequence[str]) -> "TokenCorpus":
        """A corpus of one text from a flat list of ready-made tokens (fast path for big lists)."""
        import pandas as pd
        if isinstance(tokens, str):
            raise TypeError("give a list of tokens, not a string")
        if len(tokens) == 0:
            return cls(np.zeros(0, np.int32), [], np.zeros(2, np.int64), None)
        # pandas' hash factorisation keeps first-appearance order and runs in C.
        codes, uniques = pd.factorize(np.asarray(tokens, dtype=object), sort=False)
        return cls(codes.astype(np.int32, copy=False), [str(u) for u in uniques],
                   np.asarray([0, len(codes)], dtype=np.int64), None)


def tokenize_corpus(texts: Iterable[str], settings: TokenSettings = DEFAULT_TOKEN_SETTINGS) -> TokenCorpus:
    """Tokenise every text once and return the corpus of integer ids."""
    tok = tokenizer(settings)
    return TokenCorpus.from_token_lists((tok(t) for t in texts), settings)
