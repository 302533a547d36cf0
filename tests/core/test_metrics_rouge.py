"""ROUGE-L: the bit-parallel LCS and hand-computed cases, against pycocoevalcap's Rouge.

Identity with pycocoevalcap on generated corpora (raw and PTB-tokenised), the
statistics contract, bad input and the signature are checked for every
registered metric in test_metrics_contract.py.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from metric_helpers import edge_corpus, reference_scores

from annotator.metrics import RougeL
from annotator.metrics.rouge import lcs_length, position_masks

pcc_rouge = pytest.importorskip("pycocoevalcap.rouge.rouge")


def coco(hyps, refs):
    """pycocoevalcap's corpus ROUGE-L and its per-caption values."""
    values, segs = reference_scores("rouge", hyps, refs)
    return values["ROUGE_L"], segs["ROUGE_L"]


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
    assert got.per_segment == segs and got.value == want
    assert got.per_segment[0] == 1.0


def test_a_caption_scored_alone_has_its_batch_row():
    # a ROUGE-L row depends on the caption's own references only
    hyps, refs = edge_corpus(3, 100)
    m = RougeL()
    batch = m.stats(hyps, refs)
    for i, h in enumerate(hyps):
        assert m.segment_stats(h, refs[i])[0] == batch[i, 0]


def test_resample_is_mean_of_drawn_captions():
    hyps, refs = edge_corpus(4, 50)
    m = RougeL()
    st = m.stats(hyps, refs)
    w = np.zeros((2, 50))
    w[0, :] = 1
    w[1, 3] = 50
    got = m.resample(st, w)[:, 0]
    assert got[0] == pytest.approx(m.aggregate(st).value, rel=1e-12)
    assert got[1] == pytest.approx(st[3, 0], rel=1e-12)
