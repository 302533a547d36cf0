"""Textual priors learned from the gold descriptions of training images.

* **unigram**: for each concept (a box's synset, else its label; see
  :func:`.data.box_concept` — WordNet senses are kept apart), the
  number of (description, box) pairs in which a description mentions a box of
  that concept. A box mentioned twice in one description counts once.
* **start**: how many descriptions mention that concept first.
* **follow**: for concepts a, b, how many times a mention of b comes
  *immediately after* a mention of a in a description, i.e. with no other
  box-referring mention in between. In "A [woman|2] in a white [dress|0] and
  gold [boots|5] leaning on a [car|3]" woman→dress, dress→boots and
  boots→car are counted, woman→car is not.

The sequence of a description is its mentions in text order; a mention of
several boxes contributes the concepts of its boxes in the order its ids are
listed, a concept repeated inside one mention once (``[dogs|1,4]`` of two dogs
is one "dog"). Mentions of ids the item has no box for are ignored.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from ..model import Item
from .data import box_concept, no_gc

__all__ = ["TextPriors", "learn_priors", "concept_sequence"]


@dataclass
class TextPriors:
    """Unigram, start and follow counts of concepts, from ``descriptions`` training descriptions."""

    unigram: Counter = field(default_factory=Counter)
    start: Counter = field(default_factory=Counter)
    follow: Counter = field(default_factory=Counter)   # (a, b) → count
    descriptions: int = 0
    images: int = 0

    def arrays(self, vocab: list[str]):
        """Counts aligned with an evaluation vocabulary: (unigram[V], start[V], pair codes, pair counts).

        A pair (a, b) of vocabulary ids is coded ``a * V + b``; codes are
        sorted so that lookups are one ``searchsorted``.
        """
        index = {c: i for i, c in enumerate(vocab)}
        v = len(vocab)
        uni = np.array([self.unigram.get(c, 0) for c in vocab], dtype=np.int64)
        start = np.array([self.start.get(c, 0) for c in vocab], dtype=np.int64)
        codes, counts = [], []
        for (a, b), c in self.follow.items():
            if a in index and b in index:
                codes.append(index[a] * v + index[b])
                counts.append(c)
        order = np.argsort(codes, kind="stable")
        return uni, start, np.asarray(codes, dtype=np.int64)[order], np.asarray(counts, dtype=np.int64)[order]


def concept_sequence(item: Item, mentions, labels: dict[str, str] | None = None) -> list[str]:
    """The concepts a description refers to, in text order (see module docs).

    ``labels`` (box id → concept) may be passed to save recomputing it per description.
    """
    if labels is None:
        labels = {b.box_id: box_concept(b) for b in item.boxes}
    seq: list[str] = []
    for m in sorted(mentions, key=lambda m: (m.start, m.end)):
        seen: list[str] = []
        for b in m.box_ids:
            c = labels.get(b)
            if c is not None and c not in seen:
                seen.append(c)
        seq.extend(seen)
    return seq


def learn_priors(items: Iterable[Item]) -> TextPriors:
    """Count unigram, start and follow statistics over the gold descriptions of ``items``."""
    with no_gc():
        pri = TextPriors()
        for item in items:
            labels = {b.box_id: box_concept(b) for b in item.boxes}
            used = False
            for ref in item.references:
                boxes = {b for m in ref.mentions for b in m.box_ids if b in labels}
                if not boxes:
                    continue
                used = True
                pri.descriptions += 1
                pri.unigram.update(labels[b] for b in boxes)
                seq = concept_sequence(item, ref.mentions, labels)
                pri.start[seq[0]] += 1
                pri.follow.update(zip(seq, seq[1:]))
            pri.images += used
    return pri
