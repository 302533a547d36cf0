"""High-level rescoring: whole corpora, live edits and per-error-type Δ tables.

* :func:`rescore` — all metrics for one set of captions;
* :class:`IncrementalScorer` — a baseline plus edits (replace/revert one
  caption), with all four metrics updated in milliseconds;
* :func:`delta_table` — baseline vs corrected variants (one per error type,
  plus all corrections together) with paired bootstrap intervals and p-values.

Scores use the metrics' score keys (coco-caption's names: ``Bleu_1`` …
``Bleu_4``, ``METEOR``, ``ROUGE_L``, ``CIDEr``), in registry order. Metrics
are named by their registry keys or aliases (``bleu``, ``meteor``, ``rouge``,
``cider``), or given as instances. When a metric cannot run (METEOR without
Java), it is reported as ``None`` with an explanation in ``notes`` and
everything else still works.

Captions are lists of strings; their context is either one reference list
per caption or one :class:`~annotator.metrics.sample.Sample` per caption
(``rescore(samples)`` takes the captions from the samples too).
"""

from __future__ import annotations

import difflib
import threading
from typing import Iterable, Sequence

import numpy as np

from .base import Metric, Prepared, check_hyps
from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, compare, resample_weights, resampled_values
from ..errors import MetricInputError, MetricUnavailable
from .registry import REGISTRY
from .sample import read_context, split_samples
from ..tokenize.ptb import check_tokenizer, tokenize_texts

#: The metrics scored when none are named (registry keys).
DEFAULT_METRICS = REGISTRY.defaults()
#: Every score key, in table order.
RESULT_KEYS = REGISTRY.score_keys()


def make_metrics(metrics: Iterable[str | Metric] | None = None, tokenize: str | None = None) -> list[Metric]:
    """Metric objects from registry names (``bleu``, ``meteor``, ``rouge``, ``cider``, or aliases) or instances."""
    tok = check_tokenizer(tokenize)
    out: list[Metric] = []
    for m in (DEFAULT_METRICS if metrics is None else metrics):
        out.append(m if isinstance(m, Metric) else REGISTRY.get(m)(tokenize=tok))
    labels = [m.label for m in out]
    if len(set(labels)) != len(labels):
        raise MetricInputError(f"metric listed twice: {labels}")
    return out


def not_computed_note(metric: Metric, exc: Exception) -> str:
    """The note shown when a metric could not be computed."""
    return f"{metric.label} not computed: {exc}"


def _score_order(values: dict) -> list[str]:
    """Keys of ``values`` in table order: registered score keys first, then any others."""
    return [k for k in RESULT_KEYS if k in values] + [k for k in values if k not in RESULT_KEYS]


def _pretokenize(metrics: list[Metric], hyps: Sequence[str], refs) -> None:
    # one batch per tokenizer fills its cache, so metrics running in parallel only hit the cache
    for tok in {m.tokenize for m in metrics}:
        if tok != "none":
            tokenize_texts(list(hyps) + [r for rs in refs for r in rs], tok)


def compute_stats(metrics: list[Metric], hyps: Sequence[str], context) -> tuple[dict, dict, list[str]]:
    """Prepared contexts and statistics rows of every metric.

    ``context`` is one reference list or one Sample per caption. Returns
    ``(stats, prepared, notes)`` keyed by metric label. Metrics whose work
    happens in another process (METEOR) run in background threads while the
    others are computed; one that is unavailable is left out and a note says
    why.
    """
    refs, samples = read_context(context, references=False)
    context = refs if samples is None else samples
    hyps = check_hyps(hyps, len(refs))
    notes: list[str] = []
    try:
        _pretokenize(metrics, hyps, refs)
    except MetricUnavailable as exc:
        raise MetricUnavailable(f"PTB tokenisation is not available: {exc}") from exc
    stats: dict[str, np.ndarray] = {}
    prepared: dict[str, Prepared] = {}
    slow = [m for m in metrics if not m.in_process]
    fast = [m for m in metrics if m.in_process]
    errors: dict[str, Exception] = {}

    def run(m: Metric):
        try:
            p = m.prepare(context)
            s = m.stats(hyps, p)
            prepared[m.label], stats[m.label] = p, s
        except Exception as exc:  # noqa: BLE001 - re-raised below unless the metric is only unavailable
            errors[m.label] = exc

    threads = [threading.Thread(target=run, args=(m,), daemon=True) for m in slow]
    for t in threads:
        t.start()
    for m in fast:
        p = m.prepare(context)
        prepared[m.label], stats[m.label] = p, m.stats(hyps, p)
    for t in threads:
        t.join()
    for m in slow:
        exc = errors.get(m.label)
        if exc is not None and not isinstance(exc, MetricUnavailable):
            raise exc
    notes.extend(not_computed_note(m, errors[m.label]) for m in slow if m.label in errors)
    return stats, prepared, notes


