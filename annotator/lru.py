"""Caches that are safe across threads: a least-recently-used one bounded by the total weight of what it holds,
and a batch cache for answers that are cheaper asked for many keys at once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable


class LRUCache:
    """Keeps the most recently used values while their total weight is at most ``limit``.

    A value's weight is ``weight(value)``; without ``weight`` each counts 1, so ``limit`` is a number of entries.
    A value heavier than the limit is not kept. Keys are compared by equality, so a hash collision never returns
    another key's value.
    """

    def __init__(self, limit: int, weight: Callable[[object], int] | None = None):
        self.limit = limit
        self._weight = weight or (lambda value: 1)
        self._data: OrderedDict = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key):
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        """Keep ``value`` for ``key`` as the most recently used, dropping the least recently used past the limit."""
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._size -= self._weight(old)
            weight = self._weight(value)
            if weight > self.limit:
                return
            self._data[key] = value
            self._size += weight
            while self._size > self.limit:
                _, dropped = self._data.popitem(last=False)
                self._size -= self._weight(dropped)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._size = 0


class BatchCache:
    """Answers kept per key for work done in batches (a Java process asked for many lines at once).

    :meth:`missing` names the keys still to compute; :meth:`answers` keeps the fresh answers and returns every
    key's. When a batch would take it past ``limit`` entries it starts afresh: a cheap bound, no LRU order.
    """

    def __init__(self, limit: int):
        self.limit = limit
        self._data: dict = {}
        self._lock = threading.Lock()

    def missing(self, keys) -> list:
        """The keys not held, each once, in their first order."""
        with self._lock:
            return list(dict.fromkeys(k for k in keys if k not in self._data))

    def answers(self, keys, fresh: dict) -> list:
        """Keep the ``fresh`` answers, then the answer of each of ``keys`` (a fresh one straight from ``fresh``)."""
        if fresh:
            with self._lock:
                if len(self._data) + len(fresh) > self.limit:
                    self._data.clear()
                self._data.update(fresh)
        with self._lock:
            return [fresh[k] if k in fresh else self._data[k] for k in keys]

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
