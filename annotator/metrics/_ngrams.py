"""N-gram tables shared by BLEU and CIDEr-D, built with numpy, a block of images at a time.

Tokens come from :mod:`annotator.tokenize.whitespace` (exactly the tokens of ``str.split()``, as
coco-caption's BLEU and CIDEr scorers split, numbered 1…V). N-grams get dense
ids order by order: the k-gram at position p is the pair (id of the
(k-1)-gram at p, token at p+k-1), coded as ``prefix * (V+1) + token``.

References (:func:`build`) in two passes. First over the whole corpus, one
:class:`OrderTable` per order: the order's codes are numbered in code order
(a table over the code range, or a hash table when the range is large), so
the sorted distinct codes double as the lookup table for captions; each
token position keeps the id of the n-gram it starts (``grams``, int32).
Then block by block of :data:`IMAGES` images (a :class:`RefBlock`, one
:class:`BlockOrder` per order), the occurrences (reference by reference,
position by position) are sorted stably by (image, n-gram), :data:`BLOCK`
occurrences of whole images at a time, and runs of the sorted block give,
without a Python loop over n-grams,

* the distinct (reference, n-gram) pairs with their term counts and their
  first occurrence (``pair_*``, kept for CIDEr-D only), sorted by image,
  n-gram, then reference;
* the distinct (image, n-gram) pairs, keyed ``image * size + n-gram`` in
  ascending order (``ig_key``, images counted from the block's first;
  ``size`` is the order's number of n-grams), with the largest count in one
  reference (BLEU's clipping count, ``ig_max``) and the range of their
  (reference, n-gram) pairs (``ig_bounds``);
* document frequencies (``OrderTable.df``: the number of images whose
  references have the n-gram, added up block by block), which CIDEr-D needs.

Blocks are kept while they fit in :data:`RETAIN_BYTES`; the others are
built again from ``grams`` when captions of their images are scored
(:meth:`RefIndex.block`), with the same arrays. So the memory a prepared
reference set holds is the token arrays, the kept blocks and the per-order
tables, and a build or a scoring adds one block's work: a million images
× 5 references fit in 4 GB with the corpus itself, and every block of
100,000 images is kept (scored as fast as before the blocks were dropped).

Working order by order, and block by block, keeps every array that a step
works on small: a step whose arrays grow with the corpus leaves the
processor's cache and has the kernel map fresh memory on every call, and
that made the cost grow faster than the corpus (n^1.14–1.34 from 1,000 to
100,000 captions; now n^0.9–1.0, as pycocoevalcap's). Captions are scored in
blocks as well (``BatchedMetric.block``, a block of tables at a time:
:func:`groups`). Neither the vocabulary size nor n is limited.

Captions (:func:`caption_grams`) go through a stable sort by code; their
distinct n-grams are looked up in the references' table, and their (image,
n-gram) pairs in the part of their block's ``ig_key`` that holds their
images. N-grams the references lack get ids after the reference
n-grams of their order when the caller needs them (CIDEr-D counts them in its
norms). A caption's distinct n-grams of one order can be listed in
first-occurrence order: the order in which coco-caption's ``precook`` fills
its dictionaries, which fixes the order of coco-caption's floating-point sums.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from ..keytable import KeyTable
from ..tokenize.whitespace import caption_tokens, ref_tokens

#: Largest key range sorted with one 16-bit radix pass; larger ranges take one
#: pass per 16 bits. (The name is historical: it used to bound the vocabulary
#: of packed n-gram keys. Tests lower it to exercise the multi-pass sort.)
MAX_PACKED_VOCAB = (1 << 16) - 2


def stable_argsort(keys: np.ndarray, size: int) -> np.ndarray:
    """Stable argsort of integer keys in ``[0, size)``.

    A range of 16 bits takes numpy's radix sort. A larger one packs each key with its position (``key << b |
    position``) and sorts the packed values: positions break ties, so the order is stable, and numpy sorts
    plain integers with vector instructions, several times faster than its stable argsort (a merge sort).
    Ranges too large to pack take one radix pass per 16 bits.
    """
    if size - 1 <= MAX_PACKED_VOCAB:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    bits = max(1, (len(keys) - 1).bit_length())
    if size <= 1 << (63 - bits):
        packed = keys.astype(np.int64) << bits
        packed |= np.arange(len(keys), dtype=np.int64)
        packed.sort()
        packed &= (1 << bits) - 1
        return packed
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
    """What one order's n-grams are across the whole reference corpus (see the module docs)."""

    __slots__ = ("size", "keys", "df")
    # size: the number of distinct n-grams; keys: their codes, sorted (n-gram id = position; None for unigrams,
    # whose ids are token ids); df: document frequencies (None unless CIDEr-D's idf was asked for)


