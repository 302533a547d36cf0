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
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from . import _ngrams
from .base import Metric, Prepared, Score

SMALL = 1e-9
TINY = 1e-15


class _BleuRefs:
    __slots__ = ("vocab", "packed", "ref_lens", "len_matrix", "unions", "table", "ref_seg", "tuple_twin", "tok_refs")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)


class Bleu(Metric):
    """BLEU-1…BLEU-n (default n=4) with coco-caption's closest reference length."""

    name = "BLEU"

    def __init__(self, n: int = 4, tokenize: str | None = None):
        super().__init__(tokenize)
        if n < 1:
            raise ValueError("n must be at least 1")
        self.n = n
        self.keys = tuple(f"Bleu_{k}" for k in range(1, n + 1))
        self.width = 2 + 2 * n

    def _settings(self) -> list[str]:
        return [f"n={self.n}", "ref=closest", "smooth=1e-9,1e-15"]

    # -- references ------------------------------------------------------------
    def _prepare(self, tok_refs: list[list[str]], force_tuple: bool = False) -> _BleuRefs:
        flat_tokens = [r.split() for rs in tok_refs for r in rs]
        counts = [len(rs) for rs in tok_refs]
        vocab = None if force_tuple else _ngrams.build_vocab(flat_tokens)
        tab = _ngrams.table(flat_tokens, vocab, self.n)
        ref_seg, pos = [], 0
        for c in counts:
            ref_seg.append((pos, pos + c))
            pos += c
        lens = tab.lens
        ref_lens = [lens[a:b] for a, b in ref_seg]
        width = max(counts) if counts else 1
        # padded matrix of reference lengths for the vectorised closest-length choice
        len_matrix = np.full((len(counts), width), -1, dtype=np.int64)
        counts_a = np.asarray(counts)
        len_matrix[np.arange(width)[None, :] < counts_a[:, None]] = lens
        # every n-gram (all orders: their keys never collide) of each item's references
        drop = tab.sentinel
        unions = []
        block = tab.block
        for a, b in ref_seg:
            u = set(block(a, b))
            u.discard(drop)
            unions.append(u)
        return _BleuRefs(vocab=vocab if tab.packed else None, packed=tab.packed, ref_lens=ref_lens,
                         len_matrix=len_matrix, unions=unions, table=tab, ref_seg=ref_seg, tuple_twin=None,
                         tok_refs=tok_refs)

    def _tuple_twin(self, prep: Prepared) -> _BleuRefs:
        data = prep.data
        if not data.packed:
            return data
        with prep.lock:
            if data.tuple_twin is None:
                data.tuple_twin = self._prepare(data.tok_refs, force_tuple=True)
            return data.tuple_twin

    # -- statistics ------------------------------------------------------------
    def _stats(self, hyps: list[str], prep: Prepared):
        data: _BleuRefs = prep.data
        htoks = [h.split() for h in hyps]
        vocab = None
        if data.packed:
            vocab = _ngrams.extend_vocab(data.vocab, htoks)
            if len(vocab) > _ngrams.MAX_PACKED_VOCAB:
                data, vocab = self._tuple_twin(prep), None
        tab = _ngrams.table(htoks, vocab, self.n)
        n = self.n
        out = np.zeros((len(hyps), self.width), dtype=np.float64)
        tl = np.asarray(tab.lens, dtype=np.int64)
        out[:, 0] = tl
        out[:, 1] = _closest(data.len_matrix, tl)
        for k in range(n):
            out[:, 2 + k] = np.maximum(0, tl - k)
        unions, rtab, rseg = data.unions, data.table, data.ref_seg
        seg = tab.seg
        correct = [_correct([seg(i, k) for k in range(n)], unions[i], rtab, rseg[i]) for i in range(len(hyps))]
        if correct:
            out[:, 2 + n:] = np.asarray(correct, dtype=np.float64)
        return out

    def _segment(self, hyp: str, prep: Prepared, index: int):
        data: _BleuRefs = prep.data
        toks = hyp.split()
        try:
            stacked = _ngrams.segment_stacked(toks, data.vocab, data.packed, self.n)
        except OverflowError:
            data = self._tuple_twin(prep)
            stacked = _ngrams.segment_stacked(toks, None, False, self.n)
        keys = _ngrams.per_order(stacked, self.n)
        tl = len(toks)
        reflen = min((abs(l - tl), l) for l in data.ref_lens[index])[1]
        correct = _correct(keys, data.unions[index], data.table, data.ref_seg[index])
        return [tl, reflen] + [max(0, tl - k) for k in range(self.n)] + correct

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

    def _seg_values(self, row) -> list[float]:
        # the per-image arithmetic of BleuScorer.compute_score (float() first, then + tiny)
        n = self.n
        testlen, reflen = row[0], row[1]
        out = []
        bleu = 1.0
        for k in range(n):
            bleu *= (float(row[2 + n + k]) + TINY) / (float(row[2 + k]) + SMALL)
            out.append(bleu ** (1.0 / (k + 1)))
        ratio = (testlen + TINY) / (reflen + SMALL)
        if ratio < 1:
            for k in range(n):
                out[k] *= math.exp(1 - 1 / ratio)
        return out

    def _aggregate(self, stats: np.ndarray, per_segment: bool) -> Score:
        n = self.n
        tot = stats.sum(axis=0)
        ints = [int(round(x)) for x in tot.tolist()]  # counts are integers; sums stay exact
        testlen, reflen = ints[0], ints[1]
        guess, correct = ints[2:2 + n], ints[2 + n:]
        bleus = self._values(testlen, reflen, guess, correct)
        values = {key: v for key, v in zip(self.keys, bleus)}
        per = None
        extra = {"testlen": testlen, "reflen": reflen, "ratio": (testlen + TINY) / (reflen + SMALL),
                 "guess": guess, "correct": correct}
        if per_segment:
            rows = [[int(round(x)) for x in r] for r in stats.tolist()]
            segs = [self._seg_values(r) for r in rows]
            extra["per_segment_all"] = {key: [s[k] for s in segs] for k, key in enumerate(self.keys)}
            per = [s[-1] for s in segs]
        return Score(self.name, bleus[-1], values, self.signature, len(stats), per, extra)

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


def _correct(hkeys: list[list], u: set, rtab, rseg: tuple[int, int]) -> list[int]:
    """Clipped n-gram matches of one caption, order by order.

    ``u`` holds every n-gram (all orders) of the caption's references;
    ``rtab``/``rseg`` give each reference's own keys for clipping repeated
    n-grams (an n-gram counts at most as often as in the reference that has
    it most often).
    """
    out = []
    repeats = True  # a repeated (k+1)-gram needs a repeated k-gram, so stop checking once none repeat
    for k, h in enumerate(hkeys):
        if not h:
            out.append(0)
            continue
        if repeats:
            hs = set(h)
            c = len(u.intersection(hs))
            repeats = len(hs) < len(h)
            if repeats:
                a, b = rseg
                for g, cnt in Counter(h).items():
                    if cnt > 1 and g in u:
                        best = max(rtab.seg(j, k).count(g) for j in range(a, b))
                        if best > 1:
                            c += min(cnt, best) - 1
        else:
            c = len(u.intersection(h))
        out.append(c)
    return out
