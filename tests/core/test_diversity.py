"""Lexical-diversity measures: hand-computed values and golden values from lexicalrichness, taaled and lexical-diversity."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_diversity_helpers import (
    HUMAN_CAPTIONS, SPARSE_A, SPARSE_B, naive_hdd, naive_mattr, naive_mtld, uniform_tokens, zipf_tokens,
)

from annotator import diversity as D
from annotator.tokenize.words import TokenCorpus, tokenize_corpus
from tests.property_helpers import examples

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from lexical_diversity import lex_div
    from lexicalrichness import LexicalRichness
    from taaled import ld as taaled_ld


def lr(tokens):
    """lexicalrichness on exactly our tokens (no preprocessing, no tokenisation of its own)."""
    return LexicalRichness(list(tokens), preprocessor=None, tokenizer=None)


def approx(v):
    return pytest.approx(v, rel=1e-10, abs=1e-12)


def caption_tokens(texts):
    return tokenize_corpus(texts).tokens


CORPORA = {
    "human captions": caption_tokens(HUMAN_CAPTIONS),
    "sparse system A": caption_tokens(SPARSE_A),
    "sparse system B": caption_tokens(SPARSE_B),
    "all captions": caption_tokens(HUMAN_CAPTIONS + SPARSE_A + SPARSE_B),
    "zipf 3000/400": zipf_tokens(3000, 400, seed=1),
    "zipf 5000/2000": zipf_tokens(5000, 2000, seed=2, exponent=0.9),
    "uniform 1500/40": uniform_tokens(1500, 40, seed=3),
    "uniform 2000/400 (long factors)": uniform_tokens(2000, 400, seed=4),
    "uniform 1500/20000 (no factor closes)": uniform_tokens(1500, 20000, seed=5),
}
# taaled and lexical-diversity compute HD-D with exact big-integer binomials and MTLD by re-slicing the
# text at every token, so they get the corpora cut to 1500 tokens.
TAALED_LIMIT = 1500


# --------------------------------------------------------------------------- hand-computed

def test_ttr_family_by_hand():
    toks = "the cat sat on the mat the end".split()  # 8 tokens, 6 types
    assert D.ttr(toks) == 0.75
    assert D.root_ttr(toks) == pytest.approx(6 / math.sqrt(8))
    assert D.root_ttr(toks) == pytest.approx(2.1213203435596424)
    assert D.log_ttr(toks) == pytest.approx(math.log(6) / math.log(8))
    assert D.log_ttr(toks) == pytest.approx(0.8616541669070521)
    m = D.measures(toks)
    assert (m["tokens"], m["types"]) == (8, 6)


def test_hdd_by_hand():
    # N = 4, draws = 2: P(a absent) = C(2,2)/C(4,2) = 1/6, P(b absent) = P(c absent) = C(3,2)/C(4,2) = 1/2.
    assert D.hdd(["a", "a", "b", "c"], draws=2) == pytest.approx(((1 - 1 / 6) + 2 * (1 - 1 / 2)) / 2)
    assert D.hdd(["a", "a", "b", "c"], draws=2) == pytest.approx(11 / 12)
    # A sample as large as the text contains every type: HD-D = V / draws.
    toks = [f"t{i % 10}" for i in range(42)]
    assert D.hdd(toks) == pytest.approx(10 / 42)


def test_hdd_is_exact_on_a_large_corpus():
    # exact rational HD-D (big-integer binomials) on 60 000 tokens; lexicalrichness sums scipy's float pmf,
    # which is close but not that close
    from fractions import Fraction
    toks = zipf_tokens(60_000, 5_000, seed=9)
    p = D.Profile.of(toks)
    freqs, n_with = np.unique(p.counts, return_counts=True)
    n, d = p.n, 42
    den = math.comb(n, d)
    exact = float(sum(Fraction(int(w) * (den - math.comb(n - int(f), d)), den) for f, w in zip(freqs, n_with)) / d)
    assert D.hdd(p) == pytest.approx(exact, rel=1e-14)
    assert D.hdd(p) == pytest.approx(lr(toks).hdd(42), rel=1e-7)


def test_mattr_by_hand():
    toks = ["a", "b", "a", "c"]
    assert D.mattr(toks, 2) == 1.0                     # ab, ba, ac
    assert D.mattr(toks, 3) == pytest.approx(5 / 6)    # aba = 2/3, bac = 1
    assert D.mattr(toks, 4) == 0.75 == D.ttr(toks)
    assert D.mattr(toks, 10) == 0.75                   # shorter than the window: plain TTR


def test_mtld_by_hand():
    toks = ["a"] * 4
    # ≤ 0.72 and no minimum: "a a" closes (TTR 0.5) twice in each direction → 4 / 2.
    assert D.mtld(toks) == 2.0
    # McCarthy & Jarvis: no factor reaches 10 tokens; the whole text is a partial factor
    # of weight (1 − 1/4) / 0.28, in both directions.
    assert D.mtld(toks, D.MTLD_MCCARTHY_JARVIS) == pytest.approx(4 / (0.75 / 0.28))
    # All tokens distinct: no factor closes and the remainder has TTR 1.
    distinct = list("abcdefg")
    assert D.mtld(distinct) == 7.0                                 # lexicalrichness counts one factor
    assert D.mtld(distinct, D.MTLD_MCCARTHY_JARVIS) == 0.0         # taaled / lexical-diversity: 0
    # "a b a b c": forward a(1) b(1) a(2/3 ≤ .72 closes) | b(1) c(1) → partial TTR 1 → weight 0 → 5/1;
    # backward c b a b(3/4) a(3/5 closes) → 5/1.
    parts = D.mtld_factors(list("ababc"))
    assert parts["forward"]["full_factors"] == 1 and parts["forward"]["partial_weight"] == 0.0
    assert parts["backward"]["full_factors"] == 1 and parts["backward"]["partial_tokens"] == 0
    assert parts["mtld"] == 5.0


def test_threshold_boundary_is_float_exact():
    # 18 types in 25 tokens is TTR 0.72 exactly: it closes a factor under <= but not under <.
    toks = [f"w{i}" for i in range(18)] + [f"w{i}" for i in range(7)]
    le = D.mtld_factors(toks, D.MTLDOptions())
    lt = D.mtld_factors(toks, D.MTLDOptions(strict=True))
    assert le["forward"]["full_factors"] == 1 and le["forward"]["partial_tokens"] == 0
    assert lt["forward"]["full_factors"] == 0 and lt["forward"]["partial_tokens"] == 25
    assert le["mtld"] == approx(lr(toks).mtld(0.72))


def test_empty_and_short_corpora():
    m = D.measures([])
    assert m["tokens"] == 0 and m["types"] == 0
    assert all(math.isnan(m[k]) for k in ("ttr", "rttr", "logttr", "hdd", "mtld", "mattr"))
    one = D.measures(["dog"])
    assert one["ttr"] == 1.0 and math.isnan(one["logttr"]) and math.isnan(one["hdd"]) and one["mattr"] == 1.0
    assert math.isnan(D.hdd(["a"] * 41)) and not math.isnan(D.hdd(["a"] * 42))
    with pytest.raises(ValueError):
        D.hdd(["a"] * 50, draws=0)
    with pytest.raises(ValueError):
        D.MTLDOptions(threshold=1.0)


# --------------------------------------------------------------------------- golden: lexicalrichness

@pytest.mark.parametrize("name", list(CORPORA))
def test_matches_lexicalrichness(name):
    toks = CORPORA[name]
    ref = lr(toks)
    p = D.Profile.of(toks)
    assert p.n == ref.words and p.n_types == ref.terms
    assert D.ttr(p) == approx(ref.ttr)
    assert D.root_ttr(p) == approx(ref.rttr)
    assert D.log_ttr(p) == approx(ref.Herdan)
    assert D.hdd(p, 42) == approx(ref.hdd(draws=42))
    for thr in (0.72, 0.6, 0.85):
        assert D.mtld(p, D.MTLDOptions(threshold=thr)) == approx(ref.mtld(threshold=thr)), thr
    for w in (10, 50, 100):
        if p.n >= w:
            assert D.mattr(p, w) == approx(ref.mattr(window_size=w)), w
    m = D.measures(p, D.DiversitySettings(mattr_window=100))
    assert m["mattr"] == approx(ref.mattr(window_size=100))
    assert m["hdd"] == approx(ref.hdd(draws=42)) and m["mtld"] == approx(ref.mtld(threshold=0.72))


@pytest.mark.parametrize("name", list(CORPORA))
def test_mtld_variant_matches_taaled_and_lexical_diversity(name):
    toks = CORPORA[name][:TAALED_LIMIT]
    t = taaled_ld.lexdiv(toks)
    mj = D.mtld(toks, D.MTLD_MCCARTHY_JARVIS)
    assert mj == approx(t.mtldo)
    assert mj == approx(lex_div.mtld(toks))
    assert D.mtld(toks, D.MTLD_TAALED_MEAN_LENGTH) == approx(t.mtld)
    # taaled's second threshold (0.92) with the same conventions
    assert D.mtld(toks, D.MTLDOptions(threshold=0.92, strict=True, min_factor_length=10, last_token_closes=False,
                                      no_factor="zero")) == approx(t.mtld92o)
    assert D.mattr(toks, 50) == approx(t.mattr) == approx(lex_div.mattr(toks))
    assert D.mattr(toks, 11) == approx(t.mattr11)
    assert D.hdd(toks) == approx(t.hdd) == approx(lex_div.hdd(toks))
    assert D.ttr(toks) == approx(t.ttr) and D.root_ttr(toks) == approx(t.rttr)
    assert D.log_ttr(toks) == approx(t.lttr)


def test_variants_really_differ():
    toks = CORPORA["all captions"]
    values = {k: D.mtld(toks, o) for k, o in D.MTLD_PRESETS.items()}
    assert len(set(values.values())) == 3
    # the comparison alone, and the minimum length alone, change the value too
    base = D.mtld(toks)
    assert D.mtld(toks, D.MTLDOptions(strict=True)) != base
    assert D.mtld(toks, D.MTLDOptions(min_factor_length=10)) != base


def test_long_factors_use_the_exact_fallback():
    # 2000 tokens over 400 types: factors run beyond the fast loop's 255-token limit.
    toks = CORPORA["uniform 2000/400 (long factors)"]
    parts = D.mtld_factors(toks)
    assert parts["forward"]["full_factors"] >= 2
    assert parts["mtld"] > 256
    assert parts["mtld"] == approx(naive_mtld(toks))
    assert D.mtld(toks, D.MTLD_MCCARTHY_JARVIS) == approx(naive_mtld(toks, 0.72, True, 10, False, "zero"))
    # 1500 tokens over 20000 types: no factor ever closes
    none = D.mtld_factors(CORPORA["uniform 1500/20000 (no factor closes)"])
    assert none["forward"]["full_factors"] == 0 and none["forward"]["partial_tokens"] == 1500


@pytest.mark.parametrize("length", [253, 255, 256, 257, 300])  # lengths a factor can have exactly
def test_factor_lengths_around_the_fast_loop_limit(length):
    # m distinct tokens, then one token repeated until the TTR reaches 0.72: the first factor closes after
    # exactly `length` tokens when m = floor(0.72 · length) (checked below); then another such factor.
    m = math.floor(0.72 * length)
    assert m / length <= 0.72 < m / (length - 1)
    block = [f"a{i}" for i in range(m)] + ["a0"] * (length - m)
    toks = block + [f"b{i}" for i in range(m)] + ["b0"] * (length - m) + [f"c{i}" for i in range(40)]
    parts = D.mtld_factors(toks)
    assert parts["forward"]["full_factors"] == 2
    assert parts["forward"]["partial_tokens"] == 40
    assert parts["mtld"] == approx(naive_mtld(toks)) == approx(lr(toks).mtld(0.72))
    mj = D.MTLD_MCCARTHY_JARVIS
    assert D.mtld(toks, mj) == approx(naive_mtld(toks, 0.72, True, 10, False, "zero"))


# --------------------------------------------------------------------------- properties

token_lists = st.lists(st.sampled_from("abcdefghijklmnopqrst"[:12]), min_size=1, max_size=120)


@settings(max_examples=examples(150), deadline=None)
@given(token_lists, st.sampled_from([0.5, 0.72, 0.9]), st.booleans(), st.sampled_from([1, 3, 10]), st.booleans(),
       st.sampled_from(["length", "zero"]), st.sampled_from(["ratio", "mean_length"]))
def test_mtld_matches_the_definition(toks, thr, strict, min_len, last, no_factor, aggregate):
    opts = D.MTLDOptions(threshold=thr, strict=strict, min_factor_length=min_len, last_token_closes=last,
                         no_factor=no_factor, aggregate=aggregate)
    expected = naive_mtld(toks, thr, strict, min_len, last, no_factor, aggregate)
    assert D.mtld(toks, opts) == pytest.approx(expected, rel=1e-12)


@settings(max_examples=examples(100), deadline=None)
@given(token_lists, st.integers(1, 60))
def test_mattr_and_hdd_match_the_definition(toks, w):
    assert D.mattr(toks, w) == pytest.approx(naive_mattr(toks, w), rel=1e-12)
    if len(toks) >= 42:
        assert D.hdd(toks) == pytest.approx(naive_hdd(toks), rel=1e-12)
        assert D.hdd(toks) == pytest.approx(lr(toks).hdd(42), rel=1e-10)


@settings(max_examples=examples(60), deadline=None)
@given(token_lists)
def test_mtld_matches_lexicalrichness_property(toks):
    assert D.mtld(toks) == pytest.approx(lr(toks).mtld(0.72), rel=1e-12)


def test_large_vocabulary_ids_sort_correctly():
    # more than 65 536 types: the two-pass radix sort of the occurrence links
    n = 200_000
    rng = np.random.default_rng(5)
    ids = rng.integers(0, 120_000, n)
    corpus = TokenCorpus(ids.astype(np.int32), [str(i) for i in range(120_000)], np.array([0, n]))
    p = D.Profile(corpus)
    last: dict[int, int] = {}
    expected = np.empty(n, np.int64)
    for i, t in enumerate(ids.tolist()):
        expected[i] = last.get(t, -1)
        last[t] = i
    assert np.array_equal(p.prev, expected)


# --------------------------------------------------------------------------- ratio and gap

def test_lexical_gap():
    assert D.lexical_gap(0.81) == 0.5
    assert D.lexical_gap(0.6, mu=0.6, alpha=12) == 0.5
    assert D.lexical_gap(1.0) == pytest.approx(1 / (1 + math.exp(-5 * (1.0 - 0.81))))
    assert D.lexical_gap(0.63) == pytest.approx(0.289050497374996)
    arr = D.lexical_gap(np.array([0.5, 0.81, 1.2]))
    assert arr[1] == 0.5 and arr[0] < 0.5 < arr[2]
    assert math.isnan(D.lexical_gap(math.nan))


def test_ratio_and_weights():
    assert D.lexical_diversity_ratio(0.6, 0.8) == pytest.approx(0.75)
    assert math.isnan(D.lexical_diversity_ratio(0.6, 0.0))
    assert math.isnan(D.lexical_diversity_ratio(math.nan, 0.8))
    assert D.weighted({1: 0.5, 2: 0.25}, 0.5) == {1: 0.25, 2: 0.125}
    assert D.weighted(0.4, 0.5) == 0.2
    assert list(D.weighted([1.0, 2.0], 0.5)) == [0.5, 1.0]


def test_report_on_caption_corpora():
    report = D.diversity_report(HUMAN_CAPTIONS, {"A": SPARSE_A, "B": SPARSE_B}, curves=True)
    ref = report.references.measures
    for name, texts in (("A", SPARSE_A), ("B", SPARSE_B)):
        sysm = report.systems[name]
        direct = D.measures(tokenize_corpus(texts))
        assert sysm.measures == direct
        assert sysm.ld == pytest.approx(direct["hdd"] / ref["hdd"])
        assert sysm.lexical_gap == pytest.approx(1 / (1 + math.exp(-5 * (sysm.ld - 0.81))))
        assert sysm.ld < 1  # the template captions are less diverse than the human ones
    assert report.systems["B"].ld < report.systems["A"].ld
    d = report.to_dict()
    from annotator.diversity.readability import READABILITY
    assert set(d["references"]) == {"texts", *D.MEASURES, *READABILITY}
    assert set(d["systems"]["A"]) == {"texts", *D.MEASURES, "ld", "lexical_gap", *READABILITY}
    assert set(report.curves) == {"references", "A", "B"}
    mt = D.diversity_report(HUMAN_CAPTIONS, {"A": SPARSE_A}, gap=D.GapSettings(measure="mtld", mu=0.5, alpha=2))
    assert mt.systems["A"].ld == pytest.approx(mt.systems["A"].measures["mtld"] / mt.references.measures["mtld"])
    assert mt.systems["A"].lexical_gap == pytest.approx(1 / (1 + math.exp(-2 * (mt.systems["A"].ld - 0.5))))
    with pytest.raises(ValueError):
        D.GapSettings(measure="tokens")


# --------------------------------------------------------------------------- TTR curves

def test_ttr_curve_matches_a_plain_simulation():
    texts = HUMAN_CAPTIONS + SPARSE_A
    corpus = tokenize_corpus(texts)
    curve = D.ttr_curve(corpus, points=40, shuffles=4, seed=7)
    lists = [corpus.text_tokens(i) for i in range(corpus.n_texts)]
    rng = np.random.default_rng(7)
    runs = []
    for _ in range(4):
        order = rng.permutation(len(lists))
        seq = [t for i in order for t in lists[i]]
        seen, ttr_at = set(), []
        for k, t in enumerate(seq, 1):
            seen.add(t)
            ttr_at.append(len(seen) / k)
        runs.append([ttr_at[k - 1] for k in curve.tokens])
    assert np.allclose(curve.ttr, np.mean(runs, axis=0), rtol=0, atol=1e-12)
    assert np.allclose(curve.sd, np.std(runs, axis=0), rtol=0, atol=1e-12)
    assert curve.tokens[0] == 1 and curve.ttr[0] == 1.0
    assert curve.tokens[-1] == corpus.n_tokens and curve.ttr[-1] == pytest.approx(D.ttr(corpus))
    short = D.ttr_curve(corpus, points=10, max_tokens=50)
    assert short.tokens[-1] == 50


def test_flat_token_list_curve_has_no_spread():
    curve = D.ttr_curve(list("abcabcabcd"), points=10, shuffles=3)
    assert list(curve.tokens) == list(range(1, 11))
    assert np.allclose(curve.sd, 0, atol=1e-12)
    assert curve.ttr[-1] == pytest.approx(0.4)
