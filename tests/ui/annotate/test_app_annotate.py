"""The annotate page through AppTest: both tasks, the rules, revising, history, skip, resume, escaping."""

from __future__ import annotations

import re

import pytest

from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.model import Caption, Item, Label, Project
from annotator.store.judgements import history
from annotator.store.projects import write_project
from annotator.taxonomy import taxonomy
from tests.apptest_helpers import page_test, seed_project, texts, visible


@pytest.fixture
def demo(sqlite_store, tmp_path):
    caps = seed_project(sqlite_store, "demo", n_items=5, image_root=str(tmp_path / "img"), with_images=True)
    add_user(sqlite_store, "ann1", "annotator")
    add_user(sqlite_store, "ann2", "annotator")
    assign(sqlite_store, "demo", ["ann1"], double_fraction=0)
    return sqlite_store, caps


def _open(store, user="ann1"):
    at = page_test("annotate", store.url, user=user, role="annotator", project="demo", create_user=False).run()
    assert not at.exception, at.exception
    return at


def _caption(at) -> str:
    return next(h.value for h in at.html if 'data-testid="ann-caption"' in h.value)


def _rows(store, caption_id):
    with store.read() as conn:
        return history(conn, caption_id)


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_accurate_then_inaccurate_with_types(demo, monkeypatch):
    store, caps = demo
    clock = FakeClock()
    monkeypatch.setattr("annotator.ui.annotate.state.time.monotonic", clock)
    at = _open(store)
    assert "number 0" in _caption(at)
    assert len(at.checkbox) == len(taxonomy().types) and at.radio(key="ann_label").value is None
    assert at.get("imgs") or at.get("image"), "the item image is shown"
    clock.now += 7.5
    at.radio(key="ann_label").set_value("accurate")
    at.button(key="ann_save").click().run()
    assert not at.exception
    (j,) = _rows(store, caps[0])
    assert j.label is Label.ACCURATE and j.error_types == () and j.seconds == pytest.approx(7.5)
    # The next caption is shown, with fresh widgets.
    assert "number 1" in _caption(at) and at.radio(key="ann_label").value is None
    # Task 2: ticked types with no label chosen save as inaccurate (on screen the tick chooses Inaccurate
    # at once: tests/browser/test_browser_annotate_panel.py).
    at.checkbox(key="ann_type_gender").check()
    at.checkbox(key="ann_type_scene").check()
    at.text_input(key="ann_note").input("two mistakes")
    at.button(key="ann_save").click().run()
    (j,) = _rows(store, caps[1])
    assert j.label is Label.INACCURATE and j.error_types == ("gender", "scene") and j.note == "two mistakes"
    assert "number 2" in _caption(at)
    assert at.sidebar is not None
    assert "2 of 5 judged" in " ".join(str(p.proto.text) for p in at.get("progress"))


def test_rules_are_enforced_on_the_page(demo):
    store, caps = demo
    at = _open(store)
    at.button(key="ann_save").click().run()
    assert "Choose Accurate or Inaccurate first." in [visible(e.value) for e in at.error]
    at.radio(key="ann_label").set_value("inaccurate")
    at.button(key="ann_save").click().run()
    assert "An inaccurate caption needs at least one error type." in [visible(e.value) for e in at.error]
    at.checkbox(key="ann_type_other").check()
    at.button(key="ann_save").click().run()
    assert any("'Other'" in visible(e.value) for e in at.error)
    assert _rows(store, caps[0]) == []  # nothing stored by refused saves
    assert "number 0" in _caption(at)
    # Accurate with a type still ticked is refused by the core (on screen choosing Accurate unticks the
    # types: tests/browser/test_browser_annotate_panel.py), so an accurate caption never carries types.
    at.radio(key="ann_label").set_value("accurate")
    at.button(key="ann_save").click().run()
    assert any("An accurate caption has no error types" in visible(e.value) for e in at.error)
    assert _rows(store, caps[0]) == []
    at.radio(key="ann_label").set_value("accurate")
    at.checkbox(key="ann_type_other").uncheck()
    at.button(key="ann_save").click().run()
    assert _rows(store, caps[0])[0].error_types == ()


