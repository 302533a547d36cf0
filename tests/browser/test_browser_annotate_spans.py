"""Error spans on the annotate page in Chromium at 1280 x 720: the word cursor and type keys, the mouse (drag,
click and shift-click, a badge click removes), the fix editor, Save carrying the spans, no server run per key,
and a 2,000-character caption that wraps beside the picture with a span across its lines."""

from __future__ import annotations

import contextlib

import pytest
from playwright.sync_api import expect

from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.model import Caption, Item, Label, Project
from annotator.spans import Span
from annotator.store.projects import write_project
from annotator.taxonomy import taxonomy
from tests.browser.annotate_helpers import PW, caption, keys_settled, laptop_page, press, rows, small_project  # noqa: F401
from tests.browser.conftest import login, signed_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]
KEY = {t.id: t.key for t in taxonomy().types}


def word(page, i):
    return caption(page).locator(f'.ann-w[data-i="{i}"]')


def runs(page) -> int:
    return page.evaluate("() => window.__annotatorKeyState.runs")


def span_key(page, key):
    """A span key: handled in the browser, no run of the page follows."""
    page.keyboard.press(key)


@pytest.fixture
def alice_on_first(server, small_project, laptop_page):
    """The laptop page with alice logged in, on the small project's first caption, its keys settled."""
    login(laptop_page, server.url, "alice", PW)
    expect(word(laptop_page, 9)).to_have_text("0")
    keys_settled(laptop_page)
    return laptop_page


@contextlib.contextmanager
def key_handler_held(page):
    """The page's key handler busy, as while a key's run is on its way: the span keys and clicks made inside wait
    for it, as on a page still settling; it is let go at the end."""
    page.evaluate("() => { window.__annotatorKeyState.busy = { since: Date.now(), retry: true }; }")
    try:
        yield
    finally:
        page.evaluate("() => { window.__annotatorKeyState.busy = null; }")


def drag(page, first: int, last: int) -> None:
    """Press the mouse on word ``first``, move it over each word up to ``last`` and let go."""
    word(page, first).hover()
    page.mouse.down()
    for i in range(first + 1, last + 1):
        word(page, i).hover()
    page.mouse.up()


def test_word_cursor_and_type_keys_mark_spans_and_save_sends_them(server, small_project, laptop_page):
    store, caps = small_project
    page = laptop_page
    signed_in(page, server, "alice", PW)
    expect(caption(page)).to_contain_text("number 0")
    expect(word(page, 9)).to_have_text("0")  # "sys-a says: a cat sits on a sofa number 0", wrapped into words
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    keys_settled(page)
    before = runs(page)
    for _ in range(4):
        span_key(page, ".")  # the cursor on "cat" (token 3)
    expect(word(page, 3)).to_have_class("ann-w ann-sel ann-cur")
    span_key(page, KEY["subject_wrong"])
    expect(word(page, 3)).to_have_attribute("data-badge", KEY["subject_wrong"])
    expect(page.locator(".st-key-ann_type_subject_wrong input")).to_be_checked()
    expect(page.locator('.st-key-ann_label input[type="radio"]').nth(1)).to_be_checked()
    for _ in range(4):
        span_key(page, ".")  # "sofa" (7)
    span_key(page, ">")      # … and "number" (8)
    span_key(page, KEY["scene"])
    expect(word(page, 8)).to_have_attribute("data-badge", KEY["scene"])
    # A span on "a" (6) as gender, then Backspace on it removes it (the tick stays: gender not localised).
    span_key(page, ",")
    span_key(page, ",")
    span_key(page, KEY["gender"])
    expect(word(page, 6)).to_have_attribute("data-badge", KEY["gender"])
    span_key(page, ".")      # the cursor back on "a" (6) after marking left it on 6: "." goes to 7, "," to 6
    span_key(page, ",")
    span_key(page, "Backspace")
    expect(word(page, 6)).not_to_have_attribute("data-badge", KEY["gender"])
    # "/" on the scene span puts the focus in its fix field in the list of spans (no dialog): type, Enter.
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    span_key(page, ".")
    span_key(page, "/")
    fix = page.locator('[data-testid="ann-span-list"] [data-span="7:9:scene"] input')
    expect(fix).to_be_focused()
    page.keyboard.type("couch")
    page.keyboard.press("Enter")
    expect(word(page, 8)).to_have_attribute("data-badge", KEY["scene"] + " → couch")
    assert dialogs == []
    assert runs(page) == before, "span keys reached the server"
    press(page, "Enter")
    expect(caption(page)).to_contain_text("number 1")
    (j,) = rows(store, caps[0])
    assert j.label is Label.INACCURATE and j.error_types == ("gender", "subject_wrong", "scene")
    assert j.spans == (Span(3, 4, "subject_wrong"), Span(7, 9, "scene", "couch"))
    # Each of the 19 span keys above was logged as drawn (the fix typed in its field is no span key). How fast is bench/annotate_bench.py's figure, not this test's: a key
    # typed before the page has drawn the spans field waits for it, and on a slow machine that took 1.1 s.
    assert len(page.evaluate("() => window.__annSpans.log")) == 19


