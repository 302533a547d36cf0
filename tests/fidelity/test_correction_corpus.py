"""The guards against a corpus of accepted and refused corrections per type (tests/fixtures/correction_corpus.toml),
written from the error-analysis study's correction rules."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from annotator.correction import check_correction, correctable_types, correction_words

CASES = tomllib.loads((Path(__file__).parent.parent / "fixtures" / "correction_corpus.toml").read_text(encoding="utf-8"))["case"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['type']}-{'ok' if c['accept'] else 'no'}-{k}" for k, c in enumerate(CASES)])
def test_corpus(case):
    r = check_correction(case["type"], case["original"], case["corrected"])
    assert r.ok is case["accept"], (case["rule"], r.violations)


def test_corpus_covers_every_correctable_type_15_times_both_ways_each_citing_its_rule():
    for t in correctable_types():
        cases = [c for c in CASES if c["type"] == t.id]
        assert sum(c["accept"] for c in cases) >= 15, t.id
        assert sum(not c["accept"] for c in cases) >= 15, t.id
    assert all(c["rule"].strip() for c in CASES)


def test_the_word_cap_is_off_by_default_and_an_option():
    assert correction_words().max_changed_words is None
    long_fix = ("A woman is throwing a frisbee to a dog.", "A woman is catching a frisbee from a dog.")
    assert check_correction("activity", *long_fix).ok
    assert not check_correction("activity", *long_fix, max_changed_words=1).ok
