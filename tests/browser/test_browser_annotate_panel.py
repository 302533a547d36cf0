"""The annotate panel as an annotator meets it at laptop sizes: the action bar stays in view."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotator.model import Label
from annotator.taxonomy import taxonomy
from tests.browser.annotate_helpers import PW, keys_settled, press, rows, sized_page, small_project, stored  # noqa: F401
from tests.browser.conftest import signed_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZES = [(1280, 720), (1366, 768)]


def in_viewport(page, locator):
    """True when the element lies wholly inside the window as it is (nothing scrolled)."""
    box = locator.bounding_box()
    size = page.viewport_size
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= size["height"] \
        and box["x"] >= 0 and box["x"] + box["width"] <= size["width"]


def scrolled(page):
    return page.evaluate("() => ((document.querySelector('[data-testid=\"stMain\"]') || {}).scrollTop || 0)"
                         " + document.scrollingElement.scrollTop")


@pytest.mark.parametrize("width,height", SIZES)
def test_refused_save_with_every_type_ticked_is_shown_in_view(server, small_project, browser, width, height):
    store, caps = small_project
    context, page = sized_page(browser, width, height)
    try:
        signed_in(page, server, "alice", PW)
        expect(page.locator('[data-testid="ann-caption"]')).to_contain_text("number 0")
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        for t in taxonomy().types:  # all 20 types, Other among them, by keyboard; no note
            press(page, t.key)
        for t in taxonomy().types:
            expect(page.locator(f".st-key-ann_type_{t.id} input")).to_be_checked()
        press(page, "Enter")
        alert = page.locator(".st-key-ann_actionbar [role='alert']")
        expect(alert).to_contain_text("Describe the 'Other' error in the note.")
        assert scrolled(page) == 0
        assert in_viewport(page, alert), (alert.bounding_box(), page.viewport_size)
        for key in ("ann_save", "ann_skip", "ann_note"):
            assert in_viewport(page, page.locator(f".st-key-{key}")), key
        assert rows(store, caps[0]) == []  # refused: nothing stored

        # With the note written the same judgement is saved, and the status line says so in view.
        page.locator(".st-key-ann_note input").fill("a flag stands where no flag is")
        page.locator(".st-key-ann_note input").press("Control+Enter")
        keys_settled(page)
        expect(page.locator('[data-testid="ann-caption"]')).to_contain_text("number 1")
        stored(page, caps[0])
        status = page.locator(".st-key-ann_actionbar [role='status'][data-testid='ann-msg']")
        expect(status).to_contain_text("Saved item img0.jpg: Inaccurate")
        assert in_viewport(page, status)
        (j,) = rows(store, caps[0])
        assert j.label is Label.INACCURATE and len(j.error_types) == 20 and j.note == "a flag stands where no flag is"
    finally:
        context.close()


def test_the_panel_works_in_the_browser_until_a_button_sends_it(server, small_project, browser):
    """Choice, ticks and note change on screen without a server run; their couplings show at once; the
    reminder about Generally unrelated follows the ticks; one press of Save & next sends it all."""
    store, caps = small_project
    context, page = sized_page(browser, 1280, 720)
    try:
        sent = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
        signed_in(page, server, "alice", PW)
        expect(page.locator('[data-testid="ann-caption"]')).to_contain_text("number 0")
        keys_settled(page)
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        radios = page.locator('.st-key-ann_label input[type="radio"]')
        hint = page.locator('[data-testid="ann-unrelated-hint"]')
        before = len(sent)
        # A tick by mouse chooses Inaccurate on screen; Accurate clears the ticks again.
        page.locator(".st-key-ann_type_gender label").click()
        expect(radios.nth(1)).to_be_checked()
        page.locator(".st-key-ann_label [data-testid=\"stRadioOption\"]").filter(has_text=re.compile(r"^Accurate")).click()
        expect(page.locator(".st-key-ann_type_gender input")).not_to_be_checked()
        expect(radios.nth(0)).to_be_checked()
        # Four types by keyboard: the reminder shows with the count; its button leaves Generally unrelated.
        for key in "1234":
            page.keyboard.press(key)
        expect(radios.nth(1)).to_be_checked()
        expect(hint).to_be_visible()
        expect(hint).to_contain_text("4 error types ticked")
        page.keyboard.press("b")  # a fifth
        expect(hint).to_contain_text("5 error types ticked")
        hint.get_by_role("button", name="Use Generally unrelated").click()
        expect(page.locator(".st-key-ann_type_unrelated input")).to_be_checked()
        expect(hint).to_be_hidden()
        ticked = page.evaluate("() => Array.from(document.querySelectorAll('[class*=\"st-key-ann_type_\"] input'))"
                               ".filter((i) => i.checked).length")
        assert ticked == 1
        page.locator(".st-key-ann_note input").fill("beyond repair")
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        for key in "htht":  # boxes and references off and on: in the browser too
            page.keyboard.press(key)
        page.wait_for_timeout(300)
        assert len(sent) == before, "the panel sent the server a message before a button was pressed"
        assert rows(store, caps[0]) == []
        page.locator(".st-key-ann_save button").click()
        expect(page.locator('[data-testid="ann-caption"]')).to_contain_text("number 1")
        stored(page, caps[0])  # the next caption shows at once; the save is in the store once the page says so
        (j,) = rows(store, caps[0])
        assert (j.label, j.error_types, j.note) == (Label.INACCURATE, ("unrelated",), "beyond repair")

        # What is ticked stays ticked while the page runs for something else (boxes off and on again).
        keys_settled(page)
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        press(page, "x")
        press(page, "h")
        press(page, "h")
        expect(page.locator(".st-key-ann_type_activity input")).to_be_checked()
        press(page, "Enter")
        expect(page.locator('[data-testid="ann-caption"]')).to_contain_text("number 2")
        (j,) = rows(store, caps[1])
        assert (j.label, j.error_types) == (Label.INACCURATE, ("activity",))
    finally:
        context.close()
