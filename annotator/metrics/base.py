"""The one interface every caption metric follows.

A metric turns each caption (with its references, or the whole
:class:`~annotator.metrics.sample.Sample`) into a small vector of
*sufficient statistics* and turns any list of such vectors into a corpus
score. Keeping the statistics lets callers

* rescore a corpus after one caption changed by recomputing one row;
* resample captions for a bootstrap test by re-aggregating rows, without
  scoring text again.

Context-side work (n-gram tables, CIDEr-D document frequencies, LCS bit
masks; for an image metric, image features) is done once by
:meth:`Metric.prepare` and reused for any number of caption sets scored
against the same references.

A metric class declares what the rest of the tool needs to know about it —
its registry ``key``, ``label``, ``aliases``, ``settings`` (which make its
``signature``), what it ``requires`` of a sample, its ``score_keys`` — and
:data:`annotator.metrics.REGISTRY` derives every list of metric names,
labels and choices from those declarations.
"""

from __future__ import annotations

import abc
import contextlib
import gc
import threading
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, ClassVar, Sequence

import numpy as np

from ..errors import MetricInputError, MetricUnavailable
from ..lru import LRUCache
from .sample import Sample, hypotheses, read_context, split_samples
from ..tokenize.ptb import check_tokenizer, tokenize_texts

#: The toolkit release whose numbers these metrics reproduce.
COCO_CAPTION = "coco-caption-1.2"

#: What a metric may require of each sample besides its caption.
SAMPLE_FIELDS = ("references", "image", "boxes")


@dataclass(frozen=True)
class Setting:
    """One setting a metric's signature records, in the form ``name=value``.

    ``attribute`` names the instance attribute that holds an adjustable value
    (a constructor argument); a fixed property of the implementation has no
    attribute and its value is ``default``. ``spec`` formats the value
    (``format(value, spec)``).
    """

    name: str
    default: Any
    help: str
    attribute: str | None = None
    spec: str = ""

    def value(self, metric: "Metric") -> str:
        """The value of this setting in ``metric``, as the signature writes it."""
        v = self.default if self.attribute is None else getattr(metric, self.attribute)
        return format(v, self.spec)