def _score_dict(metrics: list[Metric], stats: dict, notes: list[str], *, per_segment: bool = False) -> dict:
    values: dict = {}
    segs: dict = {}
    for m in metrics:
        if m.label not in stats:
            for k in m.score_keys:
                values[k] = None
            continue
        try:
            sc = m.aggregate(stats[m.label], per_segment=per_segment)
        except MetricUnavailable as exc:
            notes.append(not_computed_note(m, exc))
            for k in m.score_keys:
                values[k] = None
            continue
        values.update(sc.values)
        if per_segment:
            segs.update(sc.segments or {})
    ordered = {k: values[k] for k in _score_order(values)}
    if per_segment:
        ordered["per_segment"] = segs
    return ordered


def rescore(hyps: Sequence[str], refs: Sequence[Sequence[str]] | None = None,
            metrics: Iterable[str | Metric] | None = None, tokenize: str | None = None, *,
            per_segment: bool = False) -> dict:
    """Score captions against references (or samples) with every metric, as coco-caption would.

    ``rescore(captions, references_or_samples)`` or ``rescore(samples)``.
    Returns ``{"Bleu_1": …, "Bleu_4": …, "METEOR": …, "ROUGE_L": …,
    "CIDEr": …, "signatures": {metric: signature}, "notes": [...], "n": N,
    "tokenize": name}``; with ``per_segment`` also ``"per_segment":
    {key: [per-caption values]}``. A metric that cannot run (METEOR without
    Java) has the value ``None`` and a note.
    """
    ms = make_metrics(metrics, tokenize)
    hyps, refs = split_samples(hyps, refs)
    stats, _, notes = compute_stats(ms, hyps, refs)
    out = _score_dict(ms, stats, notes, per_segment=per_segment)
    out["signatures"] = {m.label: m.signature for m in ms}
    out["notes"] = notes
    out["n"] = len(stats[next(iter(stats))]) if stats else len(list(hyps))
    out["tokenize"] = check_tokenizer(tokenize)
    return out