def test_a_type_ticked_in_the_same_run_as_save_means_inaccurate(demo):
    # In the browser a tick and a click on Save can reach the server together, before the tick's callback
    # has set the label on the page: the save must still store "inaccurate" with that type.
    store, caps = demo
    at = _open(store)
    at.session_state["ann_type_gender"] = True  # ticked, no callback run yet
    assert at.session_state["ann_label"] is None
    at.button(key="ann_save").click().run()
    assert not at.error, [e.value for e in at.error]
    (j,) = _rows(store, caps[0])
    assert j.label is Label.INACCURATE and j.error_types == ("gender",)
    assert "number 1" in _caption(at)


def test_database_gone_right_after_a_save_keeps_the_stored_caption_on_screen(demo, monkeypatch):
    # The save is committed, then the database stops answering before the next caption is found:
    # the page says it was saved and why it cannot move on, and keeps the saved caption on screen.
    from annotator.errors import StoreUnavailable
    store, caps = demo
    at = _open(store)
    at.radio(key="ann_label").set_value("accurate")

    def down(self, after=-1):
        raise StoreUnavailable("the database at sqlite:///x is not available (file locked)")

    monkeypatch.setattr("annotator.annotation.Queue.next_todo", down)
    at.button(key="ann_save").click().run()
    assert not at.exception
    (message,) = [visible(e.value) for e in at.error]
    assert "Saved item img0.jpg: Accurate" in message and "cannot be loaded yet" in message
    assert "number 0" in _caption(at)
    assert [j.label for j in _rows(store, caps[0])] == [Label.ACCURATE]


def test_unrelated_suggestion_is_in_the_panel(demo):
    # The reminder's words and threshold reach the page hidden; the browser shows them as types are ticked
    # (tests/browser/test_browser_annotate_panel.py).
    store, caps = demo
    at = _open(store)
    (hint,) = [h.value for h in at.html if h.value.startswith('<div class="ann-unrelated"')]
    assert 'data-above="3"' in hint and " hidden>" in hint and "your judgement" in hint
    assert "Use Generally unrelated" in hint


def test_revise_an_earlier_item_keeps_history(demo):
    store, caps = demo
    at = _open(store)
    at.radio(key="ann_label").set_value("accurate")
    at.button(key="ann_save").click().run()
    at.radio(key="ann_label").set_value("accurate")
    at.button(key="ann_save").click().run()
    assert "number 2" in _caption(at)
    at.button(key="ann_prev").click().run()
    at.button(key="ann_prev").click().run()
    assert "number 0" in _caption(at)
    assert at.radio(key="ann_label").value == "accurate"  # own earlier judgement is loaded
    assert any("judged this caption before" in c.value for c in at.caption)
    at.radio(key="ann_label").set_value("inaccurate")  # what ticking a type does on screen
    at.checkbox(key="ann_type_age").check()
    at.button(key="ann_save").click().run()
    revisions = _rows(store, caps[0])
    assert [(j.revision, j.label, j.error_types) for j in revisions] == [
        (1, Label.ACCURATE, ()), (2, Label.INACCURATE, ("age",))]
    # Save & next after a revision returns to the first caption still to do.
    assert "number 2" in _caption(at)
    # Next → / ← Previous move without saving.
    at.button(key="ann_next").click().run()
    assert "number 3" in _caption(at)
    assert _rows(store, caps[2]) == []


