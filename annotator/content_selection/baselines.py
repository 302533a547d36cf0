"""Baseline rankings of an image's boxes, vectorised over a :class:`.data.Group`.

A baseline orders the boxes of each image; at threshold k it selects the
first ``min(k, length)`` of them, where ``length`` is the number of boxes
(or, for the bigram baseline, the length of its chain).

=====================  ===================================================
``random``             a random order (seeded; evaluated over several seeds)
``size``               largest box area first
``position``           box centroid closest to the image centre first
``unigram``            concept mentioned most often in the training
                       descriptions first
``bigram``             greedy chain: the box whose concept most often opens
                       a description, then repeatedly the remaining box whose
                       concept most often *immediately follows* the previous
                       one; the chain stops when no remaining box's concept
                       has ever followed it (count 0)
``unigram+size`` …     textual and visual cue combined by average rank
=====================  ===================================================

The textual baselines read their counts from priors learned elsewhere or,
left one image out, from the priors of a whole corpus minus each image's own
counts (:class:`HeldOut`), which is the same as learning without the image.

Ties
----
* size, position, unigram: equal keys keep the item's box order.
* bigram: equal counts are broken by the unigram order (more frequent
  concept first, then box order). The first box is always chosen, even when
  no candidate concept ever opened a training description (it is then the
  unigram choice); the chain therefore selects at least one box.
* combined: each cue gives every box a rank 1..N, where tied boxes share the
  mean of the positions they span (fractional ranking). For the bigram cue the
  Ns chained boxes get ranks 1..Ns and all others share
  0.5 × ((N + 1) − Ns) + Ns, which is the same rule (3 of 9 chained → 6.5).
  Boxes are ordered by the mean of the two ranks; ties go to the better
  textual rank, then the better visual rank, then box order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .data import Group

__all__ = ["BASELINES", "TEXTUAL", "VISUAL", "Ranking", "PriorArrays", "HeldOut", "rank_group", "average_ranks",
           "bigram_rest_rank", "score_ranking", "random_keys", "needs_priors"]

VISUAL = ("size", "position")
TEXTUAL = ("unigram", "bigram")
BASELINES = ("random", "size", "position", "unigram", "bigram",
             "bigram+size", "bigram+position", "unigram+size", "unigram+position")


def needs_priors(name: str) -> bool:
    """Whether baseline ``name`` ranks by textual priors (unigram, bigram and their combinations)."""
    return name.split("+")[0] in TEXTUAL


@dataclass(frozen=True)
class PriorArrays:
    """Training counts aligned with an evaluation vocabulary (see TextPriors.arrays)."""

    unigram: np.ndarray
    start: np.ndarray
    codes: np.ndarray
    counts: np.ndarray

    @property
    def size(self) -> int:
        """Vocabulary size V (pair codes are ``a * V + b``)."""
        return len(self.unigram)

    def follow(self, codes: np.ndarray) -> np.ndarray:
        """Follow counts for an array of pair codes (0 for pairs never seen)."""
        if self.codes.size == 0:
            return np.zeros(codes.shape, dtype=np.int64)
        pos = np.searchsorted(self.codes, codes).clip(max=self.codes.size - 1)
        return np.where(self.codes[pos] == codes, self.counts[pos], 0)


@dataclass(frozen=True)
class HeldOut:
    """The images' own counts per box position, taken out of corpus-wide priors (leave one image out).

    ``unigram[i, j]`` and ``start[i, j]`` are image i's own counts of the
    concept of its box j; ``follow[i, a, b]`` its own count of the concept of
    box b immediately following the concept of box a. Subtracting them from
    priors learned on a corpus that includes image i gives exactly the
    priors learned on the corpus without it.
    """

    unigram: np.ndarray   # (I, n)
    start: np.ndarray     # (I, n)
    follow: np.ndarray    # (I, n, n)


class _Counts:
    """The prior counts a group's boxes see: corpus counts, minus each image's own when held out."""

    def __init__(self, group: Group, pri: PriorArrays, own: HeldOut | None):
        self.group, self.pri, self.own = group, pri, own
        self.unigram = pri.unigram[group.label]
        self.start = pri.start[group.label]
        if own is not None:
            self.unigram = self.unigram - own.unigram
            self.start = self.start - own.start

    def follow(self, rows: np.ndarray, prev: np.ndarray) -> np.ndarray:
        """(I, n) counts of each box's concept immediately following the concept of box ``prev`` of each image."""
        lab = self.group.label
        out = self.pri.follow(lab[rows, prev][:, None] * self.pri.size + lab)
        return out if self.own is None else out - self.own.follow[rows, prev]


@dataclass(frozen=True)
class Ranking:
    """Box positions per image, best first, and how many of them may be selected."""

    order: np.ndarray   # (I, n)
    length: np.ndarray  # (I,)


