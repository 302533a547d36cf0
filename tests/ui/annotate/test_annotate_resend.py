"""A save the browser kept while unconfirmed (the page closed or reloaded before the server answered) is sent again
through the page's hidden field: stored once, never twice, and never over another tab's newer save (kept as the
caption's draft instead). The page's state marker names the last save stored, which is what a page (and a test)
waits for before it counts a judgement as in the store."""

from __future__ import annotations

import html
import json
import re

from annotator.annotation import Queue
from annotator.model import Label, Role
from annotator.store.judgements import history
from tests.apptest_helpers import visible
from tests.ui.annotate.test_annotate_own_save import demo  # noqa: F401 (a fixture: three captions, all ann1's)
from tests.ui.annotate.test_app_annotate import _caption, _open


def _rows(store, caption_id):
    with store.read() as conn:
        return [(j.revision, j.label, j.error_types, j.note) for j in history(conn, caption_id)]


def _state(at) -> dict[str, str]:
    """The attributes of the page's hidden state marker."""
    (marker,) = [h.value for h in at.html if h.value.startswith('<span hidden data-testid="ann-state"')]
    return {k: html.unescape(v) for k, v in re.findall(r'(data-[a-z-]+)="([^"]*)"', marker)}


def _kept(caps, **over) -> str:
    """What annotate/next.js keeps of a Save & next of the first caption (inaccurate, gender, a note)."""
    rec = {"token": "page1-1-1", "page": "page1", "alive": 0, "user": "ann1", "project": "demo", "caption": caps[0],
           "position": 0, "base": 0, "item": "img0.jpg", "label": "inaccurate", "types": ["gender"],
           "note": "a man, not a woman", "spans": "[]", "seconds": 4.5}
    rec.update(over)
    return json.dumps(rec)


def _send_again(at, raw: str):
    at.text_input(key="ann_resend").set_value(raw).run()
    assert not at.exception, at.exception
    return at


def _messages(at) -> str:
    return " ".join([visible(e.value) for e in at.error] + [h.value for h in at.html if "ann-msg" in h.value])


def test_the_state_marker_names_the_caption_the_next_one_and_the_last_save_stored(demo):
    store, caps = demo
    at = _open(store)
    state = _state(at)
    assert (state["data-user"], state["data-project"], state["data-caption"], state["data-base"]) == \
        ("ann1", "demo", str(caps[0]), "0")
    assert "number 1" in state["data-next"] and "data-stored-caption" not in state
    at.radio(key="ann_label").set_value("accurate")
    at.button(key="ann_save").click().run()
    state = _state(at)
    assert (state["data-stored-caption"], state["data-stored-revision"]) == (str(caps[0]), "1")
    assert state["data-caption"] == str(caps[1]) and "number 2" in state["data-next"]
    assert _rows(store, caps[0]) == [(1, Label.ACCURATE, (), "")]
    # The last caption to do has no caption after it: nothing to show ahead.
    at.radio(key="ann_label").set_value("accurate")
    at.button(key="ann_save").click().run()
    assert "data-next" not in _state(at) and "number 2" in _caption(at)


def test_a_kept_save_never_stored_is_stored_once_and_the_page_moves_on(demo):
    store, caps = demo
    at = _open(store)  # a new page after the reload: the first caption is still to do
    _send_again(at, _kept(caps))
    assert _rows(store, caps[0]) == [(1, Label.INACCURATE, ("gender",), "a man, not a woman")]
    assert "is stored now (revision 1)" in _messages(at)
    assert "number 1" in _caption(at)
    state = _state(at)
    assert (state["data-stored-caption"], state["data-resent"]) == (str(caps[0]), "page1-1-1")
    # The same save sent again (another reload before the answer came): recognised, not stored twice.
    _send_again(at, _kept(caps))
    assert _rows(store, caps[0]) == [(1, Label.INACCURATE, ("gender",), "a man, not a woman")]
    assert "is stored (revision 1)" in _messages(at)
    assert "number 1" in _caption(at)


def test_a_kept_save_that_reached_the_server_after_all_is_recognised(demo):
    store, caps = demo
    q = Queue.open(store, "ann1", Role.ANNOTATOR, "demo")
    q.save(q.task(0), "inaccurate", ("gender",), "a man, not a woman", 4.5)  # the first page's run did store it
    at = _open(store)
    assert "number 1" in _caption(at)
    _send_again(at, _kept(caps))
    assert len(_rows(store, caps[0])) == 1 and not at.error
    assert "number 1" in _caption(at)


def test_a_kept_save_over_another_tabs_newer_save_becomes_a_draft(demo):
    store, caps = demo
    at = _open(store)
    q = Queue.open(store, "ann1", Role.ANNOTATOR, "demo")
    q.save(q.task(0), "accurate", (), "", 1.0)  # another tab, meanwhile
    _send_again(at, _kept(caps))
    assert _rows(store, caps[0]) == [(1, Label.ACCURATE, (), "")]
    assert "another tab or window saved this caption since" in _messages(at)
    draft = q.load_draft(q.task(0))
    assert (draft.label, draft.error_types, draft.note) == ("inaccurate", ("gender",), "a man, not a woman")


def test_another_accounts_or_an_unreadable_kept_save_stores_nothing(demo):
    store, caps = demo
    at = _open(store)
    _send_again(at, _kept(caps, user="ann2"))
    _send_again(at, _kept(caps, project="other"))
    assert _rows(store, caps[0]) == [] and "number 0" in _caption(at)
    _send_again(at, "{not json")
    assert "could not be read" in _messages(at) and _rows(store, caps[0]) == []
    _send_again(at, _kept(caps, label="maybe"))
    assert "could not be read" in _messages(at) and _rows(store, caps[0]) == []
    # A kept save the rules refuse (Other without a note) is named and stores nothing.
    _send_again(at, _kept(caps, types=["other"], note=""))
    assert "was not stored" in _messages(at) and _rows(store, caps[0]) == []