class IncrementalScorer:
    """A baseline corpus whose captions can be edited one at a time.

    Built from the baseline captions and references, it keeps every metric's
    per-caption statistics; :meth:`replace` recomputes only the edited
    caption's rows and :meth:`scores` re-aggregates (BLEU sums, ROUGE-L and
    CIDEr-D means, one METEOR EVAL of the summed row), so a correction page can
    show a running Δ after each keystroke-sized change. CIDEr-D document
    frequencies come from the references and so never change with edits;
    the result always equals a full :func:`rescore` of the edited captions.

    Thread-safe: every public method takes one lock.
    """

    def __init__(self, hyps: Sequence[str], refs: Sequence[Sequence[str]] | None = None,
                 metrics: Iterable[str | Metric] | None = None, tokenize: str | None = None):
        self._lock = threading.RLock()
        self.tokenize = check_tokenizer(tokenize)
        self.metrics = make_metrics(metrics, tokenize)
        hyps, refs = split_samples(hyps, refs)
        stats, prepared, notes = compute_stats(self.metrics, hyps, refs)
        self._active = [m for m in self.metrics if m.label in stats]
        self._prepared = prepared
        self._base = {k: v.copy() for k, v in stats.items()}
        for v in self._base.values():
            v.setflags(write=False)
        self._cur = {k: v.copy() for k, v in stats.items()}
        self.baseline_hyps: tuple[str, ...] = tuple(hyps)
        self._hyps = list(hyps)
        self.notes = notes
        self._rows: dict[tuple[int, str], dict[str, np.ndarray]] = {}
        self._baseline_scores = self._scores()

    # -- state -------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of captions."""
        return len(self._hyps)

    @property
    def hyps(self) -> list[str]:
        """The current captions (a copy)."""
        with self._lock:
            return list(self._hyps)

    @property
    def changed(self) -> list[int]:
        """Indices whose current caption differs from the baseline."""
        with self._lock:
            return [i for i, (a, b) in enumerate(zip(self.baseline_hyps, self._hyps)) if a != b]

    @property
    def signatures(self) -> dict[str, str]:
        """Signature of every metric in use."""
        return {m.label: m.signature for m in self.metrics}

    def stats(self, metric: str, *, baseline: bool = False) -> np.ndarray:
        """A copy of one metric's statistics rows (current or baseline)."""
        with self._lock:
            src = self._base if baseline else self._cur
            if metric not in src:
                raise MetricInputError(f"no statistics for {metric!r}")
            return src[metric].copy()

    # -- edits -------------------------------------------------------------------
    def _check(self, index: int) -> None:
        if not isinstance(index, (int, np.integer)) or not 0 <= index < len(self._hyps):
            raise MetricInputError(f"caption index {index!r} outside 0..{len(self._hyps) - 1}")

    def replace(self, index: int, new_hyp: str) -> dict:
        """Put ``new_hyp`` at ``index``; return the updated scores."""
        if not isinstance(new_hyp, str):
            raise MetricInputError(f"caption is not a string: {new_hyp!r}")
        with self._lock:
            self._check(index)
            if new_hyp == self.baseline_hyps[index]:
                return self.revert(index)
            rows = self._rows.get((index, new_hyp))
            if rows is None:
                rows = {}
                for m in list(self._active):
                    try:
                        rows[m.label] = m.segment_stats(new_hyp, prepared=self._prepared[m.label], index=index)
                    except MetricUnavailable as exc:
                        self._drop(m, exc)
                if len(self._rows) > 10_000:
                    self._rows.clear()
                self._rows[(index, new_hyp)] = rows
            for name, row in rows.items():
                if name in self._cur:
                    self._cur[name][index] = row
            self._hyps[index] = new_hyp
            return self._scores()

    def revert(self, index: int) -> dict:
        """Restore the baseline caption at ``index``; return the updated scores."""
        with self._lock:
            self._check(index)
            for name in self._cur:
                self._cur[name][index] = self._base[name][index]
            self._hyps[index] = self.baseline_hyps[index]
            return self._scores()

    def reset(self) -> dict:
        """Undo every edit."""
        with self._lock:
            for name in self._cur:
                self._cur[name][:] = self._base[name]
            self._hyps = list(self.baseline_hyps)
            return self._scores()

    def _drop(self, m: Metric, exc: Exception) -> None:
        self._active = [x for x in self._active if x is not m]
        self._cur.pop(m.label, None)
        self._base.pop(m.label, None)
        self.notes.append(not_computed_note(m, exc))

    # -- scores ------------------------------------------------------------------
    def _scores(self) -> dict:
        out = _score_dict(self.metrics, self._cur, self.notes)
        return out

    def scores(self) -> dict:
        """Current corpus scores ``{key: value}`` (None for an unavailable metric)."""
        with self._lock:
            return self._scores()

    def baseline(self) -> dict:
        """Scores of the unedited captions."""
        return dict(self._baseline_scores)

    def delta(self) -> dict:
        """Current minus baseline score per key (None where unavailable)."""
        with self._lock:
            cur = self._scores()
            base = self._baseline_scores
            return {k: (None if cur.get(k) is None or base.get(k) is None else cur[k] - base[k]) for k in cur}

    def caption_scores(self, index: int) -> dict:
        """Per-caption values at ``index``: ``{"baseline": {...}, "current": {...}}``.

        BLEU gives coco-caption's per-image BLEU-1…4, ROUGE-L and CIDEr-D their
        per-caption scores, METEOR its segment score.
        """
        with self._lock:
            self._check(index)
            out = {}
            for label, src in (("baseline", self._base), ("current", self._cur)):
                vals = {}
                for m in self._active:
                    row = src[m.label][index:index + 1]
                    try:
                        sc = m.aggregate(row, per_segment=True)
                    except MetricUnavailable as exc:
                        self._drop(m, exc)
                        continue
                    vals.update({k: v[0] for k, v in sc.segments.items()})
                out[label] = vals
            return out

    def bootstrap(self, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, level: float = 0.95) -> dict:
        """Paired bootstrap of the current captions against the baseline, per key."""
        with self._lock:
            base = {k: v.copy() for k, v in self._base.items()}
            cur = {k: v.copy() for k, v in self._cur.items()}
            active = list(self._active)
        w = resample_weights(self.n, resamples, seed)
        out = {}
        for m in active:
            va = resampled_values(m, base[m.label], w)
            vb = resampled_values(m, cur[m.label], w)
            a = m.aggregate(base[m.label]).values
            b = m.aggregate(cur[m.label]).values
            for j, key in enumerate(m.score_keys):
                out[key] = compare(key, a[key], b[key], va[:, j], vb[:, j], seed=seed, level=level).as_dict()
        return out


