"""Corpus BLEU exactly as coco-caption's ``bleu_scorer`` computes it.

Per caption the statistics row is ``[testlen, reflen, guess_1..n,
correct_1..n]``: caption length, the length of the reference closest in
length (ties to the shorter one: coco-caption's ``option='closest'``), the
number of n-grams of each order in the caption and how many of them match the
references with clipping (each n-gram counts at most as often as it occurs in
one reference). The corpus score sums the rows and applies coco-caption's
formula: precisions with the small/tiny smoothing constants 1e-9 and 1e-15,
geometric means of the first k orders, and the brevity penalty
``exp(1 - reflen/testlen)`` when the corpus is shorter than its references.

All rows are computed at once with numpy from the n-gram tables of
:mod:`._ngrams` (the counts are integers, so the order of the sums does not
matter); the per-image scores go through Python's ``pow`` and ``math.exp``
exactly as coco-caption's do.
"""

from __future__ import annotations

import math
from itertools import repeat

import numpy as np

from . import _ngrams
from .base import BatchedMetric, Prepared, Score, Setting

SMALL = 1e-9
TINY = 1e-15


class _BleuRefs:
    __slots__ = ("index", "vocab", "len_matrix")

    def __init__(self, index: _ngrams.RefIndex, len_matrix: np.ndarray):
        self.index = index
        self.vocab = index.vocab
        self.len_matrix = len_matrix


