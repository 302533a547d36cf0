"""The caption list and the all-done page by keyboard in Chromium: filters, jump by number, position
kept, ← / → and the saved message after every caption is judged."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.model import Label
from tests.browser.annotate_helpers import (PW, caption, keys_settled, press, rows,  # noqa: F401
                                             laptop_page, small_project, unfocus)
from tests.browser.conftest import signed_in, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def dialog(page):
    return page.get_by_role("dialog", name="Your captions")


def open_list(page):
    unfocus(page)
    press(page, "l")
    expect(dialog(page)).to_be_visible()
    wait_for_app(page)


def test_filter_and_jump_by_number_keep_the_position(server, small_project, laptop_page):
    page = laptop_page
    store, caps = small_project
    signed_in(page, server, "alice", PW, path="/annotate")  # the page's own address works too
    expect(caption(page)).to_contain_text("number 0")
    assert page.get_by_text("Page not found").count() == 0
    unfocus(page)
    for key in ("y", "Enter", "k", "n", "x", "Enter"):  # 1 accurate, 2 skipped, 3 inaccurate (activity)
        press(page, key)
    expect(caption(page)).to_contain_text("number 3")

    open_list(page)
    box = dialog(page)
    expect(box).to_contain_text("To do (1)")
    expect(box).to_contain_text("Skipped (1)")
    expect(box).to_contain_text("Judged (2)")
    expect(box).to_contain_text("My inaccurate (1)")
    box.get_by_text("Skipped (1)").click()
    wait_for_app(page)
    expect(box).to_contain_text("1–1 of 1")
    # Esc closes the list; the caption on screen stays where it was, and keys act on it again.
    page.keyboard.press("Escape")
    expect(box).to_be_hidden()
    expect(caption(page)).to_contain_text("number 3")

    # Jump by number with the keyboard alone: l, the number, Enter.
    open_list(page)
    expect(box.get_by_role("radio", name="Skipped (1)")).to_be_checked()  # the filter is kept
    box.get_by_label("Go to caption number (then Enter)").focus()
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    expect(box).to_be_hidden()
    expect(caption(page)).to_contain_text("number 1")
    keys_settled(page)
    # No key typed into the list acted on a caption.
    assert [j.label for j in rows(store, caps[1])] == [None]
    assert rows(store, caps[3]) == []

    # A number outside the queue is refused in the list, which stays open.
    open_list(page)
    box.get_by_label("Go to caption number (then Enter)").fill("9")
    box.get_by_label("Go to caption number (then Enter)").press("Enter")
    expect(box).to_contain_text("There is no caption number 9 in your queue (1 to 4).")
    page.keyboard.press("Escape")
    expect(box).to_be_hidden()
    expect(caption(page)).to_contain_text("number 1")


def test_all_done_page_moves_and_confirms(server, small_project, laptop_page):
    page = laptop_page
    store, caps = small_project
    signed_in(page, server, "alice", PW)
    expect(caption(page)).to_contain_text("number 0")
    unfocus(page)
    for _ in range(4):
        press(page, "y")
        press(page, "Enter")
    done = page.get_by_text("Every caption in your queue is judged")
    expect(done).to_be_visible()
    page.keyboard.press("Enter")  # nothing to save here: nothing happens, and the next key is not held
    assert page.evaluate("() => window.__annotatorKeyState.busy === null && window.__annotatorKeyState.log.at(-1)"
                         ) == "save:noop"  # (it waited 2 s for a save button the page does not have)
    press(page, "ArrowLeft")
    expect(caption(page)).to_contain_text("number 3")
    press(page, "n")
    press(page, "x")
    press(page, "Enter")  # a revision saved on the way back: said on the all-done page
    expect(done).to_be_visible()
    expect(page.get_by_text("Saved item img3.jpg: Inaccurate (Activity) — revision 2.")).to_be_visible()
    assert [(j.label, j.error_types) for j in rows(store, caps[3])] == [(Label.ACCURATE, ()),
                                                                          (Label.INACCURATE, ("activity",))]
    press(page, "ArrowRight")  # → starts again at the first caption
    expect(caption(page)).to_contain_text("number 0")
    press(page, "ArrowRight")
    expect(caption(page)).to_contain_text("number 1")
