"""MTLD's fast paths (lockstep chains stitched together, sequential walker) against the plain definition."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_diversity_helpers import naive_mtld, uniform_tokens, zipf_tokens

from annotator import diversity as D
from annotator.diversity import mtld_variants as M
from tests.property_helpers import examples

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from lexicalrichness import LexicalRichness


def naive_direction(seq, threshold, strict, min_len, last_token_closes):
    """(full factors, partial tokens, partial types) of one reading, straight from the definition."""
    full, start, seen = 0, 0, set()
    for x, tok in enumerate(seq):
        seen.add(tok)
        length = x - start + 1
        ttr = len(seen) / length
        closes = (ttr < threshold if strict else ttr <= threshold) and length >= min_len
        if closes and (last_token_closes or x < len(seq) - 1):
            full += 1
            start, seen = x + 1, set()
    return full, len(seq) - start, len(seen)


def parts(d):
    return d.full, d.partial_tokens, d.partial_types


def expected_parts(toks, opts):
    args = (opts.threshold, opts.strict, opts.min_factor_length, opts.last_token_closes)
    return naive_direction(toks, *args), naive_direction(toks[::-1], *args)


options = st.builds(D.MTLDOptions, threshold=st.sampled_from([0.5, 0.72, 0.9]), strict=st.booleans(),
                    min_factor_length=st.sampled_from([1, 3, 10]), last_token_closes=st.booleans(),
                    no_factor=st.sampled_from(["length", "zero"]), aggregate=st.sampled_from(["ratio", "mean_length"]))


@st.composite
def texts(draw):
    vocab = draw(st.integers(1, 60))
    return [f"t{i}" for i in draw(st.lists(st.integers(0, vocab - 1), min_size=1, max_size=400))]


@settings(max_examples=examples(300), deadline=None)
@given(texts(), options, st.integers(1, 60), st.integers(1, 60), st.integers(2, 48))
def test_lockstep_matches_the_definition(toks, opts, chunk, overlap, cap):
    # Tiny chunks, overlaps and automata: many chains, chains that never meet, chains that die on factors
    # longer than the automaton, walks that fall back to numpy beyond the clip, ends inside a chain.
    p = D.Profile.of(toks)
    fw, bw = M._factor_passes(p, opts, chunk=chunk, overlap=overlap, cap=cap)
    assert (parts(fw), parts(bw)) == expected_parts(toks, opts)
    seq_fw, seq_bw = M._factor_passes(p, opts)  # short text: the sequential walker
    assert (parts(seq_fw), parts(seq_bw)) == (parts(fw), parts(bw))
    assert M._combine(fw, bw, opts, p.n_types) == pytest.approx(
        naive_mtld(toks, opts.threshold, opts.strict, opts.min_factor_length, opts.last_token_closes,
                   opts.no_factor, opts.aggregate), rel=1e-12)


@pytest.mark.parametrize("preset", list(D.MTLD_PRESETS))
@pytest.mark.parametrize("toks", [zipf_tokens(6000, 800, seed=11), uniform_tokens(5000, 60, seed=12),
                                  zipf_tokens(4000, 150, seed=13, exponent=0.8)], ids=["zipf", "uniform", "flat"])
def test_automatic_lockstep_geometry_matches_the_definition(monkeypatch, preset, toks):
    # The pilot walk and the geometry it picks, on texts short enough for the plain definition.
    monkeypatch.setattr(M, "_LOCKSTEP_MIN_TOKENS", 0)
    monkeypatch.setattr(M, "_PILOT_TOKENS", 500)
    opts = D.MTLD_PRESETS[preset]
    p = D.Profile.of(toks)
    assert M._lockstep_geometry(p.n, opts.threshold, opts.min_factor_length, p.ids) is not None
    fw, bw = M._factor_passes(p, opts)
    assert (parts(fw), parts(bw)) == expected_parts(toks, opts)
    assert D.mtld(p, opts) == pytest.approx(naive_mtld(toks, opts.threshold, opts.strict, opts.min_factor_length,
                                                       opts.last_token_closes, opts.no_factor, opts.aggregate),
                                            rel=1e-12)


def test_long_text_takes_the_lockstep_and_equals_lexicalrichness(monkeypatch):
    toks = zipf_tokens(80_000, 3000, seed=21)
    p = D.Profile.of(toks)
    assert p.n >= M._LOCKSTEP_MIN_TOKENS
    assert M._lockstep_geometry(p.n, 0.72, 1, p.ids) is not None
    assert M._lockstep_geometry(p.n, 0.72, 10, p.ids) is not None
    # exactly the same float: same factor counts, same formula
    assert D.mtld(p) == LexicalRichness(toks, preprocessor=None, tokenizer=None).mtld(threshold=0.72)
    fast = {name: M._factor_passes(p, o) for name, o in D.MTLD_PRESETS.items()}
    monkeypatch.setattr(M, "_LOCKSTEP_MIN_TOKENS", len(toks) + 1)
    assert {name: M._factor_passes(p, o) for name, o in D.MTLD_PRESETS.items()} == fast


def test_long_factors_leave_the_lockstep_and_stay_exact():
    # Factors of several hundred tokens: too long for the automaton, so the text is walked sequentially.
    toks = uniform_tokens(60_000, 1000, seed=22)
    p = D.Profile.of(toks)
    assert M._lockstep_geometry(p.n, 0.72, 1, p.ids) is None
    fw, bw = M._factor_passes(p, D.MTLD_LEXICALRICHNESS)
    assert (parts(fw), parts(bw)) == expected_parts(toks, D.MTLD_LEXICALRICHNESS)
    # forced through a small automaton anyway, every chain dies and the walker does the work
    forced = M._factor_passes(p, D.MTLD_LEXICALRICHNESS, chunk=500, overlap=200, cap=40)
    assert forced == (fw, bw)


@pytest.mark.parametrize("toks", [["a"], ["a", "a"], ["a", "b"], list("abcabcabc"), uniform_tokens(700, 5, seed=3)])
def test_previous_occurrences_with_and_without_the_pandas_kernel(monkeypatch, toks):
    p = D.Profile.of(toks)
    want = np.array([max((j for j in range(i) if toks[j] == toks[i]), default=-1) for i in range(len(toks))])
    assert np.array_equal(M._previous_occurrences(D.Profile.of(toks)), want)
    values = {name: D.mtld(toks, o) for name, o in D.MTLD_PRESETS.items()}

    import pandas._libs.groupby as pandas_groupby

    def broken(*args):
        raise TypeError("changed signature")

    monkeypatch.setattr(pandas_groupby, "group_shift_indexer", broken)
    assert np.array_equal(M._previous_occurrences(D.Profile.of(toks)), want)
    assert {name: D.mtld(toks, o) for name, o in D.MTLD_PRESETS.items()} == values
    assert np.array_equal(p.prev, want)
