"""CIDEr-D: hand-computed cases, fixed document frequencies and corner cases, against pycocoevalcap's Cider.

Identity with pycocoevalcap on generated corpora (raw and PTB-tokenised), the
statistics contract, bad input and the signature are checked for every
registered metric in test_metrics_contract.py.
"""

from __future__ import annotations

import pytest
from metric_helpers import edge_corpus, reference_scores

from annotator.metrics import CiderD, MetricInputError, _ngrams

pytest.importorskip("pycocoevalcap.cider.cider")


def coco(hyps, refs):
    """pycocoevalcap's corpus CIDEr-D and its per-caption values."""
    values, segs = reference_scores("cider", hyps, refs)
    return values["CIDEr"], segs["CIDEr"]


def test_hand_computed_two_images():
    # two images, one reference each; unigram-only overlap keeps the arithmetic small
    hyps = ["a dog", "a cat"]
    refs = [["a dog"], ["the cat"]]
    # image 0: caption == reference. df: "a"=1, "dog"=1, "a dog"=1 -> every weight log 2
    # order 1: vec (log2, log2) both sides -> cosine 1; order 2: one bigram, cosine 1; orders 3,4: empty -> 0
    s0 = (1 + 1 + 0 + 0) / 4 / 1 * 10
    # image 1: "a cat" vs "the cat": only "cat" shared, weight log2 for all grams (df 1), "a" unseen in refs of
    # any image except image 0 -> df("a") = 1 -> weight log 2 as well. order 1: (log2·log2)/(√2·log2 · √2·log2) = 1/2
    s1 = (0.5 + 0 + 0 + 0) / 4 / 1 * 10
    got = CiderD().corpus_score(hyps, refs)
    assert got.per_segment == pytest.approx([s0, s1], rel=1e-12)
    assert got.value == pytest.approx((s0 + s1) / 2, rel=1e-12)
    want, segs = coco(hyps, refs)
    assert got.value == want and got.per_segment == segs


def test_length_penalty_uses_bigram_count():
    # coco-caption's "length" counts bigrams; a caption twice as long is penalised by exp(-δ²/72)
    hyps = ["a b c d e f g h", "x y"]
    refs = [["a b c d"], ["x y"]]
    want, segs = coco(hyps, refs)
    got = CiderD().corpus_score(hyps, refs)
    assert got.per_segment == segs and got.value == want


def test_incremental_rows_with_fixed_document_frequencies_equal_a_full_rescore():
    hyps, refs = edge_corpus(3, 150)
    m = CiderD()
    prep = m.prepare(refs)
    edited = list(hyps)
    for i, text in [(5, "a man riding a horse on the beach"), (0, "a dog"), (149, ""), (60, "zebra zebra zebra")]:
        edited[i] = text
    rows = m.stats(hyps, prep)
    for i in (5, 0, 149, 60):
        rows[i] = m.segment_stats(edited[i], prepared=prep, index=i)
    want, segs = coco(edited, refs)
    assert m.aggregate(rows).value == want
    assert rows[:, 0].tolist() == segs


def test_large_vocabulary_fallback(monkeypatch):
    hyps, refs = edge_corpus(4, 120)
    want, segs = coco(hyps, refs)
    monkeypatch.setattr(_ngrams, "MAX_PACKED_VOCAB", 10)
    got = CiderD().corpus_score(hyps, refs)
    assert got.value == want and got.per_segment == segs
    monkeypatch.undo()
    m = CiderD()
    prep = m.prepare(refs, cache=False)
    monkeypatch.setattr(_ngrams, "MAX_PACKED_VOCAB", len(prep.data.vocab) + 1)
    new = [h + f" novel{i} other{i}" for i, h in enumerate(hyps)]
    assert m.aggregate(m.stats(new, prep)).value == coco(new, refs)[0]
    assert m.segment_stats(new[9], prepared=prep, index=9)[0] == coco(new, refs)[1][9]


def test_all_references_empty_is_an_input_error():
    with pytest.raises(MetricInputError):
        CiderD().corpus_score(["a", "b"], [[""], ["", ""]])
    with pytest.raises(ValueError):  # coco-caption fails on the same input
        coco(["a", "b"], [[""], ["", ""]])


def test_single_image_scores_zero_like_coco_caption():
    # one image: every weight is log(1) - log(df = 1) = 0, so all vectors are zero and so is the score
    want, segs = coco(["a dog"], [["a dog"]])
    got = CiderD().corpus_score(["a dog"], [["a dog"]])
    assert got.value == want == 0.0
