"""Shared helpers of the metric tests: reference implementations and a corpus with edge cases."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
from functools import lru_cache
from pathlib import Path

from annotator.metrics import REGISTRY, Sample
from annotator.metrics.synthetic import synthetic_corpus
from annotator.model import Box

SAMPLE_PROJECT = Path(__file__).resolve().parent.parent / "data" / "sample"


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
        # SPICE gives per-category dicts per caption; its caption score is the 'All' F-measure
        segs = [s["All"]["f"] if isinstance(s, dict) else s for s in segs]
        return {keys[0]: float(score)}, {keys[0]: list(segs)}
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


@lru_cache(maxsize=1)
def _photographs() -> tuple[tuple[str, tuple[int, int], tuple[Box, ...]], ...]:
    """(image path, (width, height), gold boxes) of every photograph of the bundled sample project."""
    lines = (SAMPLE_PROJECT / "sample.jsonl").read_text(encoding="utf-8").splitlines()
    root = SAMPLE_PROJECT / json.loads(lines[0])["image_root"]
    out = []
    for line in lines[1:]:
        item = json.loads(line)
        boxes = tuple(Box(b["id"], b["label"], b["x"], b["y"], b["w"], b["h"], b.get("synset")) for b in item["boxes"])
        out.append((str(root / item["image"]), (item["width"], item["height"]), boxes))
    return tuple(out)


def samples_of(hyps, refs) -> list[Sample]:
    """Samples of captions and references, each with a real photograph, its size and gold boxes (cycled)."""
    photos = _photographs()
    return [Sample(h, r, *photos[i % len(photos)]) for i, (h, r) in enumerate(zip(hyps, refs))]
