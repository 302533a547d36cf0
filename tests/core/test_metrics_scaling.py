"""Rescoring stays linear in the corpus: BLEU's and CIDEr-D's work is done in blocks of bounded size, each
block touches only its own part of the corpus, and the result does not depend on how the corpus is cut.

The figures (bench/rescore_bench.py --sizes 1000,10000,100000) follow from these counters: once no step
works on an array that grows with the corpus, none leaves the processor's cache or makes the kernel map
fresh memory on every call, which is what made the cost grow as n^1.14–1.34.

Memory is bounded the same way: a prepared reference set keeps blocks of tables up to a budget and builds the
others again when their captions are scored (ROUGE-L keeps one 8-byte key per reference token), so what grows
with the corpus is a few arrays per reference token (bench/rescore_bench.py --peak 1000000 prints the peak).
"""

from __future__ import annotations

import numpy as np
import pytest
from metric_helpers import edge_corpus, reference_scores

from annotator.metrics import Bleu, CiderD, RougeL, _ngrams
from annotator.metrics.base import BatchedMetric
from annotator.metrics.synthetic import synthetic_corpus
from annotator.tokenize import whitespace
from tests.memory_helpers import PEAK_KIB, run_child


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


def test_rouge_scores_every_pair_of_a_block_in_one_pass():
    # the pairs of a block of captions run side by side (rouge.lcs_pairs): equal to one pair at a time
    from annotator.metrics.rouge import lcs_pairs, lcs_length, position_masks
    rng = np.random.default_rng(0)
    refs = [rng.integers(0, 5, rng.integers(1, 70)) for _ in range(400)]
    hyps = [rng.integers(0, 5, rng.integers(1, 20)) for _ in range(400)]
    ref_keys = np.concatenate(refs + [rng.integers(0, 5, 64)])  # 64 past the end: read, never used
    hyp_keys = np.concatenate(hyps)
    ref_len, hyp_len = np.array([len(r) for r in refs]), np.array([len(h) for h in hyps])
    got = lcs_pairs(ref_keys, np.cumsum(ref_len) - ref_len, ref_len, hyp_keys, np.cumsum(hyp_len) - hyp_len, hyp_len)
    assert got.tolist() == [lcs_length(h.tolist(), position_masks(r.tolist()), len(r)) for r, h in zip(refs, hyps)]
    hyps, refs = edge_corpus(5, 120)
    want, segs = reference_scores("rouge", hyps, refs)
    got = RougeL().corpus_score(hyps, refs)
    assert got.values == want and got.per_segment == segs["ROUGE_L"]


def _tables(blk) -> dict:
    """Every array of a block of tables, by (order, name), and what the metric derived from it."""
    out = {(k, name): getattr(bo, name) for k, bo in enumerate(blk.orders) for name in _ngrams.BlockOrder.__slots__}
    out["data"] = blk.data
    return out