def test_mouse_drag_click_shift_click_and_badge_click(small_project, alice_on_first):
    store, caps = small_project
    page = alice_on_first
    # Drag from "a" (2) over "cat" to "sits" (4), then the activity key.
    drag(page, 2, 4)
    expect(word(page, 4)).to_have_class("ann-w ann-sel ann-cur")
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    span_key(page, KEY["activity"])
    expect(word(page, 4)).to_have_attribute("data-badge", KEY["activity"])
    # Click "sofa" (7), shift-click "number" (8), then the number key.
    word(page, 7).click()
    word(page, 8).click(modifiers=["Shift"])
    span_key(page, KEY["number"])
    expect(word(page, 8)).to_have_attribute("data-badge", KEY["number"])
    # A click on the activity span's badge (right of its last word) removes it.
    box = word(page, 4).bounding_box()
    page.mouse.click(box["x"] + box["width"] - 3, box["y"] + box["height"] / 2)
    expect(word(page, 4)).not_to_have_attribute("data-badge", KEY["activity"])
    press(page, "Enter")
    expect(caption(page)).to_contain_text("number 1")
    (j,) = rows(store, caps[0])
    assert j.error_types == ("activity", "number") and j.spans == (Span(7, 9, "number"),)


LONG = " ".join(
    f"Sentence {i}: a tall man in a dark blue coat walks a small brown dog along a wet street while two children "
    "wait near a red bus." for i in range(16))


def test_a_long_caption_wraps_beside_the_picture_and_a_span_crosses_lines(server, tmp_path, laptop_page):
    store = server.store()
    try:
        with store.transaction() as conn:
            write_project(conn, Project("long", items=[Item(key="p0.jpg", image="p0.jpg", width=320, height=240,
                                                               captions=[Caption("vlm", LONG)])]))
        add_user(store, "alice", "annotator", PW)
        assign(store, "long", ["alice"], double_fraction=0)
        assert 1900 <= len(LONG) <= 2100
        page = laptop_page
        signed_in(page, server, "alice", PW)
        n = len(LONG.split())
        expect(word(page, n - 1)).to_have_text("bus.")
        cap = caption(page)
        size = cap.evaluate("(el) => ({sw: el.scrollWidth, cw: el.clientWidth, left: el.getBoundingClientRect().left,"
                            " right: el.getBoundingClientRect().right})")
        assert size["sw"] <= size["cw"] + 1 and size["right"] <= 1280  # wrapped, no sideways scrolling
        picture = page.locator(".st-key-ann_figure").bounding_box()
        assert picture is not None and size["left"] >= picture["x"] + picture["width"]  # beside the picture
        # A span from word 10 to word 40 crosses line breaks.
        word(page, 10).click()
        word(page, 40).click(modifiers=["Shift"])
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        span_key(page, KEY["number"])
        expect(word(page, 40)).to_have_attribute("data-badge", KEY["number"])
        tops = page.evaluate("() => new Set(Array.from(document.querySelectorAll('.ann-w.ann-marked'))"
                             ".map((w) => Math.round(w.getBoundingClientRect().top))).size")
        assert tops >= 2
        press(page, "Enter")
        from annotator.store.projects import load_project
        (cid,) = [c.caption_id for it in load_project(store, "long").items for c in it.captions]
        (j,) = rows(store, cid)
        assert j.spans == (Span(10, 41, "number"),)
    finally:
        store.dispose()