def test_going_back_to_a_judged_caption_names_its_types_and_shows_them_as_chips(demo):
    """Issue 24 item 4: "You judged this caption before" says which types were given, and the ticked types
    are also shown as chips beside Task 1 (item 1)."""
    store, caps = demo
    at = _open(store)
    at.checkbox(key="ann_type_gender").check()
    at.checkbox(key="ann_type_scene").check()
    at.button(key="ann_save").click().run()
    at.button(key="ann_prev").click().run()
    assert "number 0" in _caption(at)
    said = [c.value for c in at.caption if "judged this caption before" in c.value]
    assert said and "Inaccurate: Gender, Scene / event / location, revision 1" in said[0], said
    chips = next(h.value for h in at.html if 'data-testid="ann-chips"' in h.value)
    shown = re.findall(r'<span class="ann-chip" data-chip="([a-z_]+)">', chips)
    assert shown == ["gender", "scene"], chips


def test_skip_and_resume_in_a_new_session(demo):
    store, caps = demo
    at = _open(store)
    at.button(key="ann_skip").click().run()
    assert "number 1" in _caption(at)
    (j,) = _rows(store, caps[0])
    assert j.label is None
    at.radio(key="ann_label").set_value("accurate")
    at.button(key="ann_save").click().run()
    # A reload / new login is a new session: it starts at the first caption never judged.
    again = _open(store)
    assert "number 2" in _caption(again)
    for _ in range(3):
        again.radio(key="ann_label").set_value("accurate")
        again.button(key="ann_save").click().run()
    # Only the skipped caption is left.
    assert "number 0" in _caption(again)
    again.radio(key="ann_label").set_value("accurate")
    again.button(key="ann_save").click().run()
    assert any("Every caption in your queue is judged" in s.value for s in again.success)
    again.button(key="ann_prev").click().run()
    assert "number 4" in _caption(again)


def test_caption_is_shown_verbatim_never_as_markup(sqlite_store):
    nasty = "<script>alert(1)</script> **bold** <img src=x onerror=alert(2)> [link](http://x)"
    with sqlite_store.transaction() as conn:
        write_project(conn, Project("demo", items=[Item(key="k1", captions=[Caption("s", nasty)])]))
    add_user(sqlite_store, "ann1", "annotator")
    assign(sqlite_store, "demo", ["ann1"], double_fraction=0)
    at = _open(sqlite_store)
    shown = _caption(at)
    assert "<script>" not in shown and "&lt;script&gt;alert(1)&lt;/script&gt;" in shown
    assert "&lt;img src=x onerror=alert(2)&gt;" in shown and "**bold**" in shown
    assert not any("alert(1)" in m.value for m in at.markdown)


def staged(store):
    """Two captions, both judged by ann1 and ann2, the second pass staged (label first, then the types);
    returns the caption ids."""
    caps = seed_project(store, "demo", n_items=2)
    add_user(store, "ann1", "annotator")
    add_user(store, "ann2", "annotator")
    assign(store, "demo", ["ann1", "ann2"], double_fraction=1.0, second_pass="staged")
    return caps


def test_blind_second_annotator_never_sees_the_first(sqlite_store):
    caps = staged(sqlite_store)
    first = _open(sqlite_store, "ann1")
    first.checkbox(key="ann_type_gender").check()
    first.text_input(key="ann_note").input("SECRET-NOTE-OF-ANN1")
    first.button(key="ann_save").click().run()
    assert _rows(sqlite_store, caps[0])[0].user == "ann1"
    second = _open(sqlite_store, "ann2")
    assert "number 0" in _caption(second)
    everything = texts(second) + " ".join(h.value for h in second.html)
    assert "SECRET-NOTE" not in everything
    assert second.radio(key="ann_label").value is None
    # Staged second pass: the coarse judgement only, no error-type checkboxes.
    assert len(second.checkbox) == 0
    assert any("Second annotation" in m.value for m in second.markdown)
    second.radio(key="ann_label").set_value("inaccurate")
    second.button(key="ann_save").click().run()
    assert not second.exception and not second.error
    # Both found it inaccurate: it comes back (after the unseen one) for the fine pass.
    second.radio(key="ann_label").set_value("accurate")
    second.button(key="ann_save").click().run()
    assert "number 0" in _caption(second) and len(second.checkbox) == len(taxonomy().types)
    assert any("Fine pass" in m.value for m in second.markdown)
    second.checkbox(key="ann_type_age").check()
    second.button(key="ann_save").click().run()
    mine = [j for j in _rows(sqlite_store, caps[0]) if j.user == "ann2"]
    assert [(j.revision, j.error_types) for j in mine] == [(1, ()), (2, ("age",))]


