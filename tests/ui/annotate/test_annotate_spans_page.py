"""Error spans on the annotate page through AppTest: the hidden field carries them with Save, a refused span is
named and nothing is stored, a revisited caption brings its spans back, and the guide lists the span keys."""

from __future__ import annotations

import json

import pytest

from annotator.errors import InputError
from annotator.spans import Span
from annotator.taxonomy import load_taxonomy
from annotator.ui.widgets import spans as annotate_spans
from tests.apptest_helpers import visible
from tests.ui.annotate.test_app_annotate import _open, _rows, demo  # noqa: F401  (the five-caption project of ann1)

# "sys-a says: a cat sits on a sofa number 0": cat = 3, sofa = 7
CAT = {"start": 3, "end": 4, "type": "subject_wrong", "fix": "dog"}


def _send(store, tick: str, spans: list, button: str):
    """The first caption's panel with ``tick`` ticked and ``spans`` in the field, sent by ``button``."""
    at = _open(store)
    at.checkbox(key=f"ann_type_{tick}").check()
    at.text_input(key="ann_spans").input(json.dumps(spans))
    at.button(key=button).click().run()
    assert not at.exception
    return at


def test_save_sends_the_spans_and_a_revisit_brings_them_back(demo):
    store, caps = demo
    at = _send(store, "subject_wrong", [CAT], "ann_save")
    (j,) = _rows(store, caps[0])
    assert j.error_types == ("subject_wrong",) and j.spans == (Span(3, 4, "subject_wrong", "dog"),)
    # The next caption starts with no spans; going back shows the saved ones in the field.
    assert json.loads(at.text_input(key="ann_spans").value) == []
    at.button(key="ann_prev").click().run()
    assert json.loads(at.text_input(key="ann_spans").value) == [CAT]


def test_a_span_of_a_type_not_ticked_is_refused_by_name_and_nothing_is_stored(demo):
    store, caps = demo
    at = _send(store, "scene", [{"start": 7, "end": 8, "type": "scene"}, CAT], "ann_save")
    errors = " ".join(visible(e.value) for e in at.error)
    # Said as the page shows it: words counted from 1, and what to do on the page.
    assert ("Word 4 (\u201ccat\u201d) is marked Wrong subject, which is not ticked: tick Wrong subject (key "
            f"{load_taxonomy().get('subject_wrong').key}), or remove the mark (select its words, then Backspace).") \
        in errors, errors
    assert "tokens" not in errors
    assert _rows(store, caps[0]) == []


def test_marked_words_on_an_accurate_choice_are_refused_with_what_to_do(demo):
    store, caps = demo
    at = _open(store)
    at.radio(key="ann_label").set_value("accurate")
    at.text_input(key="ann_spans").input(json.dumps([{"start": 7, "end": 9, "type": "scene"}]))
    at.button(key="ann_save").click().run()
    errors = " ".join(visible(e.value) for e in at.error)
    assert ("The caption is not marked Inaccurate but words 8–9 (\u201csofa number\u201d) carries an error mark: "
            "choose Inaccurate (key n), or remove the mark (select its words, then Backspace).") in errors, errors
    assert _rows(store, caps[0]) == []


def test_the_label_only_step_of_a_second_pass_stores_no_spans_and_refuses_none(sqlite_store):
    from annotator.model import Label
    from tests.ui.annotate.test_app_annotate import staged
    caps = staged(sqlite_store)
    first = _open(sqlite_store, "ann1")
    first.radio(key="ann_label").set_value("accurate")
    first.button(key="ann_save").click().run()
    second = _open(sqlite_store, "ann2")
    assert len(second.checkbox) == 0  # types not asked
    # Whatever the hidden field holds (an old page's spans), the label-only save carries none.
    second.text_input(key="ann_spans").input(json.dumps([{"start": 3, "end": 4, "type": "subject_wrong"}]))
    second.radio(key="ann_label").set_value("inaccurate")
    second.button(key="ann_save").click().run()
    assert not second.error, [visible(e.value) for e in second.error]
    (mine,) = [j for j in _rows(sqlite_store, caps[0]) if j.user == "ann2"]
    assert mine.label is Label.INACCURATE and mine.spans == ()


def test_a_fix_with_a_bidirectional_control_is_refused_by_name_and_nothing_is_stored(demo):
    store, caps = demo
    at = _send(store, "subject_wrong", [{**CAT, "fix": "god\u202e"}], "ann_save")
    errors = " ".join(visible(e.value) for e in at.error)
    assert ("The suggested fix of word 4 (\u201ccat\u201d) cannot contain the control character U+202E (it changes the "
            "direction of the text): change it in the list of spans under the caption, or remove the span.") in errors, errors
    assert _rows(store, caps[0]) == []


def test_the_guide_lists_the_span_keys_and_no_type_key_clashes_with_them(demo, tmp_path):
    store, _ = demo
    at = _open(store)
    guide = next(h.value for h in at.html if 'id="ann-help"' in h.value)
    assert "word cursor" in guide and "edit its suggested fix" in guide
    annotate_spans.check_keys()
    from annotator.taxonomy import TAXONOMY_FILE
    clash = tmp_path / "taxonomy.toml"
    clash.write_text(TAXONOMY_FILE.read_text(encoding="utf-8").replace('key = "u"', 'key = "."'), encoding="utf-8")
    with pytest.raises(InputError, match="taken by the span key 'right'"):
        annotate_spans.check_keys(load_taxonomy(clash))


def test_save_draft_keeps_the_spans_and_coming_back_brings_them(demo):
    store, caps = demo
    at = _send(store, "subject_wrong", [CAT], "ann_draft")
    assert not at.error
    assert _rows(store, caps[0]) == []
    # Moving away and back, and a new session (a reload), bring the marked words and their fix back.
    at.button(key="ann_next").click().run()
    assert json.loads(at.text_input(key="ann_spans").value) == []
    at.button(key="ann_prev").click().run()
    assert json.loads(at.text_input(key="ann_spans").value) == [CAT]
    fresh = _open(store)
    assert json.loads(fresh.text_input(key="ann_spans").value) == [CAT]
    assert fresh.checkbox(key="ann_type_subject_wrong").value
    fresh.button(key="ann_save").click().run()
    (j,) = _rows(store, caps[0])
    assert j.spans == (Span(3, 4, "subject_wrong", "dog"),)


def test_a_draft_with_a_span_of_a_type_not_ticked_is_not_kept(demo):
    store, _ = demo
    at = _send(store, "scene", [CAT], "ann_draft")
    errors = " ".join(visible(e.value) for e in at.error)
    assert "The draft was not kept: word 4 (\u201ccat\u201d) is marked Wrong subject, which is not ticked" in errors
    assert not any("Draft from" in h.value for h in _open(store).html)