@dataclass(frozen=True)
class Score:
    """A corpus score.

    ``value`` is the headline number (BLEU-4 for BLEU). ``values`` holds every
    number the metric reports under its score keys (coco-caption's names
    ``Bleu_1`` … ``Bleu_4``, ``METEOR``, ``ROUGE_L``, ``CIDEr``). When
    per-caption scores were asked for and the metric defines them,
    ``per_segment`` holds the headline's (for BLEU, per-caption BLEU-4 as
    coco-caption computes it) and ``segments`` those of every score key.
    """

    name: str
    value: float
    values: dict[str, float]
    signature: str
    n: int
    per_segment: list[float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    segments: dict[str, list[float]] | None = None

    def __float__(self) -> float:
        return float(self.value)


class Prepared:
    """Context-side state of one metric for one list of captions' contexts.

    ``n`` is the number of captions (items) it scores, ``refs`` their
    reference sets, ``samples`` their samples when the metric needs more than
    references (None otherwise); ``data`` is private to the metric. Instances
    are read-only after creation except for internal caches guarded by
    ``lock``.
    """

    __slots__ = ("signature", "n", "refs", "samples", "data", "lock")

    def __init__(self, signature: str, refs: tuple[tuple[str, ...], ...], data: Any,
                 samples: tuple[Sample, ...] | None = None):
        self.signature = signature
        self.n = len(refs)
        self.refs = refs
        self.samples = samples
        self.data = data
        self.lock = threading.Lock()


def check_hyps(hyps: Sequence[str], n: int) -> list[str]:
    """Validate captions (strings, or samples whose hypotheses are taken) against the number of contexts."""
    hyps = hypotheses(hyps)
    if len(hyps) != n:
        raise MetricInputError(f"{len(hyps)} captions but {n} reference sets")
    if set(map(type, hyps)) <= {str}:
        return hyps
    for i, h in enumerate(hyps):
        if not isinstance(h, str):
            raise MetricInputError(f"caption {i} is not a string: {h!r}")
    return hyps


#: A small LRU of Prepared objects keyed by metric signature and references. The key holds the reference tuple
#: itself and is compared by equality, so a hash collision can never return the wrong entry.
PREPARED_CACHE = LRUCache(8)

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

    A subclass declares, as class attributes:

    * ``key`` — the registry key the CLI and pages use (``"bleu"``), and
      ``aliases``, other names accepted for it;
    * ``label`` — the display name, also the first field of the signature
      and :attr:`Score.name` (``"BLEU"``);
    * ``settings`` — the :class:`Setting` fields of the signature, in order;
      tokenisation (``tok=``) and ``implementation`` follow them;
    * ``requires`` — what each sample must carry: ``"references"`` (the
      default), ``"image"``, ``"boxes"``; a metric that needs more than
      references is handed :class:`Sample` objects;
    * ``reference`` — the reference implementation whose numbers it
      reproduces (``"module:Class"`` with pycocoevalcap's ``compute_score``
      interface), checked by the contract test; None if there is none;
    * ``description``, ``citation`` and ``link`` — the metric's card: one line
      saying what it measures, the paper that defines it and a link to that
      paper (shown by ``annotator rescore --help`` and the Rescoring page);
    * ``default`` — part of the default metric set; ``in_process`` — False
      when the work happens in another process (METEOR's JVM): such a metric
      is scored in a background thread while the others run, and left out of
      the quick defaults of interactive pages;

    and per instance ``score_keys`` (the names of the values it reports),
    ``width`` (length of a statistics row). It implements ``_prepare``,
    ``_segment`` (and, for speed, ``_stats``), ``_aggregate`` and
    ``_resample`` — or derives from :class:`BatchedMetric` (one vectorised
    ``_rows`` for every caption set) and :class:`MeanScoreMetric` (the corpus
    score is the mean of the captions' scores).

    ``tokenize`` is ``None``/``"none"`` (score the text as given; every scorer
    then splits it the way coco-caption's scorers split raw strings) or
    ``"ptb"`` (coco-caption's PTBTokenizer: Stanford PTB tokens, lower case,
    punctuation removed). It is part of the signature.
    """

    key: ClassVar[str] = ""
    label: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    settings: ClassVar[tuple[Setting, ...]] = ()
    requires: ClassVar[frozenset[str]] = frozenset({"references"})
    implementation: ClassVar[str] = COCO_CAPTION
    reference: ClassVar[str | None] = None
    description: ClassVar[str] = ""
    citation: ClassVar[str] = ""
    link: ClassVar[str] = ""
    default: ClassVar[bool] = True
    in_process: ClassVar[bool] = True
    score_keys: tuple[str, ...] = ()
    width: int = 1

    def __init__(self, tokenize: str | None = None):
        self.tokenize = check_tokenizer(tokenize)

    # -- description ---------------------------------------------------------
    @property
    def signature(self) -> str:
        """Settings string, e.g. ``BLEU|n=4|ref=closest|tok=none|coco-caption-1.2``."""
        fields = [f"{s.name}={s.value(self)}" for s in self.settings]
        return "|".join([self.label, *fields, f"tok={self.tokenize}", self.implementation])

    @property
    def headline_key(self) -> str:
        """The score key of :attr:`Score.value` (the first one unless a metric says otherwise)."""
        return self.score_keys[0]

    @property
    def score_labels(self) -> dict[str, str]:
        """Display label of every score key (a single-valued metric's is its ``label``)."""
        if len(self.score_keys) == 1:
            return {self.score_keys[0]: self.label}
        raise NotImplementedError(f"{type(self).__name__} reports several values and must label them")

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why this metric cannot run on this machine (e.g. Java is missing), or None if it can."""
        return None

    @classmethod
    def warm_up(cls, *, wait: bool = True) -> str:
        """Start what the metric needs before its first use; return ``"ready"``, ``"warming"`` or ``"unavailable"``.

        Most metrics need nothing; METEOR starts its Java processes. Safe to
        call any number of times from any thread.
        """
        return "unavailable" if cls.unavailable_reason() else "ready"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.signature}>"

    # -- text ----------------------------------------------------------------
    def _tok(self, texts: Sequence[str]) -> list[str]:
        return tokenize_texts(texts, self.tokenize)

    # -- context -------------------------------------------------------------
    @property
    def _needs_samples(self) -> bool:
        return bool(self.requires - {"references"})

    def _read_context(self, context) -> tuple[tuple[tuple[str, ...], ...], tuple[Sample, ...] | None]:
        refs, samples = read_context(context, references="references" in self.requires)
        if not self._needs_samples:
            return refs, None
        if samples is None:
            raise MetricInputError(f"{self.label} needs {', '.join(sorted(self.requires - {'references'}))} "
                                   "of every caption: give Sample objects, not reference lists")
        if "image" in self.requires:
            for i, smp in enumerate(samples):
                if not smp.image:
                    raise MetricInputError(f"{self.label} needs the image of every caption; caption {i} has none")
        return refs, samples

    def prepare(self, context: Sequence[Sequence[str]] | Sequence[Sample] | Prepared, *,
                cache: bool = True) -> Prepared:
        """Do the context-side work once for these captions' references (or samples).

        ``context`` is one reference list per caption, or one
        :class:`Sample` per caption (their hypotheses are ignored). Results
        are kept in a small in-process LRU keyed by the signature and the
        context (compared by equality), so rescoring other captions against
        the same references reuses it. ``cache=False`` skips the LRU.
        """
        if isinstance(context, Prepared):
            self._check_prepared(context)
            return context
        # the collector paused throughout: its passes over the many small objects of a large corpus
        # (reference tuples, token lists) grow faster than the corpus
        with gc_paused():
            return self._prepare_context(context, cache)

    def _prepare_context(self, context, cache: bool) -> Prepared:
        refs, samples = self._read_context(context)
        key = (self.signature, refs) if samples is None else (
            self.signature, refs, tuple((s.image, s.image_size, s.boxes) for s in samples))
        if cache:
            hit = PREPARED_CACHE.get(key)
            if hit is not None:
                return hit
        if self.tokenize == "none":  # the texts as given
            tok_refs = list(map(list, refs))
        else:
            flat = self._tok(list(chain.from_iterable(refs)))
            tok_refs, pos = [], 0
            for c in map(len, refs):
                tok_refs.append(flat[pos:pos + c])
                pos += c
        prep = Prepared(self.signature, refs, self._prepare(tok_refs, samples), samples)
        if cache:
            PREPARED_CACHE.put(key, prep)
        return prep

    def _check_prepared(self, prep: Prepared) -> None:
        if prep.signature != self.signature:
            raise MetricInputError(f"references were prepared for {prep.signature}, not {self.signature}")

    # -- statistics ----------------------------------------------------------
    def stats(self, hyps: Sequence[str] | Sequence[Sample],
              context: Sequence[Sequence[str]] | Sequence[Sample] | Prepared | None = None) -> np.ndarray:
        """Statistics rows (``len(hyps)`` × ``width`` float64) for captions vs their context.

        ``stats(captions, references_or_samples_or_prepared)``, or
        ``stats(samples)``: the samples' hypotheses scored against the rest
        of them.
        """
        with gc_paused():
            hyps, context = split_samples(hyps, context)
            prep = self.prepare(context)
            hyps = check_hyps(hyps, prep.n)
            out = self._stats(self._tok(hyps), prep)
        return np.asarray(out, dtype=np.float64).reshape(len(hyps), self.width)

    def segment_stats(self, hyp: str | Sample, refs: Sequence[str] | None = None, *,
                      prepared: Prepared | None = None, index: int | None = None) -> np.ndarray:
        """Statistics row of one caption.

        Either a :class:`Sample` alone, or a caption with its references
        (``refs``; fine for every metric except CIDEr-D, whose weights come
        from the whole scored set), or a ``prepared`` context and the
        caption's ``index`` in it.
        """
        if prepared is None:
            if isinstance(hyp, Sample) and refs is None:
                context = [hyp]
            elif refs is None:
                raise MetricInputError("give refs, or prepared= and index=")
            else:
                context = [refs]
            prepared = self.prepare(context, cache=False)
            index = 0
        else:
            self._check_prepared(prepared)
            if index is None or not 0 <= index < prepared.n:
                raise MetricInputError(f"index {index!r} outside 0..{prepared.n - 1}")
        if isinstance(hyp, Sample):
            hyp = hyp.hypothesis
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
        hyps = hypotheses(hyps)
        indices = list(indices)
        if len(hyps) != len(indices):
            raise MetricInputError("hyps and indices differ in length")
        for i in indices:
            if not 0 <= i < prep.n:
                raise MetricInputError(f"index {i!r} outside 0..{prep.n - 1}")
        rows = self._segments(self._tok(hyps), prep, indices)
        return np.asarray(rows, dtype=np.float64).reshape(len(indices), self.width)

    def _stats(self, hyps: list[str], prep: Prepared):
        """Statistics rows of (tokenised) captions, caption i at item i; override for a batched fast path."""
        return self._segments(hyps, prep, list(range(len(hyps))))

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
            raise MetricInputError(f"{self.label} statistics rows have {self.width} columns, got shape {arr.shape}")
        if len(arr) == 0:
            raise MetricInputError("no captions to score")
        return self._aggregate(arr, per_segment)

    def corpus_score(self, hyps: Sequence[str] | Sequence[Sample],
                     context: Sequence[Sequence[str]] | Sequence[Sample] | Prepared | None = None, *,
                     per_segment: bool = True) -> Score:
        """Score captions against their references (or samples) in one call."""
        return self.aggregate(self.stats(hyps, context), per_segment=per_segment)

    def resample(self, stats: np.ndarray, weights: np.ndarray, *, exact: bool = True) -> np.ndarray:
        """Corpus values for bootstrap resamples, or for any weighted subsets of the captions.

        ``weights`` is an R × N matrix: how often each caption is drawn in each
        resample (a 0/1 row scores a subset, as :meth:`aggregate` would score
        those rows alone); a numpy array, or a scipy sparse matrix when each
        resample counts few of many rows. Returns an R × len(score_keys)
        array whose columns follow ``score_keys``. A metric whose corpus
        formula runs elsewhere (METEOR's jar) may offer a numpy port of it,
        used with ``exact=False``.
        """
        arr = np.asarray(stats, dtype=np.float64).reshape(-1, self.width)
        from scipy import sparse
        w = weights.tocsr().astype(np.float64) if sparse.issparse(weights) else np.asarray(weights, dtype=np.float64)
        return self._resample(arr, w) if exact else self._resample_quick(arr, w)

    @abc.abstractmethod
    def _prepare(self, tok_refs: list[list[str]], samples: tuple[Sample, ...] | None) -> Any:
        """Context-side data from the tokenised references (and the samples, if the metric requires them)."""

    @abc.abstractmethod
    def _aggregate(self, stats: np.ndarray, per_segment: bool) -> Score: ...

    @abc.abstractmethod
    def _resample(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray: ...

    def _resample_quick(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return self._resample(stats, weights)


class BatchedMetric(Metric):
    """A metric that scores any list of (caption, item) pairs in one vectorised pass.

    Subclasses implement ``_rows(hyps, prep, items)``: the statistics rows of
    the (tokenised) captions ``hyps``, caption j scored against the context of
    item ``items[j]``; whole corpora, changed captions and single captions all
    go through it.
    """

    @abc.abstractmethod
    def _rows(self, hyps: list[str], prep: Prepared, items: np.ndarray) -> np.ndarray: ...

    #: Captions scored per call of ``_rows``: a block's arrays stay in the processor's cache and in memory
    #: the allocator reuses, so the cost per caption does not rise with the corpus.
    block = 8192

    def _stats(self, hyps: list[str], prep: Prepared):
        B = self.block
        if len(hyps) <= B:
            return self._rows(hyps, prep, np.arange(len(hyps), dtype=np.int64))
        return np.concatenate([self._rows(hyps[at:at + B], prep, np.arange(at, min(at + B, len(hyps)), dtype=np.int64))
                               for at in range(0, len(hyps), B)])

    def _segments(self, toks: list[str], prep: Prepared, indices: list[int]):
        return self._rows(toks, prep, np.asarray(indices, dtype=np.int64).reshape(-1))

    def _segment(self, hyp: str, prep: Prepared, index: int):
        return self._rows([hyp], prep, np.array([index], dtype=np.int64))[0]


class MeanScoreMetric(Metric):
    """A metric whose statistics row is the caption's own score and whose corpus score is their mean.

    One score key; the mean is numpy's (coco-caption's summation order), and a
    resample is the weighted mean of the drawn captions' scores.
    """

    width = 1

    def _aggregate(self, stats: np.ndarray, per_segment: bool) -> Score:
        col = np.ascontiguousarray(stats[:, 0])
        value = mean_like_numpy(col)
        key = self.score_keys[0]
        per = col.tolist() if per_segment else None
        return Score(self.label, value, {key: value}, self.signature, len(col), per,
                     segments={key: per} if per_segment else None)

    def _resample(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
        # the mean over the captions each resample counts (N for a bootstrap resample, fewer for a subset)
        return (weights @ stats[:, 0] / row_totals(weights))[:, None]


def row_totals(weights) -> np.ndarray:
    """The sum of each row of a weight matrix (dense or scipy sparse) as a flat float64 array."""
    return np.asarray(weights.sum(axis=1), dtype=np.float64).reshape(-1)


def mean_like_numpy(values) -> float:
    """np.mean over a contiguous float64 array: the exact summation coco-caption uses."""
    return float(np.mean(np.ascontiguousarray(values, dtype=np.float64)))
