"""TTR curves: type-token ratio as tokens accumulate, averaged over random orders of the texts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .profile import Profile

__all__ = ["TTRCurve", "ttr_curve", "ImageCurves", "image_curves", "CurveComparison", "compare_image_curves"]


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


@dataclass(frozen=True)
class ImageCurves:
    """TTR curves of one image's human descriptions (its references) and machine descriptions (its captions)."""

    key: str
    human: TTRCurve
    machine: TTRCurve

    def to_frame(self):
        """Long form: image, corpus (human/machine), tokens, ttr, sd."""
        import pandas as pd
        frame = pd.concat([self.human.to_frame("human"), self.machine.to_frame("machine")], ignore_index=True)
        frame.insert(0, "image", self.key)
        return frame


def image_curves(pools, keys=None, *, tokens=None, points: int = 50, shuffles: int = 10,
                 seed: int = 0) -> list[ImageCurves]:
    """Per-image TTR curves (the lexical-gap study's Fig. 4) of ``keys`` (default: every image).

    ``pools`` is a :class:`~annotator.diversity.sources.DescriptionPools`; the
    descriptions of one image are put in ``shuffles`` seeded orders, as for a
    corpus curve. ``tokens``: TokenSettings (default settings when None).
    """
    from ..tokenize.words import DEFAULT_TOKEN_SETTINGS, tokenize_corpus
    settings = tokens or DEFAULT_TOKEN_SETTINGS
    wanted = range(len(pools.keys)) if keys is None else [pools.index(k) for k in keys]
    out = []
    for i in wanted:
        curves = [ttr_curve(tokenize_corpus(texts, settings), points=points, shuffles=shuffles, seed=seed)
                  for texts in (pools.human[i], pools.machine[i])]
        out.append(ImageCurves(pools.keys[i], *curves))
    return out


@dataclass(frozen=True)
class CurveComparison:
    """How often an image's human descriptions are the more diverse at the same number of tokens.

    For every image with words on both sides, the mean TTR (over the seeded
    orders) of its human and of its machine descriptions is compared at the
    shorter side's length: ``human_higher`` + ``machine_higher`` + ``equal``
    = ``images``; ``skipped`` images lack words on one side.
    """

    images: int
    human_higher: int
    machine_higher: int
    equal: int
    skipped: int

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"images": self.images, "human_higher": self.human_higher, "machine_higher": self.machine_higher,
                "equal": self.equal, "skipped": self.skipped}


def compare_image_curves(pools, *, tokens=None, shuffles: int = 10, seed: int = 0) -> CurveComparison:
    """:class:`CurveComparison` over every image of ``pools``."""
    from ..tokenize.words import DEFAULT_TOKEN_SETTINGS, tokenize_corpus
    settings = tokens or DEFAULT_TOKEN_SETTINGS
    human = machine = equal = skipped = 0
    for h_texts, m_texts in zip(pools.human, pools.machine):
        h, m = tokenize_corpus(h_texts, settings), tokenize_corpus(m_texts, settings)
        length = min(h.n_tokens, m.n_tokens)
        if length == 0:
            skipped += 1
            continue
        at = [float(ttr_curve(c, points=2, shuffles=shuffles, seed=seed, max_tokens=length).ttr[-1]) for c in (h, m)]
        human += at[0] > at[1]
        machine += at[0] < at[1]
        equal += at[0] == at[1]
    return CurveComparison(human + machine + equal, human, machine, equal, skipped)
