"""Standard metrics on rich (human) and sparse (machine) descriptions: Section 3.2 of the lexical-gap study.

For every image the study scores descriptions against ground truth drawn
from the descriptions themselves: in each of many evaluations (1,000 in the
study) five descriptions are drawn at random as the ground truth and the
other descriptions are scored against them with the standard caption
metrics. Doing this with human or machine descriptions as ground truth and
as candidates gives its Table 1: sparse candidates against sparse ground
truth score far higher than rich ones, and rich descriptions score poorly
whichever ground truth they meet.

Here a project's *human* descriptions of an image are its references and its
*machine* descriptions are the captions of its systems (every sample of each
system: a system with 50 samples per image gives 50, as the study's pool). For
each cell (ground truth, candidates) of the table:

* an evaluation draws, for every image, ``ground_truth`` descriptions of the
  ground-truth pool uniformly at random without replacement; the candidates
  are the image's descriptions of the candidate pool, less the drawn ones
  when both pools are the same;
* every candidate is scored against its image's draw, and one corpus score
  per metric is taken over all images' candidates, as the coco-caption
  toolkit scores a test set (BLEU and METEOR from summed statistics,
  ROUGE-L and CIDEr-D as the mean of the per-caption scores);
* the table holds each metric's mean over ``draws`` evaluations (the
  standard deviation over evaluations is kept too).

An image takes part in a cell only when its ground-truth pool has at least
``ground_truth`` descriptions and at least one candidate is left; the
report counts the images left out. Draws are seeded
(``numpy.random.default_rng([seed, pool])``, one stream per ground-truth
pool, so the human-ground-truth cells share their draws, and so do the
machine ones).

Speed: an image with g descriptions has only C(g, d) possible draws, and a
thousand evaluations repeat most of them. Each distinct draw of each image is
prepared once as a reference set (shared by the two cells with the same
ground-truth pool when the same images take part), each candidate is scored against each of its image's
distinct draws once (per-caption sufficient statistics,
:meth:`annotator.metrics.base.Metric.stats_at`), and every evaluation is a
re-aggregation of those rows (:meth:`~annotator.metrics.base.Metric.resample`
with one sparse 0/1 weight row per evaluation).

Where this departs from the study, and why: CIDEr-D's document frequencies
come from all distinct draws of the cell's images together (one document per
distinct draw of an image) rather than from each evaluation's own draws,
which would need new reference tables for every evaluation; every draw of an
image is equally likely in both, so the share of documents holding an
n-gram, and with it the idf, is the same in expectation. When every image
has exactly one possible draw the two coincide, and the cell equals the
coco-caption toolkit's scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from math import comb
from typing import Sequence

import numpy as np

from ..errors import InputError
from .sources import DescriptionPools

__all__ = ["POOLS", "CELLS", "DrawSettings", "RichSparseCell", "RichSparseReport", "rich_sparse_table",
           "project_rich_sparse"]

#: The two kinds of description: references (rich) and system captions (sparse).
POOLS = ("human", "machine")
#: The table's cells as (ground truth, candidates), in the study's column order.
CELLS = (("human", "human"), ("human", "machine"), ("machine", "human"), ("machine", "machine"))
POOL_LABELS = {"human": "Human", "machine": "Machine"}

#: Scored rows in one block of evaluation weights (evaluations × rows each scores), to bound memory.
_WEIGHT_BLOCK = 4_000_000


@dataclass(frozen=True)
class DrawSettings:
    """How many evaluations, how many ground-truth descriptions each draws, and the seed."""

    draws: int = 1000
    ground_truth: int = 5
    seed: int = 0

    def __post_init__(self):
        if int(self.draws) < 1:
            raise InputError("the number of evaluations (draws) must be at least 1")
        if int(self.ground_truth) < 1:
            raise InputError("each draw needs at least one ground-truth description")

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"draws": self.draws, "ground_truth": self.ground_truth, "seed": self.seed}


@dataclass(frozen=True)
class RichSparseCell:
    """One cell of the table: candidates of one pool scored against ground truth drawn from a pool.

    ``mean`` and ``sd`` map score keys (``Bleu_4``, ``CIDEr`` …) to the mean and
    standard deviation over evaluations; ``images`` took part, ``skipped`` did
    not (too few descriptions); each evaluation scores ``candidates_per_draw``
    captions; ``pairs`` (candidate, distinct draw) pairs were scored in all.
    """

    ground_truth: str
    candidates: str
    images: int
    skipped: int
    candidates_per_draw: int
    pairs: int
    mean: dict[str, float] = field(default_factory=dict)
    sd: dict[str, float] = field(default_factory=dict)


@dataclass
class RichSparseReport:
    """The rich-versus-sparse table (the study's Table 1) with what it was computed from."""

    cells: tuple[RichSparseCell, ...]
    score_keys: tuple[str, ...]
    score_labels: dict[str, str]
    signatures: dict[str, str]
    settings: DrawSettings
    tokenize: str
    systems: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    project: str | None = None

    def cell(self, ground_truth: str, candidates: str) -> RichSparseCell:
        """The cell of ``candidates`` scored against ground truth from ``ground_truth`` (``human``/``machine``)."""
        for c in self.cells:
            if (c.ground_truth, c.candidates) == (ground_truth, candidates):
                return c
        raise KeyError((ground_truth, candidates))

    def table(self):
        """The study-style table: one row per score, columns (ground truth, candidates), mean over evaluations."""
        import pandas as pd
        columns = pd.MultiIndex.from_tuples(
            [(f"Ground truth: {POOL_LABELS[c.ground_truth]}", f"Candidates: {POOL_LABELS[c.candidates]}")
             for c in self.cells])
        data = [[c.mean.get(k, math.nan) for c in self.cells] for k in self.score_keys]
        return pd.DataFrame(data, index=[self.score_labels.get(k, k) for k in self.score_keys], columns=columns)

    def to_frame(self):
        """Long form: one row per (cell, score) with the mean, sd and the cell's counts."""
        import pandas as pd
        rows = [{"ground_truth": c.ground_truth, "candidates": c.candidates, "score": k,
                 "label": self.score_labels.get(k, k), "mean": c.mean.get(k, math.nan), "sd": c.sd.get(k, math.nan),
                 "images": c.images, "skipped": c.skipped, "candidates_per_draw": c.candidates_per_draw}
                for c in self.cells for k in self.score_keys]
        return pd.DataFrame(rows, columns=["ground_truth", "candidates", "score", "label", "mean", "sd", "images",
                                           "skipped", "candidates_per_draw"])

    def to_dict(self) -> dict:
        """JSON-ready form (NaN as None)."""
        def num(v):
            return None if v is None or not math.isfinite(v) else float(v)
        return {"settings": {**self.settings.to_dict(), "tokenize": self.tokenize},
                "systems": list(self.systems), "signatures": self.signatures, "notes": self.notes,
                **({"project": self.project} if self.project else {}),
                "cells": [{"ground_truth": c.ground_truth, "candidates": c.candidates, "images": c.images,
                           "skipped": c.skipped, "candidates_per_draw": c.candidates_per_draw, "pairs": c.pairs,
                           "mean": {k: num(c.mean.get(k)) for k in self.score_keys},
                           "sd": {k: num(c.sd.get(k)) for k in self.score_keys}} for c in self.cells]}

    def to_tables(self) -> dict:
        """Named tables for annotator.io.tables: the study-style table and the long form."""
        table = self.table()
        table.columns = [" / ".join(c) for c in table.columns]
        return {"Rich and sparse (mean over draws)": table.reset_index(names="score"),
                "Rich and sparse (long)": self.to_frame()}


# --------------------------------------------------------------------------- drawing

def _unrank(ranks: np.ndarray, g: int, d: int) -> np.ndarray:
    """Members (sorted, rows) of the d-subsets of range(g) with colex ranks ``ranks``.

    The combinatorial number system: rank = Σ_k C(c_k, k) for members
    c_1 < … < c_d, so c_d is the largest c with C(c, d) ≤ rank, and so on down.
    """
    top = int(ranks.max(initial=0))
    out = np.empty((ranks.shape[0], d), np.int64)
    rest = ranks.astype(np.int64, copy=True)
    for k in range(d, 0, -1):
        # C(c, k) for c = 0 … g−1, capped above every rank so it fits int64 and stays non-decreasing.
        column = np.array([min(comb(c, k), top + 1) for c in range(g)], dtype=np.int64)
        c = np.searchsorted(column, rest, side="right") - 1
        out[:, k - 1] = c
        rest -= column[c]
    return out


@dataclass
class _Draws:
    """Distinct draws of one ground-truth pool: which subset each image uses in each evaluation."""

    members: list[np.ndarray]   # per image: (distinct draws × d) member indices, or an empty array
    use: np.ndarray             # images × evaluations: the index of the distinct draw used (−1: image not drawn)


def _draw(sizes: Sequence[int], d: int, draws: int, rng: np.random.Generator) -> _Draws:
    """Uniform d-subsets of each image's pool for every evaluation (images with fewer than d descriptions: none)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    use = np.full((sizes.shape[0], draws), -1, np.int64)
    members: list[np.ndarray] = [np.zeros((0, d), np.int64)] * sizes.shape[0]
    for g in np.unique(sizes[sizes >= d]).tolist():
        n_subsets = comb(g, d)
        if n_subsets >= 1 << 62:
            raise InputError(f"draws of {d} from {g} descriptions are too many to number; use a smaller ground truth")
        images = np.flatnonzero(sizes == g)
        ranks = rng.integers(0, n_subsets, size=(images.shape[0], draws), dtype=np.int64)
        # Distinct ranks per image (row), and which distinct rank each evaluation used.
        order = np.argsort(ranks, axis=1, kind="stable")
        sorted_ranks = np.take_along_axis(ranks, order, axis=1)
        new = np.ones_like(sorted_ranks, dtype=bool)
        new[:, 1:] = sorted_ranks[:, 1:] != sorted_ranks[:, :-1]
        which = np.cumsum(new, axis=1) - 1
        inverse = np.empty_like(which)
        np.put_along_axis(inverse, order, which, axis=1)
        use[images] = inverse
        subsets = _unrank(sorted_ranks[new], g, d)
        bounds = np.concatenate(([0], np.cumsum(new.sum(axis=1))))
        for j, image in enumerate(images.tolist()):
            members[image] = subsets[bounds[j]:bounds[j + 1]]
    return _Draws(members, use)


# --------------------------------------------------------------------------- scoring

@dataclass
class _Rows:
    """The scored rows of one cell: every candidate against every distinct draw of its image."""

    hyps: list[str]
    contexts: list[list[str]]        # one reference set per distinct draw of every image taking part
    context_of: list[int]            # per row: its reference set
    images: np.ndarray               # images taking part
    counts: np.ndarray               # candidates per image taking part
    first_row: np.ndarray            # per image taking part: offset of its block starts in ``block_start``
    block_start: np.ndarray          # first row of each (image, distinct draw) block


def _cell_rows(draws: _Draws, gt_pool, cand_pool, same: bool) -> _Rows:
    hyps: list[str] = []
    contexts: list[list[str]] = []
    context_of: list[int] = []
    images, counts, first_row, block_start = [], [], [], []
    for i, subsets in enumerate(draws.members):
        gt = gt_pool[i]
        n_cands = len(gt) - subsets.shape[1] if same else len(cand_pool[i])
        if subsets.shape[0] == 0 or n_cands < 1:
            continue
        images.append(i)
        counts.append(n_cands)
        first_row.append(len(block_start))
        for chosen in subsets.tolist():
            block_start.append(len(hyps))
            if same:
                picked = set(chosen)
                cands = [gt[m] for m in range(len(gt)) if m not in picked]
            else:
                cands = list(cand_pool[i])
            hyps.extend(cands)
            context_of.extend([len(contexts)] * len(cands))
            contexts.append([gt[m] for m in chosen])
    return _Rows(hyps, contexts, context_of, np.asarray(images, np.int64), np.asarray(counts, np.int64),
                 np.asarray(first_row, np.int64), np.asarray(block_start, np.int64))


def _evaluation_weights(rows: _Rows, use: np.ndarray, lo: int, hi: int, within: np.ndarray):
    """0/1 weights (evaluations lo..hi−1 × rows, sparse): the rows each of those evaluations scores."""
    from scipy import sparse
    starts = rows.block_start[rows.first_row[None, :] + use[rows.images, lo:hi].T]   # evaluations × images
    picked = np.repeat(starts, rows.counts, axis=1) + within
    per_eval = picked.shape[1]
    return sparse.csr_matrix((np.ones(picked.size), picked.ravel(), np.arange(hi - lo + 1) * per_eval),
                             shape=(hi - lo, len(rows.hyps)))


def _score_cell(metrics, draws: _Draws, rows: _Rows, n_draws: int) -> tuple[dict, dict]:
    """Mean and sd over evaluations of every score key of ``metrics`` for one cell."""
    # The cache lets the other cell with the same ground truth (and the same images) reuse the reference tables.
    stats = [m.stats_at(rows.hyps, m.prepare(rows.contexts), rows.context_of) for m in metrics]
    values = [np.empty((n_draws, len(m.score_keys))) for m in metrics]
    within = np.concatenate([np.arange(c) for c in rows.counts.tolist()])
    per_block = max(1, _WEIGHT_BLOCK // within.shape[0])
    for lo in range(0, n_draws, per_block):
        hi = min(n_draws, lo + per_block)
        weights = _evaluation_weights(rows, draws.use, lo, hi, within)
        for m, st, out in zip(metrics, stats, values):
            out[lo:hi] = m.resample(st, weights)
    mean: dict[str, float] = {}
    sd: dict[str, float] = {}
    for m, out in zip(metrics, values):
        for k, key in enumerate(m.score_keys):
            mean[key] = float(out[:, k].mean())
            sd[key] = float(out[:, k].std(ddof=1)) if n_draws > 1 else math.nan
    return mean, sd


def rich_sparse_table(pools: DescriptionPools, *, metrics: Sequence[str] | None = None,
                      settings: DrawSettings | None = None, tokenize: str | None = None) -> RichSparseReport:
    """The rich-versus-sparse table of ``pools`` (see the module documentation).

    ``metrics``: registry names (default: the default metrics); a metric that
    cannot run here (METEOR without Java) is left out with a note.
    """
    from ..metrics.registry import REGISTRY
    from ..tokenize.ptb import check_tokenizer
    settings = settings or DrawSettings()
    keys = REGISTRY.select(metrics) if metrics is not None else REGISTRY.defaults()
    notes = [f"{REGISTRY.label(k)} not computed: {reason}" for k, reason in REGISTRY.unavailable(keys).items()]
    needs_more = [k for k in keys if REGISTRY.requires(k) - {"references"}]
    notes += [f"{REGISTRY.label(k)} not computed: it needs the images, and the ground truth here is text"
              for k in needs_more]
    runnable = [k for k in REGISTRY.available(keys) if k not in needs_more]
    tok = check_tokenizer(tokenize)
    ms = REGISTRY.create(runnable, tokenize=tok)
    score_keys = tuple(s for m in ms for s in m.score_keys)
    labels = REGISTRY.score_labels()
    d, n_draws = int(settings.ground_truth), int(settings.draws)
    draws = {pool: _draw([len(t) for t in pools.pool(pool)], d, n_draws, np.random.default_rng([settings.seed, k]))
             for k, pool in enumerate(POOLS)}
    cells = []
    n_images = len(pools.keys)
    for gt, cand in CELLS:
        same = gt == cand
        rows = _cell_rows(draws[gt], pools.pool(gt), pools.pool(cand), same)
        used = int(rows.images.shape[0])
        if used == 0:
            need = d + 1 if same else d
            notes.append(f"{gt} ground truth, {cand} candidates: no image has {need} or more {gt} descriptions"
                         + ("" if same else f" and a {cand} one") + "; lower the ground truth size to fill this cell")
            cells.append(RichSparseCell(gt, cand, 0, n_images, 0, 0, {k: math.nan for k in score_keys},
                                        {k: math.nan for k in score_keys}))
            continue
        mean, sd = _score_cell(ms, draws[gt], rows, n_draws) if ms else ({}, {})
        cells.append(RichSparseCell(gt, cand, used, n_images - used, int(rows.counts.sum()), len(rows.hyps), mean, sd))
        if used < n_images:
            notes.append(f"{gt} ground truth, {cand} candidates: {n_images - used} of {n_images} images left out "
                         f"(fewer than {d + 1 if same else d} {gt} descriptions" + ("" if same else f" or no {cand} one")
                         + ")")
    return RichSparseReport(tuple(cells), score_keys, {k: labels.get(k, k) for k in score_keys},
                            {m.label: m.signature for m in ms}, settings, tok, pools.systems, notes, pools.project)


def project_rich_sparse(store, project: str, *, systems: Sequence[str] | None = None,
                        metrics: Sequence[str] | None = None, settings: DrawSettings | None = None,
                        tokenize: str | None = None) -> RichSparseReport:
    """:func:`rich_sparse_table` of a stored project: references as human, ``systems``' captions as machine
    (``tokenize`` None: the project's metric tokenisation)."""
    from ..metric_settings import resolve_tokenize
    from .sources import project_pools
    tokenize = resolve_tokenize(store, project, tokenize)
    return rich_sparse_table(project_pools(store, project, systems), metrics=metrics, settings=settings,
                             tokenize=tokenize)
