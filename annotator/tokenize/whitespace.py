"""Whitespace tokens of many texts at once, as integer ids.

BLEU and CIDEr-D split text with ``str.split()``. Splitting a corpus into
Python strings and numbering them through a dict costs about as much as the
rest of the n-gram work together, so :func:`ref_tokens` and
:func:`caption_tokens` do it on the UTF-8 bytes with numpy instead:

* the texts are joined with ``\\x1f`` (a character ``str.split()`` treats as
  whitespace, so it separates texts like a space) and encoded;
* token boundaries are the edges between whitespace and other bytes, where
  whitespace is exactly what ``str.split()`` splits on: ten ASCII characters
  (space, ``\\t\\n\\v\\f\\r`` and ``\\x1c``-``\\x1f``) — texts holding one of
  the non-ASCII whitespace characters take the plain ``str.split()`` path;
* a token of at most seven bytes is identified by its bytes and length packed
  into one integer; longer tokens (a few percent) are numbered through a dict
  of their bytes, one of each per block (equal ones of up to 15 bytes are
  found with numpy first). Equal tokens get equal keys and different tokens
  different keys, so the ids are exactly those of a dict of the split strings.

Ids run from 1 in first-seen order, handed out through a hash table of the keys
(:class:`annotator.keytable.KeyTable`); captions get the ids of the references'
vocabulary, and 0 (or, when asked, fresh ids after the vocabulary) for
tokens no reference has.
"""

from __future__ import annotations

import re
from itertools import chain, count, repeat

import numpy as np

from ..keytable import KeyTable
from .base import Tokenizer

_JOIN = "\x1f"
_JOIN_BYTE = 0x1F
#: Bytes ``str.split()`` splits on (the ASCII characters for which ``str.isspace()`` holds): 9-13 and 28-32.
_SPACE_BYTES = (9, 10, 11, 12, 13, 28, 29, 30, 31, 32)
#: The other characters ``str.isspace()`` accepts; texts holding one are split by Python.
_OTHER_SPACE = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_SHORT = 7  # bytes that fit in a key next to the length
_LONG = 1 << 62  # keys of longer tokens: _LONG | number in the vocabulary's dict
_LOW = np.array([(1 << (8 * n)) - 1 for n in range(_SHORT + 1)], dtype=np.uint64)
_SEP = "\x00"  # joins texts for the str.split() path; texts that contain it are split one by one


class WhitespaceTokenizer(Tokenizer):
    """``str.split()``: the tokens :func:`ref_tokens` and :func:`caption_tokens` number, one text at a time."""

    name = "whitespace"

    def __call__(self, text: str) -> list[str]:
        return text.split()


class Vocab:
    """Token ids of a reference corpus (see the module docs).

    ``size`` is the number of distinct tokens (ids 1…size). ``words`` is the
    same vocabulary as a ``{token: id}`` dict, built when first used.
    """

    __slots__ = ("size", "keys", "table", "long", "_words")

    def __len__(self) -> int:
        return self.size

    @property
    def words(self) -> dict[str, int]:
        if self._words is None:
            self._words = self._decode()
        return self._words

    def _decode(self) -> dict[str, int]:
        back = {i: b for b, i in self.long.items()}
        out = {}
        for key, i in zip(self.keys.tolist(), range(1, self.size + 1)):
            if key & _LONG:
                raw = back[key & ~_LONG]
            else:
                raw = (key & ((1 << 56) - 1)).to_bytes(key >> 56, "little")
            out[raw.decode("utf-8", "surrogatepass")] = i
        return out


def _encode(texts: list[str]) -> tuple[bytes, np.ndarray | None] | None:
    """The texts joined with the joiner, as UTF-8, and (for ASCII text) the joiners' byte offsets.

    None when the byte path cannot split them like ``str.split()``.
    """
    if not texts:
        return None
    joined = _JOIN.join(texts)
    if joined.count(_JOIN) != len(texts) - 1:
        return None
    if joined.isascii():
        # one byte per character: the joiners sit after each text's characters
        ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1)[:-1] - 1
        return joined.encode("ascii"), ends
    if _OTHER_SPACE.search(joined):
        return None
    return joined.encode("utf-8", "surrogatepass"), None


#: Texts encoded and keyed at a time: the temporaries of a block stay in the processor's cache and in memory
#: the allocator reuses, so the cost per text does not rise with the corpus (one pass over 500,000 texts at
#: once spent more than half its time in page faults and cache misses).
BLOCK = 4096


