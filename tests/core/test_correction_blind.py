"""Blind correction (the default): the references and the live score change stay hidden until the caption's
correction is saved, as the study corrected without looking at the references; a lead switches it per project;
each correction records its mode, and the exports show it."""

from __future__ import annotations

import pytest

from annotator.cli import main
from annotator.correction import correct_caption, corrections_table
from annotator.correction.blind import project_blind, set_project_blind
from annotator.errors import AnnotatorError
from annotator.store.corrections import current_corrections_frame
from tests.store.test_correction_store import REFS, build_demo

from tests.apptest_helpers import page_test, texts


@pytest.fixture
def no_java(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))


def _page(store, role="lead"):
    return page_test("correct", store.url, user="lead" if role == "lead" else "alice", role=role, project="demo").run()


def test_blind_is_the_default_and_only_leads_switch_it(store):
    build_demo(store)
    assert project_blind(store, "demo") is True
    with pytest.raises(AnnotatorError):
        set_project_blind(store, "demo", False, actor_role="annotator")
    assert project_blind(store, "demo") is True
    set_project_blind(store, "demo", False, actor_role="lead")
    assert project_blind(store, "demo") is False


def test_references_and_scores_hidden_until_saved(store, no_java):
    build_demo(store)
    at = _page(store)
    assert not at.exception, at.exception
    shown = texts(at)
    # Default type Age, adjudicated layer: line 0, whose references must not show before a save.
    assert "hidden until this caption's correction is saved" in shown
    assert not any(r in shown for r in REFS[0]) and not at.metric
    at.text_area(key=next(t.key for t in at.text_area if t.key.startswith("correct_text::"))).set_value(
        "A boy in a blue shirt is climbing a rock.").run()
    at.button(key="correct_save").click().run()
    assert not at.exception, at.exception
    shown = texts(at)
    assert all(r in shown for r in REFS[0])
    assert {m.label for m in at.metric} >= {"BLEU-4", "Captions changed"}
    (row,) = current_corrections_frame(store, "demo").itertuples()
    assert row.blind is True or row.blind == 1


def test_the_lead_switch_turns_blind_off_for_the_project(store, no_java):
    build_demo(store)
    at = _page(store)
    at.toggle(key="correct_blind::demo").set_value(False).run()
    assert not at.exception, at.exception
    assert project_blind(store, "demo") is False
    assert all(r in texts(at) for r in REFS[0]) and at.metric


def test_the_mode_is_recorded_and_exported(store, tmp_path, capsys):
    ids = build_demo(store)
    correct_caption(store, ids[0], "age", "lead", "A boy in a blue shirt is climbing a rock.", blind=True)
    correct_caption(store, ids[1], "gender", "lead", "A boy playing soccer on the grass.", blind=False)
    correct_caption(store, ids[3], "activity", "lead", "A woman in a red dress is talking.")  # command line: not known
    df = corrections_table(store, "demo")
    assert dict(zip(df["error_type"], df["mode"])) == {"age": "blind", "gender": "references shown",
                                                         "activity": "not recorded"}
    out = tmp_path / "c.csv"
    assert main(["--db", store.url, "corrections", "export", "--project", "demo", "--out", str(out)]) == 0
    assert "references shown" in out.read_text(encoding="utf-8")
    assert main(["--db", store.url, "corrections", "blind", "--project", "demo", "off"]) == 0
    assert "blind correction is off for demo" in capsys.readouterr().out
    assert project_blind(store, "demo") is False