@pytest.mark.parametrize("cls", [Bleu, CiderD])
def test_blocks_past_the_memory_budget_are_dropped_and_built_again_alike(monkeypatch, cls):
    # what bounds the memory of a million captions: a prepared reference set keeps blocks of tables only up to
    # RETAIN_BYTES and builds the others again, the same arrays, when their captions are scored
    hyps, refs = edge_corpus(3, 200)
    monkeypatch.setattr(_ngrams, "IMAGES", 16)
    monkeypatch.setattr(BatchedMetric, "block", 16)
    metric = cls()
    block = (lambda prep, b: metric._block(prep.data, b)) if cls is CiderD else (lambda prep, b: prep.data.index.block(b))
    whole = metric.prepare(refs, cache=False)
    assert all(b is not None for b in whole.data.index.blocks) and whole.data.index.grams is None
    sizes = [b.nbytes() for b in whole.data.index.blocks]
    monkeypatch.setattr(_ngrams, "RETAIN_BYTES", sum(sizes) // 3)
    prep = metric.prepare(refs, cache=False)
    ix = prep.data.index
    kept = [b for b in ix.blocks if b is not None]
    assert len(ix.blocks) == 13 and 2 <= len(kept) <= 6 and ix.blocks[:len(kept)] == kept  # the first ones
    assert sum(b.nbytes() for b in kept) <= _ngrams.RETAIN_BYTES and ix.grams is not None
    for b in range(len(ix.blocks)):
        want, got = _tables(whole.data.index.blocks[b]), _tables(block(prep, b))
        assert want.keys() == got.keys()
        for name, arr in want.items():
            assert (arr is None and got[name] is None) or np.array_equal(arr, got[name]), (b, name)
    # the numbers stay pycocoevalcap's, whether a caption's block was kept or built again, alone or in a batch
    key = "bleu" if cls is Bleu else "cider"
    want, segs = reference_scores(key, hyps, refs)
    score = metric.aggregate(metric.stats(hyps, prep), per_segment=True)
    assert score.values == want
    assert (score.segments if cls is Bleu else {"CIDEr": score.per_segment}) == segs
    picked = list(range(len(hyps) - 1, -1, -7))
    assert np.array_equal(metric.stats_at([hyps[i] for i in picked], prep, picked), metric.stats(hyps, prep)[picked])


def test_rouge_keeps_a_bounded_number_of_bytes_per_reference_token(monkeypatch):
    # what bounds ROUGE-L's memory at a million captions: a prepared reference set holds one 8-byte key per
    # reference token (in one array per block of images, 64 more after each) and two 4-byte numbers per
    # reference (the masks it kept before took about 3 KB per image)
    from annotator.metrics import rouge
    monkeypatch.setattr(rouge, "IMAGES", 40)
    hyps, refs = edge_corpus(4, 150)
    metric = RougeL()
    prep = metric.prepare(refs, cache=False)
    d = prep.data
    tokens = sum(len(r.split(" ")) for rs in refs for r in rs)
    assert len(d.keys) == 4 and sum(len(k) for k in d.keys) == tokens + 4 * 64
    assert len(d.lens) == len(d.starts) == sum(map(len, refs))
    held = sum(k.nbytes for k in d.keys) + d.lens.nbytes + d.starts.nbytes + d.first.nbytes
    assert held <= 8 * (tokens + 4 * 64) + 8 * len(d.lens) + 8 * (len(refs) + 1)
    # the numbers stay pycocoevalcap's, captions of one block or of several scored together
    want, segs = reference_scores("rouge", hyps, refs)
    got = metric.aggregate(metric.stats(hyps, prep), per_segment=True)
    assert got.values == want and got.per_segment == segs["ROUGE_L"]
    picked = list(range(len(hyps) - 1, -1, -7))
    assert metric.stats_at([hyps[i] for i in picked], prep, picked)[:, 0].tolist() == [segs["ROUGE_L"][i] for i in picked]


_CHILD = PEAK_KIB + """
import sys
from annotator.metrics import REGISTRY, _ngrams
from annotator.metrics.synthetic import synthetic_corpus
n, metric, retain = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
_ngrams.RETAIN_BYTES = retain

def rss_kib():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))

hyps, refs = synthetic_corpus(n, 5, seed=0)
before = rss_kib()
m = REGISTRY.create([metric])[0]
m.aggregate(m.stats(hyps, m.prepare(refs, cache=False)))
print((peak_kib() - before) / 1024)
"""

#: Growth of the peak per caption (5 references) past what a prepared reference set keeps, in bytes: a million
#: captions then fit in 4 GB with the corpus (0.75 GB) and the kept tables (RETAIN_BYTES, 0.75 GB).
PER_CAPTION = 2000


def _peak_growth_mib(n: int, metric: str, retain: int) -> float:
    return float(run_child(_CHILD, n, metric, retain, timeout=600).split()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["bleu", "rouge", "cider"])
def test_peak_memory_grows_by_a_bounded_amount_per_caption_past_what_is_kept(metric):
    # the tables kept are bounded (RETAIN_BYTES: small here, so both sizes fill it); what grows with the corpus
    # besides is a few arrays per reference token (all of ROUGE-L's: one key per token). Keeping every image's
    # tables, as before, grows by 4-8 KB per caption (5 GB for BLEU, 8 GB for CIDEr-D at a million captions)
    small, large = 20_000, 60_000
    growth = [_peak_growth_mib(n, metric, 16 << 20) for n in (small, large)]
    per_caption = (growth[1] - growth[0]) * 2**20 / (large - small)
    assert per_caption <= PER_CAPTION, f"{metric}: {per_caption:.0f} bytes per caption (peak {growth} MiB)"
