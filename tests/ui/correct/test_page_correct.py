"""The correction page (Streamlit AppTest): queue, guards, override, untouched, live Δ."""

from __future__ import annotations

import pytest

from annotator.correction import caption_corrections
from annotator.correction.blind import set_project_blind
from tests.store.test_correction_store import CAPTIONS, build_demo

from tests.apptest_helpers import page_test, texts


@pytest.fixture
def no_java(monkeypatch, tmp_path):
    """No `java` on PATH, as on a machine without Java: keeps page tests fast and exercises the page's note."""
    monkeypatch.setenv("PATH", str(tmp_path))


def _page(store, *, user="lead", role="lead", blind=False):
    # These tests watch the references and the live score change while editing: blind correction off
    # (tests/core/test_correction_blind.py covers the blind mode, the default).
    set_project_blind(store, "demo", blind)
    at = page_test("correct", store.url, user=user, role=role, project="demo")
    return at.run()


def _metric(at, label):
    return next(m for m in at.metric if m.label == label)


def test_page_shows_queue_caption_guideline_and_live_scores(store, no_java):
    build_demo(store)
    at = _page(store)
    assert not at.exception, at.exception
    assert at.selectbox(key="correct_layer").value == "adjudicated"
    at.selectbox(key="correct_type").set_value("clothing_color").run()
    shown = texts(at)
    assert CAPTIONS[0] in [t.value for t in at.text]  # the caption as plain text
    assert "A garment is given the wrong colour" in shown  # the type's guideline
    assert "Also annotated: Age" in shown
    assert "Only colour words may change" in shown
    assert "METEOR needs Java" in shown
    assert {m.label for m in at.metric} >= {"BLEU-4", "ROUGE-L", "CIDEr-D", "Captions changed"}
    assert _metric(at, "Captions changed").value == "0"
    # The edit field starts with the caption.
    assert at.text_area(key=next(k for k in _keys(at) if k.startswith("correct_text::"))).value == CAPTIONS[0]


def _keys(at):
    return [ta.key for ta in at.text_area]


def test_save_correction_updates_store_and_live_delta(store, no_java):
    ids = build_demo(store)
    at = _page(store)
    at.selectbox(key="correct_type").set_value("clothing_color").run()
    before = _metric(at, "CIDEr-D").value
    key = _keys(at)[0]
    at.text_area(key=key).set_value("A man in an orange shirt is climbing a rock.").run()
    html = "".join(h.proto.body for h in at.html)  # the diff among the page's markup (the figure's too)
    assert "<del>a blue</del>" in html and "<ins>an orange</ins>" in html
    at.button(key="correct_save").click().run()
    assert not at.exception, at.exception
    (h,) = caption_corrections(store, ids[0], "clothing_color")
    assert h.corrected_text == "A man in an orange shirt is climbing a rock." and h.user == "lead" and h.override_reason is None
    assert "correction saved (revision 1)" in texts(at)
    assert _metric(at, "Captions changed").value == "1"
    assert _metric(at, "CIDEr-D").value != before
    assert _metric(at, "CIDEr-D").delta.startswith("+")
    pos = at.selectbox(key="correct_pos::demo::sys::clothing_color::adjudicated")
    assert pos.options == ["1/1 · line 0 · img0.jpg · corrected"]


def test_guard_blocks_man_to_girl_until_a_reason_is_given(store, no_java):
    ids = build_demo(store)
    at = _page(store)
    # Adjudicated layer: line 1 carries gender. Turn it into an age+gender change.
    at.selectbox(key="correct_type").set_value("gender").run()
    key = _keys(at)[0]
    assert at.text_area(key=key).value == CAPTIONS[1]
    at.text_area(key=key).set_value("A man playing soccer on the grass.").run()
    assert any("age as well as gender" in w.value for w in at.warning)
    at.button(key="correct_save").click().run()
    assert any("Not saved" in e.value for e in at.error)
    assert caption_corrections(store, ids[1]) == []
    reason_key = next(t.key for t in at.text_input if t.key.startswith("correct_reason::"))
    at.text_input(key=reason_key).set_value("the player is an adult").run()
    at.button(key="correct_save").click().run()
    (h,) = caption_corrections(store, ids[1])
    assert h.override_reason == "the player is an adult" and h.corrected_text == "A man playing soccer on the grass."
    assert "rule overridden" in texts(at)


def test_leave_untouched_records_decision(store, no_java):
    ids = build_demo(store)
    at = _page(store)
    at.selectbox(key="correct_type").set_value("activity").run()
    at.button(key="correct_untouched").click().run()
    (h,) = caption_corrections(store, ids[3], "activity")
    assert h.untouched and h.user == "lead"
    assert "left untouched" in texts(at)
    assert _metric(at, "Captions changed").value == "0"


def test_annotator_layer_and_navigation(store, no_java):
    build_demo(store)
    at = _page(store)
    at.selectbox(key="correct_type").set_value("clothing_color").run()
    at.selectbox(key="correct_layer").set_value("annotator:alice").run()
    pos_key = "correct_pos::demo::sys::clothing_color::annotator:alice"
    assert at.selectbox(key=pos_key).value == 0
    at.button(key="correct_next").click().run()
    assert at.selectbox(key=pos_key).value == 1
    assert CAPTIONS[3] in [t.value for t in at.text]
    at.button(key="correct_next").click().run()
    assert at.selectbox(key=pos_key).value == 0  # wraps around


def test_empty_queue_and_not_correctable_type(store, no_java):
    build_demo(store)
    at = _page(store)
    assert "unrelated" not in at.selectbox(key="correct_type").options
    at.selectbox(key="correct_type").set_value("position").run()
    assert "No caption of 'sys' carries 'Position'" in texts(at)


def test_markup_in_captions_is_shown_as_text(store, no_java):
    from annotator.model import Caption, Item, Project, Reference
    from annotator.store import projects as P
    from annotator.store.judgements import save_judgement
    from annotator.store.users import create_user
    from annotator.model import Role
    with store.transaction() as conn:
        P.write_project(conn, Project("demo", items=[Item("x.jpg", references=[Reference("a dog")],
                                                           captions=[Caption("sys", "A **bold** <b>dog</b> runs")])]))
        uid = create_user(conn, "alice", Role.ANNOTATOR)
        cid = P.captions_of_system(conn, P.project_id(conn, "demo"), "sys")[0].id
    save_judgement(store, cid, uid, label="inaccurate", error_types=["activity"])
    at = _page(store)
    at.selectbox(key="correct_type").set_value("activity").run()
    assert "A **bold** <b>dog</b> runs" in [t.value for t in at.text]
    key = _keys(at)[0]
    at.text_area(key=key).set_value("A **bold** <b>dog</b> walks").run()
    body = "".join(h.proto.body for h in at.html)
    assert "&lt;b&gt;" in body and "<b>" not in body


def test_annotators_may_not_open_the_page(store):
    build_demo(store)
    at = _page(store, user="alice", role="annotator")
    assert any("Not allowed" in e.value for e in at.error)
    assert not at.text_area


def test_live_scores_do_not_wait_for_meteor(sqlite_store, monkeypatch):
    """While METEOR's Java process starts, the other metrics show at once, with a note."""
    from annotator.metrics import meteor
    monkeypatch.setattr(meteor, "warm_up", lambda wait=True: "warming")
    build_demo(sqlite_store)
    at = _page(sqlite_store)
    labels = {m.label for m in at.metric}
    assert {"BLEU-4", "ROUGE-L", "CIDEr-D"} <= labels and "METEOR" not in labels
    assert "METEOR is starting" in texts(at)
