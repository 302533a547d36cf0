"""ROUGE-L exactly as coco-caption's ``rouge`` scorer computes it.

Per caption: split the caption and each reference on single spaces
(``str.split(" ")``, so runs of spaces give empty tokens, as in coco-caption),
take the longest common subsequence with every reference, the best precision
``lcs/len(caption)`` and best recall ``lcs/len(reference)`` over the
references (each maximised separately), and combine them as
``(1+β²)·P·R / (R + β²·P)`` with β = 1.2 (0 if either is 0). The corpus score
is the mean over captions (numpy's mean, as coco-caption).

The LCS length comes from the bit-parallel algorithm of Allison & Dix /
Crochemore et al.: one pass over the caption tokens with, for each token, the
bit mask of the reference positions that hold it, instead of filling the
O(n·m) table. It gives the same integer as coco-caption's ``my_lcs``; the
scores then go through the same floating-point operations.

Every (caption, reference) pair of a block of captions runs at once with
numpy (:func:`lcs_pairs`):

* tokens are integer keys read from the UTF-8 bytes of the texts joined with
  spaces (:func:`tokens`): a token of at most eight bytes without a NUL
  byte is its bytes as one integer, any other token a number from a dict of
  its bytes, so equal tokens have equal keys and different tokens different
  keys — no Python string per token;
* the pairs are grouped by reference length into words of 8, 16, 32 or 64
  bits; for each caption position, the reference tokens of every pair are
  compared with the caption's token and the comparisons packed into the
  pairs' masks (``np.packbits``), then one vector step of the bit-parallel
  recurrence runs over all pairs; a pair's bits above its reference's length
  never reach the bits below, so word arithmetic that wraps is exact;
* the few references longer than 64 tokens go through :func:`lcs_length` on
  Python integers.

A prepared reference set keeps the key of every reference token (8 bytes)
and each reference's offset and length: about 0.5 GB for a million images of
five ten-word references, where the masks of 200,000 images took 0.6 GB before.
"""

from __future__ import annotations

from itertools import chain, count, repeat

import numpy as np

from .base import BatchedMetric, MeanScoreMetric, Prepared, Setting

BETA = 1.2
_B2 = BETA ** 2          # the value coco-caption uses (self.beta**2)
_ONE_B2 = 1 + BETA ** 2


def lcs_length(tokens: list, masks: dict, m: int) -> int:
    """LCS length of ``tokens`` and a sequence of length ``m`` given by its position masks."""
    if m == 0:
        return 0
    v = (1 << m) - 1
    for t in tokens:
        u = masks.get(t)
        if u:
            u &= v
            v = (v + u) | (v - u)
    return m - (v & ((1 << m) - 1)).bit_count()


def position_masks(tokens: list) -> dict:
    """Token → bit mask of the positions where it occurs."""
    masks: dict = {}
    for i, t in enumerate(tokens):
        masks[t] = masks.get(t, 0) | (1 << i)
    return masks


# -- token keys ------------------------------------------------------------------------------------------------
# A token of at most eight bytes, none of them NUL, is keyed by its bytes read as a little-endian integer (the
# empty token by 0): its lowest byte is its first, never 0 unless it is empty. Every other key has a zero lowest
# byte and is not 0: the pads and the dict numbers of the other tokens, shifted left by a byte.
_LOW = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)
_REF_PAD = 1 << 8        # the 64 keys after the last reference (read by lcs_pairs, never used)
_UNKNOWN = 2 << 8        # a caption's dict-numbered token that no reference has
_FIRST_NUMBER = 3        # dict numbers start here
_JOIN = "\x1f"           # joins the texts of a block (any character other than a space would do)
_JOIN_BYTE = 0x1F


