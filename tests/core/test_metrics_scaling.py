"""Rescoring stays linear in the corpus: BLEU's and CIDEr-D's work is done in blocks of bounded size, each
block touches only its own part of the corpus, and the result does not depend on how the corpus is cut.

The figures (bench/rescore_bench.py --sizes 1000,10000,100000) follow from these counters: once no step
works on an array that grows with the corpus, none leaves the processor's cache or makes the kernel map
fresh memory on every call, which is what made the cost grow as n^1.14–1.34.
"""

from __future__ import annotations

import numpy as np
import pytest
from metric_helpers import edge_corpus, reference_scores

from annotator.metrics import Bleu, CiderD, RougeL, _ngrams
from annotator.metrics.base import BatchedMetric
from annotator.metrics.synthetic import synthetic_corpus
from annotator.tokenize import whitespace


def _block_sizes(monkeypatch, metric, hyps, refs) -> tuple[list[int], list[int], list[int]]:
    """Occurrences per reference block, captions per ``_rows`` call and texts per tokeniser block."""
    tables, rows, texts = [], [], []
    block_table, keys = _ngrams._block_table, whitespace._keys

    def counted_table(d, *a, **k):
        tables.append(len(d))
        return block_table(d, *a, **k)

    def counted_keys(encoded, *a, **k):
        texts.append(encoded[0].count(b"\x1f") + 1)
        return keys(encoded, *a, **k)
    monkeypatch.setattr(_ngrams, "_block_table", counted_table)
    monkeypatch.setattr(whitespace, "_keys", counted_keys)
    rows_of = type(metric)._rows
    monkeypatch.setattr(type(metric), "_rows", lambda self, h, p, i: (rows.append(len(h)), rows_of(self, h, p, i))[1])
    metric.aggregate(metric.stats(hyps, metric.prepare(refs, cache=False)))
    return tables, rows, texts


@pytest.mark.parametrize("cls", [Bleu, CiderD])
def test_work_comes_in_blocks_of_bounded_size_whatever_the_corpus_size(monkeypatch, cls):
    monkeypatch.setattr(_ngrams, "BLOCK", 512)
    monkeypatch.setattr(BatchedMetric, "block", 64)
    monkeypatch.setattr(whitespace, "BLOCK", 100)
    seen = {}
    for n in (200, 2000):
        hyps, refs = synthetic_corpus(n, 5, seed=1)
        with pytest.MonkeyPatch.context() as mp:
            tables, rows, texts = _block_sizes(mp, cls(), hyps, refs)
        longest_image = max(sum(len(r.split()) for r in rs) for rs in refs)
        # each block: at most BLOCK occurrences plus the rest of the image it ends in; all blocks together: every
        # occurrence of each order once (linear in the corpus), so the number of blocks grows with it
        assert max(tables) <= 512 + longest_image
        assert max(rows) <= 64 and sum(rows) == n
        assert max(texts) <= 100 and sum(texts) == 5 * n + n  # references, then captions
        seen[n] = len(tables)
    assert 8 <= seen[2000] / seen[200] <= 12


@pytest.mark.parametrize("block", [1, 7, 64])
def test_scores_do_not_depend_on_how_the_corpus_is_cut(monkeypatch, block):
    hyps, refs = edge_corpus(11, 160)
    monkeypatch.setattr(_ngrams, "BLOCK", block)
    monkeypatch.setattr(BatchedMetric, "block", max(1, block // 2))
    monkeypatch.setattr(whitespace, "BLOCK", block)
    for cls, key in ((Bleu, "bleu"), (CiderD, "cider")):
        want, segs = reference_scores(key, hyps, refs)
        got = cls().corpus_score(hyps, refs)
        assert got.values == want
        assert (got.segments if cls is Bleu else {"CIDEr": got.per_segment}) == segs


def test_block_boundaries_are_found_without_converting_the_whole_array(monkeypatch):
    # the end of a block is searched with a value of the occurrences' own type: numpy converts the whole
    # array to the value's type otherwise, which made cutting n occurrences into blocks cost n²/BLOCK
    r = np.repeat(np.arange(50, dtype=np.int32), 3)
    ref_item = np.repeat(np.arange(25, dtype=np.int32), 2)
    ref_start = np.arange(0, 52, 2, dtype=np.int64)
    monkeypatch.setattr(_ngrams, "BLOCK", 10)
    cuts = list(_ngrams._blocks(r, ref_start, ref_item))
    assert cuts[0] == (0, 12) and cuts[-1][1] == len(r)
    assert all(a == b for (_, a), (b, _) in zip(cuts, cuts[1:]))
    assert all(ref_item[r[b - 1]] != ref_item[r[b]] for _, b in cuts[:-1])  # whole images


def test_rouge_scores_all_references_of_an_image_in_one_pass():
    from annotator.metrics.rouge import image_masks, lcs_length, lcs_lengths, position_masks
    rng = np.random.default_rng(0)
    for _ in range(300):
        refs = [[str(t) for t in rng.integers(0, 5, rng.integers(1, 70))] for _ in range(rng.integers(1, 6))]
        hyp = [str(t) for t in rng.integers(0, 5, rng.integers(1, 20))]
        masks, start, segments = image_masks(refs)
        assert lcs_lengths(hyp, masks, start, segments) == [lcs_length(hyp, position_masks(r), len(r)) for r in refs]
    hyps, refs = edge_corpus(5, 120)
    want, segs = reference_scores("rouge", hyps, refs)
    got = RougeL().corpus_score(hyps, refs)
    assert got.values == want and got.per_segment == segs["ROUGE_L"]
