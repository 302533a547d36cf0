"""N-gram tables shared by BLEU and CIDEr-D, built with numpy for a whole corpus.

Tokens come from :mod:`annotator.tokenize.whitespace` (exactly the tokens of ``str.split()``, as
coco-caption's BLEU and CIDEr scorers split, numbered 1…V). N-grams get dense
ids order by order: the k-gram at position p is the pair (id of the
(k-1)-gram at p, token at p+k-1), coded as ``prefix * (V+1) + token``.

References (:func:`build`), one :class:`OrderTable` per order: the order's
codes are numbered in code order (a table over the code range, or a hash
table when the range is large), so the sorted distinct codes double as the
lookup table for captions. Then the occurrences (reference by reference,
position by position) are sorted stably by (image, n-gram) one block of
whole images at a time (:data:`BLOCK` occurrences), and runs of the sorted
block give, without a Python loop over n-grams,

* the distinct (reference, n-gram) pairs with their term counts and their
  first occurrence (``pair_*``, kept for CIDEr-D only), sorted by image,
  n-gram, then reference;
* the distinct (image, n-gram) pairs, keyed ``image * size + n-gram`` in
  ascending order (``ig_key``; ``size`` is the order's number of n-grams),
  with the largest count in one reference (BLEU's clipping count,
  ``ig_max``) and the range of their (reference, n-gram) pairs
  (``ig_bounds``);
* document frequencies (``df``: the number of images whose references have
  the n-gram), which CIDEr-D needs.

Working order by order, and block by block within an order, keeps every
array that a step works on small: a step whose arrays grow with the corpus
leaves the processor's cache and has the kernel map fresh memory on every
call, and that made the cost grow faster than the corpus (n^1.14–1.34 from
1,000 to 100,000 captions; now n^0.9–1.0, as pycocoevalcap's). Captions are
scored in blocks as well (``BatchedMetric.block``). Neither the vocabulary
size nor n is limited.

Captions (:func:`caption_grams`) go through a stable sort by code; their
distinct n-grams are looked up in the references' table, and their (image,
n-gram) pairs in the part of ``ig_key`` that holds their images. N-grams the references lack get ids after the reference
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

    __slots__ = ("size", "keys", "repeats", "pair_d", "pair_r", "pair_tf", "pair_first", "ig_key", "ig_bounds",
                 "ig_max", "df")
    # keys: the distinct codes of the order, sorted: n-gram id = position (None for unigrams: ids are token ids);
    # pair_*: distinct (reference, n-gram), sorted by image, n-gram, then reference (None unless CIDEr-D's idf
    # was asked for); ig_*: distinct (image, n-gram), sorted by image, then n-gram. pair_tf and ig_max are None
    # when every count is 1 (repeats: some count is more).


class RefIndex:
    """N-gram tables (orders 1…n) of a list of reference sets.

    References are numbered item by item: ``ref_start[i]`` … ``ref_start[i+1]-1``
    are the references of item i; ``lens`` their token counts.
    """

    __slots__ = ("n", "vocab", "n_items", "counts", "ref_start", "ref_item", "lens", "orders")

    @property
    def n_refs(self) -> int:
        return len(self.lens)


#: Occurrences grouped per block of whole images: sorting and grouping a block touches memory that stays
#: in the processor's cache, so the cost per occurrence does not rise with the corpus.
BLOCK = 1 << 16


def build(tok_refs: list[list[str]], n: int, *, clip: bool = True, idf: bool = True) -> RefIndex:
    """The n-gram tables of ``tok_refs`` (per item, a list of reference strings).

    ``clip`` computes BLEU's clipping counts (``ig_max``), ``idf`` what
    CIDEr-D needs besides (document frequencies, first occurrences, the
    ranges of (reference, n-gram) pairs per (image, n-gram)).

    Per order, the occurrences' codes are numbered in code order
    (:func:`_number`: the sorted distinct codes are the lookup table), at the
    same cost per occurrence at any corpus size. Then the occurrences are
    sorted by (image, n-gram) block by block (:data:`BLOCK` occurrences of
    whole images), stably, so within an (image, n-gram) they stay in
    reference and position order (:func:`_table`).
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
            size, r, keys, d = mult, seg, None, ids
        else:
            # k-gram code: (id of the (k-1)-gram, next token); ids in code order (the sorted distinct codes
            # serve as lookup table)
            idx = np.flatnonzero(room > k)
            codes = prev[idx].astype(np.int64)
            codes *= mult
            codes += ids[idx + k]
            d, keys = _number(codes, size * mult)
            del codes
            size = len(keys)
            r = seg[idx]
            if k < n - 1:
                prev = np.empty(len(ids), dtype=np.int32)
                prev[idx] = d
            del idx
        ot = _table(d, r, size, keys, ix.ref_start, ix.ref_item, repeats, clip, idf)
        # an n-gram repeated within a reference needs a repeated prefix: once none repeats, none will
        repeats = ot.repeats
        orders.append(ot)
    ix.orders = orders
    return ix


