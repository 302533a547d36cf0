"""The caption's spans listed under it on Annotate (issue 38, item 5): type, words counted from 1 and the fix per
row; a click on a row selects its words, Delete on a row removes the span, the fix is edited in the row (no
dialog), and the key badge sits on the line of the text."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotator.spans import Span
from annotator.taxonomy import taxonomy
from tests.browser.annotate_helpers import PW, caption, keys_settled, press, rows, unfocus, laptop_page, small_project  # noqa: F401
from tests.browser.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.slow]
KEY = {t.id: t.key for t in taxonomy().types}


def word(page, i):
    return caption(page).locator(f'.ann-w[data-i="{i}"]')


def test_the_span_list_selects_removes_and_edits_fixes_inline(server, small_project, laptop_page):
    store, caps = small_project
    page = laptop_page
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login(page, server.url, "alice", PW)
    expect(word(page, 9)).to_have_text("0")  # "sys-a says: a cat sits on a sofa number 0"
    keys_settled(page)
    unfocus(page)
    for key in (".", ".", ".", ".", KEY["subject_wrong"], ".", ".", ".", ".", ">", KEY["scene"]):
        page.keyboard.press(key)
    listed = page.locator('[data-testid="ann-span-list"] .ann-span-row')
    expect(listed).to_have_count(2)
    expect(listed.nth(0)).to_contain_text("Wrong subject")
    expect(listed.nth(0)).to_contain_text("word 4 “cat”")
    expect(listed.nth(1)).to_contain_text("words 8–9 “sofa number”")
    # The badge on the line of its word: as high as the plain word beside it.
    marked, plain = word(page, 3).bounding_box(), word(page, 4).bounding_box()
    assert abs(marked["y"] - plain["y"]) <= 3 and abs(marked["height"] - plain["height"]) <= 3, (marked, plain)
    # The fix typed in the row's field: the badge shows it.
    fix = listed.nth(1).locator("input")
    fix.click()
    page.keyboard.type("couch")
    page.keyboard.press("Enter")
    expect(word(page, 8)).to_have_attribute("data-badge", KEY["scene"] + " → couch")
    # A click on the first row selects its words; Delete on the row removes that span only.
    listed.nth(0).locator(".ann-span-words").click()
    expect(word(page, 3)).to_have_class(re.compile(r"\bann-sel\b"))
    listed.nth(0).focus()
    page.keyboard.press("Delete")
    expect(listed).to_have_count(1)
    expect(word(page, 3)).not_to_have_attribute("data-badge", KEY["subject_wrong"])
    assert dialogs == []
    unfocus(page)
    press(page, "Enter")
    expect(caption(page)).to_contain_text("number 1")
    (j,) = rows(store, caps[0])
    assert j.spans == (Span(7, 9, "scene", "couch"),)
    # The next caption lists nothing.
    expect(page.locator('[data-testid="ann-span-list"] .ann-span-row')).to_have_count(0)
