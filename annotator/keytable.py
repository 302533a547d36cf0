"""Numbers of integer keys through a hash table that numpy probes a whole array of keys at a time.

BLEU's and CIDEr-D's tokeniser numbers millions of word keys against a vocabulary of thousands: a binary search
(``np.searchsorted``) costs a few dozen nanoseconds per key and a pandas factorisation brings pandas (a fifth of
a second to import); a table with open addressing answers most keys in one vectorised probe.
"""

from __future__ import annotations

import numpy as np

_MULT = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of key × 2^64/φ pick the slot


class KeyTable:
    """Maps distinct int64 keys to int32 numbers (open addressing, linear probing, load ≤ 1/4)."""

    __slots__ = ("bits", "keys", "ids", "n")

    def __init__(self, capacity: int = 0):
        self.n = 0
        self._alloc(max(10, (4 * capacity).bit_length()))

    def __len__(self) -> int:
        return self.n

    def _alloc(self, bits: int) -> None:
        self.bits = bits
        self.keys = np.zeros(1 << bits, dtype=np.int64)
        self.ids = np.full(1 << bits, -1, dtype=np.int32)  # -1: a free slot

    def _slots(self, keys: np.ndarray) -> np.ndarray:
        return ((keys.view(np.uint64) * _MULT) >> np.uint64(64 - self.bits)).view(np.int64)

    def get(self, keys: np.ndarray) -> np.ndarray:
        """The number of each key (int32), -1 for keys the table lacks."""
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        slot = self._slots(keys)
        out = self.ids[slot]
        probe = np.flatnonzero((out >= 0) & (self.keys[slot] != keys))  # a slot taken by another key
        out[probe] = -1
        mask = (1 << self.bits) - 1
        while len(probe):
            s = (slot[probe] + 1) & mask
            slot[probe] = s
            tid = self.ids[s]
            hit = self.keys[s] == keys[probe]
            taken = tid >= 0
            out[probe[hit & taken]] = tid[hit & taken]
            probe = probe[taken & ~hit]
        return out

    def add(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Insert distinct keys the table lacks, with their numbers."""
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        ids = np.asarray(ids, dtype=np.int32)
        if 4 * (self.n + len(keys)) > 1 << self.bits:  # grow, and insert what was there again
            held = np.flatnonzero(self.ids >= 0)
            keys, ids = np.concatenate([self.keys[held], keys]), np.concatenate([self.ids[held], ids])
            self.n = 0
            self._alloc(max(self.bits + 1, (8 * len(keys)).bit_length()))
        mask = (1 << self.bits) - 1
        slot = self._slots(keys)
        todo = np.arange(len(keys))
        while len(todo):
            s = slot[todo]
            taken = self.ids[s] >= 0
            slot[todo[taken]] = (s[taken] + 1) & mask
            free = todo[~taken]
            if len(free):  # one key per free slot goes in; the others probe on
                _, first = np.unique(slot[free], return_index=True)
                put = free[first]
                self.keys[slot[put]] = keys[put]
                self.ids[slot[put]] = ids[put]
                todo = np.setdiff1d(todo, put, assume_unique=True)
        self.n += len(keys)
