"""Keyboard on the annotate page in Chromium: a whole caption by keyboard with a note full of shortcut
letters, and the guide overlay by keyboard (at 1280x720 and 1366x768)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.annotation import keyboard_map
from annotator.model import Label
from annotator.taxonomy import taxonomy
from tests.browser.annotate_helpers import (PW, caption, keys_settled, press, rows, sized_page,  # noqa: F401
                                             small_project, unfocus)
from tests.browser.conftest import signed_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]

@pytest.fixture(params=[(1280, 720), (1366, 768)], ids=["1280x720", "1366x768"])
def page(browser, request):
    context, pg = sized_page(browser, *request.param)
    yield pg
    context.close()


def test_a_whole_caption_by_keyboard_stores_the_note_exactly(server, small_project, page):
    store, caps = small_project
    signed_in(page, server, "alice", PW)
    expect(caption(page)).to_contain_text("number 0")
    unfocus(page)
    tax = taxonomy()
    for t in tax.types:
        press(page, t.key)
    # Every key the page knows, upper case too, arrows' neighbours and Enter's: all text in the note.
    shortcut_keys = "".join(k for k in keyboard_map(tax) if len(k) == 1)
    note = f"{shortcut_keys} {shortcut_keys.upper()} k then y, n; h/t? 1 2 3 4"
    press(page, "/")
    assert page.evaluate("() => document.activeElement.closest('.st-key-ann_note') !== null")
    page.keyboard.type(note)
    press(page, "Escape")
    assert page.evaluate("() => document.activeElement.closest('.st-key-ann_note') === null")
    for t in tax.types:  # no letter of the note acted as a shortcut
        expect(page.locator(f".st-key-ann_type_{t.id} input")).to_be_checked()
    press(page, "Enter")
    expect(caption(page)).to_contain_text("number 1")
    (j,) = rows(store, caps[0])
    assert j.label is Label.INACCURATE and j.error_types == tax.ids and j.note == note
    assert rows(store, caps[1]) == []  # 'k', 'y' and Enter in the note neither skipped nor saved anything
    expect(page.locator('.st-key-ann_label input[type="radio"]').nth(0)).not_to_be_checked()


def test_the_guide_overlay_by_keyboard(server, small_project, page):
    store, caps = small_project
    signed_in(page, server, "alice", PW)
    expect(caption(page)).to_contain_text("number 0")
    unfocus(page)
    dialog = page.get_by_role("dialog", name="Error types, contrasts and keys")
    expect(dialog).to_be_hidden()
    page.keyboard.press("?")
    expect(dialog).to_be_visible()
    # The focus is in the dialog (its close button); every type's definition is readable there.
    assert page.evaluate("() => document.activeElement.closest('#ann-help') !== null")
    for t in taxonomy().types:
        expect(dialog.get_by_role("heading", name=t.name, exact=False).first).to_be_attached()
        expect(dialog).to_contain_text(t.definition)
    # Keys do not act on the caption while the guide is open; Tab stays usable; Esc closes.
    page.keyboard.press("y")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    keys_settled(page)
    expect(page.locator('.st-key-ann_label input[type="radio"]').nth(0)).not_to_be_checked()
    expect(caption(page)).to_contain_text("number 0")
    assert rows(store, caps[0]) == []
    # Its button opens it too (keyboard: focus the button, Enter), and its close button closes it.
    page.locator('[data-help-open="ann"]').focus()
    page.keyboard.press("Enter")
    expect(dialog).to_be_visible()
    page.get_by_role("button", name="Close the guide").click()
    expect(dialog).to_be_hidden()
    assert page.evaluate("() => document.activeElement.getAttribute('data-help-open')") == "ann"
    # After the guide the keys work again.
    unfocus(page)
    press(page, "y")
    press(page, "Enter")
    expect(caption(page)).to_contain_text("number 1")
    assert [j.label for j in rows(store, caps[0])] == [Label.ACCURATE]
