"""The correction page stays on a caption once it is saved (AppTest): its references and the score change show
until the analyst moves on, and a second press of save stores no second, identical revision."""

from __future__ import annotations

import pytest

from annotator.correction import caption_corrections
from annotator.correction.blind import set_project_blind
from tests.apptest_helpers import page_test, texts
from tests.store.test_correction_store import CAPTIONS, REFS, build_demo

# Alice's colour-of-clothing judgements: lines 0 and 3, both open.
LAYER = "annotator:alice"
POS = f"correct_pos::demo::sys::clothing_color::{LAYER}"
FIXED = "A man in an orange shirt is climbing a rock."


@pytest.fixture
def no_java(monkeypatch, tmp_path):
    """No `java` on PATH: the page shows the other metrics at once."""
    monkeypatch.setenv("PATH", str(tmp_path))


def _page(store):
    set_project_blind(store, "demo", True)  # the references and the score change show only after a save
    at = page_test("correct", store.url, user="lead", role="lead", project="demo").run()
    at.selectbox(key="correct_type").set_value("clothing_color").run()
    at.selectbox(key="correct_layer").set_value(LAYER).run()
    assert not at.exception, at.exception
    assert at.selectbox(key=POS).value == 0 and CAPTIONS[0] in _caption_texts(at)
    return at


def _caption_texts(at):
    return [t.value for t in at.text]


def _edit_key(at):
    return next(t.key for t in at.text_area if t.key.startswith("correct_text::"))


def _revealed(at, line: int) -> bool:
    shown = texts(at)
    return all(r in shown for r in REFS[line]) and any(m.label == "Captions changed" for m in at.metric)


def test_a_save_stays_on_the_caption_with_its_references_and_score_change(store, no_java):
    ids = build_demo(store)
    at = _page(store)
    assert not _revealed(at, 0)
    at.text_area(key=_edit_key(at)).set_value(FIXED).run()
    at.button(key="correct_save").click().run()
    assert not at.exception, at.exception
    assert [h.corrected_text for h in caption_corrections(store, ids[0], "clothing_color")] == [FIXED]
    # Still line 0, its edit as saved, with what the save revealed.
    assert at.selectbox(key=POS).value == 0
    assert CAPTIONS[0] in _caption_texts(at) and CAPTIONS[3] not in _caption_texts(at)
    assert at.text_area(key=_edit_key(at)).value == FIXED
    assert "correction saved (revision 1)" in texts(at)
    assert _revealed(at, 0)
    assert next(m for m in at.metric if m.label == "Captions changed").value == "1"
    # Another run of the page (a widget touched, a rerun) keeps it there, and what the save said.
    at.run()
    assert at.selectbox(key=POS).value == 0 and _revealed(at, 0)
    assert "correction saved (revision 1)" in texts(at)
    # Only Next moves on: to line 3, open, its references hidden again.
    at.button(key="correct_next").click().run()
    assert at.selectbox(key=POS).value == 1 and CAPTIONS[3] in _caption_texts(at)
    assert not _revealed(at, 3) and "correction saved" not in texts(at)
    # Back on line 0: its decision, references and score change.
    at.button(key="correct_prev").click().run()
    assert "This caption is corrected (revision 1)." in texts(at) and _revealed(at, 0)


def test_leave_untouched_stays_on_the_caption(store, no_java):
    ids = build_demo(store)
    at = _page(store)
    at.button(key="correct_untouched").click().run()
    assert not at.exception, at.exception
    (h,) = caption_corrections(store, ids[0], "clothing_color")
    assert h.untouched
    assert at.selectbox(key=POS).value == 0 and CAPTIONS[0] in _caption_texts(at)
    assert "left untouched (revision 1)" in texts(at)
    assert _revealed(at, 0)
    at.button(key="correct_prev").click().run()  # wraps to the last caption
    assert at.selectbox(key=POS).value == 1 and CAPTIONS[3] in _caption_texts(at)


def test_saving_again_unchanged_stores_no_second_revision(store, no_java):
    ids = build_demo(store)
    at = _page(store)
    at.text_area(key=_edit_key(at)).set_value(FIXED).run()
    at.button(key="correct_save").click().run()
    at.button(key="correct_save").click().run()
    assert not at.exception, at.exception
    assert [h.revision for h in caption_corrections(store, ids[0], "clothing_color")] == [1]
    assert "correction saved (revision 1); nothing changed since" in texts(at)
    # A changed edit is a new revision, typed with the references on screen.
    at.text_area(key=_edit_key(at)).set_value("A man in a red shirt is climbing a rock.").run()
    at.button(key="correct_save").click().run()
    assert [(h.revision, bool(h.blind)) for h in caption_corrections(store, ids[0], "clothing_color")] == [
        (1, True), (2, False)]
    assert at.selectbox(key=POS).value == 0 and "correction saved (revision 2)" in texts(at)
