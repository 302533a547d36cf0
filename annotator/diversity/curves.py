"""TTR curves: type-token ratio as tokens accumulate, averaged over random orders of the texts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .profile import Profile

__all__ = ["TTRCurve", "ttr_curve"]


@dataclass(frozen=True)
class TTRCurve:
    """TTR as tokens accumulate, averaged over random orders of the texts.

    ``tokens[i]`` is a number of tokens read; ``ttr[i]`` the mean TTR of the
    first ``tokens[i]`` tokens over ``shuffles`` seeded random orders of the
    texts; ``sd[i]`` its standard deviation over the orders.
    """

    tokens: np.ndarray
    ttr: np.ndarray
    sd: np.ndarray
    shuffles: int
    seed: int

    def to_frame(self, corpus: str | None = None):
        """A DataFrame with columns tokens, ttr, sd (and corpus when named)."""
        import pandas as pd
        df = pd.DataFrame({"tokens": self.tokens, "ttr": self.ttr, "sd": self.sd})
        if corpus is not None:
            df.insert(0, "corpus", corpus)
        return df


def ttr_curve(data, *, points: int = 100, shuffles: int = 10, seed: int = 0, max_tokens: int | None = None) -> TTRCurve:
    """TTR curve of a corpus: TTR after k tokens for ``points`` values of k up to N (or ``max_tokens``).

    The texts (captions) are put in ``shuffles`` random orders drawn from
    ``numpy.random.default_rng(seed)``; within a text the token order is kept.
    A flat token list is one text, so all orders coincide.
    """
    p = Profile.of(data)
    n = p.n
    if points < 1 or shuffles < 1:
        raise ValueError("points and shuffles must be at least 1")
    limit = n if max_tokens is None else min(n, int(max_tokens))
    if limit < 1:
        empty = np.zeros(0)
        return TTRCurve(empty.astype(np.int64), empty, empty, shuffles, seed)
    grid = np.unique(np.linspace(1, limit, num=min(points, limit)).round().astype(np.int64))
    offsets = np.asarray(p.corpus.offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    n_texts = lengths.shape[0]
    text_of = np.repeat(np.arange(n_texts), lengths)
    within = np.arange(n) - offsets[text_of]
    order = p.order
    sorted_ids = p.ids[order]
    group_starts = np.flatnonzero(np.concatenate(([True], sorted_ids[1:] != sorted_ids[:-1])))
    rng = np.random.default_rng(seed)
    curves = np.empty((shuffles, grid.shape[0]))
    for r in range(shuffles):
        perm = rng.permutation(n_texts)
        new_start = np.empty(n_texts, np.int64)
        new_start[perm] = np.concatenate(([0], np.cumsum(lengths[perm])[:-1]))
        new_pos = new_start[text_of] + within
        # Where each type first appears in this order; types seen in the first k tokens have first < k.
        first = np.minimum.reduceat(new_pos[order], group_starts)
        first.sort()
        curves[r] = np.searchsorted(first, grid, side="left") / grid
    return TTRCurve(grid, curves.mean(axis=0), curves.std(axis=0), shuffles, seed)
