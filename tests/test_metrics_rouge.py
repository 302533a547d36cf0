"""ROUGE-L against pycocoevalcap's Rouge, float for float, plus hand-computed cases."""

from __future__ import annotations

import random
import shutil

import numpy as np
import pytest

from annotator.metrics import RougeL
from annotator.metrics.rouge import lcs_length, position_masks
from annotator.metrics.synthetic import synthetic_corpus

pcc_rouge = pytest.importorskip("pycocoevalcap.rouge.rouge")

needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="PTB tokenisation needs Java (no `java` on PATH)")


def coco(hyps, refs):
    gts = {i: list(r) for i, r in enumerate(refs)}
    res = {i: [h] for i, h in enumerate(hyps)}
    return pcc_rouge.Rouge().compute_score(gts, res)


def corpus(seed=0, n=300):
    hyps, refs = synthetic_corpus(n, 5, seed, odd_rate=0.2)
    hyps[0], hyps[1], hyps[-1] = "", "dog", "  "
    refs[0] = ["", "a  b", "dog"]
    refs[-1] = ["a man", " "]
    return hyps, refs


def test_lcs_matches_dynamic_programming():
    rng = random.Random(0)
    for _ in range(2000):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 12))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 12))]
        want = pcc_rouge.my_lcs(a, b) if a and b else 0
        assert lcs_length(a, position_masks(b), len(b)) == want
        assert lcs_length(b, position_masks(a), len(a)) == want


def test_hand_computed_case():
    # LCS("police killed the gunman", "police kill the gunman") = 3 ("police the gunman")
    s = RougeL().corpus_score(["police killed the gunman"], [["police kill the gunman"]])
    p = r = 3 / 4
    expected = ((1 + 1.2 ** 2) * p * r) / (r + 1.2 ** 2 * p)
    assert s.value == pytest.approx(expected, rel=1e-15)
    # best precision and best recall may come from different references
    s = RougeL().corpus_score(["a b c d"], [["a b", "a b c d e f g h"]])
    p, r = 4 / 4, 2 / 2
    assert s.value == pytest.approx(((1 + 1.44) * p * r) / (r + 1.44 * p), rel=1e-15)
    assert RougeL().corpus_score(["x y"], [["a b"]]).value == 0.0


def test_empty_strings_behave_like_coco_caption():
    # "".split(" ") == [""]: an empty caption matches an empty reference token-for-token
    hyps, refs = ["", "", "a  b"], [[""], ["a b"], ["x  y"]]
    want, segs = coco(hyps, refs)
    got = RougeL().corpus_score(hyps, refs)
    assert got.per_segment == list(segs) and got.value == want
    assert got.per_segment[0] == 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_pycocoevalcap_on_generated_corpus(seed):
    hyps, refs = corpus(seed)
    want, segs = coco(hyps, refs)
    got = RougeL().corpus_score(hyps, refs)
    assert got.value == want
    assert got.per_segment == list(segs)


def test_segment_stats_equal_batch_rows():
    hyps, refs = corpus(3, 100)
    m = RougeL()
    prep = m.prepare(refs)
    batch = m.stats(hyps, prep)
    for i, h in enumerate(hyps):
        assert m.segment_stats(h, prepared=prep, index=i)[0] == batch[i, 0]
        assert m.segment_stats(h, refs[i])[0] == batch[i, 0]


def test_resample_is_mean_of_drawn_captions():
    hyps, refs = corpus(4, 50)
    m = RougeL()
    st = m.stats(hyps, refs)
    w = np.zeros((2, 50))
    w[0, :] = 1
    w[1, 3] = 50
    got = m.resample(st, w)[:, 0]
    assert got[0] == pytest.approx(m.aggregate(st).value, rel=1e-12)
    assert got[1] == pytest.approx(st[3, 0], rel=1e-12)


@needs_java
def test_equals_pycocoevalcap_after_ptb_tokenisation():
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
    hyps, refs = corpus(5, 150)
    gts = {i: [{"caption": r} for r in rs] for i, rs in enumerate(refs)}
    res = {i: [{"caption": h}] for i, h in enumerate(hyps)}
    tok = PTBTokenizer()
    want, segs = pcc_rouge.Rouge().compute_score(tok.tokenize(gts), tok.tokenize(res))
    got = RougeL(tokenize="ptb").corpus_score(hyps, refs)
    assert got.value == want and got.per_segment == list(segs)