def test_span_keys_typed_as_the_page_appears_are_not_lost(server, small_project, laptop_page):
    # The widgets take the values of the run that drew them a render or two late; a tick made before then was
    # overwritten (the span drawn, its type not ticked). Span keys wait for the panel, as the type keys do.
    store, caps = small_project
    page = laptop_page
    login(page, server.url, "alice", PW)
    page.wait_for_function("() => !!window.__annSpans && !!document.querySelector('.ann-w[data-i=\"3\"]')")
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    for key in (".", ".", ".", ".", KEY["subject_wrong"], "Enter"):
        page.keyboard.press(key)
    expect(caption(page)).to_contain_text("number 1")
    keys_settled(page)
    (j,) = rows(store, caps[0])
    assert j.label is Label.INACCURATE and j.error_types == ("subject_wrong",)
    assert j.spans == (Span(3, 4, "subject_wrong"),)


def test_span_keys_typed_before_the_spans_field_is_drawn_wait_for_it(small_project, alice_on_first):
    # With the machine busy, the page just opened, the hidden spans field reached the screen after the caption
    # and the panel: the word-cursor keys typed meanwhile went to nothing (found by the suite run in two lanes).
    # Here the field is kept off the page (its container renamed) while the keys are typed, then put back.
    store, caps = small_project
    page = alice_on_first
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    hide = "() => document.querySelector('.st-key-ann_spans').classList.replace('st-key-ann_spans', 'not-yet')"
    page.evaluate(hide)
    for _ in range(4):
        span_key(page, ".")  # the cursor on "cat" (token 3), once the field is there
    span_key(page, KEY["subject_wrong"])
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.__annSpans.sel") is None  # the keys are waiting
    page.evaluate("() => document.querySelector('.not-yet').classList.replace('not-yet', 'st-key-ann_spans')")
    expect(word(page, 3)).to_have_attribute("data-badge", KEY["subject_wrong"])
    expect(page.locator(".st-key-ann_type_subject_wrong input")).to_be_checked()
    press(page, "Enter")
    expect(caption(page)).to_contain_text("number 1")
    (j,) = rows(store, caps[0])
    assert j.error_types == ("subject_wrong",) and j.spans == (Span(3, 4, "subject_wrong"),)


def test_words_chosen_with_the_mouse_while_the_page_settles_take_the_type_key(small_project, alice_on_first):
    # On a loaded machine the page is still settling when the annotator clicks and shift-clicks words: those
    # clicks wait for it, and a type key pressed before they acted was taken for a plain tick (the type
    # ticked, no span drawn; on Adjudication an already ticked type was unticked). Here the page's key
    # handler is held busy while the words are chosen and the key is pressed, then let go.
    store, caps = small_project
    page = alice_on_first
    with key_handler_held(page):
        word(page, 7).click()                          # "sofa"
        word(page, 8).click(modifiers=["Shift"])       # … to "number"
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        span_key(page, KEY["number"])
        assert page.evaluate("() => window.__annSpans.sel") is None  # the clicks are still waiting
    expect(word(page, 8)).to_have_attribute("data-badge", KEY["number"])
    expect(word(page, 7)).to_have_class("ann-w ann-marked")
    expect(page.locator(".st-key-ann_type_number input")).to_be_checked()
    # A drag from "a" (2) over "cat" to "sits" (4) while the page is held again: it extends the selection
    # once its press has acted.
    keys_settled(page)
    with key_handler_held(page):
        drag(page, 2, 4)
        span_key(page, KEY["activity"])
    expect(word(page, 4)).to_have_attribute("data-badge", KEY["activity"])
    press(page, "Enter")
    expect(caption(page)).to_contain_text("number 1")
    (j,) = rows(store, caps[0])
    assert j.error_types == ("activity", "number")
    assert j.spans == (Span(2, 5, "activity"), Span(7, 9, "number"))
