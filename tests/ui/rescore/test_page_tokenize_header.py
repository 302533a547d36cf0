"""The Rescoring and Correction pages say how the metrics read the text (the project's metric tokenisation)."""

from __future__ import annotations

import shutil

import pytest

from annotator.correction.blind import set_project_blind
from annotator.metric_settings import set_project_tokenize, tokenize_header
from tests.store.test_correction_store import build_demo

from tests.apptest_helpers import page_test, texts


def _rescore(store):
    # With Java, the first run starts METEOR's processes and the PTB tokenizer: give it time.
    at = page_test("rescore", store.url, user="lead", role="lead", project="demo", timeout=180)
    at.session_state["rescore_resamples"] = 50
    at.session_state["rescore_shown"] = ["Bleu_4"]
    return at.run()


def test_raw_text_is_named_above_the_tables(sqlite_store, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no Java: METEOR is left out, the rest is quick
    build_demo(sqlite_store)
    at = _rescore(sqlite_store)
    assert not at.exception, at.exception
    assert f"Metric input: {tokenize_header('none')}" in texts(at)
    set_project_blind(sqlite_store, "demo", False)  # the live score change shows while editing
    at = page_test("correct", sqlite_store.url, user="lead", role="lead", project="demo").run()
    at.selectbox(key="correct_type").set_value("clothing_color").run()
    assert not at.exception, at.exception
    assert f"Metric input: {tokenize_header('none')}" in texts(at)


@pytest.mark.skipif(shutil.which("java") is None, reason="PTB tokenisation needs Java")
@pytest.mark.java
def test_a_project_set_to_ptb_is_scored_and_labelled_so(sqlite_store):
    build_demo(sqlite_store)
    raw = _rescore(sqlite_store).dataframe[0].value["BLEU-4"].iloc[0]
    set_project_tokenize(sqlite_store, "demo", "ptb")
    at = _rescore(sqlite_store)
    assert not at.exception, at.exception
    assert f"Metric input: {tokenize_header('ptb')}" in texts(at)
    assert at.dataframe[0].value["BLEU-4"].iloc[0] != raw  # lower case and no punctuation change the score


def test_a_lead_changes_the_setting_on_the_rescoring_page(sqlite_store, monkeypatch, tmp_path):
    from annotator.metric_settings import project_tokenize
    monkeypatch.setenv("PATH", str(tmp_path))  # no Java: PTB scoring then says it needs Java
    build_demo(sqlite_store)
    at = _rescore(sqlite_store)
    assert at.radio(key="rescore_tokenize").value == "none"
    at.radio(key="rescore_tokenize").set_value("ptb").run()
    at.button(key="rescore_tokenize_save").click().run()
    assert not at.exception, at.exception
    assert project_tokenize(sqlite_store, "demo") == "ptb"
    assert "Metric input: ptb (project setting)" in [e.label for e in at.expander]
    # The table is now PTB-tokenised: it says so, or (tokenisations not cached yet, no Java here) says Java is needed.
    assert f"Metric input: {tokenize_header('ptb')}" in texts(at) or any("need Java" in e.value for e in at.error)
    # An analyst sees the mode but has no control over it.
    at = page_test("rescore", sqlite_store.url, user="ann", role="analyst", project="demo").run()
    assert not at.exception, at.exception
    assert not [r for r in at.radio if r.key == "rescore_tokenize"]
