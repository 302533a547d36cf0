"""Tokens and the word alignment every other part of the correction step is built on.

A caption splits into word tokens (letters and digits, inner hyphens and
apostrophes kept: t-shirt, man's) and single punctuation tokens, each with
its character offsets. :func:`align` gives the word-level edits between an
original and a corrected caption: difflib's SequenceMatcher on lower-cased
tokens, so the alignment is monotone and case changes are not edits.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

# A word (letters/digits, inner hyphens or apostrophes kept: t-shirt, man's) or
# one punctuation character.
_TOKEN_RE = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")
_POSSESSIVE = ("'s", "’s")

_NO_SPACE_BEFORE = {".", ",", "!", "?", ";", ":", ")", "]", "}", "%"}
_NO_SPACE_AFTER = {"(", "[", "{"}


@dataclass(frozen=True)
class Token:
    """A token of a text and where it is (character offsets, end exclusive)."""

    text: str
    start: int
    end: int

    @property
    def is_word(self) -> bool:
        """True for a word token (not punctuation)."""
        return bool(re.match(r"\w", self.text))


def tokenize(text: str) -> list[Token]:
    """Split a caption into word and punctuation tokens, keeping positions."""
    return [Token(m.group(0), m.start(), m.end()) for m in _TOKEN_RE.finditer(text or "")]


def _lower_tokens(text: str) -> list[str]:
    return [t.text.lower() for t in tokenize(text)]


@dataclass(frozen=True)
class Edit:
    """One non-equal block of the alignment: original tokens [i1, i2) became corrected [j1, j2)."""

    tag: str  # "replace" | "delete" | "insert"
    i1: int
    i2: int
    j1: int
    j2: int
    old: tuple[str, ...]
    new: tuple[str, ...]


def _opcodes(a: list[str], b: list[str]):
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def align(original: str, corrected: str) -> list[Edit]:
    """The word-level edits turning ``original`` into ``corrected`` (case-insensitive, monotone)."""
    ta, tb = tokenize(original), tokenize(corrected)
    out = []
    for tag, i1, i2, j1, j2 in _opcodes([t.text.lower() for t in ta], [t.text.lower() for t in tb]):
        if tag != "equal":
            out.append(Edit(tag, i1, i2, j1, j2, tuple(t.text for t in ta[i1:i2]), tuple(t.text for t in tb[j1:j2])))
    return out

