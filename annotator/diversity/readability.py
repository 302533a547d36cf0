"""Readability of a description corpus: the four measures the lexical-gap study tested (its Section 3.4).

The study tried Flesch–Kincaid grade level, Coleman–Liau, Dale–Chall and the
Automated Readability Index as signs of description quality and found that
they did not track it: informative descriptions are lexically diverse but not
necessarily complex. They are computed here per corpus (a system's captions,
the reference corpus) beside ld, and :mod:`annotator.diversity.correlation`
correlates them with human scores as it does ld and Lg, so that finding can be
checked on a project's own data.

The formulas are the maintained library ``textstat``'s (English: syllables
from the CMU pronouncing dictionary, Dale–Chall's list of familiar words),
never written out here. A corpus is read as one text in which every
description is one sentence: a description without a closing ``.``, ``!`` or
``?`` gets a full stop, since captions often have none and the sentence count
enters every formula. The raw texts are read, not the diversity tokens.
"""

from __future__ import annotations

import math
from typing import Iterable

__all__ = ["READABILITY", "READABILITY_LABELS", "corpus_text", "readability"]

#: Readability measure keys in display order.
READABILITY = ("flesch_kincaid", "coleman_liau", "dale_chall", "ari")

#: Column headings for tables.
READABILITY_LABELS = {"flesch_kincaid": "Flesch–Kincaid grade", "coleman_liau": "Coleman–Liau",
                      "dale_chall": "Dale–Chall", "ari": "ARI"}

#: The textstat function behind each key.
_FUNCTIONS = {"flesch_kincaid": "flesch_kincaid_grade", "coleman_liau": "coleman_liau_index",
              "dale_chall": "dale_chall_readability_score", "ari": "automated_readability_index"}


def corpus_text(texts: Iterable[str]) -> str:
    """The corpus as one text, each non-blank description a sentence (a full stop added where none ends it)."""
    sentences = []
    for t in texts:
        t = " ".join(str(t).split())
        if not t:
            continue
        sentences.append(t if t[-1] in ".!?" else t + ".")
    return " ".join(sentences)


def readability(texts: Iterable[str]) -> dict[str, float]:
    """Flesch–Kincaid grade, Coleman–Liau, Dale–Chall and ARI of a corpus (textstat); NaN for a corpus without words."""
    import textstat
    text = corpus_text(texts)
    if not any(ch.isalnum() for ch in text):
        return {k: math.nan for k in READABILITY}
    return {k: float(getattr(textstat, fn)(text)) for k, fn in _FUNCTIONS.items()}