class Bleu(BatchedMetric):
    """BLEU-1…BLEU-n (default n=4) with coco-caption's closest reference length."""

    key = "bleu"
    label = "BLEU"
    settings = (Setting("n", 4, "highest n-gram order", attribute="n"),
                Setting("ref", "closest", "reference length: the closest to the caption's (ties: the shorter)"),
                Setting("smooth", "1e-9,1e-15", "coco-caption's small and tiny constants added to the counts"))
    reference = "pycocoevalcap.bleu.bleu:Bleu"
    description = "Clipped n-gram precision (n = 1 to 4) against all references, geometric mean, brevity penalty."
    citation = "Papineni, Roukos, Ward and Zhu. BLEU: a Method for Automatic Evaluation of Machine Translation. ACL 2002."
    link = "https://aclanthology.org/P02-1040/"

    def __init__(self, n: int = 4, tokenize: str | None = None):
        super().__init__(tokenize)
        if n < 1:
            raise ValueError("n must be at least 1")
        self.n = n
        self.score_keys = tuple(f"Bleu_{k}" for k in range(1, n + 1))
        self.width = 2 + 2 * n

    @property
    def headline_key(self) -> str:
        """BLEU-n, the highest order."""
        return self.score_keys[-1]

    @property
    def score_labels(self) -> dict[str, str]:
        """``Bleu_k`` → ``BLEU-k``."""
        return {key: f"BLEU-{k}" for k, key in enumerate(self.score_keys, start=1)}

    # -- references ------------------------------------------------------------
    def _prepare(self, tok_refs: list[list[str]], samples=None) -> _BleuRefs:
        ix = _ngrams.build(tok_refs, self.n, idf=False)
        counts = ix.counts
        width = int(counts.max(initial=1))
        # padded matrix of reference lengths for the vectorised closest-length choice
        len_matrix = np.full((len(counts), width), -1, dtype=np.int64)
        len_matrix[np.arange(width)[None, :] < counts[:, None]] = ix.lens
        return _BleuRefs(ix, len_matrix)

    # -- statistics ------------------------------------------------------------
    def _rows(self, hyps: list[str], prep: Prepared, items: np.ndarray) -> np.ndarray:
        """Statistics rows of captions ``hyps``, caption j scored against the references of ``items[j]``."""
        ix = prep.data.index
        out = np.zeros((len(hyps), self.width), dtype=np.float64)
        for b, sel in _ngrams.groups(items) if len(items) else ():
            if sel is None:
                return self._block_rows(hyps, prep.data, ix.block(b), items)
            out[sel] = self._block_rows([hyps[j] for j in sel.tolist()], prep.data, ix.block(b), items[sel])
        return out

    def _block_rows(self, hyps: list[str], data: _BleuRefs, blk: _ngrams.RefBlock, items: np.ndarray) -> np.ndarray:
        """:meth:`_rows` of captions whose images are all in the block of tables ``blk``."""
        ix, n = data.index, self.n
        tl, grams = _ngrams.caption_grams(ix, blk, hyps, items, unmatched=False)
        H = len(hyps)
        out = np.zeros((H, self.width), dtype=np.float64)
        out[:, 0] = tl
        out[:, 1] = _closest(data.len_matrix[items], tl)
        for k, (og, bo) in enumerate(zip(grams, blk.orders)):
            out[:, 2 + k] = np.maximum(0, tl - k)
            # clipped matches: a distinct n-gram counts at most as often as in the reference that has it most
            m = og.e >= 0
            if bo.ig_max is None:  # no reference repeats an n-gram of this order: each match counts once
                out[:, 2 + n + k] = np.bincount(og.h[m], minlength=H)
            else:
                clip = np.minimum(og.tf[m], bo.ig_max[og.e[m]])
                out[:, 2 + n + k] = np.bincount(og.h[m], weights=clip, minlength=H)
        return out

    # -- aggregation -----------------------------------------------------------
    def _values(self, testlen, reflen, guess, correct) -> list[float]:
        # the exact arithmetic of BleuScorer.compute_score
        n = self.n
        bleus = []
        bleu = 1.0
        for k in range(n):
            bleu *= float(correct[k] + TINY) / (guess[k] + SMALL)
            bleus.append(bleu ** (1.0 / (k + 1)))
        ratio = (testlen + TINY) / (reflen + SMALL)
        if ratio < 1:
            for k in range(n):
                bleus[k] *= math.exp(1 - 1 / ratio)
        return bleus

    def _seg_values(self, stats: np.ndarray) -> list[list[float]]:
        """Per-image BLEU-1…n of every row, one list per order.

        The arithmetic of BleuScorer.compute_score's per-image scores (counts
        as floats plus tiny/small, products left to right, then libm ``pow``
        and ``exp`` through Python floats), done column-wise.
        """
        n = self.n
        st = np.rint(stats)  # counts are integers
        bleu = np.ones(len(st))
        cols = []
        for k in range(n):
            bleu = bleu * ((st[:, 2 + n + k] + TINY) / (st[:, 2 + k] + SMALL))
            cols.append(np.array(list(map(pow, bleu.tolist(), repeat(1.0 / (k + 1)))), dtype=np.float64))
        ratio = (st[:, 0] + TINY) / (st[:, 1] + SMALL)
        short = np.flatnonzero(ratio < 1)
        if len(short):
            bp = np.array(list(map(math.exp, (1 - 1 / ratio[short]).tolist())), dtype=np.float64)
            for col in cols:
                col[short] *= bp
        return [col.tolist() for col in cols]

    def _aggregate(self, stats: np.ndarray, per_segment: bool) -> Score:
        n = self.n
        tot = stats.sum(axis=0)
        ints = [int(round(x)) for x in tot.tolist()]  # counts are integers; sums stay exact
        testlen, reflen = ints[0], ints[1]
        guess, correct = ints[2:2 + n], ints[2 + n:]
        bleus = self._values(testlen, reflen, guess, correct)
        values = {key: v for key, v in zip(self.score_keys, bleus)}
        per = segments = None
        extra = {"testlen": testlen, "reflen": reflen, "ratio": (testlen + TINY) / (reflen + SMALL),
                 "guess": guess, "correct": correct}
        if per_segment:
            cols = self._seg_values(stats)
            segments = dict(zip(self.score_keys, cols))
            per = list(cols[-1])
        return Score(self.label, bleus[-1], values, self.signature, len(stats), per, extra, segments)

    def _resample(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
        # vectorised version of _values over resamples (same operations, numpy float64)
        n = self.n
        tot = weights @ stats  # R x width, integer-valued
        testlen, reflen = tot[:, 0], tot[:, 1]
        out = np.empty((len(tot), n))
        bleu = np.ones(len(tot))
        for k in range(n):
            bleu = bleu * ((tot[:, 2 + n + k] + TINY) / (tot[:, 2 + k] + SMALL))
            out[:, k] = bleu ** (1.0 / (k + 1))
        ratio = (testlen + TINY) / (reflen + SMALL)
        short = ratio < 1
        if short.any():
            bp = np.exp(1 - 1 / ratio[short])
            out[short] *= bp[:, None]
        return out


def _closest(len_matrix: np.ndarray, tl: np.ndarray) -> np.ndarray:
    """Per row, the reference length closest to tl (ties: the shorter), ignoring -1 padding."""
    diff = np.abs(len_matrix - tl[:, None])
    # rank by (distance, length); padded cells get a distance larger than any real one
    big = int(len_matrix.max(initial=0)) + int(tl.max(initial=0)) + 2
    rank = np.where(len_matrix < 0, big * (big + 1), diff * big + len_matrix)
    return len_matrix[np.arange(len(tl)), rank.argmin(axis=1)]
