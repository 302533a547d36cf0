"""The Correction page and a judge: its fix shows while the caption's references do, never in blind correction."""

from __future__ import annotations

import pytest

from annotator.correction.blind import set_project_blind
from annotator.judges.suggestions import set_suggestion_judge
from annotator.sample import load_sample
from tests.apptest_helpers import page_test, texts

FIX = "Judge sample-vlm suggests: “man” → “woman”"


@pytest.fixture
def sample(sqlite_store, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no Java: no METEOR on this page
    load_sample(sqlite_store)
    set_suggestion_judge(sqlite_store, "sample", "sample-vlm")
    return sqlite_store


def gender_page(store, blind: bool):
    set_project_blind(store, "sample", blind)
    at = page_test("correct", store.url, user="lea", role="lead", project="sample").run(timeout=120)
    at.selectbox(key="correct_layer").set_value("annotator:sample-ann")
    at.selectbox(key="correct_type").set_value("gender").run(timeout=120)
    assert not at.exception
    assert "A man in an orange jacket smiling in front of an american flag" in [t.value for t in at.text]
    return at


def test_blind_correction_never_shows_the_judge(sample):
    assert FIX not in texts(gender_page(sample, blind=True))


def test_with_references_shown_the_judges_fix_is_offered(sample):
    assert FIX in texts(gender_page(sample, blind=False))
