"""The longest caption the importers allow (annotator.limits TEXT_LIMITS["caption"], 10,000 characters) opens and
saves in at most 2 s in Chromium (issue 36, item 1), and is drawn without an element per word: words become
elements only where a span or the selection needs them.

Measured on the 2-core development machine (2026-11-29, load 14–16): open 0.67–0.71 s, save 0.34–0.44 s (the
test prints them); with an element per word the save took 2.28 s. The bound keeps the issue's 2 s."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from annotator.accounts.auth import add_user
from annotator.assignment import assign
from annotator.limits import TEXT_LIMITS
from annotator.model import Caption, Item, Label, Project
from annotator.spans import Span
from annotator.store.projects import write_project
from annotator.taxonomy import taxonomy
from tests.browser.annotate_helpers import PW, caption, keys_settled, laptop_page, press, rows, unfocus  # noqa: F401
from tests.browser.conftest import login, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]
KEY = {t.id: t.key for t in taxonomy().types}
BOUND_S = 2.0


def longest_caption(limit: int = TEXT_LIMITS["caption"]) -> str:
    """A caption of exactly ``limit`` characters, of words of ordinary length."""
    words = ("a tall man in a dark blue coat walks a small brown dog along a wet street while two children wait "
             "near a red bus").split()
    out, i = [], 0
    while sum(map(len, out)) + len(out) < limit:
        out.append(words[i % len(words)] + (str(i) if i % 7 == 0 else ""))
        i += 1
    return " ".join(out)[:limit].rstrip() + "."


@pytest.fixture
def long_project(server, tmp_path):
    store = server.store()
    text = longest_caption()
    assert len(text) <= TEXT_LIMITS["caption"] and len(text) >= TEXT_LIMITS["caption"] - 2
    # A short caption first, then the longest twice, then a short one again.
    items = [Item(key=f"p{i}.jpg", image=f"p{i}.jpg", width=320, height=240,
                  captions=[Caption("vlm", text if i in (1, 2) else f"a short caption number {i}")]) for i in range(4)]
    with store.transaction() as conn:
        write_project(conn, Project("long", items=items))
    add_user(store, "alice", "annotator", PW)
    assign(store, "long", ["alice"], double_fraction=0)
    yield store, text
    store.dispose()


def _words_drawn(page) -> int:
    return page.evaluate("() => document.querySelectorAll('[data-testid=\"ann-caption\"] .ann-w').length")


def test_the_longest_caption_opens_and_saves_within_two_seconds(server, long_project, laptop_page):
    store, text = long_project
    page = laptop_page
    n = len(text.split())
    login(page, server.url, "alice", PW)  # the first page load (the server's first run) is not what is timed
    expect(caption(page)).to_contain_text("short caption number 0")
    keys_settled(page)
    unfocus(page)
    # Open: Next → until the long caption, its panel and its keys are ready.
    t0 = time.monotonic()
    page.keyboard.press("ArrowRight")
    expect(caption(page)).to_contain_text(text[-30:])
    page.wait_for_function("() => !!window.__annSpans && window.__annSpans.el"
                           " === document.querySelector('[data-testid=\"ann-caption\"]')")  # the span script took it
    keys_settled(page)
    opened = time.monotonic() - t0
    print(f"MEASURED open {opened:.2f} s")
    # Not an element per word: the words of the caption are drawn as text.
    drawn = _words_drawn(page)
    # A span on the 300th and 301st words (word cursor), then Enter: the save is confirmed.
    for _ in range(300):
        page.keyboard.press(".")
    page.keyboard.press(">")
    page.keyboard.press(KEY["gender"])
    expect(caption(page).locator('.ann-w[data-badge]')).to_have_count(1)
    t0 = time.monotonic()
    page.keyboard.press("Enter")
    expect(page.locator('.ann-msg')).to_contain_text("Saved item p1.jpg")
    saved = time.monotonic() - t0
    wait_for_app(page)
    from annotator.store.projects import load_project
    cid = load_project(store, "long").items[1].captions[0].caption_id
    (j,) = rows(store, cid)
    assert j.label is Label.INACCURATE and j.spans == (Span(299, 301, "gender"),), (j, n)
    print(f"MEASURED save {saved:.2f} s ({len(text)} characters, {n} words)")
    assert opened <= BOUND_S and saved <= BOUND_S, (opened, saved)
    assert drawn < 50 and _words_drawn(page) < 50, drawn
