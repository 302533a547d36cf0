"""BLEU: hand-computed cases and the n-gram tables' corner cases, against pycocoevalcap's Bleu.

Identity with pycocoevalcap on generated corpora (raw and PTB-tokenised), the
statistics contract, bad input and the signature are checked for every
registered metric in test_metrics_contract.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from metric_helpers import edge_corpus, reference_scores

from annotator.metrics import Bleu, _ngrams

pytest.importorskip("pycocoevalcap.bleu.bleu")


def coco(hyps, refs):
    """pycocoevalcap's corpus BLEU-1…4 and per-caption values, by score key."""
    return reference_scores("bleu", hyps, refs)


def test_hand_computed_case():
    hyp = "the cat sat on the mat"
    refs = ["the cat is on the mat", "there is a cat on the mat"]
    row = Bleu().segment_stats(hyp, refs)
    # testlen, closest reflen, guesses (6,5,4,3); clipped matches: the×2 cat on mat | the cat, on the, the mat | on the mat
    assert row.tolist() == [6, 6, 6, 5, 4, 3, 5, 3, 1, 0]
    score = Bleu().corpus_score([hyp], [refs])
    p = [(5 + 1e-15) / (6 + 1e-9), (3 + 1e-15) / (5 + 1e-9), (1 + 1e-15) / (4 + 1e-9), (0 + 1e-15) / (3 + 1e-9)]
    ratio = (6 + 1e-15) / (6 + 1e-9)  # just below 1: coco-caption applies a (tiny) brevity penalty even here
    bp = math.exp(1 - 1 / ratio)
    expected = [(math.prod(p[:k]) ** (1 / k)) * bp for k in range(1, 5)]
    assert [score.values[f"Bleu_{k}"] for k in range(1, 5)] == pytest.approx(expected, rel=1e-12)
    assert score.value == score.values["Bleu_4"]
    assert score.values == coco([hyp], [refs])[0]


def test_closest_reference_length_prefers_shorter_on_ties():
    # caption of 4 words, references of 3 and 5 words: both at distance 1, the shorter wins
    row = Bleu().segment_stats("a b c d", ["x y z", "x y z w v"])
    assert row[1] == 3


def test_clipping_counts_each_ngram_at_most_its_max_reference_count():
    row = Bleu().segment_stats("the the the the", ["the cat the", "the"])
    assert row[6] == 2  # "the" occurs at most twice in one reference
    row = Bleu().segment_stats("a a a b a a", ["a a x", "a a a y"])
    # unigrams: "a" min(5, 3) + "b" 0; bigrams: "a a" occurs 3 times, at most twice in one reference
    assert row[6:8].tolist() == [3, 2]


def test_a_caption_scored_alone_has_its_batch_row():
    # a BLEU row depends on the caption's own references only
    hyps, refs = edge_corpus(3, 120)
    m = Bleu()
    batch = m.stats(hyps, refs)
    for i, h in enumerate(hyps):
        assert m.segment_stats(h, refs[i]).tolist() == batch[i].tolist()


def test_unknown_words_in_new_captions():
    hyps, refs = edge_corpus(4, 80)
    m = Bleu()
    prep = m.prepare(refs)
    new = [h + " zyzzyva qwxx" for h in hyps]
    assert m.aggregate(m.stats(new, prep)).values == coco(new, refs)[0]


def test_large_vocabulary_fallback(monkeypatch):
    # force the tuple-key path (as for a vocabulary beyond 16-bit ids), both up front and triggered by new words
    hyps, refs = edge_corpus(5, 150)
    monkeypatch.setattr(_ngrams, "MAX_PACKED_VOCAB", 10)
    s = Bleu().corpus_score(hyps, refs)
    assert (s.values, s.segments) == coco(hyps, refs)
    monkeypatch.undo()
    m = Bleu()
    prep = m.prepare(refs, cache=False)
    monkeypatch.setattr(_ngrams, "MAX_PACKED_VOCAB", len(prep.data.vocab) + 1)
    new = [h + f" novel{i} other{i}" for i, h in enumerate(hyps)]
    got = m.aggregate(m.stats(new, prep)).values
    assert got == coco(new, refs)[0]
    assert m.segment_stats(new[7], prepared=prep, index=7).tolist() == Bleu().stats(new, refs)[7].tolist()


def test_resample_equals_pycocoevalcap_on_the_resampled_corpus():
    hyps, refs = edge_corpus(7, 100)
    m = Bleu()
    st = m.stats(hyps, refs)
    rng = np.random.default_rng(3)
    idx = rng.integers(0, len(hyps), len(hyps))
    w = np.bincount(idx, minlength=len(hyps))[None, :].astype(float)
    got = m.resample(st, w)[0]
    want = coco([hyps[i] for i in idx], [refs[i] for i in idx])[0]
    assert got.tolist() == pytest.approx(list(want.values()), rel=1e-12)


