"""The one interface every caption metric follows.

A metric turns each caption (with its references) into a small vector of
*sufficient statistics* and turns any list of such vectors into a corpus
score. Keeping the statistics lets callers

* rescore a corpus after one caption changed by recomputing one row;
* resample captions for a bootstrap test by re-aggregating rows, without
  scoring text again.

Reference-side work (n-gram tables, CIDEr-D document frequencies, LCS bit
masks) is done once by :meth:`Metric.prepare` and reused for any number of
hypothesis sets scored against the same references.
"""

from __future__ import annotations

import abc
import contextlib
import gc
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .errors import MetricInputError, MetricUnavailable
from .tokenize import check_tokenizer, tokenize_texts

#: The toolkit release whose numbers these metrics reproduce.
COCO_CAPTION = "coco-caption-1.2"


@dataclass(frozen=True)
class Score:
    """A corpus score.

    ``value`` is the headline number (BLEU-4 for BLEU). ``values`` holds every
    number the metric reports under coco-caption's names (``Bleu_1`` …
    ``Bleu_4``, ``METEOR``, ``ROUGE_L``, ``CIDEr``). ``per_segment`` holds
    per-caption scores where the metric defines them and they were asked for
    (for BLEU, per-caption BLEU-4 as coco-caption computes it).
    """

    name: str
    value: float
    values: dict[str, float]
    signature: str
    n: int
    per_segment: list[float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __float__(self) -> float:
        return float(self.value)


class Prepared:
    """Reference-side state of one metric for one list of reference sets.

    ``n`` is the number of captions (items) it scores; ``data`` is private to
    the metric. Instances are read-only after creation except for internal
    caches guarded by ``lock``.
    """

    __slots__ = ("signature", "n", "refs", "data", "lock")

    def __init__(self, signature: str, refs: tuple[tuple[str, ...], ...], data: Any):
        self.signature = signature
        self.n = len(refs)
        self.refs = refs
        self.data = data
        self.lock = threading.Lock()


def normalise_refs(refs_list: Sequence[Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    """Validate references (a non-empty list of strings per caption) and freeze them."""
    out = []
    for i, refs in enumerate(refs_list):
        if isinstance(refs, str):
            raise MetricInputError(f"references of caption {i} must be a list of strings, not one string")
        refs = tuple(refs)
        if not refs:
            raise MetricInputError(f"caption {i} has no reference")
        for r in refs:
            if not isinstance(r, str):
                raise MetricInputError(f"caption {i}: reference {r!r} is not a string")
        out.append(refs)
    return tuple(out)


def check_hyps(hyps: Sequence[str], n: int) -> list[str]:
    """Validate hypotheses against the number of reference sets."""
    hyps = list(hyps)
    if len(hyps) != n:
        raise MetricInputError(f"{len(hyps)} captions but {n} reference sets")
    for i, h in enumerate(hyps):
        if not isinstance(h, str):
            raise MetricInputError(f"caption {i} is not a string: {h!r}")
    return hyps


class _PreparedCache:
    """A small LRU of Prepared objects keyed by metric signature and references.

    The key holds the reference tuple itself and is compared by equality, so a
    hash collision can never return the wrong entry.
    """

    def __init__(self, size: int = 8):
        self.size = size
        self._d: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            hit = self._d.get(key)
            if hit is not None:
                self._d.move_to_end(key)
            return hit

    def put(self, key, value) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()


PREPARED_CACHE = _PreparedCache()

_gc_lock = threading.Lock()
_gc_pauses = 0


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building many small objects.

    Scoring a corpus allocates hundreds of thousands of short-lived dicts,
    sets and floats and no reference cycles; collections triggered in the
    middle cost 15–25 % of the time for nothing. Nested and concurrent uses
    are counted, and the collector is re-enabled only if it was on before.
    """
    global _gc_pauses
    with _gc_lock:
        if _gc_pauses == 0:
            gc_paused.was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and gc_paused.was_enabled:
                gc.enable()


gc_paused.was_enabled = True


class Metric(abc.ABC):
    """Base class: sufficient statistics per caption, aggregated to a corpus score.

    Subclasses set ``name``, ``keys`` (coco-caption result names) and
    ``width`` (length of a statistics row) and implement ``_prepare``,
    ``_stats``, ``_aggregate`` and ``_resample``.

    ``tokenize`` is ``None``/``"none"`` (score the text as given; every scorer
    then splits it the way coco-caption's scorers split raw strings) or
    ``"ptb"`` (coco-caption's PTBTokenizer: Stanford PTB tokens, lower case,
    punctuation removed). It is part of the signature.
    """

    name: str = ""
    keys: tuple[str, ...] = ()
    width: int = 1

    def __init__(self, tokenize: str | None = None):
        self.tokenize = check_tokenizer(tokenize)

    # -- description ---------------------------------------------------------
    @property
    def signature(self) -> str:
        """Settings string, e.g. ``BLEU|n=4|ref=closest|tok=none|coco-caption-1.2``."""
        return "|".join([self.name, *self._settings(), f"tok={self.tokenize}", COCO_CAPTION])

    def _settings(self) -> list[str]:
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.signature}>"

    # -- text ----------------------------------------------------------------
    def _tok(self, texts: Sequence[str]) -> list[str]:
        return tokenize_texts(texts, self.tokenize)

    # -- references ----------------------------------------------------------
    def prepare(self, refs_list: Sequence[Sequence[str]], *, cache: bool = True) -> Prepared:
        """Do the reference-side work once for these reference sets.

        Results are kept in a small in-process LRU keyed by the signature and
        the references (compared by equality), so rescoring other captions
        against the same references reuses it. ``cache=False`` skips the LRU.
        """
        if isinstance(refs_list, Prepared):
            self._check_prepared(refs_list)
            return refs_list
        refs = normalise_refs(refs_list)
        key = (self.signature, refs)
        if cache:
            hit = PREPARED_CACHE.get(key)
            if hit is not None:
                return hit
        counts = [len(r) for r in refs]
        flat = self._tok([r for rs in refs for r in rs])
        tok_refs, pos = [], 0
        for c in counts:
            tok_refs.append(flat[pos:pos + c])
            pos += c
        with gc_paused():
            prep = Prepared(self.signature, refs, self._prepare(tok_refs))
        if cache:
            PREPARED_CACHE.put(key, prep)
        return prep

    def _check_prepared(self, prep: Prepared) -> None:
        if prep.signature != self.signature:
            raise MetricInputError(f"references were prepared for {prep.signature}, not {self.signature}")

    # -- statistics ----------------------------------------------------------
    def stats(self, hyps: Sequence[str], refs: Sequence[Sequence[str]] | Prepared) -> np.ndarray:
        """Statistics rows (``len(hyps)`` × ``width`` float64) for captions vs references."""
        prep = self.prepare(refs)
        hyps = check_hyps(hyps, prep.n)
        with gc_paused():
            out = self._stats(self._tok(hyps), prep)
        return np.asarray(out, dtype=np.float64).reshape(len(hyps), self.width)

    def segment_stats(self, hyp: str, refs: Sequence[str] | None = None, *,
                      prepared: Prepared | None = None, index: int | None = None) -> np.ndarray:
        """Statistics row of one caption.

        Either give its references (``refs``; fine for every metric except
        CIDEr-D, whose weights come from the whole scored set), or a
        ``prepared`` reference set and the caption's ``index`` in it.
        """
        if prepared is None:
            if refs is None:
                raise MetricInputError("give refs, or prepared= and index=")
            prepared = self.prepare([refs], cache=False)
            index = 0
        else:
            self._check_prepared(prepared)
            if index is None or not 0 <= index < prepared.n:
                raise MetricInputError(f"index {index!r} outside 0..{prepared.n - 1}")
        if not isinstance(hyp, str):
            raise MetricInputError(f"caption is not a string: {hyp!r}")
        row = self._segment(self._tok([hyp])[0], prepared, index)
        return np.asarray(row, dtype=np.float64).reshape(self.width)

    def stats_at(self, hyps: Sequence[str], prep: Prepared, indices: Sequence[int]) -> np.ndarray:
        """Statistics rows of captions ``hyps`` placed at item positions ``indices``.

        Used to rescore only the captions that changed between two versions
        of a system.
        """
        self._check_prepared(prep)
        hyps = list(hyps)
        indices = list(indices)
        if len(hyps) != len(indices):
            raise MetricInputError("hyps and indices differ in length")
        for i in indices:
            if not 0 <= i < prep.n:
                raise MetricInputError(f"index {i!r} outside 0..{prep.n - 1}")
        rows = self._segments(self._tok(hyps), prep, indices)
        return np.asarray(rows, dtype=np.float64).reshape(len(indices), self.width)

    def _segments(self, toks: list[str], prep: Prepared, indices: list[int]):
        return [self._segment(h, prep, i) for h, i in zip(toks, indices)]

    @abc.abstractmethod
    def _segment(self, hyp: str, prep: Prepared, index: int):
        """Statistics row of one (tokenised) caption at item ``index``."""

    # -- aggregation ---------------------------------------------------------
    def aggregate(self, stats: np.ndarray | Sequence, *, per_segment: bool = False) -> Score:
        """Corpus score from statistics rows (as coco-caption computes it)."""
        arr = np.asarray(stats, dtype=np.float64)
        if arr.ndim == 1:
            arr = arr.reshape(-1, self.width)
        if arr.shape[1:] != (self.width,):
            raise MetricInputError(f"{self.name} statistics rows have {self.width} columns, got shape {arr.shape}")
        if len(arr) == 0:
            raise MetricInputError("no captions to score")
        return self._aggregate(arr, per_segment)

    def corpus_score(self, hyps: Sequence[str], refs_list: Sequence[Sequence[str]] | Prepared, *,
                     per_segment: bool = True) -> Score:
        """Score captions against references in one call."""
        return self.aggregate(self.stats(hyps, refs_list), per_segment=per_segment)

    def resample(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Corpus values for bootstrap resamples.

        ``weights`` is an R × N matrix: how often each caption is drawn in each
        resample. Returns an R × len(keys) array whose columns follow
        ``keys``.
        """
        arr = np.asarray(stats, dtype=np.float64).reshape(-1, self.width)
        return self._resample(arr, np.asarray(weights, dtype=np.float64))

    @abc.abstractmethod
    def _prepare(self, tok_refs: list[list[str]]) -> Any: ...

    @abc.abstractmethod
    def _stats(self, hyps: list[str], prep: Prepared): ...

    @abc.abstractmethod
    def _aggregate(self, stats: np.ndarray, per_segment: bool) -> Score: ...

    @abc.abstractmethod
    def _resample(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray: ...


def mean_like_numpy(values) -> float:
    """np.mean over a contiguous float64 array: the exact summation coco-caption uses."""
    return float(np.mean(np.ascontiguousarray(values, dtype=np.float64)))
