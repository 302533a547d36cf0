"""Save & next shows the next caption's words at once, from what the page holds, while the server stores the
judgement; the next caption's panel cannot be used until the page says the save is stored (its state marker); a
refused save brings the caption back with its panel and says why; a save still on its way when the page closes
is kept in the browser and stored once when the annotator comes back."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.annotation import Queue
from annotator.model import Label, Role
from tests.browser.annotate_helpers import (  # noqa: F401
    PW, caption, keys_settled, laptop_page, press, resume, rows, small_project, stored, unfocus,
)
from tests.browser.conftest import WAIT_MS, login, wait_until_settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Records each preview as it appears: its words, whether the panel and the caption were inert then, and whether
#: the page said a save was on its way.
WATCH = """() => { window.__seenPreviews = [];
  new MutationObserver(() => { const c = document.querySelector('[data-testid="ann-caption"][data-preview]');
    const seen = window.__seenPreviews;
    if (c && (!seen.length || seen[seen.length - 1].words !== c.textContent))
      seen.push({ words: c.textContent, pending: document.body.hasAttribute('data-ann-pending') });
    const last = seen[seen.length - 1];
    if (c && last && !last.inert) {
      const form = document.querySelector('[data-testid="stForm"]');
      last.inert = !!form && form.hasAttribute('inert') && c.hasAttribute('inert'); } })
  .observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true }); }"""

#: Keeps clicks on Save & next from reaching Streamlit (as when a tab closes before its message leaves): the page's
#: own listener (on the document, ahead of this one on the body) still sees the click.
BLOCK_SAVE = """() => document.body.addEventListener('click', (e) => {
  if (e.target.closest && e.target.closest('.st-key-ann_save button')) { e.stopPropagation(); e.preventDefault(); }
}, true)"""

KEPT = "() => window.localStorage.getItem('annotator.pendingSave')"

#: Notes when the page sends each message to the server (before the page's scripts open Streamlit's websocket).
SENDS = """(() => { window.__sent = []; const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) { window.__sent.push(performance.now()); return send.call(this, data); };
})();"""

#: On the next Enter: its time, and the time of the first animation frame that finds other words in the caption (the
#: frame that draws them; this callback is asked for in the key's own event, ahead of any the page asks for).
WORDS_FRAME = """() => { window.__wordsFrame = null;
  window.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || window.__wordsFrame) return;
    const c = () => document.querySelector('[data-testid="ann-caption"]');
    const before = c().textContent, w = window.__wordsFrame = { key: e.timeStamp, frame: null };
    requestAnimationFrame(function look() {
      if (c() && c().textContent !== before) w.frame = performance.now(); else requestAnimationFrame(look); });
  }, true); }"""


def _on_first(server, page) -> None:
    """alice logged in on the first caption, its keys settled, previews watched."""
    login(page, server.url, "alice", PW, path="/annotate")
    expect(caption(page)).to_contain_text("number 0")
    keys_settled(page)
    page.evaluate(WATCH)
    unfocus(page)


def test_the_next_caption_shows_at_once_and_opens_once_the_save_is_stored(server, small_project, laptop_page):
    store, caps = small_project
    page = laptop_page
    _on_first(server, page)
    press(page, "x")  # Activity, which means Inaccurate
    press(page, "Enter")
    stored(page, caps[0])
    (j,) = rows(store, caps[0])
    assert (j.label, j.error_types) == (Label.INACCURATE, ("activity",))
    seen = page.evaluate("() => window.__seenPreviews")
    assert [s["words"] for s in seen] == ["sys-a says: a cat sits on a sofa number 1"]
    assert seen[0]["pending"] and seen[0]["inert"], seen
    expect(caption(page)).to_contain_text("number 1")
    expect(page.locator("body")).not_to_have_attribute("data-ann-pending", "")
    expect(page.locator('[data-testid="stForm"]')).not_to_have_attribute("inert", "")
    expect(caption(page).locator(".ann-w")).to_have_count(10)  # the server's caption, its words ready for spans
    # The next caption starts from its own state; keys work on it as before.
    expect(page.locator(".st-key-ann_type_activity input")).not_to_be_checked()
    assert page.evaluate(KEPT) is None  # stored: nothing kept in the browser
    press(page, "y")
    press(page, "Enter")
    stored(page, caps[1])
    assert [j.label for j in rows(store, caps[1])] == [Label.ACCURATE]


def test_the_next_words_are_drawn_before_the_save_leaves_for_the_server(server, small_project, laptop_page):
    # Streamlit's part of the save (its form submit, a render of the page and the message) waits until the frame
    # with the next caption's words is drawn: done in the key's own task, it held that frame back by as long as
    # the frame took (issue 38, item 6). The save still goes, with what the panel held at the key.
    store, caps = small_project
    page = laptop_page
    page.add_init_script(SENDS)
    _on_first(server, page)
    press(page, "n")
    press(page, "2")
    page.evaluate(WORDS_FRAME)
    press(page, "Enter")
    stored(page, caps[0])
    (j,) = rows(store, caps[0])
    assert (j.label, j.error_types) == (Label.INACCURATE, ("gender",))
    w = page.evaluate("() => window.__wordsFrame")
    sent = [t for t in page.evaluate("() => window.__sent") if t >= w["key"]]
    assert w["frame"] is not None and sent, (w, sent)
    assert w["frame"] < sent[0], (w, sent)
    expect(caption(page)).to_contain_text("number 1")


def test_keys_typed_while_the_save_is_on_its_way_apply_to_the_next_caption(server, small_project, laptop_page):
    store, caps = small_project
    page = laptop_page
    _on_first(server, page)
    press(page, "y")
    page.keyboard.press("Enter")
    page.keyboard.press("x")  # at once, while the save is on its way: it waits for the next caption's panel
    page.keyboard.press("Enter")
    keys_settled(page)
    stored(page, caps[1])
    assert [(j.label, j.error_types) for j in rows(store, caps[0])] == [(Label.ACCURATE, ())]
    assert [(j.label, j.error_types) for j in rows(store, caps[1])] == [(Label.INACCURATE, ("activity",))]
    expect(caption(page)).to_contain_text("number 2")


def test_a_refused_save_brings_the_caption_back_with_its_panel(server, small_project, laptop_page):
    store, caps = small_project
    page = laptop_page
    _on_first(server, page)
    # Another tab saves the first caption meanwhile.
    q = Queue.open(store, "alice", Role.ANNOTATOR, "demo")
    q.save(q.task(0), "accurate", (), "", 1.0)
    press(page, "n")
    press(page, "2")
    press(page, "Enter")
    expect(page.get_by_text("Not saved: another tab or window saved this caption")).to_be_visible()
    keys_settled(page)
    assert [s["words"] for s in page.evaluate("() => window.__seenPreviews")] == \
        ["sys-a says: a cat sits on a sofa number 1"]
    expect(caption(page)).to_contain_text("number 0")
    expect(caption(page)).not_to_have_attribute("data-preview", "")
    expect(caption(page).locator(".ann-w")).to_have_count(10)
    expect(page.locator('.st-key-ann_label input[type="radio"]').nth(1)).to_be_checked()
    expect(page.locator(".st-key-ann_type_gender input")).to_be_checked()
    expect(page.locator("body")).not_to_have_attribute("data-ann-pending", "")
    expect(page.locator('[data-testid="stForm"]')).not_to_have_attribute("inert", "")
    assert [j.label for j in rows(store, caps[0])] == [Label.ACCURATE]
    assert page.evaluate(KEPT) is None  # back on the panel, in front of the annotator


def test_a_save_on_its_way_when_the_page_closes_is_stored_once_on_return(server, small_project, browser):
    store, caps = small_project
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        _on_first(server, page)
        press(page, "n")
        press(page, "2")
        page.evaluate(BLOCK_SAVE)
        page.keyboard.press("Enter")
        # The next caption's words show from what the page holds: the server has not run (nor stored) anything.
        expect(caption(page)).to_have_attribute("data-preview", "")
        expect(caption(page)).to_contain_text("number 1")
        expect(page.locator("body")).to_have_attribute("data-ann-pending", "img0.jpg")
        assert rows(store, caps[0]) == []
        assert '"caption":%d' % caps[0] in page.evaluate(KEPT)
        # Leaving asks first.
        dialogs = []

        def on_dialog(d):
            dialogs.append(d.type)
            d.accept()
        page.on("dialog", on_dialog)
        page.close(run_before_unload=True)
        if not page.is_closed():
            page.wait_for_event("close")
        assert dialogs == ["beforeunload"]
        assert rows(store, caps[0]) == []

        # The annotator comes back: the save kept in the browser is sent again and stored, once.
        page = context.new_page()
        resume(page, server.url, "alice", PW)
        stored(page, caps[0])
        (j,) = rows(store, caps[0])
        assert (j.label, j.error_types) == (Label.INACCURATE, ("gender",))
        expect(page.get_by_text("from before the page was closed or reloaded is stored now")).to_be_visible()
        expect(caption(page)).to_contain_text("number 1")
        page.wait_for_function(f"() => {KEPT[6:]} === null")
        page.reload()
        wait_until_settled(page)
        expect(caption(page)).to_contain_text("number 1")
        assert len(rows(store, caps[0])) == 1
    finally:
        context.close()
