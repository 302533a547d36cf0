"""BLEU against pycocoevalcap's Bleu, float for float, plus hand-computed cases."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

from annotator.metrics import Bleu, MetricInputError, _ngrams
from annotator.metrics.synthetic import synthetic_corpus

pcc_bleu = pytest.importorskip("pycocoevalcap.bleu.bleu")

needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="PTB tokenisation needs Java (no `java` on PATH)")


def coco(hyps, refs):
    gts = {i: list(r) for i, r in enumerate(refs)}
    res = {i: [h] for i, h in enumerate(hyps)}
    return pcc_bleu.Bleu(4).compute_score(gts, res, verbose=0)


def corpus(seed=0, n=300):
    hyps, refs = synthetic_corpus(n, 5, seed, odd_rate=0.2)
    # empty and one-word captions at both ends (boundary cases of the n-gram tables)
    hyps[0], hyps[1], hyps[-1], hyps[-2] = "", "dog", "", "a"
    refs[0] = ["", "a  b", "dog"]
    refs[-1] = ["a man", "a"]
    return hyps, refs


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
    assert list(score.values.values()) == coco([hyp], [refs])[0]


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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_pycocoevalcap_on_generated_corpus(seed):
    hyps, refs = corpus(seed)
    pcc_score, pcc_segs = coco(hyps, refs)
    s = Bleu().corpus_score(hyps, refs)
    assert list(s.values.values()) == pcc_score
    for k in range(4):
        assert s.segments[f"Bleu_{k + 1}"] == pcc_segs[k]
    assert s.per_segment == pcc_segs[3]


def test_segment_stats_equal_batch_rows():
    hyps, refs = corpus(3, 120)
    m = Bleu()
    prep = m.prepare(refs)
    batch = m.stats(hyps, prep)
    for i, h in enumerate(hyps):
        assert m.segment_stats(h, prepared=prep, index=i).tolist() == batch[i].tolist()
        assert m.segment_stats(h, refs[i]).tolist() == batch[i].tolist()


def test_unknown_words_in_new_captions():
    hyps, refs = corpus(4, 80)
    m = Bleu()
    prep = m.prepare(refs)
    new = [h + " zyzzyva qwxx" for h in hyps]
    pcc_score, _ = coco(new, refs)
    assert list(m.aggregate(m.stats(new, prep)).values.values()) == pcc_score


def test_large_vocabulary_fallback(monkeypatch):
    # force the tuple-key path (as for a vocabulary beyond 16-bit ids), both up front and triggered by new words
    hyps, refs = corpus(5, 150)
    pcc_score, pcc_segs = coco(hyps, refs)
    monkeypatch.setattr(_ngrams, "MAX_PACKED_VOCAB", 10)
    s = Bleu().corpus_score(hyps, refs)
    assert list(s.values.values()) == pcc_score
    monkeypatch.undo()
    m = Bleu()
    prep = m.prepare(refs, cache=False)
    monkeypatch.setattr(_ngrams, "MAX_PACKED_VOCAB", len(prep.data.vocab) + 1)
    new = [h + f" novel{i} other{i}" for i, h in enumerate(hyps)]
    got = m.aggregate(m.stats(new, prep)).values
    assert list(got.values()) == coco(new, refs)[0]
    assert m.segment_stats(new[7], prepared=prep, index=7).tolist() == Bleu().stats(new, refs)[7].tolist()


def test_resample_with_unit_weights_is_the_corpus_score():
    hyps, refs = corpus(6, 100)
    m = Bleu()
    st = m.stats(hyps, refs)
    vals = m.resample(st, np.ones((1, len(hyps))))[0]
    assert vals.tolist() == pytest.approx(list(m.aggregate(st).values.values()), rel=1e-12)


def test_resample_equals_pycocoevalcap_on_the_resampled_corpus():
    hyps, refs = corpus(7, 100)
    m = Bleu()
    st = m.stats(hyps, refs)
    rng = np.random.default_rng(3)
    idx = rng.integers(0, len(hyps), len(hyps))
    w = np.bincount(idx, minlength=len(hyps))[None, :].astype(float)
    got = m.resample(st, w)[0]
    want = coco([hyps[i] for i in idx], [refs[i] for i in idx])[0]
    assert got.tolist() == pytest.approx(want, rel=1e-12)


def test_bad_input():
    with pytest.raises(MetricInputError):
        Bleu().corpus_score(["a"], [[]])
    with pytest.raises(MetricInputError):
        Bleu().corpus_score(["a", "b"], [["a"]])
    with pytest.raises(MetricInputError):
        Bleu().corpus_score(["a"], ["a reference string instead of a list"])
    with pytest.raises(MetricInputError):
        Bleu().aggregate(np.zeros((0, 10)))


def test_signature():
    assert Bleu().signature == "BLEU|n=4|ref=closest|smooth=1e-9,1e-15|tok=none|coco-caption-1.2"
    assert Bleu(tokenize="ptb").signature.endswith("|tok=ptb|coco-caption-1.2")


@needs_java
def test_equals_pycocoevalcap_after_ptb_tokenisation():
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
    hyps, refs = corpus(8, 150)
    gts = {i: [{"caption": r} for r in rs] for i, rs in enumerate(refs)}
    res = {i: [{"caption": h}] for i, h in enumerate(hyps)}
    tok = PTBTokenizer()
    gts_t, res_t = tok.tokenize(gts), tok.tokenize(res)
    want, _ = pcc_bleu.Bleu(4).compute_score(gts_t, res_t, verbose=0)
    got = Bleu(tokenize="ptb").corpus_score(hyps, refs)
    assert list(got.values.values()) == want