def test_nothing_assigned(demo):
    store, _ = demo
    at = _open(store, "ann2")
    assert "Nothing is assigned to you" in texts(at)
    assert not [b for b in at.button if b.key == "ann_save"]


def test_save_draft_sends_the_panel_and_stores_nothing(demo):
    # One message carries the whole panel; the server keeps it for this caption, and nothing is stored
    # until Save & next.
    store, caps = demo
    at = _open(store)
    at.radio(key="ann_label").set_value("inaccurate")
    at.checkbox(key="ann_type_scene").check()
    at.text_input(key="ann_note").input("the beach is a street")
    at.button(key="ann_draft").click().run()
    assert not at.exception and not at.error
    assert _rows(store, caps[0]) == []
    assert "number 0" in _caption(at)
    assert any("Draft kept" in h.value for h in at.html)
    at.run()  # another run of the page keeps the draft
    assert at.radio(key="ann_label").value == "inaccurate" and at.checkbox(key="ann_type_scene").value
    assert at.text_input(key="ann_note").value == "the beach is a street"
    at.button(key="ann_save").click().run()
    (j,) = _rows(store, caps[0])
    assert (j.label, j.error_types, j.note) == (Label.INACCURATE, ("scene",), "the beach is a street")


def test_a_draft_survives_a_reload_and_moving_away(demo):
    # The draft is in the database: a new session (a reload, or a restarted server) opens the caption with it.
    store, caps = demo
    at = _open(store)
    at.radio(key="ann_label").set_value("inaccurate")
    at.text_input(key="ann_note").input("not sure which type yet")
    at.button(key="ann_draft").click().run()
    assert not at.exception and not at.error
    assert _rows(store, caps[0]) == []
    fresh = _open(store)
    assert "number 0" in _caption(fresh)
    assert fresh.radio(key="ann_label").value == "inaccurate"
    assert fresh.text_input(key="ann_note").value == "not sure which type yet"
    assert any("Draft from" in h.value and "restored" in h.value for h in fresh.html)
    # Moving away and back brings it back too.
    fresh.button(key="ann_next").click().run()
    assert "number 1" in _caption(fresh) and fresh.text_input(key="ann_note").value == ""
    fresh.button(key="ann_prev").click().run()
    assert fresh.text_input(key="ann_note").value == "not sure which type yet"
    # Saving the judgement removes the draft: the next session shows the judgement, with no draft message.
    fresh.checkbox(key="ann_type_scene").check()
    fresh.button(key="ann_save").click().run()
    (j,) = _rows(store, caps[0])
    assert (j.label, j.error_types, j.note) == (Label.INACCURATE, ("scene",), "not sure which type yet")
    again = _open(store)
    assert not any("Draft from" in h.value for h in again.html)


def test_a_draft_with_a_control_character_is_refused(demo):
    store, caps = demo
    at = _open(store)
    at.text_input(key="ann_note").input("bad \x1b[31m red")
    at.button(key="ann_draft").click().run()
    assert not at.exception
    assert any("not kept" in e.value and "001B" in e.value for e in at.error), [e.value for e in at.error]
    assert not any("Draft from" in h.value for h in _open(store).html)


