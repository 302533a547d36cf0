"""ROUGE-L exactly as coco-caption's ``rouge`` scorer computes it.

Per caption: split the caption and each reference on single spaces
(``str.split(" ")``, so runs of spaces give empty tokens, as in coco-caption),
take the longest common subsequence with every reference, the best precision
``lcs/len(caption)`` and best recall ``lcs/len(reference)`` over the
references (each maximised separately), and combine them as
``(1+β²)·P·R / (R + β²·P)`` with β = 1.2 (0 if either is 0). The corpus score
is the mean over captions (numpy's mean, as coco-caption).

The LCS length comes from the bit-parallel algorithm of Allison & Dix /
Crochemore et al. on Python integers: one pass over the caption tokens with a
bit mask per reference token, instead of filling the O(n·m) table. It gives
the same integer as coco-caption's ``my_lcs``; the scores then go through
the same floating-point operations.

All references of an image run in the same pass (:func:`lcs_lengths`): their
bit vectors sit side by side in one integer, each followed by a guard bit
that catches the carry out of its reference and is cleared after every token,
so each reference's bits evolve exactly as they would alone. One image's
references then cost one big-integer step per caption token instead of one
per token and reference, and one mask dictionary per image is kept instead of
one per reference (the prepared references of 100,000 images take a third of
the memory). A prepared reference set keeps the masks of :data:`KEPT_IMAGES`
images; the others' are made when their captions are scored, so a million
captions are scored within a bounded amount of memory.
"""

from __future__ import annotations

from .base import MeanScoreMetric, Prepared, Setting

BETA = 1.2
_B2 = BETA ** 2          # the value coco-caption uses (self.beta**2)
_ONE_B2 = 1 + BETA ** 2


def lcs_length(tokens: list[str], masks: dict[str, int], m: int) -> int:
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


def image_masks(refs: list[list[str]]) -> tuple[dict[str, int], int, tuple[tuple[int, int], ...]]:
    """Position masks of an image's references side by side (see the module docs).

    Returns ``(masks, start, segments)``: token → mask over all references,
    the starting bit vector (every reference's bits set, guard bits clear)
    and each reference's ``(offset, length)``.
    """
    masks: dict[str, int] = {}
    segments = []
    off = 0
    for toks in refs:
        for i, t in enumerate(toks, off):
            masks[t] = masks.get(t, 0) | (1 << i)
        segments.append((off, len(toks)))
        off += len(toks) + 1  # the guard bit
    start = 0
    for o, m in segments:
        start |= ((1 << m) - 1) << o
    return masks, start, tuple(segments)


def lcs_lengths(tokens: list[str], masks: dict[str, int], start: int,
                segments: tuple[tuple[int, int], ...]) -> list[int]:
    """LCS length of ``tokens`` with each reference of :func:`image_masks`, in one pass."""
    v = start
    for t in tokens:
        u = masks.get(t)
        if u:
            u &= v
            v = ((v + u) | (v - u)) & start  # u ⊆ v: no borrow; the mask clears the guard bits
    return [m - ((v >> o) & ((1 << m) - 1)).bit_count() for o, m in segments]


def position_masks(tokens: list[str]) -> dict[str, int]:
    """Token → bit mask of the positions where it occurs."""
    masks: dict[str, int] = {}
    for i, t in enumerate(tokens):
        masks[t] = masks.get(t, 0) | (1 << i)
    return masks


class RougeL(MeanScoreMetric):
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

    def _prepare(self, tok_refs: list[list[str]], samples=None) -> _RougeRefs:
        keep = min(len(tok_refs), KEPT_IMAGES)
        return _RougeRefs([image_masks([r.split(" ") for r in rs]) for rs in tok_refs[:keep]], tok_refs[keep:])

    def _stats(self, hyps: list[str], prep: Prepared):
        data = prep.data
        return [[_score(h, data.masks(i))] for i, h in enumerate(hyps)]

    def _segment(self, hyp: str, prep: Prepared, index: int):
        return [_score(hyp, prep.data.masks(index))]


#: Images whose references' masks a prepared reference set keeps (about 3 KB each with five references): every
#: image of 100,000, while the masks of a million would take 3 GB. The masks of the others are made again when
#: their captions are scored (what scoring them cold costs anyway).
KEPT_IMAGES = 200_000


class _RougeRefs:
    """The masks of the first :data:`KEPT_IMAGES` images (:func:`image_masks`), the tokenised references of
    the others."""

    __slots__ = ("kept", "rest")

    def __init__(self, kept: list, rest: list[list[str]]):
        self.kept, self.rest = kept, rest

    def masks(self, i: int) -> tuple[dict[str, int], int, tuple[tuple[int, int], ...]]:
        """The masks of image ``i``'s references."""
        if i < len(self.kept):
            return self.kept[i]
        return image_masks([r.split(" ") for r in self.rest[i - len(self.kept)]])


def _score(hyp: str, refs: tuple[dict[str, int], int, tuple[tuple[int, int], ...]]) -> float:
    toks = hyp.split(" ")
    lc = len(toks)
    prec_max = rec_max = 0.0
    masks, start, segments = refs
    for lcs, (_, m) in zip(lcs_lengths(toks, masks, start, segments), segments):
        p = lcs / float(lc)
        r = lcs / float(m)
        if p > prec_max:
            prec_max = p
        if r > rec_max:
            rec_max = r
    if prec_max != 0 and rec_max != 0:
        return ((_ONE_B2 * prec_max * rec_max) / float(rec_max + _B2 * prec_max))
    return 0.0
