"""CIDEr-D exactly as coco-caption's ``cider_scorer`` computes it.

Document frequencies come from the references of the scored set: df(g) is the
number of captions (images) whose references contain n-gram g, and the idf
term is ``log(N) - log(max(1, df(g)))`` with N the number of captions.
Each sentence becomes one tf-idf vector per n-gram order (1–4); a caption is
compared with each reference by the clipped cosine (``min(h, r) · r``), times
the Gaussian length penalty ``exp(-δ²/2σ²)`` with σ = 6, where δ is the
difference of the two sentences' "lengths" — coco-caption counts the
*bigrams* there (``len - 1``), and so do we. The per-caption score is the mean
over orders, divided by the number of references, times 10; the corpus score
is the mean over captions.

Because document frequencies depend only on the references, a prepared
reference set fixes them: the statistics row of a caption is its final
CIDEr-D score, and changing one caption changes only its own row. That is
exactly what coco-caption would compute on the edited set (its document
frequencies never look at the captions), so incremental rescoring is exact.

Floating-point operations follow coco-caption's order (sums of squares and
dot products in the n-grams' first-occurrence order, numpy's log for the idf
and its mean for the final averages), so scores are equal to the last bit.
The whole corpus is scored at once with numpy from the n-gram tables of
:mod:`._ngrams`: every sum is an ``np.bincount``, which adds its weights in
input order, fed in the order coco-caption's loops visit the terms; squares
use libm's ``pow`` through Python floats, as coco-caption's do.
"""

from __future__ import annotations

from itertools import repeat

import numpy as np

from . import _ngrams
from .base import BatchedMetric, MeanScoreMetric, Prepared, Setting
from ..errors import MetricInputError

SIGMA = 6.0


class _CiderRefs:
    __slots__ = ("index", "vocab", "ref_len", "weight", "square", "length")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)


