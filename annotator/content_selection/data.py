"""Items → small integer arrays, grouped by number of boxes.

Every evaluable image (see :mod:`.metric`) becomes one row of a
:class:`Group`: images with the same number of boxes ``n`` share a group, so
rankings are plain ``(images, n)`` arrays without padding of the box axis.
The reference axis is padded to the group's largest count and masked.
Boxes keep the item's order (their import order), which is also the final
tie-breaker of every ranking.
"""

from __future__ import annotations

import gc
import math
import re
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from typing import Sequence

import numpy as np

from ..model import Box, Item

__all__ = ["EMPTY_DESCRIPTIONS", "SKIP_REASONS", "concept", "box_concept", "display_name", "gold_sets",
           "image_centre", "centre_distance", "item_hash", "no_gc", "Group", "EvalSet", "compile_items"]

_SYNSET = re.compile(r"^(.+)\.[a-z]\.\d+$")

#: What to do with a gold description that mentions no box: ``drop`` leaves it out of M (the default), ``count``
#: keeps it in M as equations 1 and 2 are written, where it adds 0 to both sums.
EMPTY_DESCRIPTIONS = ("drop", "count")

#: What happens to an image with a single gold description: scored by every baseline and system (equation 1 as
#: written; the upper bound then skips it) or skipped everywhere, so every row has the same images.
SINGLE_DESCRIPTIONS = ("score", "skip")

#: Why an image is not scored, in the order the checks are made.
SKIP_REASONS = ("no boxes", "no description mentions a box", "fewer than two gold descriptions")


@lru_cache(maxsize=65536)
def concept(label: str) -> str:
    """The concept key of a label or synset name: trimmed and lower case, the WordNet sense kept.

    ``"Dog"`` and ``" dog "`` are one concept; ``"mouse.n.01"`` (the animal) and
    ``"mouse.n.04"`` (the computer device) are two, and neither is ``"mouse"``.
    """
    return label.strip().lower()


def box_concept(box: Box) -> str:
    """The concept a box counts as in the textual priors: its synset when it has one, else its label."""
    return concept(box.synset or box.label)


def display_name(label: str) -> str:
    """The words used for a box label in a realised sentence (``police_car.n.01`` → ``police car``)."""
    key = concept(label)
    m = _SYNSET.match(key)
    return (m.group(1) if m else key).replace("_", " ")


def gold_sets(item: Item) -> list[frozenset[str]]:
    """Per reference, the set of the item's box ids it mentions (unknown ids dropped)."""
    known = {b.box_id for b in item.boxes}
    return [frozenset(b for m in ref.mentions for b in m.box_ids if b in known) for ref in item.references]


def image_centre(item: Item) -> tuple[float, float]:
    """Centre of the image; without a known size, the centre of the extent the boxes cover from (0, 0)."""
    if item.width and item.height:
        return item.width / 2.0, item.height / 2.0
    if not item.boxes:
        return 0.0, 0.0
    return (max(b.x + b.w for b in item.boxes) / 2.0, max(b.y + b.h for b in item.boxes) / 2.0)


def centre_distance(box: Box, centre: tuple[float, float]) -> float:
    """Euclidean distance of the box centroid to ``centre``."""
    cx, cy = box.centre
    return math.hypot(cx - centre[0], cy - centre[1])


@dataclass
class Group:
    """All evaluable images with ``n`` boxes, as arrays (``I`` images, ``M`` padded references)."""

    n: int
    idx: np.ndarray        # (I,) positions in EvalSet.items
    gold: np.ndarray       # (I, M, n) bool: reference m mentions box b
    valid: np.ndarray      # (I, M) bool: reference m is one of the image's M gold descriptions
    gsize: np.ndarray      # (I, M) int: |G_m| (1 where it is 0, to keep divisions finite)
    area: np.ndarray       # (I, n) float
    dist: np.ndarray       # (I, n) float: centroid to image centre
    label: np.ndarray      # (I, n) int: concept id in EvalSet.vocab
    ikey: np.ndarray       # (I,) uint64: hash of the item key (per-image random draws)


@dataclass
class EvalSet:
    """The evaluable images of a set of items, compiled for fast scoring.

    The per-image counts (aligned with ``items``) are those of the mention
    statistics: ``descriptions`` is M, ``without_mentions`` the image's
    descriptions that mention none of its boxes (left out of M, or counted in
    it with ``empty_descriptions="count"``), ``instances`` and
    ``instances_sq`` the sums of |G_m| and |G_m|² over M, ``mentioned`` the
    boxes at least one description mentions.
    """

    items: list[Item]                  # evaluable items, in input order
    groups: list[Group]
    vocab: list[str]                   # concept id → concept
    skipped: list[str] = field(default_factory=list)   # keys of items that could not be evaluated
    unknown_gold_ids: int = 0          # mentions of ids the item has no box for (ignored)
    skip_reasons: dict[str, str] = field(default_factory=dict)   # skipped key → one of SKIP_REASONS
    empty_descriptions: str = "drop"
    min_descriptions: int = 1
    descriptions: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    without_mentions: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    instances: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    instances_sq: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    mentioned: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.items)


