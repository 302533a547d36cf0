"""The tab's own last save is its own (issue 36, item 4): when the database stops answering right after a save
(or drops the connection while the save commits), pressing Save & next again never reports that another tab
or window saved the caption."""

from __future__ import annotations

import pytest

from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.errors import StoreUnavailable
from annotator.model import Label
from annotator.store.judgements import history
from tests.apptest_helpers import seed_project, visible
from tests.ui.annotate.test_app_annotate import _caption, _open


@pytest.fixture
def demo(sqlite_store, tmp_path):
    caps = seed_project(sqlite_store, "demo", n_items=3, image_root=str(tmp_path / "img"), with_images=True)
    add_user(sqlite_store, "ann1", "annotator")
    assign(sqlite_store, "demo", ["ann1"], double_fraction=0)
    return sqlite_store, caps


def _rows(store, caption_id):
    with store.read() as conn:
        return [(j.revision, j.label, j.error_types) for j in history(conn, caption_id)]


def _errors(at) -> list[str]:
    return [visible(e.value) for e in at.error]


def _down(self, after=-1):
    raise StoreUnavailable("the database at sqlite:///x is not available (connection dropped)")


def _saved_as_the_database_went(store, m):
    """The first caption saved Accurate, the database gone right after (``m`` patches it away)."""
    at = _open(store)
    at.radio(key="ann_label").set_value("accurate")
    m.setattr("annotator.annotation.Queue.next_todo", _down)
    at.button(key="ann_save").click().run()
    return at


def test_saving_again_after_the_database_dropped_right_after_a_save(demo, monkeypatch):
    store, caps = demo
    with monkeypatch.context() as m:
        at = _saved_as_the_database_went(store, m)
        assert "cannot be loaded yet" in " ".join(_errors(at)) and "number 0" in _caption(at)
        # Pressed again while the database is still away: the same message, never "another tab".
        at.button(key="ann_save").click().run()
        assert not any("another tab" in e for e in _errors(at)), _errors(at)
    # Back: the same panel again moves on without storing it twice; no notice of a newer judgement.
    at.button(key="ann_save").click().run()
    assert not at.exception and not any("another tab" in e for e in _errors(at)), _errors(at)
    assert not [w for w in at.warning if "changed since" in visible(w.value)]
    assert "number 1" in _caption(at)
    assert _rows(store, caps[0]) == [(1, Label.ACCURATE, ())]


def test_a_changed_panel_after_the_drop_is_saved_as_the_next_revision(demo, monkeypatch):
    store, caps = demo
    with monkeypatch.context() as m:
        at = _saved_as_the_database_went(store, m)
    at.checkbox(key="ann_type_gender").check()
    at.radio(key="ann_label").set_value("inaccurate")
    at.button(key="ann_save").click().run()
    assert not any("another tab" in e for e in _errors(at)), _errors(at)
    assert _rows(store, caps[0]) == [(1, Label.ACCURATE, ()), (2, Label.INACCURATE, ("gender",))]
    assert "number 1" in _caption(at)


def test_a_save_committed_as_the_connection_dropped_is_recognised(demo, monkeypatch):
    # The commit reached the database but its answer was lost: the page said the database stopped answering.
    # The next Save & next finds that revision and knows it for the tab's own.
    from annotator.annotation import Queue
    store, caps = demo
    at = _open(store)
    at.radio(key="ann_label").set_value("accurate")
    real = Queue.save

    def committed_then_dropped(self, *args, **kwargs):
        real(self, *args, **kwargs)
        raise StoreUnavailable("the database at sqlite:///x is not available (connection dropped)")

    with monkeypatch.context() as m:
        m.setattr("annotator.annotation.Queue.save", committed_then_dropped)
        at.button(key="ann_save").click().run()
    assert "number 0" in _caption(at) and _errors(at)
    at.button(key="ann_save").click().run()
    assert not any("another tab" in e for e in _errors(at)), _errors(at)
    assert "number 1" in _caption(at)
    assert _rows(store, caps[0]) == [(1, Label.ACCURATE, ())]


def test_another_tab_is_still_named_when_it_saved(demo):
    store, caps = demo
    tab_a, tab_b = _open(store), _open(store)
    tab_b.radio(key="ann_label").set_value("accurate")
    tab_b.button(key="ann_save").click().run()
    tab_a.radio(key="ann_label").set_value("accurate")
    tab_a.button(key="ann_save").click().run()
    assert any("another tab" in e for e in _errors(tab_a))
    assert _rows(store, caps[0]) == [(1, Label.ACCURATE, ())]