# -- Δ tables -------------------------------------------------------------------

def merge_variants(baseline: Sequence[str], variants: dict[str, Sequence[str]]) -> tuple[list[str], list[dict]]:
    """Apply every variant's edits together ("all corrections").

    For each caption, the word-level edits each variant made to the baseline
    (difflib opcodes over single-space tokens) are combined when they touch
    different words. Identical edits from several variants count once. When
    edits overlap, the caption takes the first such variant's text (in the
    order of ``variants``) and the conflict is reported as ``{"index": i,
    "types": [names]}``.
    """
    base = list(baseline)
    for name, v in variants.items():
        if len(v) != len(base):
            raise MetricInputError(f"variant {name!r} has {len(v)} captions, the baseline {len(base)}")
    merged, conflicts = [], []
    for i, b in enumerate(base):
        changed = [(name, v[i]) for name, v in variants.items() if v[i] != b]
        texts = list(dict.fromkeys(t for _, t in changed))
        if not texts:
            merged.append(b)
        elif len(texts) == 1:
            merged.append(texts[0])
        else:
            text = _merge_edits(b, texts)
            if text is None:
                conflicts.append({"index": i, "types": [name for name, _ in changed]})
                text = changed[0][1]
            merged.append(text)
    return merged, conflicts


def _merge_edits(base: str, texts: list[str]) -> str | None:
    btoks = base.split(" ")
    edits = set()
    for t in texts:
        ttoks = t.split(" ")
        sm = difflib.SequenceMatcher(None, btoks, ttoks, autojunk=False)
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag != "equal":
                edits.add((i1, i2, tuple(ttoks[j1:j2])))
    # insertions before replacements that start at the same word
    ordered = sorted(edits, key=lambda e: (e[0], e[1] != e[0], e[1]))
    out: list[str] = []
    cursor = 0
    last_insert = None
    for i1, i2, repl in ordered:
        if i1 < cursor:
            return None  # overlaps the previous edit
        if i1 == i2:
            if last_insert == i1:
                return None  # two different insertions at one place
            last_insert = i1
        out.extend(btoks[cursor:i1])
        out.extend(repl)
        cursor = i2
    out.extend(btoks[cursor:])
    return " ".join(out)