def tokens(texts: list[str], numbers: dict[bytes, int], new=None, spare: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Keys (int64) of the tokens of ``texts``, ``str.split(" ")`` of each, all texts in a row and then
    ``spare`` more (:data:`_REF_PAD`), and each text's number of tokens (int64).

    Tokens that are not keyed by their bytes are numbered through ``numbers``
    (bytes → number): with ``new`` (an iterator of fresh numbers, shared by
    every call that adds to ``numbers``) unknown ones are added, otherwise
    they get :data:`_UNKNOWN`.
    """
    # joined with the joiner, which ends a token as a space does, the texts split into exactly their tokens one
    # after the other, and the joiners mark where each text ends; texts that hold it are joined with spaces
    for joiner in (_JOIN, " "):
        joined = joiner.join(texts)
        data = joined.encode("ascii") if joined.isascii() else joined.encode("utf-8", "surrogatepass")
        del joined
        nb = len(data)
        buf = np.zeros(nb + 8, dtype=np.uint8)  # room for an 8-byte read at every token start
        raw = buf[:nb]
        raw[:] = np.frombuffer(data, dtype=np.uint8)
        cut = raw == 0x20
        if joiner == " ":
            break
        joins = raw == _JOIN_BYTE
        if np.count_nonzero(joins) == len(texts) - 1:
            cut |= joins
            break
    marked = joiner == _JOIN
    cuts = np.flatnonzero(cut)
    del cut
    starts = np.empty(len(cuts) + 1, dtype=np.int64)
    starts[0] = 0
    np.add(cuts, 1, out=starts[1:])
    size = np.empty_like(starts)
    size[:-1] = cuts
    size[-1] = nb
    size -= starts
    words = np.ndarray((nb + 1,), dtype="<u8", buffer=buf, strides=(1,))
    out = np.empty(len(starts) + spare, dtype=np.uint64)
    keys = out[:len(starts)]
    np.take(words, starts, out=keys)
    keys &= np.take(_LOW, np.minimum(size, 8))
    out[len(starts):] = _REF_PAD
    out = out.view(np.int64)
    keys = keys.view(np.int64)
    other = size > 8
    if data.find(0) >= 0:
        other[np.searchsorted(starts, np.flatnonzero(raw == 0), side="right") - 1] = True
    other = np.flatnonzero(other)
    if len(other):
        lo = starts[other]
        pieces = list(map(data.__getitem__, map(slice, lo.tolist(), (lo + size[other]).tolist())))
        if new is not None:
            num = np.fromiter(map(numbers.setdefault, pieces, new), dtype=np.int64, count=len(pieces))
            keys[other] = num << 8
        else:
            num = np.fromiter(map(numbers.get, pieces, repeat(-1)), dtype=np.int64, count=len(pieces))
            keys[other] = np.where(num < 0, _UNKNOWN, num << 8)
    if marked:
        # text k's last token is the one before its joiner
        counts = np.diff(np.flatnonzero(raw[cuts] == _JOIN_BYTE), prepend=-1, append=len(cuts))
    else:
        counts = np.fromiter(map(str.count, texts, repeat(" ")), dtype=np.int64, count=len(texts)) + 1
    return out, counts


# -- LCS of many pairs at once ---------------------------------------------------------------------------------
#: Reference-length classes: (longest reference, word type of the masks).
_WORDS = ((8, np.uint8), (16, np.uint16), (32, np.uint32), (64, np.uint64))
_FULL = {c: np.array([(1 << k) - 1 for k in range(c + 1)], dtype=dt) for c, dt in _WORDS}


def lcs_pairs(ref_keys: np.ndarray, ref_at: np.ndarray, ref_len: np.ndarray,
              hyp_keys: np.ndarray, hyp_at: np.ndarray, hyp_len: np.ndarray) -> np.ndarray:
    """LCS lengths (int64) of pairs of token sequences given as offsets and lengths into key arrays.

    Pair ``p`` is ``ref_keys[ref_at[p]:ref_at[p] + ref_len[p]]`` against
    ``hyp_keys[hyp_at[p]:hyp_at[p] + hyp_len[p]]``. ``ref_keys`` must hold 64
    entries past the last reference (any values: they are read, never used).
    """
    out = np.zeros(len(ref_at), dtype=np.int64)
    low = 0
    for c, dt in _WORDS:
        sel = np.flatnonzero((ref_len > low) & (ref_len <= c))
        low = c
        if not len(sel):
            continue
        # the longest captions first: at caption position j the pairs still running are a prefix
        n = hyp_len[sel]
        sel = sel[np.argsort(-(n.astype(np.int16) if n.max() < 1 << 15 else n), kind="stable")]  # int16: radix sort
        m, n, h0 = ref_len[sel], hyp_len[sel], hyp_at[sel]
        # each pair's c reference keys from its first token on: positions past the reference's end hold other
        # keys, whose bits in the masks stay above bit m and never reach the bits below (the sum carries upwards
        # only, and with u ⊆ v the difference borrows nowhere), so they need no padding
        refs = np.lib.stride_tricks.sliding_window_view(ref_keys, c)[ref_at[sel]]
        running = np.searchsorted(-n, -np.arange(int(n[0])), side="left")
        full = _FULL[c][m]
        v = full.copy()
        for j, k in enumerate(running.tolist()):
            # a row of c comparisons packs into exactly one word: the rows can be packed as one flat run
            u = np.packbits(refs[:k] == hyp_keys[h0[:k] + j][:, None], axis=None, bitorder="little").view(dt)
            vk = v[:k]
            u &= vk
            v[:k] = (vk + u) | (vk - u)
        out[sel] = m - np.bitwise_count(v & full)
    longer = np.flatnonzero(ref_len > low)
    for p in longer.tolist():
        r = ref_keys[ref_at[p]:ref_at[p] + ref_len[p]].tolist()
        out[p] = lcs_length(hyp_keys[hyp_at[p]:hyp_at[p] + hyp_len[p]].tolist(), position_masks(r), len(r))
    return out


#: Images whose references' keys are kept in one array: the references are keyed a block at a time, with
#: temporaries that stay in the processor's cache (2,048 images took 15 % less time than 8,192 and half as much
#: as 16,384) and no copy of all the keys at the end; a corpus's captions are scored a block of images at a
#: time too (:attr:`RougeL.block`).
IMAGES = 2048


class RougeL(BatchedMetric, MeanScoreMetric):
    """ROUGE-L (LCS-based F-measure, β = 1.2), the mean of per-caption scores."""

    key = "rouge"
    label = "ROUGE-L"
    aliases = ("rouge-l", "rouge_l")
    settings = (Setting("beta", BETA, "weight of recall against precision in the F-measure"),
                Setting("split", "space", "tokens: the text split on single spaces, as coco-caption"))
    reference = "pycocoevalcap.rouge.rouge:Rouge"
    description = "Longest common subsequence: best precision and best recall over the references in an F-measure."
    citation = "Lin. ROUGE: A Package for Automatic Evaluation of Summaries. Text Summarization Branches Out (ACL workshop) 2004."
    link = "https://aclanthology.org/W04-1013/"
    score_keys = ("ROUGE_L",)
    #: Captions per :meth:`_rows` call: those of one block of images.
    block = IMAGES

    def _prepare(self, tok_refs: list[list[str]], samples=None) -> _RougeRefs:
        return _RougeRefs(tok_refs)

    def _rows(self, hyps: list[str], prep: Prepared, items: np.ndarray) -> np.ndarray:
        """Scores of captions ``hyps``, caption j against the references of item ``items[j]``, the captions of
        each block of images (:data:`IMAGES`) together (:meth:`_block_rows`)."""
        H = len(hyps)
        out = np.zeros((H, 1), dtype=np.float64)
        if not H:
            return out
        blocks = items // IMAGES
        if (blocks == blocks[0]).all():  # a corpus's block of rows is one block of images
            out[:, 0] = self._block_rows(hyps, prep.data, int(blocks[0]), items)
            return out
        order = np.argsort(blocks, kind="stable")
        cuts = np.flatnonzero(np.diff(blocks[order])) + 1
        for sel in np.split(order, cuts):
            out[sel, 0] = self._block_rows([hyps[j] for j in sel.tolist()], prep.data, int(blocks[sel[0]]), items[sel])
        return out

    def _block_rows(self, hyps: list[str], data: _RougeRefs, block: int, items: np.ndarray) -> np.ndarray:
        """Scores of captions whose items are all in one block of images: every pair of a caption and one of
        its references through :func:`lcs_pairs`, then each caption's best precision and best recall (its pairs
        are consecutive) in coco-caption's F-measure."""
        H = len(hyps)
        hyp_keys, hyp_len = tokens(hyps, data.numbers)
        hyp_start = np.cumsum(hyp_len) - hyp_len
        first = data.first[items]
        per = data.first[items + 1] - first
        pair_hyp = np.repeat(np.arange(H), per)
        heads = np.cumsum(per) - per  # each caption's first pair
        pair_ref = np.arange(len(pair_hyp)) - np.repeat(heads - first, per)
        m = data.lens[pair_ref]
        n = hyp_len[pair_hyp]
        lcs = lcs_pairs(data.keys[block], data.starts[pair_ref], m, hyp_keys, hyp_start[pair_hyp], n)
        prec = np.maximum.reduceat(lcs / n, heads)
        rec = np.maximum.reduceat(lcs / m, heads)
        with np.errstate(divide="ignore", invalid="ignore"):
            score = (_ONE_B2 * prec * rec) / (rec + _B2 * prec)
        score[(prec == 0) | (rec == 0)] = 0.0
        return score


class _RougeRefs:
    """The token keys of each block of images' references (:func:`tokens`, 64 more after the last), each
    reference's offset in its block's keys and its length, each image's first reference, and the numbers of
    the tokens not keyed by their bytes."""

    __slots__ = ("keys", "starts", "lens", "first", "numbers")

    def __init__(self, tok_refs: list[list[str]]):
        per = np.fromiter(map(len, tok_refs), dtype=np.int64, count=len(tok_refs))
        self.first = np.zeros(len(tok_refs) + 1, dtype=np.int64)
        np.cumsum(per, out=self.first[1:])
        self.numbers: dict[bytes, int] = {}
        new = count(_FIRST_NUMBER)
        self.keys: list[np.ndarray] = []
        lens, starts = [], []
        for at in range(0, len(tok_refs), IMAGES):
            # 64 keys after the last reference: lcs_pairs reads whole words
            k, n = tokens(list(chain.from_iterable(tok_refs[at:at + IMAGES])), self.numbers, new, spare=64)
            self.keys.append(k)
            lens.append(n.astype(np.int32))
            starts.append((np.cumsum(n) - n).astype(np.int32))
        self.lens = np.concatenate(lens) if lens else np.zeros(0, dtype=np.int32)
        self.starts = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int32)
