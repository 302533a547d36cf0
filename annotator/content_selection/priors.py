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
from typing import Iterable, Sequence

import numpy as np

from ..model import Item
from .baselines import HeldOut, PriorArrays
from .data import EvalSet, Group, box_concept, no_gc

__all__ = ["TextPriors", "learn_priors", "concept_sequence", "held_out_priors", "leave_one_out"]


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

    def without(self, part: "TextPriors") -> "TextPriors":
        """These counts with ``part``'s taken out (``part`` must have been counted into them)."""
        return TextPriors(self.unigram - part.unigram, self.start - part.start, self.follow - part.follow,
                          self.descriptions - part.descriptions, self.images - part.images)


def concept_sequence(item: Item, mentions, labels: dict[str, str] | None = None) -> list[str]:
    """The concepts a description refers to, in text order (see module docs).

    ``labels`` (box id → concept, or any key standing for it) may be passed to save recomputing it per description.
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


def held_out_priors(corpus: TextPriors, item: Item) -> TextPriors:
    """The priors of ``corpus`` (which counted ``item``) as if learned without ``item``: leave one image out."""
    return corpus.without(learn_priors([item]))


def leave_one_out(es: EvalSet, items: Sequence[Item]) -> tuple[PriorArrays, dict[int, HeldOut], TextPriors]:
    """Priors of all ``items`` on ``es``'s vocabulary, and each scored image's own counts to take out of them.

    ``es`` is compiled from ``items``. Returns the corpus counts as
    :class:`PriorArrays`, a :class:`HeldOut` per group (by its box count) and
    a :class:`TextPriors` carrying only the numbers of descriptions and images
    counted. Equal to :func:`learn_priors` on ``items`` and, per image, on
    ``items`` without it, in one pass over the descriptions.
    """
    v = len(es.vocab)
    kept = {id(it) for it in es.items}
    rest = learn_priors([it for it in items if id(it) not in kept])
    uni, start, codes, counts = rest.arrays(es.vocab)
    uni, start, code_parts, count_parts = uni.copy(), start.copy(), [codes], [counts]
    held: dict[int, HeldOut] = {}
    descriptions = rest.descriptions
    for g in es.groups:
        s_row, s_con, f_row, f_a, f_b = _sequences(g, es.items)
        held[g.n] = _own_counts(g, s_row, s_con, f_row, f_a, f_b)
        uni += np.bincount(g.label.ravel(), weights=g.gold.sum(axis=1).ravel(), minlength=v).astype(np.int64)
        start += np.bincount(s_con, minlength=v)
        code_parts.append(f_a * v + f_b)
        count_parts.append(np.ones(f_a.size, dtype=np.int64))
        descriptions += s_row.size
    codes, inverse = np.unique(np.concatenate(code_parts), return_inverse=True)
    counts = np.bincount(inverse, weights=np.concatenate(count_parts), minlength=codes.size).astype(np.int64)
    return PriorArrays(uni, start, codes, counts), held, TextPriors(descriptions=descriptions,
                                                                   images=rest.images + len(es.items))


def _sequences(group: Group, items: Sequence[Item]):
    """For every description of the group's images that mentions a box: its image row and first concept id;
    for every immediate succession in it: the image row and the two concept ids (all int arrays)."""
    s_row: list[int] = []
    s_con: list[int] = []
    f_row: list[int] = []
    f_a: list[int] = []
    f_b: list[int] = []
    with no_gc():
        for row, (pos, lab) in enumerate(zip(group.idx.tolist(), group.label.tolist())):
            item = items[pos]
            ids = {b.box_id: c for b, c in zip(item.boxes, lab)}
            for ref in item.references:
                seq = concept_sequence(item, ref.mentions, ids)
                if not seq:
                    continue
                s_row.append(row)
                s_con.append(seq[0])
                f_row.extend([row] * (len(seq) - 1))
                f_a.extend(seq[:-1])
                f_b.extend(seq[1:])
    return tuple(np.asarray(x, dtype=np.int64) for x in (s_row, s_con, f_row, f_a, f_b))


def _own_counts(group: Group, s_row, s_con, f_row, f_a, f_b) -> HeldOut:
    """Each image's own unigram, start and follow counts per box position (rows arrive in ascending order)."""
    lab = group.label
    count, n = lab.shape
    mentions = group.gold.sum(axis=1)                            # (I, n): descriptions that mention each box
    same = (lab[:, :, None] == lab[:, None, :]).astype(np.int64)
    uni = (same @ mentions[:, :, None])[:, :, 0]                 # summed over the boxes of the same concept
    start = _sum_rows(count, (n,), s_row, lab[s_row] == s_con[:, None])
    pairs = (lab[f_row] == f_a[:, None])[:, :, None] & (lab[f_row] == f_b[:, None])[:, None, :]
    follow = _sum_rows(count, (n, n), f_row, pairs)
    return HeldOut(uni, start, follow)


def _sum_rows(count: int, shape: tuple, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """An (count, *shape) array with the sum of ``values`` of each row (``rows`` sorted ascending)."""
    out = np.zeros((count, *shape), dtype=np.int64)
    if rows.size:
        first = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        out[rows[first]] = np.add.reduceat(values.astype(np.int64), first, axis=0)
    return out
