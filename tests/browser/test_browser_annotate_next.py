"""Save & next shows the next caption's words at once, from what the page holds, while the server stores the
judgement (issue 38, item 6); a refused save brings the caption back with its panel and says why."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.annotation import Queue
from annotator.model import Label, Role
from tests.browser.annotate_helpers import PW, caption, keys_settled, laptop_page, press, rows, small_project, unfocus  # noqa: F401
from tests.browser.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Records the words of each caption element shown as a preview, as it appears.
WATCH = """() => { window.__seenPreviews = [];
  new MutationObserver(() => { const c = document.querySelector('[data-testid="ann-caption"][data-preview]');
    if (c && window.__seenPreviews[window.__seenPreviews.length - 1] !== c.textContent)
      window.__seenPreviews.push(c.textContent); })
  .observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true }); }"""


def _on_first(server, page) -> None:
    """alice logged in on the first caption, its keys settled."""
    login(page, server.url, "alice", PW)
    expect(caption(page)).to_contain_text("number 0")
    keys_settled(page)


def test_the_next_caption_shows_before_the_save_is_confirmed(server, small_project, laptop_page):
    store, caps = small_project
    page = laptop_page
    _on_first(server, page)
    page.evaluate(WATCH)
    unfocus(page)
    press(page, "y")
    press(page, "Enter")
    expect(caption(page)).to_contain_text("number 1")
    keys_settled(page)
    assert page.evaluate("() => window.__seenPreviews") == ["sys-a says: a cat sits on a sofa number 1"]
    expect(page.locator("body")).not_to_have_class("ann-pending")
    expect(caption(page).locator(".ann-w")).to_have_count(10)  # the server's caption, its words ready for spans
    (j,) = rows(store, caps[0])
    assert j.label is Label.ACCURATE


def test_a_refused_save_brings_the_caption_back_with_its_panel(server, small_project, laptop_page):
    store, caps = small_project
    page = laptop_page
    _on_first(server, page)
    # Another tab saves the first caption meanwhile.
    q = Queue.open(store, "alice", Role.ANNOTATOR, "demo")
    q.save(q.task(0), "accurate", (), "", 1.0)
    page.evaluate(WATCH)
    unfocus(page)
    press(page, "n")
    press(page, "2")
    press(page, "Enter")
    expect(page.get_by_text("Not saved: another tab or window saved this caption")).to_be_visible()
    keys_settled(page)
    assert page.evaluate("() => window.__seenPreviews") == ["sys-a says: a cat sits on a sofa number 1"]
    expect(caption(page)).to_contain_text("number 0")
    expect(caption(page)).not_to_have_attribute("data-preview", "")
    expect(caption(page).locator(".ann-w")).to_have_count(10)
    expect(page.locator('.st-key-ann_label input[type="radio"]').nth(1)).to_be_checked()
    expect(page.locator(".st-key-ann_type_gender input")).to_be_checked()
    expect(page.locator("body")).not_to_have_class("ann-pending")
    assert [j.label for j in rows(store, caps[0])] == [Label.ACCURATE]
