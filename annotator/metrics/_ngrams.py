"""N-gram keys shared by BLEU and CIDEr-D.

Tokens (``str.split()``, as coco-caption's BLEU and CIDEr scorers split) are
numbered from 1; an n-gram of order k becomes one integer that packs its k
token ids in 16-bit fields (``id1 << 16*(k-1) | … | idk``), computed for a
whole corpus with numpy and handed to Python as plain ints. Because no id is
0, a k-gram key lies in [2**(16(k-1)), 2**(16k)): keys of different orders
never collide and the order of a key is ``(key.bit_length() - 1) >> 4``.
Integer keys make set and dict operations much cheaper than tuples of
strings while being exactly equivalent.

Keys are stored *stacked*: for each token position p the keys of orders
1…n starting at p, so one slice holds every n-gram of a run of consecutive
segments, and ``[k::n]`` steps pick one order. Positions where an n-gram
would run past the end of its segment hold :data:`SENTINEL`.

When a vocabulary does not fit 16-bit ids the tables fall back to tuple
keys (tuples of tokens; the order is the tuple length − 1) and ``None`` as
the sentinel. Same results, only slower.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

ID_BITS = 16
#: Largest vocabulary that uses packed integer keys (ids 1..65534; 65535 is
#: never used, so the all-ones sentinel below can never be a real 4-gram key).
MAX_PACKED_VOCAB = (1 << ID_BITS) - 2
SENTINEL = (1 << 64) - 1


class NgramTable:
    """Stacked n-gram keys of a list of token lists (see module docs)."""

    __slots__ = ("packed", "flat", "start", "end", "lens", "n", "sentinel")

    def __init__(self, packed: bool, flat: list, start: list[int], end: list[int], lens: list[int], n: int):
        self.packed = packed
        self.flat = flat
        self.start = start
        self.end = end
        self.lens = lens
        self.n = n
        self.sentinel = SENTINEL if packed else None

    def seg(self, s: int, k: int) -> list:
        """Keys of order k+1 of segment s, in position order."""
        a, b = self.start[s], self.end[s] - k
        n = self.n
        return self.flat[n * a + k:n * b:n] if b > a else []

    def stacked(self, s: int) -> list:
        """All keys of segment s, position by position (with sentinels)."""
        n = self.n
        return self.flat[n * self.start[s]:n * self.end[s]]

    def block(self, s0: int, s1: int) -> list:
        """All keys of segments s0..s1-1 (with sentinels)."""
        n = self.n
        return self.flat[n * self.start[s0]:n * self.end[s1 - 1]] if s1 > s0 else []


def order_of(key) -> int:
    """Order index (0 for unigrams) of a packed or tuple key."""
    if isinstance(key, int):
        return (key.bit_length() - 1) >> 4
    return len(key) - 1


def build_vocab(token_lists: list[list[str]]) -> dict[str, int]:
    """Token → id (from 1) in first-seen order."""
    return {t: i for i, t in enumerate(dict.fromkeys(chain.from_iterable(token_lists)), start=1)}


def extend_vocab(vocab: dict[str, int], token_lists: list[list[str]]) -> dict[str, int]:
    """``vocab`` plus fresh ids for unseen tokens (a new dict; ``vocab`` is untouched)."""
    out = None
    for t in dict.fromkeys(chain.from_iterable(token_lists)):
        if t not in vocab:
            if out is None:
                out = dict(vocab)
            out[t] = len(out) + 1
    return vocab if out is None else out


def table(token_lists: list[list[str]], vocab: dict[str, int] | None, n: int) -> NgramTable:
    """Build the stacked n-gram table; ``vocab`` None (or too big) selects tuple keys."""
    lens = [len(t) for t in token_lists]
    lens_a = np.asarray(lens, dtype=np.int64)
    ends = np.cumsum(lens_a) if lens else np.zeros(0, np.int64)
    start_l, end_l = (ends - lens_a).tolist(), ends.tolist()
    if vocab is None or len(vocab) > MAX_PACKED_VOCAB:
        return _tuple_table(token_lists, start_l, end_l, lens, n)
    flat = list(chain.from_iterable(token_lists))
    total = len(flat)
    ids = np.fromiter(map(vocab.__getitem__, flat), dtype=np.uint64, count=total)
    seg_end = np.repeat(ends, lens_a)
    pos = np.arange(total, dtype=np.int64)
    out = np.full((total, n), SENTINEL, dtype=np.uint64)
    g = ids
    for k in range(n):
        if k:
            g = (g[:-1] << np.uint64(ID_BITS)) | ids[k:]
        m = len(g)
        if m:
            ok = pos[:m] + k < seg_end[:m]
            out[:m, k] = np.where(ok, g, np.uint64(SENTINEL))
    return NgramTable(True, out.ravel().tolist(), start_l, end_l, lens, n)


def _tuple_table(token_lists, start, end, lens, n) -> NgramTable:
    flat: list = []
    for toks in token_lists:
        size = len(toks)
        for p in range(size):
            for k in range(n):
                flat.append(tuple(toks[p:p + k + 1]) if p + k < size else None)
    return NgramTable(False, flat, start, end, lens, n)


def segment_stacked(tokens: list[str], vocab: dict[str, int] | None, packed: bool, n: int) -> list:
    """Stacked keys of one token list, identical to its slice of :func:`table`.

    Unknown tokens get ids after the vocabulary; OverflowError when they do
    not fit 16 bits (callers then switch to tuple keys).
    """
    size = len(tokens)
    if not packed:
        return [tuple(tokens[p:p + k + 1]) if p + k < size else None for p in range(size) for k in range(n)]
    nxt = len(vocab)
    local: dict[str, int] = {}
    ids = []
    for t in tokens:
        i = vocab.get(t)
        if i is None:
            i = local.get(t)
            if i is None:
                nxt += 1
                i = local[t] = nxt
        ids.append(i)
    if nxt > MAX_PACKED_VOCAB:
        raise OverflowError("vocabulary too large for packed keys")
    out = []
    for p in range(size):
        g = 0
        for k in range(n):
            if p + k < size:
                g = (g << ID_BITS) | ids[p + k]
                out.append(g)
            else:
                out.append(SENTINEL)
    return out


def per_order(stacked: list, n: int) -> list[list]:
    """Split stacked keys of one segment into per-order lists (sentinels dropped)."""
    size = len(stacked) // n
    return [stacked[k:n * max(0, size - k):n] for k in range(n)]