def average_ranks(key: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``key`` ascending along the last axis; tied values share their mean rank."""
    less = (key[..., None, :] < key[..., :, None]).sum(-1)
    equal = (key[..., None, :] == key[..., :, None]).sum(-1)
    return less + (equal + 1) / 2.0


def bigram_rest_rank(n_boxes, n_selected):
    """The shared rank of the boxes a bigram chain did not select: 0.5 × ((N+1) − Ns) + Ns."""
    return 0.5 * ((n_boxes + 1) - n_selected) + n_selected


def _stable_order(key: np.ndarray) -> np.ndarray:
    return np.argsort(key, axis=1, kind="stable")


def _full(order: np.ndarray) -> Ranking:
    return Ranking(order, np.full(order.shape[0], order.shape[1], dtype=np.int64))


def _bigram(group: Group, cnt: _Counts) -> Ranking:
    count, n = group.label.shape
    rows = np.arange(count)
    # Tie-break: position in the unigram order (stable, so box order last).
    uorder = _stable_order(-cnt.unigram)
    tierank = np.empty_like(uorder)
    np.put_along_axis(tierank, uorder, np.arange(n)[None, :].repeat(count, 0), axis=1)
    tie = (n - 1) - tierank
    avail = np.ones((count, n), dtype=bool)
    active = np.ones(count, dtype=bool)
    length = np.zeros(count, dtype=np.int64)
    pos_key = n + tierank          # unchosen boxes follow in unigram order (display only)
    score = cnt.start
    for t in range(n):
        key = np.where(avail, score * n + tie, -1)
        best = key.argmax(axis=1)
        if t > 0:
            active &= score[rows, best] > 0
            if not active.any():
                break
        r = rows[active]
        b = best[active]
        pos_key[r, b] = t
        avail[r, b] = False
        length += active
        score = cnt.follow(rows, best)
    return Ranking(_stable_order(pos_key), length)


def _text_ranks(name: str, group: Group, cnt: _Counts) -> np.ndarray:
    if name == "unigram":
        return average_ranks(-cnt.unigram.astype(float))
    chain = _bigram(group, cnt)
    count, n = group.label.shape
    ranks = np.empty((count, n), dtype=float)
    np.put_along_axis(ranks, chain.order, np.arange(1, n + 1, dtype=float)[None, :].repeat(count, 0), axis=1)
    rest = bigram_rest_rank(n, chain.length.astype(float))[:, None]
    return np.where(ranks > chain.length[:, None], rest, ranks)


def _visual_key(name: str, group: Group) -> np.ndarray:
    return -group.area if name == "size" else group.dist


_MASK = (1 << 64) - 1


def _splitmix(x: np.ndarray) -> np.ndarray:
    # SplitMix64 finaliser on uint64 arrays (wrapping arithmetic is intended).
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def random_keys(ikey: np.ndarray, n: int, seed: int, run: int = 0) -> np.ndarray:
    """Pseudo-random uint64 keys ``(I, n)`` for the boxes of images with item hashes ``ikey``.

    A pure function of (item key, box position, seed, run): an image gets the
    same random order wherever it is evaluated, alone or among thousands.
    """
    salt = ((seed & 0xFFFFFFFF) << 32 | (run & 0xFFFFFFFF)) * 0x9E3779B97F4A7C15 & _MASK
    base = _splitmix(ikey.astype(np.uint64) ^ np.uint64(salt))
    boxes = np.arange(n, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)
    return _splitmix(base[:, None] ^ boxes[None, :])


def rank_group(name: str, group: Group, pri: PriorArrays | None = None, *, seed: int = 0, run: int = 0,
               held_out: HeldOut | None = None) -> Ranking:
    """The ranking of baseline ``name`` for every image of ``group``.

    Textual baselines need ``pri`` (with ``held_out``, each image's own counts
    are taken out of it first); ``random`` draws from (``seed``, ``run``).
    """
    if name == "random":
        return _full(_stable_order(random_keys(group.ikey, group.n, seed, run)))
    if name in VISUAL:
        return _full(_stable_order(_visual_key(name, group)))
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; choose from {', '.join(BASELINES)}")
    if pri is None:
        raise ValueError(f"the {name} baseline needs textual priors")
    cnt = _Counts(group, pri, held_out)
    if name == "unigram":
        return _full(_stable_order(-cnt.unigram))
    if name == "bigram":
        return _bigram(group, cnt)
    text, visual = name.split("+")
    t = _text_ranks(text, group, cnt)
    v = average_ranks(_visual_key(visual, group).astype(float))
    # lexsort: last key is primary; it is stable, so box order breaks the final ties.
    return _full(np.lexsort((v, t, (t + v) / 2.0), axis=-1))


def score_ranking(group: Group, ranking: Ranking, ks: np.ndarray):
    """Per-image P, R, F (each ``(I, K)``) of selecting the first ``min(k, length)`` boxes, for every k in ``ks``."""
    hits = np.take_along_axis(group.gold, ranking.order[:, None, :], axis=2)
    cum = hits.cumsum(axis=2, dtype=np.int32)
    size = np.minimum(ks[None, :], ranking.length[:, None])           # |S| per image and k
    inter = np.take_along_axis(cum, (size - 1).clip(min=0)[:, None, :], axis=2).astype(float)
    inter = np.where(size[:, None, :] > 0, inter, 0.0)   # an empty selection scores 0
    valid = group.valid[:, :, None]
    m = group.valid.sum(axis=1)[:, None].astype(float)
    p = (inter / np.maximum(size, 1)[:, None, :] * valid).sum(axis=1) / m
    r = (inter / group.gsize[:, :, None] * valid).sum(axis=1) / m
    s = p + r
    f = np.divide(2 * p * r, s, out=np.zeros_like(s), where=s > 0)
    return p, r, f
