"""Shared helpers of the metric tests: reference implementations and a corpus with edge cases."""

from __future__ import annotations

import contextlib
import importlib
import io

from annotator.metrics import REGISTRY
from annotator.metrics.synthetic import synthetic_corpus


def reference_scorer(metric: str):
    """A fresh scorer of the reference implementation a registered metric declares (pycocoevalcap's)."""
    module, _, name = REGISTRY.get(metric).reference.partition(":")
    return getattr(importlib.import_module(module), name)()


def reference_scores(metric: str, hyps, refs, scorer=None) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Corpus values and per-caption values by score key, as the metric's reference implementation computes them."""
    scorer = scorer or reference_scorer(metric)
    gts = {i: list(r) for i, r in enumerate(refs)}
    res = {i: [h] for i, h in enumerate(hyps)}
    with contextlib.redirect_stdout(io.StringIO()):  # pycocoevalcap's BLEU prints its counts
        score, segs = scorer.compute_score(gts, res)
    keys = REGISTRY.score_keys([metric])
    if len(keys) == 1:
        return {keys[0]: score}, {keys[0]: list(segs)}
    return dict(zip(keys, score)), {k: list(s) for k, s in zip(keys, segs)}


def coco(hyps, refs, metrics=("bleu", "rouge", "cider")) -> dict[str, float]:
    """Corpus values of several metrics' reference implementations on raw strings, by score key."""
    out: dict[str, float] = {}
    for m in metrics:
        out.update(reference_scores(m, hyps, refs)[0])
    return out


def edge_corpus(seed: int = 0, n: int = 300) -> tuple[list[str], list[list[str]]]:
    """A synthetic corpus with boundary cases at both ends.

    Empty, one-word and whitespace-only captions, a caption holding METEOR's
    field separator and runs of spaces, captions equal to one of their
    references, and empty or one-word references.
    """
    hyps, refs = synthetic_corpus(n, 5, seed, odd_rate=0.2)
    hyps[0], hyps[1], hyps[2] = "", "dog", "a ||| b  c   d"
    hyps[3], hyps[4] = refs[3][0], refs[4][2]
    hyps[-1], hyps[-2], hyps[-3] = "", "a", "  "
    refs[0] = ["", "a  b", "dog"]
    refs[-1] = ["a man", "a"]
    refs[-3] = ["a man", " "]
    return hyps, refs
