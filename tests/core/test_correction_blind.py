"""Blind correction (the default): the references and the live score change stay hidden until the caption's
correction is saved, as the study corrected without looking at the references; a lead switches it per project;
each correction records its mode, and the exports show it."""

from __future__ import annotations

import pytest

from annotator.cli import main
from annotator.correction import correct_caption, corrections_table
from annotator.correction.blind import project_blind, project_views_closed, set_project_blind, set_project_views_closed
from annotator.errors import AnnotatorError
from annotator.store.corrections import current_corrections_frame
from tests.store.test_correction_store import REFS, build_demo

from tests.apptest_helpers import page_test, texts


@pytest.fixture
def no_java(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))


def _page(store, role="lead"):
    return page_test("correct", store.url, user="lead" if role == "lead" else "alice", role=role, project="demo").run()


@pytest.mark.parametrize("get, put, default, other_role", [
    (project_blind, set_project_blind, True, "annotator"),  # blind correction: on by default
    (project_views_closed, set_project_views_closed, False, "analyst"),  # the other pages' views: open by default
])
def test_the_blind_settings_and_only_leads_switch_them(store, get, put, default, other_role):
    build_demo(store)
    assert get(store, "demo") is default
    with pytest.raises(AnnotatorError):
        put(store, "demo", not default, actor_role=other_role)
    assert get(store, "demo") is default
    put(store, "demo", not default, actor_role="lead")
    assert get(store, "demo") is (not default)


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


@pytest.mark.parametrize("toggle, value, get", [("correct_blind::demo", False, project_blind),
                                                 ("correct_blind_views::demo", True, project_views_closed)])
def test_the_lead_toggles_on_the_correction_page(store, no_java, toggle, value, get):
    # Blind correction off (references and scores then show), or the other pages' views closed to correctors.
    build_demo(store)
    at = _page(store)
    at.toggle(key=toggle).set_value(value).run()
    assert not at.exception, at.exception
    assert get(store, "demo") is value
    if toggle == "correct_blind::demo":
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


def test_a_revision_typed_after_the_first_save_showed_the_references_is_not_blind(store, no_java):
    # Blind project: revision 1 is typed with the references hidden; the save shows them, so revision 2 of the
    # same caption is typed with them on screen and must be recorded as such.
    ids = build_demo(store)
    at = _page(store)
    key = next(t.key for t in at.text_area if t.key.startswith("correct_text::"))
    at.text_area(key=key).set_value("A boy in a blue shirt is climbing a rock.").run()
    at.button(key="correct_save").click().run()
    assert not at.exception, at.exception
    at = _page(store)  # back to the same caption, its references now shown
    assert all(r in texts(at) for r in REFS[0])
    at.text_area(key=key).set_value("A young boy in a blue shirt is climbing a rock.").run()
    at.button(key="correct_save").click().run()
    assert not at.exception, at.exception
    from annotator.correction import caption_corrections
    assert [(h.revision, bool(h.blind)) for h in caption_corrections(store, ids[0], "age")] == [(1, True), (2, False)]


def test_typed_blind_follows_what_was_on_screen():
    from annotator.correction.blind import references_shown, typed_blind
    assert typed_blind(True, references_shown(True, False)) is True  # first revision of a blind project
    assert typed_blind(True, references_shown(True, True)) is False  # later revisions: references were shown
    assert typed_blind(False, references_shown(False, False)) is False


def _html(at) -> str:
    return "\n".join(h.value for h in at.html)


def test_a_lead_closes_annotate_references_and_rescoring_scores_to_correctors(store, no_java, capsys):
    from annotator.assignment import assign
    from annotator.accounts.auth import add_user
    build_demo(store)
    add_user(store, "ana", "analyst")
    assign(store, "demo", ["ana"], double_fraction=0)

    def annotate(user, role):
        at = page_test("annotate", store.url, user=user, role=role, project="demo", create_user=False).run()
        assert not at.exception, at.exception
        return at

    def rescore(user, role):
        at = page_test("rescore", store.url, user=user, role=role, project="demo", create_user=False).run()
        assert not at.exception, at.exception
        return at

    # Open by default: the analyst sees an item's references and the rescoring tabs.
    assert any(r in _html(annotate("ana", "analyst")) for refs in REFS for r in refs)
    assert rescore("ana", "analyst").tabs
    assert main(["--db", store.url, "corrections", "blind", "--project", "demo", "--views", "closed"]) == 0
    assert "closed to correctors while it is on" in capsys.readouterr().out
    at = annotate("ana", "analyst")
    assert not any(r in _html(at) for refs in REFS for r in refs)
    assert "References are closed to correctors" in texts(at)
    at = rescore("ana", "analyst")
    assert not at.tabs and not at.dataframe and not at.metric and "Scores are closed to correctors" in texts(at)
    # Leads keep the views; with blind correction off nothing is closed.
    assert rescore("lead", "lead").tabs
    set_project_blind(store, "demo", False, actor_role="lead")
    assert rescore("ana", "analyst").tabs
    assert any(r in _html(annotate("ana", "analyst")) for refs in REFS for r in refs)