class BlockOrder:
    """One order's (reference, n-gram) and (image, n-gram) tables of one block of images (see the module docs)."""

    __slots__ = ("repeats", "pair_d", "pair_r", "pair_tf", "pair_first", "pair_val", "ig_key", "ig_bounds",
                 "ig_max")
    # pair_*: distinct (reference, n-gram), sorted by image, n-gram, then reference (None unless idf); pair_r the
    # reference's index in the corpus, pair_first its first occurrence among the block's occurrences of the order;
    # pair_val a metric's value per pair (CIDEr-D's tf-idf, set once document frequencies are known);
    # ig_*: distinct (image, n-gram), keyed (image - first image of the block) * size + n-gram, ascending.
    # pair_tf and ig_max are None when every count is 1 (repeats: some count is more).

    def nbytes(self) -> int:
        return sum(getattr(self, a).nbytes for a in self.__slots__[1:] if getattr(self, a) is not None)


class RefBlock:
    """The tables of images ``i0`` … ``i1 - 1`` (references ``r0`` … ``r1 - 1``), one :class:`BlockOrder` per
    order; ``data`` holds what a metric derives from them (CIDEr-D's reference norms)."""

    __slots__ = ("i0", "i1", "r0", "r1", "orders", "data")

    def nbytes(self) -> int:
        return sum(o.nbytes() for o in self.orders)


class RefIndex:
    """N-gram tables (orders 1…n) of a list of reference sets.

    References are numbered item by item: ``ref_start[i]`` … ``ref_start[i+1]-1``
    are the references of item i; ``lens`` their token counts, ``tok_start``
    where their tokens start. ``orders`` describes each order over the whole
    corpus; ``blocks[b]`` holds the tables of images ``b * IMAGES`` …, or None
    when it did not fit in :data:`RETAIN_BYTES` and is built again from
    ``grams`` (per order, the n-gram id at each token position) when used:
    :meth:`block`.
    """

    __slots__ = ("n", "clip", "idf", "vocab", "n_items", "counts", "ref_start", "ref_item", "lens", "tok_start",
                 "orders", "blocks", "grams")

    @property
    def n_refs(self) -> int:
        return len(self.lens)

    def block(self, b: int) -> RefBlock:
        """The tables of block ``b``: the ones kept, or built again (the same arrays) when they were not."""
        blk = self.blocks[b]
        return blk if blk is not None else _build_block(self, self.grams, b)[0]


#: Occurrences grouped per block of whole images: sorting and grouping a block touches memory that stays
#: in the processor's cache, so the cost per occurrence does not rise with the corpus.
BLOCK = 1 << 16
#: Images per block of tables (a :class:`RefBlock`); captions are scored a block at a time (as many as
#: ``BatchedMetric.block``, so that a batch of consecutive captions falls in one block).
IMAGES = 8192
#: Token positions per step of the corpus-wide passes (numbering an order's n-grams).
TOKENS = 1 << 18
#: Code ranges up to this size (or a few times the number of occurrences) are numbered through a table over the
#: range; larger ones through a hash table (:class:`annotator.keytable.KeyTable`). Tests lower it.
DIRECT_RANGE = 1 << 20
#: Bytes of block tables a prepared reference set keeps. Blocks beyond are built again when captions of their
#: images are scored (from the token arrays, which then stay): memory stays bounded at any corpus size, while
#: every block of 100,000 images × 5 references is kept (118 MiB for BLEU, 320 MiB for CIDEr-D).
RETAIN_BYTES = 768 << 20