def _number(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense ids (int32, in code order) of the codes (in ``[0, size)``) and the sorted distinct codes.

    A code range of at most a few times the number of codes is numbered through a table over the range
    (one pass, no hashing); a larger one through pandas' hash table with sorted uniques.
    """
    if size <= max(1 << 20, 4 * len(codes)):
        seen = np.zeros(size, dtype=bool)
        seen[codes] = True
        keys = np.flatnonzero(seen)
        number = np.zeros(size, dtype=np.int32)
        number[keys] = np.arange(len(keys), dtype=np.int32)
        return number[codes], keys.astype(np.int64, copy=False)
    import pandas as pd
    d, keys = pd.factorize(codes, sort=True)
    return d.astype(np.int32, copy=False), np.asarray(keys, dtype=np.int64)


def _blocks(r: np.ndarray, ref_start: np.ndarray, ref_item: np.ndarray):
    """``(start, end)`` ranges of about :data:`BLOCK` occurrences (in reference order ``r``) of whole images."""
    T = len(r)
    at = 0
    while at < T:
        end = at + BLOCK
        if end >= T:
            end = T
        else:  # up to the first occurrence in a reference of the next image
            # (the value in r's own type: another would make numpy convert all of r on every call)
            end = int(r.searchsorted(r.dtype.type(ref_start[ref_item[r[end - 1]] + 1])))
        yield at, end
        at = end


def _table(d: np.ndarray, r: np.ndarray, size: int, keys, ref_start: np.ndarray, ref_item: np.ndarray,
           repeats: bool, clip: bool, idf: bool) -> OrderTable:
    """Tables of one order from its occurrences' n-gram ids ``d`` and references ``r`` (in reference order).

    Built block by block (:func:`_blocks`), each sorted stably by (image, n-gram id): within an (image,
    n-gram), occurrences stay in reference and position order. The blocks' pieces are joined at the end.
    """
    ot = OrderTable()
    ot.size, ot.keys = size, keys
    parts = [_block_table(d[a:b], r[a:b], a, size, ref_item, repeats, clip, idf)
             for a, b in _blocks(r, ref_start, ref_item)]
    cat = (lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dtype=dt))
    repeated = any(p[2] is not None for p in parts)
    ot.pair_d = ot.pair_r = ot.pair_tf = ot.pair_first = ot.ig_bounds = ot.ig_max = ot.df = None
    ot.repeats = repeated
    ot.ig_key = cat([p[4] for p in parts], np.int64)
    if clip and repeated:
        ot.ig_max = cat([np.ones(len(p[4]), dtype=np.int32) if p[5] is None else p[5] for p in parts], np.int32)
    if idf:  # the pairs themselves: only CIDEr-D needs them after the build
        ot.pair_d = cat([p[0] for p in parts], np.int32)
        ot.pair_r = cat([p[1] for p in parts], np.int32)
        if repeated:
            ot.pair_tf = cat([np.ones(len(p[0]), dtype=np.int32) if p[2] is None else p[2] for p in parts],
                             np.int32)
        ot.pair_first = cat([p[3] for p in parts], np.int64)
        offsets = np.cumsum([0] + [len(p[0]) for p in parts])
        ot.ig_bounds = np.concatenate([p[6] + o for p, o in zip(parts, offsets)] + [offsets[-1:]]).astype(
            np.int32 if offsets[-1] < 1 << 31 else np.int64, copy=False)
        ot.df = np.bincount(cat([p[7] for p in parts], np.int32), minlength=size)
    return ot


def _block_table(d: np.ndarray, r: np.ndarray, offset: int, size: int, ref_item: np.ndarray, repeats: bool,
                 clip: bool, idf: bool) -> tuple:
    """One block's pairs and (image, n-gram) entries (see :func:`_table`)."""
    img = ref_item[r]
    key = (img - img[0]).astype(np.int64) * size + d
    perm = np.argsort(key, kind="stable")
    ds, rs = d[perm], r[perm]
    pstart = runs(ds, rs) if repeats else None
    first = None
    if pstart is None or len(pstart) == len(ds):
        # no n-gram repeats within a reference: every occurrence is a pair of its own, with count 1
        pair_d, pair_r, pair_tf = ds, rs, None
        if idf:
            first = perm + offset
    else:
        pair_d, pair_r = ds[pstart], rs[pstart]
        pair_tf = np.diff(pstart, append=len(ds)).astype(np.int32)
        if idf:
            first = perm[pstart] + offset  # the stable sort keeps a pair's first occurrence first
    pitem = img[perm] if pstart is None or len(pstart) == len(ds) else img[perm[pstart]]
    istart = runs(pair_d, pitem)
    ig_d = pair_d[istart]
    ig_key = pitem[istart].astype(np.int64) * size + ig_d  # image * size + n-gram, ascending
    ig_max = np.maximum.reduceat(pair_tf, istart) if clip and pair_tf is not None and len(pair_d) else None
    return pair_d, pair_r, pair_tf, first, ig_key, ig_max, istart if idf else None, ig_d if idf else None


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
        key = items[og.h[known]] * ot.size + og.d[known]
        # only the entries of the images asked about: a block's searches stay in a small part of the table
        lo, hi = ot.ig_key.searchsorted([key.min(), key.max()], side="left")
        hi = min(int(hi) + 1, len(ot.ig_key))
        table = ot.ig_key[lo:hi]
        j = table.searchsorted(key)
        j[j == len(table)] = 0
        hit = table[j] == key
        e[known[hit]] = j[hit] + lo
    og.e = e
    if ordered and len(first):
        # first-occurrence order (positions are distinct: scatter them into their slots)
        slot = np.full(count, -1, dtype=np.int64)
        slot[first] = np.arange(len(first))
        fo = slot[slot >= 0]
        og.h, og.d, og.tf, og.e = og.h[fo], og.d[fo], og.tf[fo], og.e[fo]
    return og