class CiderD(BatchedMetric, MeanScoreMetric):
    """CIDEr-D (n = 4, σ = 6) with document frequencies from the scored set's references.

    The corpus score is the mean of the captions' scores; bootstrap resamples
    keep the document frequencies of the full scored set.
    """

    key = "cider"
    label = "CIDEr-D"
    aliases = ("cider-d", "cider_d")
    score_keys = ("CIDEr",)
    settings = (Setting("n", 4, "highest n-gram order", attribute="n"),
                Setting("sigma", SIGMA, "standard deviation of the Gaussian length penalty", attribute="sigma",
                        spec="g"),
                Setting("df", "refs-of-scored-set", "document frequencies: from the references of the scored set"))
    reference = "pycocoevalcap.cider.cider:Cider"
    description = "Cosine similarity of TF-IDF weighted n-grams (n = 1 to 4) with the references, length penalty."
    citation = "Vedantam, Zitnick and Parikh. CIDEr: Consensus-based Image Description Evaluation. CVPR 2015."
    link = "https://arxiv.org/abs/1411.5726"

    def __init__(self, n: int = 4, sigma: float = SIGMA, tokenize: str | None = None):
        super().__init__(tokenize)
        self.n = n
        self.sigma = float(sigma)
        self._two_sigma2 = 2 * self.sigma ** 2
        self._penalty: dict[int, float] = {}

    # -- references ------------------------------------------------------------
    def _prepare(self, tok_refs: list[list[str]], samples=None) -> _CiderRefs:
        n = self.n
        ix = _ngrams.build(tok_refs, n, clip=False)
        if not int(ix.lens.sum()):
            raise MetricInputError("CIDEr-D needs at least one non-empty reference in the scored set "
                                   "(coco-caption's scorer fails on such input as well)")
        ref_len = np.log(float(ix.n_items))
        # idf weight by document frequency (0: no reference has the n-gram, as coco-caption's max(1, df))
        max_df = max(int(ot.df.max(initial=0)) for ot in ix.orders)
        dfs = np.arange(max_df + 1, dtype=np.float64)
        weight = ref_len - np.log(np.maximum(1.0, dfs))
        # pow(w, 2) as coco-caption squares (libm pow, which can differ from w*w in the last bit), for the
        # document frequencies that occur; a term count of 1 (nearly every n-gram) then needs no pow of its own
        present = np.zeros(len(dfs), dtype=bool)
        present[0] = True
        for ot in ix.orders:
            present[ot.df] = True
        square = np.zeros(len(dfs))
        square[present] = list(map(pow, weight[present].tolist(), repeat(2)))
        data = _CiderRefs(index=ix, vocab=ix.vocab, ref_len=float(ref_len), weight=weight, square=square,
                          length=np.maximum(0, ix.lens - 1))
        for blk in ix.blocks:
            if blk is not None:
                self._finish(blk, data)
        return data

    def _finish(self, blk: _ngrams.RefBlock, data: _CiderRefs) -> _ngrams.RefBlock:
        """The tf-idf value of every (reference, n-gram) pair of a block of tables and its references' norms
        (``blk.data``), once the document frequencies are known."""
        ix = data.index
        norms = np.zeros((blk.r1 - blk.r0, self.n))
        for k, (bo, ot) in enumerate(zip(blk.orders, ix.orders)):
            bo.pair_val, sq = _tfidf(bo.pair_tf, ot.df[bo.pair_d], data.weight, data.square)
            # squares summed per reference in first-occurrence order (coco-caption's insertion order)
            fo = np.argsort(bo.pair_first) if len(bo.pair_first) < 64 else _first_order(bo.pair_first)
            norms[:, k] = np.sqrt(np.bincount(bo.pair_r[fo] - blk.r0, weights=sq[fo], minlength=len(norms)))
            # what scoring does not read again: the pairs' n-grams, counts and first occurrences
            bo.pair_d = bo.pair_tf = bo.pair_first = None
        blk.data = norms
        return blk

    def _block(self, data: _CiderRefs, b: int) -> _ngrams.RefBlock:
        """Block ``b`` of the tables with its values and norms (computed now when it was not kept)."""
        blk = data.index.block(b)
        return blk if blk.data is not None else self._finish(blk, data)

    # -- statistics ------------------------------------------------------------
    def _pen(self, delta: int) -> float:
        p = self._penalty.get(delta)
        if p is None:
            d = float(delta)
            p = self._penalty[delta] = np.e ** (-(d ** 2) / self._two_sigma2)
        return p

    def _rows(self, hyps: list[str], prep: Prepared, items: np.ndarray) -> np.ndarray:
        """Per-caption CIDEr-D (H × 1) of captions ``hyps`` against the references of ``items``."""
        out = np.zeros((len(hyps), 1), dtype=np.float64)
        for b, sel in _ngrams.groups(items) if len(items) else ():
            if sel is None:
                return self._block_rows(hyps, prep.data, self._block(prep.data, b), items)
            out[sel] = self._block_rows([hyps[j] for j in sel.tolist()], prep.data, self._block(prep.data, b),
                                        items[sel])
        return out

    def _block_rows(self, hyps: list[str], data: _CiderRefs, blk: _ngrams.RefBlock, items: np.ndarray) -> np.ndarray:
        """:meth:`_rows` of captions whose images are all in the block of tables ``blk``.

        Every floating-point step is coco-caption's, in its order: sums go
        through ``np.bincount``, which adds its weights in input order, and
        the inputs are laid out so that each sum sees its terms in the order
        coco-caption's loops visit them.
        """
        ix, n = data.index, self.n
        H = len(hyps)
        hlens, grams = _ngrams.caption_grams(ix, blk, hyps, items, unmatched=True)
        # one slot per (caption, reference of its image), references in order
        cnt = ix.counts[items]
        S = int(cnt.sum())
        slot_h = np.repeat(np.arange(H, dtype=np.int64), cnt)
        base = np.cumsum(cnt) - cnt
        slot_r = np.repeat(ix.ref_start[items] - base, cnt) + np.arange(S, dtype=np.int64)
        first_slot = base - ix.ref_start[items]  # slot of reference r of caption j's image: first_slot[j] + r
        val = np.zeros((S, n))
        hnorm = np.zeros((H, n))
        for k, (og, ot, bo) in enumerate(zip(grams, ix.orders, blk.orders)):
            # caption vector; n-grams no reference has get df 0, i.e. weight log(N)
            dfi = np.zeros(len(og.d), dtype=np.int64)
            known = og.d < ot.size
            dfi[known] = ot.df[og.d[known]]
            hval, hsq = _tfidf(og.tf, dfi, data.weight, data.square)
            hnorm[:, k] = np.sqrt(np.bincount(og.h, weights=hsq, minlength=H))
            # clipped dot products: each caption n-gram some reference of its image has, with each such reference
            m = np.flatnonzero(og.e >= 0)
            e = og.e[m]
            lo = bo.ig_bounds[e]
            L = bo.ig_bounds[e + 1] - lo
            rep = np.repeat(np.arange(len(m), dtype=np.int64), L)
            refpair = np.repeat(lo - (np.cumsum(L) - L), L) + np.arange(int(L.sum()), dtype=np.int64)
            vr = bo.pair_val[refpair]
            vh = hval[m][rep]
            slot = first_slot[og.h[m]][rep] + bo.pair_r[refpair]
            val[:, k] = np.bincount(slot, weights=np.minimum(vh, vr) * vr, minlength=S)
        hs, rs = hnorm[slot_h], blk.data[slot_r - blk.r0]
        np.divide(val, hs * rs, out=val, where=(hs != 0) & (rs != 0))
        hlen = np.maximum(0, hlens - 1)  # coco-caption's "length": the number of bigrams
        # the penalty of each length difference that occurs, looked up through a table over their range
        delta = hlen[slot_h] - data.length[slot_r]
        if len(delta):
            delta -= (low := int(delta.min()))
            occurs = np.flatnonzero(np.bincount(delta))
            pen = np.zeros(int(occurs[-1]) + 1)
            pen[occurs] = [self._pen(d + low) for d in occurs.tolist()]
            val *= pen[delta][:, None]
        # sum over references, in order, per caption and order
        total = np.bincount((slot_h[:, None] * n + np.arange(n)).ravel(), weights=val.ravel(),
                            minlength=H * n).astype(np.float64, copy=False).reshape(H, n)
        if n < 8:  # numpy's mean of a short vector adds left to right
            acc = total[:, 0].copy()
            for k in range(1, n):
                acc += total[:, k]
            score = acc / n
        else:
            score = np.array([np.mean(row) for row in total], dtype=np.float64)
        score = score / cnt
        score = score * 10.0
        return score.reshape(H, 1)


def _tfidf(tf: np.ndarray, dfi: np.ndarray, weight: np.ndarray, square: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """tf-idf values ``float(tf) * weight[df]`` and their squares ``pow(value, 2)`` as coco-caption computes them."""
    if tf is None:  # every count is 1
        return weight[dfi], square[dfi]
    vals = tf * weight[dfi]
    sq = square[dfi]
    many = np.flatnonzero(tf != 1)
    if len(many) > 64:  # one pow per distinct (count, document frequency): the same value, the same square
        key = tf[many].astype(np.int64) * len(weight) + dfi[many]
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
        sq[many] = np.array(list(map(pow, vals[many[first]].tolist(), repeat(2))))[inv.reshape(-1)]
    elif len(many):
        sq[many] = list(map(pow, vals[many].tolist(), repeat(2)))
    return vals, sq


def _first_order(first: np.ndarray) -> np.ndarray:
    """The permutation that lists items by their (distinct) first-occurrence positions, without sorting."""
    slot = np.full(int(first.max()) + 1, -1, dtype=np.int64)
    slot[first] = np.arange(len(first))
    return slot[slot >= 0]