def build(tok_refs: list[list[str]], n: int, *, clip: bool = True, idf: bool = True) -> RefIndex:
    """The n-gram tables of ``tok_refs`` (per item, a list of reference strings).

    ``clip`` computes BLEU's clipping counts (``ig_max``), ``idf`` what
    CIDEr-D needs besides (document frequencies, first occurrences, the
    ranges of (reference, n-gram) pairs per (image, n-gram)).

    First the corpus-wide pass, order by order: each position's n-gram id
    (the codes numbered in code order, :func:`_number_order`, a step of
    :data:`TOKENS` positions at a time). Then block by block of
    :data:`IMAGES` images, every order's tables (:func:`_build_block`), the
    occurrences sorted by (image, n-gram) :data:`BLOCK` at a time, stably, so
    within an (image, n-gram) they stay in reference and position order
    (:func:`_table`); the document frequencies add up block by block. Blocks
    are kept while they fit in :data:`RETAIN_BYTES`; when one does not, the
    rest are dropped after their document frequencies are counted, and the
    token arrays stay to build them again. Peak memory is then the token
    arrays (16 bytes per reference token at n = 4), what is kept, and one
    block's work.
    """
    ix = RefIndex()
    ix.n, ix.clip, ix.idf = n, clip, idf
    counts = np.fromiter(map(len, tok_refs), dtype=np.int64, count=len(tok_refs))
    ix.vocab, ids, lens = ref_tokens(list(chain.from_iterable(tok_refs)))
    n_items = len(counts)
    ix.n_items, ix.counts, ix.lens = n_items, counts, lens
    ix.ref_start = np.concatenate(([0], np.cumsum(counts)))
    ix.ref_item = np.repeat(np.arange(n_items, dtype=np.int32), counts)
    ix.tok_start = np.concatenate(([0], np.cumsum(lens)))
    mult = len(ix.vocab) + 1  # token ids are 1..V
    grams = [ids]
    orders = []
    for k in range(n):
        ot = OrderTable()
        if k == 0:
            ot.size, ot.keys = mult, None
        else:
            # k-gram code: (id of the (k-1)-gram, next token); ids in code order (the sorted distinct codes
            # serve as lookup table)
            ot.keys, d = _number_order(ix, grams[k - 1], ids, k, orders[-1].size * mult, mult)
            ot.size = len(ot.keys)
            grams.append(d)
        ot.df = np.zeros(ot.size, dtype=np.int64) if idf else None
        orders.append(ot)
    ix.orders = orders
    ix.blocks, kept, full = [], 0, False
    for b in range(-(-n_items // IMAGES)):
        blk, ig_ds = _build_block(ix, grams, b)
        if idf:
            for ot, ig_d in zip(orders, ig_ds):
                _count(ot.df, ig_d)
        size = blk.nbytes()
        full = full or kept + size > RETAIN_BYTES
        if not full:
            kept += size
        ix.blocks.append(None if full else blk)
        del blk, ig_ds
    ix.grams = grams if full else None  # built again from these when used
    return ix


def _count(df: np.ndarray, ig_d: np.ndarray) -> None:
    """Add one to ``df`` at every n-gram of ``ig_d`` (each an (image, n-gram) entry: df counts images)."""
    if len(df) <= 8 * len(ig_d):
        df += np.bincount(ig_d, minlength=len(df))
    else:
        np.add.at(df, ig_d, 1)


def _ref_steps(ix: RefIndex):
    """``(first, end)`` ranges of references of about :data:`TOKENS` tokens each."""
    at, n_refs = 0, ix.n_refs
    while at < n_refs:
        end = int(ix.tok_start.searchsorted(ix.tok_start[at] + TOKENS, side="right"))
        end = min(max(end - 1, at + 1), n_refs)
        yield at, end
        at = end


def _number_order(ix: RefIndex, prev: np.ndarray, ids: np.ndarray, k: int, size: int,
                  mult: int) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct codes of order k (in ``[0, size)``) and the n-gram id (int32) at each position.

    Two passes over the corpus, :data:`TOKENS` positions at a time: the distinct codes, then each position's
    id. A code range of at most a few times the number of occurrences is numbered through a table over the
    range (no hashing, the codes kept in the id array between the passes); a larger one through a hash table of
    the sorted distinct codes.
    """
    steps = list(_ref_steps(ix))

    def codes(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        idx = np.flatnonzero(_room(ix.lens[a:b]) > k)
        idx += ix.tok_start[a]
        c = prev[idx].astype(np.int64)
        c *= mult
        c += ids[idx + k]
        return idx, c

    count = int(np.maximum(ix.lens - k, 0).sum())
    d = np.zeros(len(ids), dtype=np.int32)  # positions that start no k-gram are never read
    if size <= max(DIRECT_RANGE, 4 * count) and size <= 1 << 31:
        # codes fit in the ids' int32: the first pass leaves each position's code in place, the second
        # turns codes into ids through a table over the range (no hashing, no codes computed again)
        seen = np.zeros(size, dtype=bool)
        for a, b in steps:
            idx, c = codes(a, b)
            seen[c] = True
            d[idx] = c
        keys = np.flatnonzero(seen)
        del seen
        number = np.zeros(size, dtype=np.int32)
        number[keys] = np.arange(len(keys), dtype=np.int32)
        for a, b in steps if len(keys) else ():
            t0, t1 = int(ix.tok_start[a]), int(ix.tok_start[b])
            d[t0:t1] = number[d[t0:t1]]
        return keys.astype(np.int64, copy=False), d
    uniq = [np.unique(codes(a, b)[1]) for a, b in steps]
    keys = np.unique(np.concatenate(uniq)) if uniq else np.zeros(0, dtype=np.int64)
    del uniq
    table = KeyTable(len(keys))
    table.add(keys, np.arange(len(keys), dtype=np.int32))
    for a, b in steps:
        idx, c = codes(a, b)
        d[idx] = table.get(c)
    return keys, d


def _build_block(ix: RefIndex, grams: list[np.ndarray], b: int) -> tuple[RefBlock, list]:
    """Block ``b``'s tables (:class:`RefBlock`) and, per order, the n-gram of each of its (image, n-gram)
    entries (for the document frequencies; None without idf)."""
    blk = RefBlock()
    blk.i0, blk.i1 = b * IMAGES, min(ix.n_items, (b + 1) * IMAGES)
    blk.r0, blk.r1 = int(ix.ref_start[blk.i0]), int(ix.ref_start[blk.i1])
    blk.data = None
    t0, t1 = int(ix.tok_start[blk.r0]), int(ix.tok_start[blk.r1])
    lens = ix.lens[blk.r0:blk.r1]
    room = _room(lens)
    seg = np.repeat(np.arange(blk.r0, blk.r1, dtype=np.int32), lens)
    blk.orders, ig_ds = [], []
    repeats = True
    for k, ot in enumerate(ix.orders):
        if k == 0:
            d, r = grams[0][t0:t1], seg
        else:
            idx = np.flatnonzero(room > k)
            d, r = grams[k][idx + t0], seg[idx]
            del idx
        bo, ig_d = _table(d, r, ot.size, blk.i0, ix.ref_start, ix.ref_item, repeats, ix.clip, ix.idf)
        # an n-gram repeated within a reference needs a repeated prefix: once none repeats, none will
        repeats = bo.repeats
        blk.orders.append(bo)
        ig_ds.append(ig_d)
    return blk, ig_ds


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


def _table(d: np.ndarray, r: np.ndarray, size: int, i0: int, ref_start: np.ndarray, ref_item: np.ndarray,
           repeats: bool, clip: bool, idf: bool) -> tuple[BlockOrder, np.ndarray | None]:
    """One order's tables of a block of images (the first ``i0``) from its occurrences' n-gram ids ``d`` and
    references ``r`` (in reference order), and the n-gram of each (image, n-gram) entry (None without idf).

    Built :data:`BLOCK` occurrences at a time (:func:`_blocks`), each sorted stably by (image, n-gram id):
    within an (image, n-gram), occurrences stay in reference and position order. The pieces are joined at the end.
    """
    bo = BlockOrder()
    parts = [_block_table(d[a:b], r[a:b], a, size, i0, ref_item, repeats, clip, idf)
             for a, b in _blocks(r, ref_start, ref_item)]
    cat = (lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dtype=dt))
    repeated = any(p[2] is not None for p in parts)
    bo.pair_d = bo.pair_r = bo.pair_tf = bo.pair_first = bo.pair_val = bo.ig_bounds = bo.ig_max = None
    bo.repeats = repeated
    bo.ig_key = cat([p[4] for p in parts], np.int64)
    if clip and repeated:
        bo.ig_max = cat([np.ones(len(p[4]), dtype=np.int32) if p[5] is None else p[5] for p in parts], np.int32)
    if not idf:
        return bo, None
    # the pairs themselves: only CIDEr-D needs them after the build
    bo.pair_d = cat([p[0] for p in parts], np.int32)
    bo.pair_r = cat([p[1] for p in parts], np.int32)
    if repeated:
        bo.pair_tf = cat([np.ones(len(p[0]), dtype=np.int32) if p[2] is None else p[2] for p in parts], np.int32)
    bo.pair_first = cat([p[3] for p in parts], np.int32).astype(np.int32, copy=False)
    offsets = np.cumsum([0] + [len(p[0]) for p in parts])
    bo.ig_bounds = np.concatenate([p[6] + o for p, o in zip(parts, offsets)] + [offsets[-1:]]).astype(
        np.int32 if offsets[-1] < 1 << 31 else np.int64, copy=False)
    return bo, cat([p[7] for p in parts], np.int32)


def _block_table(d: np.ndarray, r: np.ndarray, offset: int, size: int, i0: int, ref_item: np.ndarray,
                 repeats: bool, clip: bool, idf: bool) -> tuple:
    """One block's pairs and (image, n-gram) entries (see :func:`_table`)."""
    img = ref_item[r] - ref_item.dtype.type(i0)  # images counted from the block of tables' first
    img0 = int(img[0])
    key = (img - img[0]).astype(np.int64) * size + d
    perm = stable_argsort(key, (int(img[-1]) - img0 + 1) * size)
    key = key[perm]  # (image, n-gram), ascending; a reference's occurrences of an n-gram follow each other
    ds, rs = d[perm], r[perm]
    pstart = runs(key, rs) if repeats else None  # a reference belongs to one image: (key, reference) = pair
    first = None
    if pstart is None or len(pstart) == len(ds):
        # no n-gram repeats within a reference: every occurrence is a pair of its own, with count 1
        pair_key, pair_d, pair_r, pair_tf = key, ds, rs, None
        if idf:
            first = perm + offset
    else:
        pair_key, pair_d, pair_r = key[pstart], ds[pstart], rs[pstart]
        pair_tf = np.diff(pstart, append=len(ds)).astype(np.int32)
        if idf:
            first = perm[pstart] + offset  # the stable sort keeps a pair's first occurrence first
    istart = runs(pair_key)
    ig_key = pair_key[istart]
    ig_key += img0 * size  # (image - i0) * size + n-gram, ascending
    ig_max = None
    if clip and pair_tf is not None and len(pair_d):
        # the largest count per (image, n-gram): 1 but where some reference repeats the n-gram
        ig_max = np.ones(len(istart), dtype=np.int32)
        many = np.flatnonzero(pair_tf > 1)
        np.maximum.at(ig_max, istart.searchsorted(many, side="right") - 1, pair_tf[many])
    return pair_d, pair_r, pair_tf, first, ig_key, ig_max, istart if idf else None, pair_d[istart] if idf else None


def groups(items: np.ndarray):
    """``(block, positions)`` of the captions ``items`` whose images are in each block of tables, block by
    block; positions is None when all are in one block (the usual batch of consecutive captions)."""
    b = items // IMAGES
    if not len(b) or b[0] == b[-1] and (b == b[0]).all():
        yield (int(b[0]) if len(b) else 0), None
        return
    order = np.argsort(b, kind="stable")
    bs = b[order]
    cut = runs(bs)
    for a, e in zip(cut.tolist(), np.append(cut[1:], len(bs)).tolist()):
        yield int(bs[a]), order[a:e]


class OrderGrams:
    """Distinct (caption, n-gram) pairs of one order (per caption in first-occurrence order, when asked for).

    ``h`` caption, ``d`` n-gram id (``>= size`` of the order's table: no
    reference has it), ``tf`` count, ``e`` index of the (image, n-gram) entry
    of the caption's own image in its block's table of the order, -1 when its
    references lack the n-gram.
    """

    __slots__ = ("h", "d", "tf", "e")


def caption_grams(ix: RefIndex, blk: RefBlock, hyps: list[str], items: np.ndarray, *,
                  unmatched: bool) -> tuple[np.ndarray, list[OrderGrams]]:
    """Token counts and per-order n-grams of captions ``hyps``.

    Caption j is scored against the references of item ``items[j]``, an image of block ``blk``.
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
        out.append(_pairs(perm, sc, ds, hs, len(pos), ot, blk.orders[k], items - blk.i0, unmatched))
    return lens, out


def _pairs(perm: np.ndarray, sc: np.ndarray, ds: np.ndarray, hs: np.ndarray, count: int, ot: OrderTable,
           bo: BlockOrder, images: np.ndarray, ordered: bool) -> OrderGrams:
    """Distinct (caption, n-gram) pairs from occurrences sorted stably by n-gram code (``sc``); caption j's
    image is ``images[j]`` of the block of tables ``bo`` (counted from the block's first)."""
    og = OrderGrams()
    pstart = runs(sc, hs)  # within an n-gram, occurrences are in caption order: runs are the pairs
    og.tf = np.diff(pstart, append=len(sc))
    first = perm[pstart]  # the first occurrence (position among the order's occurrences)
    og.h, og.d = hs[pstart], ds[pstart]
    e = np.full(len(first), -1, dtype=np.int64)
    known = np.flatnonzero(og.d < ot.size)
    if len(known) and len(bo.ig_key):
        key = images[og.h[known]] * ot.size + og.d[known]
        # searched in ascending order, each search reads near the previous one: in the pairs' order (by n-gram)
        # nearly every step of every search missed the processor's cache, four times the cost of the sort
        order = stable_argsort(key, (int(images.max()) + 1) * ot.size)
        key = key[order]
        # only the entries of the images asked about: a block's searches stay in a small part of the table
        lo, hi = bo.ig_key.searchsorted(key[[0, -1]], side="left")
        hi = min(int(hi) + 1, len(bo.ig_key))
        table = bo.ig_key[lo:hi]
        j = table.searchsorted(key)
        j[j == len(table)] = 0
        hit = table[j] == key
        e[known[order[hit]]] = j[hit] + lo
    og.e = e
    if ordered and len(first):
        # first-occurrence order (positions are distinct: scatter them into their slots)
        slot = np.full(count, -1, dtype=np.int64)
        slot[first] = np.arange(len(first))
        fo = slot[slot >= 0]
        og.h, og.d, og.tf, og.e = og.h[fo], og.d[fo], og.tf[fo], og.e[fo]
    return og
