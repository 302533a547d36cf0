"""N-gram tables shared by BLEU and CIDEr-D, built with numpy for a whole corpus.

Tokens come from :mod:`annotator.tokenize.whitespace` (exactly the tokens of ``str.split()``, as
coco-caption's BLEU and CIDEr scorers split, numbered 1…V). N-grams get dense
ids order by order: the k-gram at position p is the pair (id of the
(k-1)-gram at p, token at p+k-1), coded as ``prefix * (V+1) + token``.

References (:func:`build`), one :class:`OrderTable` per order: the order's
occurrences (reference by reference, position by position) are sorted stably
by code with 16-bit radix passes. Runs of equal codes are the distinct
n-grams, numbered in code order, so the sorted distinct codes double as the
lookup table for captions. Because the sort is stable, the same sorted list
splits further into runs that give, without a Python loop over n-grams,

* the distinct (reference, n-gram) pairs with their term counts and their
  first occurrence (``pair_*``), sorted by n-gram, then reference;
* the distinct (image, n-gram) pairs, keyed ``n-gram * images + image`` in
  ascending order (``ig_key``), with the largest count in one reference
  (BLEU's clipping count, ``ig_max``) and the range of their (reference,
  n-gram) pairs (``ig_bounds``);
* document frequencies (``df``: the number of images whose references have
  the n-gram), which CIDEr-D needs.

Working order by order keeps the arrays small. Neither the vocabulary size
nor n is limited.

Captions (:func:`caption_grams`) go through the same sort; their distinct
n-grams are looked up in the references' table (ascending, so the binary
search stays local). N-grams the references lack get ids after the reference
n-grams of their order when the caller needs them (CIDEr-D counts them in its
norms). A caption's distinct n-grams of one order can be listed in
first-occurrence order: the order in which coco-caption's ``precook`` fills
its dictionaries, which fixes the order of coco-caption's floating-point sums.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from ..tokenize.whitespace import caption_tokens, ref_tokens

#: Largest key range sorted with one 16-bit radix pass; larger ranges take one
#: pass per 16 bits. (The name is historical: it used to bound the vocabulary
#: of packed n-gram keys. Tests lower it to exercise the multi-pass sort.)
MAX_PACKED_VOCAB = (1 << 16) - 2


def stable_argsort(keys: np.ndarray, size: int) -> np.ndarray:
    """Stable argsort of integer keys in ``[0, size)`` by least-significant-digit radix passes of 16 bits."""
    if size - 1 <= MAX_PACKED_VOCAB:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    if size > 1 << 48:  # pragma: no cover - far beyond any caption corpus
        return np.argsort(keys, kind="stable")
    perm = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    shift = 16
    while size > 1 << shift:
        perm = perm[np.argsort(((keys[perm] >> shift) & 0xFFFF).astype(np.uint16), kind="stable")]
        shift += 16
    return perm


def _breaks(sorted_keys: np.ndarray, *others: np.ndarray) -> np.ndarray:
    """Mask of the positions where a run of equal values (in every given array) starts."""
    brk = np.empty(len(sorted_keys), dtype=bool)
    brk[:1] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=brk[1:])
    for o in others:
        brk[1:] |= o[1:] != o[:-1]
    return brk


def runs(sorted_keys: np.ndarray, *others: np.ndarray) -> np.ndarray:
    """Start positions of the runs of equal values (in every given array) of sorted keys."""
    return np.flatnonzero(_breaks(sorted_keys, *others))


def _room(lens: np.ndarray) -> np.ndarray:
    """For each token, the number of tokens from it to the end of its sentence."""
    total = int(lens.sum())
    return np.repeat(np.cumsum(lens), lens) - np.arange(total)


class OrderTable:
    """The reference n-grams of one order (see the module docs)."""

    __slots__ = ("size", "keys", "pair_d", "pair_r", "pair_tf", "pair_first", "ig_key", "ig_bounds",
                 "ig_max", "df")
    # keys: the distinct codes of the order, sorted: n-gram id = position (None for unigrams: ids are token ids);
    # pair_*: distinct (reference, n-gram), sorted by n-gram, then reference; ig_*: distinct (image, n-gram),
    # sorted by n-gram, then image. pair_tf and ig_max are None when every count is 1.


class RefIndex:
    """N-gram tables (orders 1…n) of a list of reference sets.

    References are numbered item by item: ``ref_start[i]`` … ``ref_start[i+1]-1``
    are the references of item i; ``lens`` their token counts.
    """

    __slots__ = ("n", "vocab", "n_items", "counts", "ref_start", "ref_item", "lens", "orders")

    @property
    def n_refs(self) -> int:
        return len(self.lens)


def build(tok_refs: list[list[str]], n: int, *, clip: bool = True, idf: bool = True) -> RefIndex:
    """The n-gram tables of ``tok_refs`` (per item, a list of reference strings).

    ``clip`` computes BLEU's clipping counts (``ig_max``), ``idf`` what
    CIDEr-D needs besides (document frequencies, first occurrences, the
    ranges of (reference, n-gram) pairs per (image, n-gram)).
    """
    ix = RefIndex()
    ix.n = n
    counts = np.fromiter(map(len, tok_refs), dtype=np.int64, count=len(tok_refs))
    ix.vocab, ids, lens = ref_tokens(list(chain.from_iterable(tok_refs)))
    n_items, n_refs = len(counts), len(lens)
    ix.n_items, ix.counts, ix.lens = n_items, counts, lens
    ix.ref_start = np.concatenate(([0], np.cumsum(counts)))
    ix.ref_item = np.repeat(np.arange(n_items, dtype=np.int32), counts)
    room = _room(lens)
    seg = np.repeat(np.arange(n_refs, dtype=np.int32), lens)
    orders = []
    prev = ids
    repeats = True
    mult = len(ix.vocab) + 1  # token ids are 1..V
    for k in range(n):
        if k == 0:
            size, r, keys = mult, seg, None
            perm = stable_argsort(ids, size)
            ds = ids[perm]
        else:
            # k-gram code: (id of the (k-1)-gram, next token); sorted stably, runs of equal codes are the
            # distinct n-grams, numbered in code order (so the sorted distinct codes serve as lookup table)
            idx = np.flatnonzero(room > k)
            codes = prev[idx].astype(np.int64) * mult + ids[idx + k]
            perm = stable_argsort(codes, size * mult)
            sc = codes[perm]
            new = _breaks(sc)
            ds = np.cumsum(new, dtype=np.int32) - 1
            keys = sc[new]
            size = len(keys)
            r = seg[idx]
            if k < n - 1:
                prev = np.empty(len(ids), dtype=np.int32)
                prev[idx[perm]] = ds
        ot = _table(perm, ds, r, size, keys, ix.ref_item, n_items, repeats, clip, idf)
        # an n-gram repeated within a reference needs a repeated prefix: once none repeats, none will
        repeats = ot.pair_tf is not None
        orders.append(ot)
    ix.orders = orders
    return ix


def _table(perm: np.ndarray, ds: np.ndarray, r: np.ndarray, size: int, keys, ref_item: np.ndarray, n_items: int,
           repeats: bool, clip: bool, idf: bool) -> OrderTable:
    """Tables of one order from its occurrences sorted stably by n-gram id (``ds = d[perm]``)."""
    ot = OrderTable()
    ot.size, ot.keys = size, keys
    ot.pair_first = ot.ig_bounds = ot.ig_max = ot.df = None
    # within an n-gram, occurrences are in reference and position order (the sort is stable)
    rs = r[perm]
    pstart = runs(ds, rs) if repeats else None
    if pstart is None or len(pstart) == len(ds):
        # no n-gram repeats within a reference: every occurrence is a pair of its own, with count 1
        ot.pair_d, ot.pair_r, ot.pair_tf = ds, rs, None
        if idf:
            ot.pair_first = perm
    else:
        ot.pair_d, ot.pair_r = ds[pstart], rs[pstart]
        ot.pair_tf = np.diff(pstart, append=len(ds)).astype(np.int32)
        if idf:
            ot.pair_first = perm[pstart]  # the stable sort keeps a pair's first occurrence first
    P = len(ot.pair_d)
    pitem = ref_item[ot.pair_r]
    istart = runs(ot.pair_d, pitem)
    ig_d = ot.pair_d[istart]
    ot.ig_key = ig_d.astype(np.int64) * n_items + pitem[istart]  # n-gram * images + image, ascending
    if clip and ot.pair_tf is not None and P:
        ot.ig_max = np.maximum.reduceat(ot.pair_tf, istart)
    if idf:
        ot.ig_bounds = np.append(istart, P)
        ot.df = np.bincount(ig_d, minlength=size)
    return ot


class OrderGrams:
    """Distinct (caption, n-gram) pairs of one order (per caption in first-occurrence order, when asked for).

    ``h`` caption, ``d`` n-gram id (``>= size`` of the order's table: no
    reference has it), ``tf`` count, ``e`` index of the (image, n-gram) entry
    of the caption's own image in the order's table, -1 when its references
    lack the n-gram.
    """

    __slots__ = ("h", "d", "tf", "e")


def caption_grams(ix: RefIndex, hyps: list[str], items: np.ndarray, *,
                  unmatched: bool) -> tuple[np.ndarray, list[OrderGrams]]:
    """Token counts and per-order n-grams of captions ``hyps``.

    Caption j is scored against the references of item ``items[j]``.
    ``unmatched=False`` drops n-grams that no reference has (BLEU never
    needs them); ``True`` keeps them with ids of their own (CIDEr-D's norms)
    and lists each caption's pairs in first-occurrence order (CIDEr-D's sums).

    Per order, the occurrences are sorted stably by (prefix id, token):
    runs give the distinct n-grams, which are looked up in the references'
    sorted table in ascending order, and the distinct (n-gram, caption) pairs.
    """
    n = ix.n
    ids, lens, n_new = caption_tokens(ix.vocab, hyps, unmatched)
    H, T = len(lens), len(ids)
    room = _room(lens)
    seg = np.repeat(np.arange(H, dtype=np.int64), lens)
    mult = len(ix.vocab) + 1  # reference codes are prefix * mult + token, tokens 1..V
    width = mult + n_new  # caption token ids: 1..V known, then the fresh ones
    out = []
    prev = ids if unmatched else np.where(ids > 0, ids, -1)  # id of the (k-1)-gram at each position
    prev_size, prev_total = mult, width  # known ids are below prev_size, all below prev_total
    for k in range(n):
        ot = ix.orders[k]
        if k == 0:
            pos = np.arange(T, dtype=np.int64) if unmatched else np.flatnonzero(ids)
            codes, total = ids[pos], width
        else:
            pos = np.flatnonzero(room > k)
            p, t = prev[pos], ids[pos + k]
            if not unmatched:  # an unknown prefix or word never makes a reference n-gram
                ok = np.flatnonzero((p >= 0) & (t > 0))
                pos, p, t = pos[ok], p[ok], t[ok]
            codes, total = p * width + t, prev_total * width
        perm = stable_argsort(codes, max(1, total))
        sc = codes[perm]
        gnew = _breaks(sc)
        gstart = np.flatnonzero(gnew)
        gc = sc[gstart]
        # the distinct n-grams, in code order; those made of known parts are looked up (ascending queries)
        gd = np.full(len(gc), -1, dtype=np.int64)
        if k == 0:
            known = np.flatnonzero(gc < mult)
            gd[known] = gc[known]  # unigram ids are the token ids
        else:
            gp, gt = gc // width, gc % width
            known = np.flatnonzero((gp < prev_size) & (gt < mult))
            if len(known) and len(ot.keys):
                ref = gp[known] * mult + gt[known]
                j = np.searchsorted(ot.keys, ref)
                j[j == len(ot.keys)] = 0
                hit = ot.keys[j] == ref
                gd[known[hit]] = j[hit]
        n_fresh = 0
        if unmatched:
            fresh = np.flatnonzero(gd < 0)
            n_fresh = len(fresh)
            gd[fresh] = ot.size + np.arange(n_fresh)
        ds = gd[np.cumsum(gnew) - 1]  # n-gram id of each (sorted) occurrence
        if k < n - 1:
            prev = np.full(T, -1, dtype=np.int64)
            prev[pos[perm]] = ds
            prev_size, prev_total = ot.size, ot.size + n_fresh
        hs = seg[pos[perm]]
        if not unmatched:
            keep = np.flatnonzero(ds >= 0)
            perm, sc, ds, hs = perm[keep], sc[keep], ds[keep], hs[keep]
        out.append(_pairs(perm, sc, ds, hs, len(pos), ot, items, ix.n_items, unmatched))
    return lens, out


def _pairs(perm: np.ndarray, sc: np.ndarray, ds: np.ndarray, hs: np.ndarray, count: int, ot: OrderTable,
           items: np.ndarray, n_items: int, ordered: bool) -> OrderGrams:
    """Distinct (caption, n-gram) pairs from occurrences sorted stably by n-gram code (``sc``)."""
    og = OrderGrams()
    pstart = runs(sc, hs)  # within an n-gram, occurrences are in caption order: runs are the pairs
    og.tf = np.diff(pstart, append=len(sc))
    first = perm[pstart]  # the first occurrence (position among the order's occurrences)
    og.h, og.d = hs[pstart], ds[pstart]
    e = np.full(len(first), -1, dtype=np.int64)
    known = np.flatnonzero(og.d < ot.size)
    if len(known) and len(ot.ig_key):
        # ascending (for ascending items): the binary search stays local
        key = og.d[known] * n_items + items[og.h[known]]
        j = np.searchsorted(ot.ig_key, key)
        j[j == len(ot.ig_key)] = 0
        hit = ot.ig_key[j] == key
        e[known[hit]] = j[hit]
    og.e = e
    if ordered and len(first):
        # first-occurrence order (positions are distinct: scatter them into their slots)
        slot = np.full(count, -1, dtype=np.int64)
        slot[first] = np.arange(len(first))
        fo = slot[slot >= 0]
        og.h, og.d, og.tf, og.e = og.h[fo], og.d[fo], og.tf[fo], og.e[fo]
    return og