def _variant_block(metrics, prepared, base_stats, base_res, base_scores, hyps, base_hyps, w, seed, level, meteor_exact):
    changed = [i for i, (a, b) in enumerate(zip(base_hyps, hyps)) if a != b]
    stats = {}
    for m in metrics:
        s = base_stats[m.label].copy()
        if changed:
            s[changed] = m.stats_at([hyps[i] for i in changed], prepared[m.label], changed)
        stats[m.label] = s
    scores, delta, ci, p, p_le0 = {}, {}, {}, {}, {}
    for m in metrics:
        sc = m.aggregate(stats[m.label]).values
        vb = resampled_values(m, stats[m.label], w, meteor_exact=meteor_exact)
        for j, key in enumerate(m.score_keys):
            r = compare(key, base_scores[key], sc[key], base_res[m.label][:, j], vb[:, j], seed=seed, level=level)
            scores[key], delta[key], ci[key], p[key], p_le0[key] = sc[key], r.delta, list(r.ci), r.p, r.p_le0
    order = _score_order(scores)
    pick = lambda d: {k: d[k] for k in order}  # noqa: E731
    return {"scores": pick(scores), "delta": pick(delta), "changed": len(changed), "ci": pick(ci), "p": pick(p),
            "p_le0": pick(p_le0)}


def delta_table(baseline_hyps: Sequence[str], refs: Sequence[Sequence[str]] | None, variants: dict[str, Sequence[str]], *,
                seed: int = DEFAULT_SEED, resamples: int = DEFAULT_RESAMPLES, metrics: Iterable[str | Metric] | None = None,
                tokenize: str | None = None, combined: Sequence[str] | bool = True, level: float = 0.95,
                meteor_exact: bool = False) -> dict:
    """Scores of corrected variants against the baseline, with paired bootstrap tests.

    ``refs`` is one reference list or Sample per caption (or None when
    ``baseline_hyps`` are samples). ``variants`` maps a name (an error type) to the full list of captions with
    that type's corrections applied. ``combined`` is the list of captions
    with all corrections, or True to build it with :func:`merge_variants`, or
    False to leave it out. Only the captions that differ from the baseline are
    rescored; all variants share one set of ``resamples`` draws (``seed``).

    Returns::

        {"baseline": {key: score},
         "types": {name: {"scores": {key: score}, "delta": {key: Δ}, "changed": n,
                          "ci": {key: [lo, hi]}, "p": {key: p}, "p_le0": {key: share}}},
         "all": {...same fields..., "conflicts": [...]} or None,
         "signatures": {...}, "notes": [...], "n": N, "resamples": R, "seed": seed, "level": level}

    Δ = variant − baseline; see :mod:`annotator.metrics.bootstrap` for the
    interval and p-values.
    """
    ms = make_metrics(metrics, tokenize)
    baseline_hyps, refs = split_samples(baseline_hyps, refs)
    n = len(refs)
    base_hyps = check_hyps(baseline_hyps, n)
    for name, v in variants.items():
        check_hyps(v, n)
    stats, prepared, notes = compute_stats(ms, base_hyps, refs)
    active = [m for m in ms if m.label in stats]
    w = resample_weights(len(base_hyps), resamples, seed)
    base_scores: dict = {}
    base_res = {}
    for m in active:
        base_scores.update(m.aggregate(stats[m.label]).values)
        base_res[m.label] = resampled_values(m, stats[m.label], w, meteor_exact=meteor_exact)
    # pre-tokenise every variant's changed captions in one batch
    for tok in {m.tokenize for m in active} - {"none"}:
        tokenize_texts([v[i] for v in variants.values() for i in range(len(base_hyps)) if v[i] != base_hyps[i]], tok)
    types = {name: _variant_block(active, prepared, stats, base_res, base_scores, list(v), base_hyps, w, seed, level,
                                  meteor_exact)
             for name, v in variants.items()}
    all_block = None
    if combined is not False:
        if combined is True:
            merged, conflicts = merge_variants(base_hyps, variants)
        else:
            merged, conflicts = check_hyps(combined, n), []
        all_block = _variant_block(active, prepared, stats, base_res, base_scores, merged, base_hyps, w, seed, level,
                                   meteor_exact)
        all_block["conflicts"] = conflicts
    for m in ms:
        if m not in active:
            for k in m.score_keys:
                base_scores.setdefault(k, None)
    return {"baseline": {k: base_scores[k] for k in _score_order(base_scores)}, "types": types, "all": all_block,
            "signatures": {m.label: m.signature for m in ms}, "notes": notes, "n": len(base_hyps),
            "resamples": resamples, "seed": seed, "level": level}