def _block_keys(texts: list[str], long: dict[bytes, int], grow: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_keys` of the texts, block by block (None when a block cannot take the byte path)."""
    extra: dict[bytes, int] = {}
    numbers = count()  # numbers for new long tokens, unique across the blocks (ref_tokens renumbers them)
    keys, lens = [], []
    for at in range(0, len(texts), BLOCK):
        encoded = _encode(texts[at:at + BLOCK])
        if encoded is None:
            return None
        k, n = _keys(encoded, long, grow, extra, numbers)
        keys.append(k)
        lens.append(n)
    if not keys:
        return None
    return (keys[0], lens[0]) if len(keys) == 1 else (np.concatenate(keys), np.concatenate(lens))


def _keys(encoded: tuple[bytes, np.ndarray | None], long: dict[bytes, int], grow: bool, extra: dict[bytes, int],
          numbers) -> tuple[np.ndarray, np.ndarray]:
    """Token keys of the joined texts and each text's token count.

    Longer tokens are numbered through ``long`` (extended in place when
    ``grow``; otherwise unknown ones are numbered in ``extra``, after
    ``long``'s numbers).
    """
    data, joins = encoded
    nb = len(data)
    buf = np.zeros(nb + 16, dtype=np.uint8)  # one zero byte before the text, room for 8-byte reads after
    buf[1:nb + 1] = np.frombuffer(data, dtype=np.uint8)
    b = buf[:nb + 2]
    # not whitespace (_SPACE_BYTES): outside 9..13 and 28..32 (uint8 arithmetic wraps below 9 and 28)
    word = ((b - np.uint8(9)) > 4) & ((b - np.uint8(28)) > 4)
    word[0] = word[nb + 1] = False
    edges = np.flatnonzero(word[1:] != word[:-1])  # alternately a token's start and its end (byte offsets)
    starts, ends = edges[0::2], edges[1::2]
    if joins is None:
        joins = np.flatnonzero(b[1:nb + 1] == _JOIN_BYTE)
    lens = np.diff(np.searchsorted(starts, joins), prepend=0, append=len(starts))
    size = ends - starts
    # eight bytes from each token's start (little-endian), cut to the token's length
    w = np.ndarray((nb + 8,), dtype="<u8", buffer=buf, strides=(1,))
    keys = (w[starts + 1] & _LOW[np.minimum(size, _SHORT)]).view(np.int64)
    keys |= np.minimum(size, _SHORT + 1) << 56  # longer tokens get their keys below
    big = np.flatnonzero(size > _SHORT)
    if len(big):
        # equal longer tokens found with numpy, so that only one of each goes through the dict: up to 15 bytes,
        # a token is its first eight bytes and the rest with its length; longer ones go one by one
        at, n = starts[big] + 1, size[big]
        head = w[at].view(np.int64)
        tail = (w[at + 8] & _LOW[np.clip(n - 8, 0, _SHORT)]).view(np.int64) | (np.minimum(n, 16) << 56)
        order = np.lexsort((tail, head))
        head, tail = head[order], tail[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = (head[1:] != head[:-1]) | (tail[1:] != tail[:-1])
        new |= n[order] > 15
        first = np.flatnonzero(new)
        rep = big[order[first]]
        pieces = [data[a:b] for a, b in zip(starts[rep].tolist(), ends[rep].tolist())]
        if grow:
            # setdefault gives a new piece the next of ``numbers``; ref_tokens renumbers them densely
            got = np.fromiter(map(long.setdefault, pieces, numbers), dtype=np.int64, count=len(pieces))
        else:
            base = len(long)
            got = [long.get(p) for p in pieces]
            for k, (p, g) in enumerate(zip(pieces, got)):
                if g is None:
                    got[k] = extra.setdefault(p, base + len(extra))
            got = np.asarray(got, dtype=np.int64)
        keys[big[order]] = _LONG | np.repeat(got, np.diff(first, append=len(order)))
    return keys, lens


def ref_tokens(texts: list[str]) -> tuple[Vocab, np.ndarray, np.ndarray]:
    """Vocabulary, token ids (int32, all texts in a row) and token counts of reference texts.

    Keyed and numbered :data:`BLOCK` texts at a time: only a block's keys exist at once besides the ids (the
    whole corpus's keys and their hash numbering took 20 bytes per token more at the peak).
    """
    voc = Vocab()
    voc._words = None
    long: dict[bytes, int] = {}
    keyed = _ref_ids(texts, long)
    if keyed is None:
        words, lens = _split(texts)
        vocab: dict[str, int] = {}
        first = np.fromiter(map(vocab.setdefault, words, count()), dtype=np.int64, count=len(words))
        if lens is None:
            lens, keep = _cut(first == vocab.pop(_SEP))
            first = first[keep]
        # ids 1..V in first-seen order (setdefault handed out first positions, which rise in the same order)
        remap = np.zeros(len(words) + 1, dtype=np.int32)
        remap[np.fromiter(vocab.values(), dtype=np.int64, count=len(vocab))] = np.arange(1, len(vocab) + 1)
        voc.size, voc.keys, voc.table, voc.long = len(vocab), None, None, None
        voc._words = dict(zip(vocab, range(1, len(vocab) + 1)))
        return voc, remap[first], lens
    ids, lens, uniq, table = keyed
    if long:
        # dense numbers for the long tokens (setdefault gave them positions)
        num = np.fromiter(long.values(), dtype=np.int64, count=len(long))
        dense = np.zeros(int(num.max()) + 1, dtype=np.int64)
        dense[num] = np.arange(len(num))
        big = np.flatnonzero(uniq & _LONG)
        uniq[big] = _LONG | dense[uniq[big] & ~_LONG]
        long = dict(zip(long, range(len(long))))
        table = KeyTable(len(uniq))  # the long tokens' keys changed
        table.add(uniq, np.arange(len(uniq), dtype=np.int32))
    voc.size, voc.keys, voc.long, voc.table = len(uniq), uniq, long, table
    return voc, ids, lens


def _ref_ids(texts: list[str], long: dict[bytes, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, KeyTable] | None:
    """Token ids (int32, from 1 in first-seen order), token counts, each id's key (id - 1 → key) and the table
    of those keys (key → id - 1) of the texts, block by block; None when a block cannot take the byte path."""
    table = KeyTable()
    numbers = count()  # numbers for new long tokens, unique across the blocks (renumbered by the caller)
    ids, lens, fresh = [], [], []
    for at in range(0, len(texts), BLOCK):
        encoded = _encode(texts[at:at + BLOCK])
        if encoded is None:
            return None
        keys, n = _keys(encoded, long, True, {}, numbers)
        got = table.get(keys)
        miss = np.flatnonzero(got < 0)
        if len(miss):  # the block's new tokens, numbered in first-seen order
            uniq, first, inv = np.unique(keys[miss], return_index=True, return_inverse=True)
            order = np.argsort(first)
            number = np.empty(len(uniq), dtype=np.int32)
            number[order] = np.arange(len(table), len(table) + len(uniq), dtype=np.int32)
            table.add(uniq, number)
            got[miss] = number[inv.reshape(-1)]
            fresh.append(uniq[order])
        got += 1
        ids.append(got)
        lens.append(n)
    if not ids:
        return None
    keys = np.concatenate(fresh) if fresh else np.zeros(0, dtype=np.int64)  # in id order
    if len(ids) == 1:
        return ids[0], lens[0], keys, table
    return np.concatenate(ids), np.concatenate(lens), keys, table


def caption_tokens(voc: Vocab, texts: list[str], fresh: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """Token ids (int64) and token counts of captions, in the references' vocabulary.

    Tokens no reference has get id 0, or with ``fresh`` ids ``size+1, size+2,
    …`` (equal tokens, equal ids). Returns ``(ids, lens, number of fresh ids)``.
    """
    keyed = _block_keys(texts, voc.long, False) if voc.keys is not None else None
    if keyed is None:
        words, lens = _split(texts)
        ids = np.fromiter(map(voc.words.get, words, repeat(0)), dtype=np.int64, count=len(words))
        if lens is None:
            sep = np.fromiter(map(_SEP.__eq__, words), dtype=bool, count=len(words))
            lens, keep = _cut(sep)
            ids, words = ids[keep], [words[p] for p in keep.tolist()]
        unknown = np.flatnonzero(ids == 0) if fresh else ()
        if not len(unknown):
            return ids, lens, 0
        keys = None
        miss = [words[p] for p in unknown.tolist()]
    else:
        keys, lens = keyed
        ids = voc.table.get(keys).astype(np.int64)
        ids += 1  # 0: no reference has the token
        unknown = np.flatnonzero(ids == 0) if fresh else ()
        if not len(unknown):
            return ids, lens, 0
        miss = keys[unknown]
    if keys is None:
        seen: dict[str, int] = {}
        num = np.fromiter(map(seen.setdefault, miss, count()), dtype=np.int64, count=len(miss))
        uniq, num = np.unique(num, return_inverse=True)  # setdefault handed out first positions: renumber
    else:
        uniq, num = np.unique(miss, return_inverse=True)
    ids[unknown] = voc.size + 1 + num.reshape(-1)
    return ids, lens, len(uniq)


def _split(texts: list[str]) -> tuple[list[str], np.ndarray | None]:
    """Tokens of all ``texts`` (``str.split()`` of each) in one list.

    Returns ``(words, lens)``. When no text contains the separator token, the
    texts are joined with it and split in one call: ``words`` then holds one
    separator between consecutive texts and ``lens`` is None. Otherwise the
    texts are split one by one and ``lens`` gives each text's token count.
    """
    if len(texts) > 1:
        joined = f" {_SEP} ".join(texts)
        if joined.count(_SEP) == len(texts) - 1:
            return joined.split(), None
    toks = [t.split() for t in texts]
    return list(chain.from_iterable(toks)), np.fromiter(map(len, toks), dtype=np.int64, count=len(toks))


def _cut(sep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Token counts of the texts and the positions that are not separators, from a separator mask."""
    pos = np.flatnonzero(sep)
    lens = np.diff(pos, prepend=-1, append=len(sep)) - 1
    return lens, np.flatnonzero(~sep)
