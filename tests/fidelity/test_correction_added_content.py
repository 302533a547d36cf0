"""The guards refuse content added beside a legitimate replacement and accept the smallest fix of a non-existent
object (tests/fixtures/correction_corpus_added_content.toml: fresh cases for every type the rule concerns)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from annotator.correction import check_correction

CASES = tomllib.loads((Path(__file__).parent.parent / "fixtures" / "correction_corpus_added_content.toml")
                      .read_text(encoding="utf-8"))["case"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['type']}-{'ok' if c['accept'] else 'no'}-{k}"
                                             for k, c in enumerate(CASES)])
def test_case(case):
    r = check_correction(case["type"], case["original"], case["corrected"])
    assert r.ok is case["accept"], (case["rule"], r.violations)


def test_every_type_the_rule_concerns_has_cases_both_ways():
    for t in ("object_similar", "object_wrong", "object_nonexistent", "subject_similar", "subject_wrong",
              "subject_nonexistent", "scene", "activity"):
        kinds = {c["accept"] for c in CASES if c["type"] == t}
        assert kinds == {True, False}, t


def test_a_refusal_names_what_was_added():
    r = check_correction("object_wrong", "A woman is holding a cat.", "A woman is holding a chicken at the farm with "
                         "her son.")
    assert r.violations == ("'cat' → 'chicken at the farm with her son': adds 'at the farm', 'with her son' beside "
                            "the object; the correction changes the object (and the words that agree with it), it "
                            "adds nothing more",)
