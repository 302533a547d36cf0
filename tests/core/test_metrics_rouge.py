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


# tokens that end at the eight bytes a key holds, hold NUL bytes (which a key by bytes could not tell from its
# zero padding), are not ASCII (one character, several bytes), lone surrogates, whitespace that is not a space
# (the joiner of the texts, \x1f, is one: texts that hold it are joined otherwise)
_ODD_TOKENS = ["", "a", "ab", "a\x00", "a\x00\x00", "\x00", "abcdefgh", "abcdefghi", "abcdefgh\x00", "1234567\x00",
               "é", "éé", "ééééé", "\ud800", "\t", "x\ny", "A", "longtokenhere", "longtokenherf", "dog"]


@pytest.mark.parametrize("texts", ["ascii", "utf-8", "joiner"])
def test_token_keys_are_equal_exactly_when_the_tokens_are(texts):
    from annotator.metrics.rouge import tokens
    rng = random.Random(3)
    ascii_only = texts == "ascii"
    alphabet = [t for t in _ODD_TOKENS if t.isascii() or not ascii_only] + (["a\x1fb", "\x1f"] if texts == "joiner" else [])
    texts = [" ".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(300)]
    numbers: dict[bytes, int] = {}
    keys, counts = tokens(texts, numbers, iter(range(3, 10**6)))
    words = [w for t in texts for w in t.split(" ")]
    assert counts.tolist() == [len(t.split(" ")) for t in texts] and len(keys) == len(words)
    first = {}
    for w, k in zip(words, keys.tolist()):
        assert first.setdefault(w, k) == k  # equal tokens, equal keys
    assert len(set(first.values())) == len(first)  # different tokens, different keys
    # a caption's tokens get the references' keys; those no reference has match none of them
    hyp = ["dog longtokenhere " + "\x00" * 9 + " zzzzzzzzzz é"]
    hk, hc = tokens(hyp, numbers)
    assert hc.tolist() == [5]
    assert hk[0] == first["dog"] and hk[1] == first["longtokenhere"]
    assert not set(hk[2:4].tolist()) & set(first.values())
    assert (hk[4] == first.get("é")) == (not ascii_only)


def test_references_at_the_word_size_boundaries_and_past_64_tokens():
    # the pairs are grouped by reference length into 8-, 16-, 32- and 64-bit words; longer references take
    # the Python integers; every length on both sides of a boundary, against pycocoevalcap
    rng = random.Random(5)
    hyps, refs = [], []
    for m in (1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 90):
        for _ in range(12):
            refs.append([" ".join(rng.choice("abcd") for _ in range(k)) for k in (m, rng.randint(1, 70))])
            hyps.append(" ".join(rng.choice("abcde") for _ in range(rng.choice((1, 5, 20, 70)))))
    want, segs = coco(hyps, refs)
    got = RougeL().corpus_score(hyps, refs)
    assert got.per_segment == segs and got.value == want


def test_odd_tokens_score_as_in_coco_caption():
    rng = random.Random(7)
    hyps = [" ".join(rng.choice(_ODD_TOKENS) for _ in range(rng.randint(1, 20))) for _ in range(400)]
    refs = [[" ".join(rng.choice(_ODD_TOKENS) for _ in range(rng.randint(1, 20))) for _ in range(rng.randint(1, 5))]
            for _ in range(400)]
    want, segs = coco(hyps, refs)
    m = RougeL()
    prep = m.prepare(refs)
    got = m.aggregate(m.stats(hyps, prep), per_segment=True)
    assert got.per_segment == segs and got.value == want
    picked = list(range(399, -1, -9))
    assert m.stats_at([hyps[i] for i in picked], prep, picked)[:, 0].tolist() == [segs[i] for i in picked]
