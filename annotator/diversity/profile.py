"""A tokenised corpus prepared once for every diversity measure: ids, frequencies, occurrence links."""

from __future__ import annotations

import numpy as np

from ..tokenize.words import TokenCorpus

__all__ = ["Profile"]


def _stable_argsort(ids: np.ndarray, n_types: int) -> np.ndarray:
    """Positions sorted by token id, ties in text order (radix sort on 16-bit keys)."""
    if n_types <= 1 << 16:
        return np.argsort(ids.astype(np.uint16), kind="stable")
    # Two stable 16-bit passes (LSD radix) beat one comparison sort of 32-bit keys.
    ids = ids.astype(np.int64, copy=False)
    first = np.argsort((ids & 0xFFFF).astype(np.uint16), kind="stable")
    second = np.argsort((ids[first] >> 16).astype(np.uint16), kind="stable")
    return first[second]


class Profile:
    """A tokenised corpus prepared for the measures: ids, frequencies and occurrence links.

    Build it once with :meth:`of` and pass it to every measure; the
    previous/next-occurrence arrays (MTLD, MATTR, curves) are computed on first
    use and cached.
    """

    __slots__ = ("corpus", "ids", "n", "n_types", "_counts", "_order", "_prev", "_next")

    def __init__(self, corpus: TokenCorpus):
        self.corpus = corpus
        self.ids = np.asarray(corpus.ids)
        self.n = int(self.ids.shape[0])
        self.n_types = int(corpus.n_types)
        self._counts = None
        self._order = None
        self._prev = None
        self._next = None

    @classmethod
    def of(cls, data) -> "Profile":
        """A Profile of a Profile (itself), a TokenCorpus, or a flat sequence of token strings."""
        if isinstance(data, Profile):
            return data
        if isinstance(data, TokenCorpus):
            return cls(data)
        if isinstance(data, str):
            raise TypeError("give tokens or a TokenCorpus, not a string; tokenise text with annotator.tokenize.words")
        return cls(TokenCorpus.from_tokens(list(data)))

    @property
    def counts(self) -> np.ndarray:
        """Frequency of each type (indexed by id)."""
        if self._counts is None:
            self._counts = np.bincount(self.ids, minlength=self.n_types) if self.n else np.zeros(0, np.int64)
        return self._counts

    @property
    def order(self) -> np.ndarray:
        """Token positions sorted by type, each type's occurrences in text order."""
        if self._order is None:
            self._order = _stable_argsort(self.ids, self.n_types)
        return self._order

    def _links(self) -> None:
        n = self.n
        o = self.order
        same = self.ids[o[1:]] == self.ids[o[:-1]]
        prev = np.empty(n, np.int64)
        nxt = np.empty(n, np.int64)
        if n:
            prev[o] = np.where(np.concatenate(([False], same)), np.concatenate(([-1], o[:-1])), -1)
            nxt[o] = np.where(np.concatenate((same, [False])), np.concatenate((o[1:], [n])), n)
        self._prev, self._next = prev, nxt

    @property
    def prev(self) -> np.ndarray:
        """Position of the previous occurrence of each token's type (−1 for a first occurrence)."""
        if self._prev is None:
            self._links()
        return self._prev

    @property
    def next(self) -> np.ndarray:
        """Position of the next occurrence of each token's type (N when there is none)."""
        if self._next is None:
            self._links()
        return self._next