@contextmanager
def no_gc():
    """Pause the cyclic garbage collector while building many small objects.

    Compiling tens of thousands of items allocates millions of small lists and
    tuples, which triggers full collections that walk every loaded item again
    (most of the compile time otherwise); nothing built here forms cycles.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def item_hash(key: str) -> int:
    """A stable 32-bit hash of an item key (Python's hash() is salted per process)."""
    return zlib.crc32(key.encode("utf-8"))


def compile_items(items: Sequence[Item], *, require_gold: bool = True, empty_descriptions: str = "drop",
                  min_descriptions: int = 1) -> EvalSet:
    """Compile items into an :class:`EvalSet`.

    Images without boxes are always skipped; with ``require_gold`` (the
    default) so are images none of whose references mentions a box, and
    images with fewer than ``min_descriptions`` gold descriptions in M (2 when
    the upper bound, one description against the others, must be defined).
    Without ``require_gold`` (used to rank a single image for display) such
    images are kept. ``empty_descriptions`` says whether a reference that
    mentions no box is one of the M gold descriptions (``count``) or not
    (``drop``).
    """
    if empty_descriptions not in EMPTY_DESCRIPTIONS:
        raise ValueError(f"empty_descriptions must be one of {EMPTY_DESCRIPTIONS}, not {empty_descriptions!r}")
    keep_empty = empty_descriptions == "count"
    with no_gc():
        vocab: dict[str, int] = {}
        kept: list[Item] = []
        skipped: list[str] = []
        reasons: dict[str, str] = {}
        empties: list[int] = []
        unknown = 0
        per_n: dict[int, list] = {}
        for item in items:
            known = {b.box_id for b in item.boxes}
            golds = []
            empty = 0
            for ref in item.references:
                ids = {b for m in ref.mentions for b in m.box_ids}
                unknown += len(ids - known)
                g = ids & known
                if g or keep_empty:
                    golds.append(g)
                if not g:
                    empty += 1
            reason = None
            if not item.boxes:
                reason = SKIP_REASONS[0]
            elif require_gold and empty == len(item.references):
                reason = SKIP_REASONS[1]
            elif require_gold and len(golds) < min_descriptions:
                reason = SKIP_REASONS[2]
            if reason is not None:
                skipped.append(item.key)
                reasons[item.key] = reason
                continue
            pos = {b.box_id: j for j, b in enumerate(item.boxes)}
            empties.append(empty)
            row = (
                len(kept),
                [[pos[b] for b in g] for g in golds],
                [v for b in item.boxes for v in (b.x, b.y, b.w, b.h)],
                image_centre(item),
                [vocab.setdefault(box_concept(b), len(vocab)) for b in item.boxes],
                item_hash(item.key),
            )
            kept.append(item)
            per_n.setdefault(len(item.boxes), []).append(row)
        groups = [_build_group(n, rows) for n, rows in sorted(per_n.items())]
        es = EvalSet(kept, groups, list(vocab), skipped, unknown, reasons, empty_descriptions, min_descriptions)
        _count_mentions(es, np.asarray(empties, dtype=np.int64))
        return es


def _count_mentions(es: EvalSet, empties: np.ndarray) -> None:
    """Fill the per-image mention counts of ``es`` from its groups' arrays (``empties``: per item, in order)."""
    n = len(es.items)
    es.descriptions, es.instances, es.instances_sq, es.mentioned = (np.zeros(n, dtype=np.int64) for _ in range(4))
    es.without_mentions = empties
    for g in es.groups:
        sizes = g.gold.sum(axis=2)                      # (I, M): |G_m|, 0 on padding
        es.descriptions[g.idx] = g.valid.sum(axis=1)
        es.instances[g.idx] = sizes.sum(axis=1)
        es.instances_sq[g.idx] = (sizes * sizes).sum(axis=1)
        es.mentioned[g.idx] = g.gold.any(axis=1).sum(axis=1)


def _build_group(n: int, rows: list) -> Group:
    count = len(rows)
    n_refs = np.fromiter((len(r[1]) for r in rows), dtype=np.int64, count=count)
    m_max = max(int(n_refs.max()), 1)
    # One fancy assignment from flat (image, reference, box) indices.
    ii: list[int] = []
    mm: list[int] = []
    bb: list[int] = []
    for i, r in enumerate(rows):
        for m, members in enumerate(r[1]):
            ii.extend([i] * len(members))
            mm.extend([m] * len(members))
            bb.extend(members)
    gold = np.zeros((count, m_max, n), dtype=bool)
    gold[ii, mm, bb] = True
    valid = np.arange(m_max)[None, :] < n_refs[:, None]
    gsize = np.maximum(gold.sum(axis=2), 1)
    geom = np.fromiter(chain.from_iterable(r[2] for r in rows), dtype=float, count=count * n * 4).reshape(count, n, 4)
    centre = np.fromiter(chain.from_iterable(r[3] for r in rows), dtype=float, count=count * 2).reshape(count, 1, 2)
    mid = geom[:, :, :2] + geom[:, :, 2:] / 2.0
    return Group(
        n=n,
        idx=np.fromiter((r[0] for r in rows), dtype=np.int64, count=count),
        gold=gold,
        valid=valid,
        gsize=gsize.astype(np.int32),
        area=geom[:, :, 2] * geom[:, :, 3],
        dist=np.hypot(mid[:, :, 0] - centre[:, :, 0], mid[:, :, 1] - centre[:, :, 1]),
        label=np.fromiter(chain.from_iterable(r[4] for r in rows), dtype=np.int64, count=count * n).reshape(count, n),
        ikey=np.fromiter((r[5] for r in rows), dtype=np.uint64, count=count),
    )
