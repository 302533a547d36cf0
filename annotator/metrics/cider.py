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
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from itertools import chain, repeat

import numpy as np

try:  # the C helper Counter itself uses; a plain dict keeps first-occurrence order like coco-caption's defaultdict
    from collections import _count_elements
except ImportError:  # pragma: no cover - other Python implementations
    def _count_elements(mapping, iterable):
        get = mapping.get
        for x in iterable:
            mapping[x] = get(x, 0) + 1

from . import _ngrams
from .base import Metric, MetricInputError, Prepared, Score, mean_like_numpy

SIGMA = 6.0


class _CiderRefs:
    __slots__ = ("vocab", "packed", "ref_len", "weights", "refs", "unions", "tok_refs", "tuple_twin")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)


class CiderD(Metric):
    """CIDEr-D (n = 4, σ = 6) with document frequencies from the scored set's references."""

    name = "CIDEr-D"
    keys = ("CIDEr",)
    width = 1

    def __init__(self, n: int = 4, sigma: float = SIGMA, tokenize: str | None = None):
        super().__init__(tokenize)
        self.n = n
        self.sigma = float(sigma)
        self._two_sigma2 = 2 * self.sigma ** 2
        self._penalty: dict[int, float] = {}

    def _settings(self) -> list[str]:
        return [f"n={self.n}", f"sigma={self.sigma:g}", "df=refs-of-scored-set"]

    # -- references ------------------------------------------------------------
    def _prepare(self, tok_refs: list[list[str]], force_tuple: bool = False) -> _CiderRefs:
        n = self.n
        flat_tokens = [r.split() for rs in tok_refs for r in rs]
        vocab = None if force_tuple else _ngrams.build_vocab(flat_tokens)
        tab = _ngrams.table(flat_tokens, vocab, n)
        drop = tab.sentinel
        seg_ranges, pos = [], 0
        for rs in tok_refs:
            seg_ranges.append((pos, pos + len(rs)))
            pos += len(rs)
        # document frequency: in how many images' references does g occur (keys of all orders are distinct)
        df: Counter = Counter()
        unions = []
        for a, b in seg_ranges:
            u = set(tab.block(a, b))
            u.discard(drop)
            df.update(u)
            unions.append(u)
        if not df:
            raise MetricInputError("CIDEr-D needs at least one non-empty reference in the scored set "
                                   "(coco-caption's scorer fails on such input as well)")
        ref_len = np.log(float(len(tok_refs)))
        grams = list(df.keys())
        dfa = np.fromiter(df.values(), dtype=np.float64, count=len(grams))
        weights = dict(zip(grams, (ref_len - np.log(np.maximum(1.0, dfa))).tolist()))
        counts, _, _, norms = _tfidf_many([tab.stacked(j) for j in range(len(flat_tokens))], weights, None, drop, n)
        refs = [[(counts[j], norms[j], max(0, tab.lens[j] - 1)) for j in range(a, b)] for a, b in seg_ranges]
        return _CiderRefs(vocab=vocab if tab.packed else None, packed=tab.packed, ref_len=float(ref_len),
                          weights=weights, refs=refs, unions=unions, tok_refs=tok_refs, tuple_twin=None)

    def _tuple_twin(self, prep: Prepared) -> _CiderRefs:
        data = prep.data
        if not data.packed:
            return data
        with prep.lock:
            if data.tuple_twin is None:
                data.tuple_twin = self._prepare(data.tok_refs, force_tuple=True)
            return data.tuple_twin

    # -- statistics ------------------------------------------------------------
    def _stats(self, hyps: list[str], prep: Prepared):
        data: _CiderRefs = prep.data
        htoks = [h.split() for h in hyps]
        vocab = None
        if data.packed:
            vocab = _ngrams.extend_vocab(data.vocab, htoks)
            if len(vocab) > _ngrams.MAX_PACKED_VOCAB:
                data, vocab = self._tuple_twin(prep), None
        tab = _ngrams.table(htoks, vocab, self.n)
        many = _tfidf_many([tab.stacked(i) for i in range(len(hyps))], data.weights, data.ref_len, tab.sentinel,
                           self.n)
        return [[self._score(c, v, o, nm, tab.lens[i], data, i)] for i, (c, v, o, nm) in enumerate(zip(*many))]

    def _segment(self, hyp: str, prep: Prepared, index: int):
        data: _CiderRefs = prep.data
        toks = hyp.split()
        try:
            stacked = _ngrams.segment_stacked(toks, data.vocab, data.packed, self.n)
        except OverflowError:
            data = self._tuple_twin(prep)
            stacked = _ngrams.segment_stacked(toks, None, False, self.n)
        sentinel = _ngrams.SENTINEL if data.packed else None
        counts, vals, hnorms = _tfidf(stacked, data.weights, data.ref_len, sentinel, self.n)
        return [self._score(counts, vals, _orders(counts), hnorms, len(toks), data, index)]

    def _pen(self, delta: int) -> float:
        p = self._penalty.get(delta)
        if p is None:
            d = float(delta)
            p = self._penalty[delta] = np.e ** (-(d ** 2) / self._two_sigma2)
        return p

    def _score(self, counts: dict, vals: list, orders: list, hnorms: list, length: int, data: _CiderRefs,
               i: int) -> float:
        n = self.n
        weights, u = data.weights, data.unions[i]
        # grams some reference has, with the caption's value and order, in first-occurrence order
        matched = [(g, v, k) for g, v, k in zip(counts, vals, orders) if g in u]
        length = max(0, length - 1)  # coco-caption's "length": the number of bigrams
        total = [0.0] * n
        for rcounts, rnorms, rlength in data.refs[i]:
            pen = self._pen(length - rlength)
            val = [0.0] * n
            for g, vh, k in matched:
                tf = rcounts.get(g)
                if tf is not None:
                    vr = tf * weights[g]
                    val[k] += (vh if vh < vr else vr) * vr
            for k in range(n):
                v = val[k]
                if hnorms[k] != 0 and rnorms[k] != 0:
                    v /= (hnorms[k] * rnorms[k])
                total[k] += v * pen
        # numpy's mean of a short vector adds left to right
        if n < 8:
            acc = 0.0
            for x in total:
                acc += x
            score = acc / n
        else:
            score = float(np.mean(np.array(total)))
        score /= len(data.refs[i])
        score *= 10.0
        return score

    # -- aggregation -----------------------------------------------------------
    def _aggregate(self, stats: np.ndarray, per_segment: bool) -> Score:
        col = np.ascontiguousarray(stats[:, 0])
        value = mean_like_numpy(col)
        return Score(self.name, value, {"CIDEr": value}, self.signature, len(col),
                     col.tolist() if per_segment else None)

    def _resample(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
        # document frequencies stay those of the full scored set in every resample
        return (weights @ stats[:, 0] / stats.shape[0])[:, None]


def _orders(keys) -> list[int]:
    """Order index of each key (packed ints or tuples; see _ngrams)."""
    keys = list(keys)
    if keys and isinstance(keys[0], int):
        return [(b - 1) >> 4 for b in map(int.bit_length, keys)]
    return [len(g) - 1 for g in keys]


def _tfidf(stacked: list, weights: dict, default: float | None, sentinel, n: int) -> tuple[dict, list, list]:
    """Term counts, tf-idf values and per-order norms of one sentence, as coco-caption computes them.

    ``counts`` keeps first-occurrence order (all orders interleaved; each
    order's own sequence is coco-caption's insertion order). ``default`` is
    the weight of grams without a document frequency (None: all have one).
    Norms add ``pow(v, 2)`` left to right like coco-caption (``pow`` can
    differ from ``v*v`` in the last bit).
    """
    counts: dict = {}
    _count_elements(counts, stacked)
    counts.pop(sentinel, None)
    ws = map(weights.__getitem__, counts) if default is None else map(weights.get, counts, repeat(default))
    vals = list(map(operator.mul, counts.values(), ws))
    acc = [0.0] * n
    for k, sq in zip(_orders(counts), map(pow, vals, repeat(2))):
        acc[k] += sq
    return counts, vals, [math.sqrt(x) for x in acc]


def _tfidf_many(stacked_lists: list[list], weights: dict, default: float | None, sentinel,
                n: int) -> tuple[list, list, list, list]:
    """:func:`_tfidf` for many sentences at once: (counts, values, orders, norms) per sentence.

    The squares are summed per (sentence, order) with ``np.bincount``, which
    adds its weights in input order — the same left-to-right sums as
    coco-caption's loop, so the norms are identical.
    """
    counts = []
    for st in stacked_lists:
        c: dict = {}
        _count_elements(c, st)
        c.pop(sentinel, None)
        counts.append(c)
    sizes = [len(c) for c in counts]
    keys = list(chain.from_iterable(counts))
    tfs = list(chain.from_iterable(c.values() for c in counts))
    ws = map(weights.__getitem__, keys) if default is None else map(weights.get, keys, repeat(default))
    vals = list(map(operator.mul, tfs, ws))
    if keys and isinstance(keys[0], int):
        arr = np.fromiter(keys, dtype=np.uint64, count=len(keys))
        orders = np.zeros(len(keys), dtype=np.int64)
        for k in range(1, n):
            orders += arr >= np.uint64(1 << (_ngrams.ID_BITS * k))
    else:
        orders = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys)) - 1
    sq = np.fromiter(map(pow, vals, repeat(2)), dtype=np.float64, count=len(vals))
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), sizes)
    acc = np.bincount(owner * n + orders, weights=sq, minlength=len(counts) * n)
    norms = np.sqrt(acc).reshape(len(counts), n).tolist()
    out_vals, out_orders, pos = [], [], 0
    olist = orders.tolist()
    for size in sizes:
        out_vals.append(vals[pos:pos + size])
        out_orders.append(olist[pos:pos + size])
        pos += size
    return counts, out_vals, out_orders, norms
