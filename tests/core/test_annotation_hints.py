"""Detector hints on the annotate page: the core rule (off by default, never on the blind double sample) and
the page's toggle."""

from __future__ import annotations

import pytest

from annotator.annotation import Queue, detector_hints
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.model import Box, Caption, Item, Project, Reference
from annotator.store.projects import write_project
from annotator.taxonomy import taxonomy
from tests.apptest_helpers import page_test


def _item(i: int) -> Item:
    # The references agree on a woman; the caption says a man (a gender error the detector can see).
    return Item(key=f"img{i}.jpg", image=f"img{i}.jpg", width=320, height=240,
                boxes=[Box("1", "woman", 20, 30, 120, 90)],
                references=[Reference(f"A woman rides a bicycle down a hill {i}"), Reference("A lady on a bike")],
                captions=[Caption("sys", f"A man rides a bike down a hill {i}")])


@pytest.fixture
def hinted(store):
    with store.transaction() as conn:
        write_project(conn, Project(name="hints", items=[_item(i) for i in range(6)]))
    for name in ("ann1", "ann2"):
        add_user(store, name, "annotator")
    return store


def test_hints_name_the_words_only_when_asked_for():
    item = _item(0)
    caption = item.captions[0].text
    assert detector_hints(caption, item) == {}  # off by default
    hints = detector_hints(caption, item, enabled=True)
    assert hints.get("gender") == ("man",)
    assert set(hints) <= set(taxonomy().ids)  # error types only, not the overall "inaccurate" score
    # A caption of the blind double sample gets none, even when asked for.
    assert detector_hints(caption, item, enabled=True, blind=True) == {}


def test_queue_hints_never_for_the_blind_double_sample(hinted):
    store = hinted
    assign(store, "hints", ["ann1"], double_fraction=0)
    q = Queue.open(store, "ann1", "annotator", "hints")
    task = q.task(q.first_todo())
    assert not q.in_double_sample(task)
    assert q.hints(task) == {}
    assert q.hints(task, enabled=True)["gender"] == ("man",)

    # Every caption double-annotated: neither annotator sees a hint, switched on or not.
    assign(store, "hints", ["ann1", "ann2"], double_fraction=1.0, replace=True)
    for user in ("ann1", "ann2"):
        q = Queue.open(store, user, "annotator", "hints")
        for pos in range(q.size()):
            task = q.task(pos)
            assert q.in_double_sample(task), (user, pos)
            assert q.hints(task, enabled=True) == {}


def _gender_hint(at) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith("Detector:")]


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_page_toggle_shows_hints_under_the_types(hinted):
    store = hinted
    assign(store, "hints", ["ann1"], double_fraction=0)
    at = page_test("annotate", store.url, user="ann1", role="annotator", project="hints", create_user=False).run()
    assert not at.exception, at.exception
    toggle = at.toggle(key="ann_show_hints")
    assert toggle.value is False and _gender_hint(at) == []
    toggle.set_value(True).run()
    assert not at.exception, at.exception
    assert "Detector: man" in _gender_hint(at)
    # The choice stays on for the next caption.
    at.radio(key="ann_label").set_value("accurate")
    at.button(key="ann_save").click().run()
    assert at.toggle(key="ann_show_hints").value is True and "Detector: man" in _gender_hint(at)
    at.toggle(key="ann_show_hints").set_value(False).run()
    assert _gender_hint(at) == []


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_page_shows_no_hints_on_the_blind_double_sample(hinted):
    store = hinted
    assign(store, "hints", ["ann1", "ann2"], double_fraction=1.0)
    at = page_test("annotate", store.url, user="ann1", role="annotator", project="hints", create_user=False).run()
    at.toggle(key="ann_show_hints").set_value(True).run()
    assert not at.exception, at.exception
    assert _gender_hint(at) == []
    assert any("two annotators judge it independently" in c.value for c in at.caption)