def test_two_tabs_the_stale_save_is_refused_and_shows_the_newer_judgement(demo):
    # Two tabs of ann1 on the first caption. Tab B saves; tab A's save is refused: nothing written, the newer
    # judgement shown in words (label, types, note, who, when), tab A's panel as it was.
    store, caps = demo
    tab_a, tab_b = _open(store), _open(store)
    tab_b.checkbox(key="ann_type_gender").check()
    tab_b.text_input(key="ann_note").input("*woman*, not man")
    tab_b.button(key="ann_save").click().run()
    assert [j.revision for j in _rows(store, caps[0])] == [1]
    tab_a.radio(key="ann_label").set_value("accurate")
    tab_a.text_input(key="ann_note").input("looks right to me")
    tab_a.button(key="ann_save").click().run()
    assert not tab_a.exception
    assert [(j.revision, j.note) for j in _rows(store, caps[0])] == [(1, "*woman*, not man")]
    assert "number 0" in _caption(tab_a)
    (notice,) = [visible(w.value) for w in tab_a.warning if "changed since the page showed it" in visible(w.value)]
    assert "Inaccurate — Gender (revision 1, saved by ann1 at" in notice and "Note: *woman*, not man" in notice
    assert any("Not saved: another tab" in visible(e.value) for e in tab_a.error)
    assert tab_a.radio(key="ann_label").value == "accurate"
    assert tab_a.text_input(key="ann_note").value == "looks right to me"
    # A skip from the stale tab is refused too.
    tab_a.button(key="ann_skip").click().run()
    assert [j.revision for j in _rows(store, caps[0])] == [1] and "number 0" in _caption(tab_a)
    # Load the newer judgement: the panel shows it and the notice goes.
    tab_a.button(key="ann_load_newer").click().run()
    assert tab_a.radio(key="ann_label").value == "inaccurate" and tab_a.checkbox(key="ann_type_gender").value
    assert tab_a.text_input(key="ann_note").value == "*woman*, not man"
    assert not any("changed since the page showed it" in visible(w.value) for w in tab_a.warning)


def test_two_tabs_keep_mine_saves_the_refused_panel_over_the_newer_judgement(demo):
    store, caps = demo
    tab_a, tab_b = _open(store), _open(store)
    tab_b.radio(key="ann_label").set_value("accurate")
    tab_b.button(key="ann_save").click().run()
    tab_a.checkbox(key="ann_type_scene").check()
    tab_a.button(key="ann_save").click().run()
    assert [j.revision for j in _rows(store, caps[0])] == [1]
    tab_a.button(key="ann_keep_mine").click().run()
    assert tab_a.checkbox(key="ann_type_scene").value and "number 0" in _caption(tab_a)
    tab_a.button(key="ann_save").click().run()
    assert [(j.revision, j.label, j.error_types) for j in _rows(store, caps[0])] == [
        (1, Label.ACCURATE, ()), (2, Label.INACCURATE, ("scene",))]
    assert "number 1" in _caption(tab_a)


def test_a_system_with_several_samples_per_image_shows_annotators_the_first_only(sqlite_store, tmp_path):
    """Samples n = 1, 2 of every image are stored beside n = 0; the page walks the three n = 0 captions."""
    store = sqlite_store
    caps = seed_project(store, "demo", n_items=3, image_root=str(tmp_path / "img"), with_images=True)
    with store.transaction() as conn:
        write_project(conn, Project("demo", items=[
            Item(key=f"img{i}.jpg", captions=[Caption("sys-a", f"sample {n} of image {i}", n=n) for n in (1, 2)])
            for i in range(3)]))
    add_user(store, "ann1", "annotator")
    assign(store, "demo", ["ann1"], double_fraction=0)
    at = _open(store)
    assert "0 of 3 judged" in " ".join(str(p.proto.text) for p in at.get("progress"))
    shown = []
    for _ in range(3):
        shown.append(_caption(at))
        at.radio(key="ann_label").set_value("accurate")
        at.button(key="ann_save").click().run()
    assert [("number 0" in shown[0]), ("number 1" in shown[1]), ("number 2" in shown[2])] == [True] * 3
    assert not any("sample" in s for s in shown)
    assert [len(_rows(store, c)) for c in caps] == [1, 1, 1]
