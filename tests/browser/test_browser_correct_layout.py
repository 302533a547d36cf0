"""The correction page at a laptop's window sizes (issue 24, item 13): the picture's top, the caption and the
Corrected caption field in view without scrolling, the keys on the buttons working (and not while typing in the
field, Ctrl+Enter excepted), and a save staying on the caption with its references and score change."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.accounts.auth import add_user
from annotator.correction import caption_corrections
from annotator.model import Box, Caption, Item, Project, Reference, Role
from annotator.store.judgements import save_judgement
from annotator.store.projects import captions_of_system, project_id, write_project
from annotator.store.users import create_user
from tests.browser.annotate_helpers import sized_page
from tests.browser.conftest import signed_in, wait_for_app, wait_until_settled
from tests.browser.test_browser_annotate_layout import REFS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZES = [(1280, 720), (1366, 768)]
PW = "one error type at a time"
N = 3


def _caption(i: int) -> str:
    return f"A man in an orange jacket smiling in front of a flag number {i}"


def _fixed(i: int) -> str:
    return f"A woman in an orange jacket smiling in front of a flag number {i}"


@pytest.fixture
def gender_queue(server, tmp_path):
    """A project of three pictures whose captions an annotator judged Gender, blind correction on (the
    default), and an analyst: (store, caption ids by line)."""
    from PIL import Image
    root = tmp_path / "img"
    root.mkdir()
    items = []
    for i in range(N):
        Image.new("RGB", (600, 600), (60 + 40 * i, 110, 150)).save(root / f"p{i}.jpg")
        items.append(Item(key=f"p{i}.jpg", image=f"p{i}.jpg", width=600, height=600,
                          boxes=[Box("1", "woman", 40, 60, 300, 400), Box("2", "flag", 380, 40, 180, 200)],
                          references=[Reference(t) for t in REFS], captions=[Caption("sys", _caption(i))]))
    store = server.store()
    with store.transaction() as conn:
        write_project(conn, Project(name="demo", image_root=str(root), items=items))
        uid = create_user(conn, "alice", Role.ANNOTATOR)
        ids = {c.line_no: c.id for c in captions_of_system(conn, project_id(conn, "demo"), "sys")}
    for cid in ids.values():
        save_judgement(store, cid, uid, label="inaccurate", error_types=["gender"])
    add_user(store, "ana", "analyst", PW)
    yield store, ids
    store.dispose()


def _open(page, server) -> None:
    signed_in(page, server, "ana", PW, path="/correct")
    expect(page.locator('[data-testid="stText"]').filter(has_text=_caption(0)).first).to_be_visible()
    expect(page.get_by_role("textbox", name="Corrected caption")).to_be_visible()
    expect(page.locator(".st-key-ann_figure img")).to_be_visible()
    wait_until_settled(page)


def _shown(page):
    """The page's marker of the caption on screen (its id and text)."""
    return page.locator('[data-testid="correct-caption"]')


def _box(locator):
    b = locator.bounding_box()
    assert b is not None
    return {"top": b["y"], "bottom": b["y"] + b["height"], "left": b["x"], "right": b["x"] + b["width"]}


def _in_view(locator, width: int, height: int) -> None:
    b = _box(locator)
    assert 0 <= b["top"] and b["bottom"] <= height and b["right"] <= width, b


def _press(page, key: str) -> None:
    """Press ``key`` and wait until the page's key handler and Streamlit are done with it."""
    page.wait_for_function("() => !!window.__correctKeyState")
    page.keyboard.press(key)
    page.wait_for_timeout(30)
    page.wait_for_function("() => !window.__correctKeyState.busy && window.__correctKeyState.queue.length === 0")
    wait_for_app(page)


def _unfocus(page) -> None:
    page.evaluate("() => document.activeElement && document.activeElement.blur()")


def _references(page):
    return page.locator(".st-key-correct_refs [data-testid='stText']")


def _changed(page):
    return page.locator('[data-testid="stMetric"]').filter(has_text="Captions changed")


@pytest.mark.parametrize("width,height", SIZES)
def test_the_picture_the_caption_and_the_field_are_in_view(server, gender_queue, browser, width, height):
    context, page = sized_page(browser, width, height)
    try:
        _open(page, server)
        assert page.evaluate("() => document.scrollingElement.scrollTop"
                             " + ((document.querySelector('[data-testid=\"stMain\"]') || {}).scrollTop || 0)") == 0
        picture = _box(page.locator(".st-key-ann_figure img"))
        assert 0 <= picture["top"] < height - 150, picture  # the picture's top, and a good part of it
        _in_view(page.locator('[data-testid="stText"]').filter(has_text=_caption(0)).first, width, height)
        _in_view(page.get_by_role("textbox", name="Corrected caption"), width, height)
        # The buttons under the field, each with its key, whole.
        for name, key in (("Previous", "←"), ("Save correction", "⏎"), ("Leave untouched", "u"), ("Next", "→")):
            button = page.get_by_role("button", name=name)
            expect(button).to_contain_text(key)
            _in_view(button, width, height)
        assert page.evaluate("""() => Array.from(document.querySelectorAll('[data-testid="stMain"] button p'))
            .filter((p) => p.offsetParent !== null && p.scrollWidth > p.clientWidth + 1)
            .map((p) => p.textContent)""") == []
        expect(page.locator('[data-testid="correct-keys"]')).to_contain_text("Ctrl+⏎")
    finally:
        context.close()


@pytest.mark.parametrize("width,height", SIZES)
def test_keys_save_leave_untouched_and_move_and_a_save_stays(server, gender_queue, browser, width, height):
    store, ids = gender_queue
    context, page = sized_page(browser, width, height)
    try:
        _open(page, server)
        _unfocus(page)
        _press(page, "ArrowRight")
        expect(_shown(page)).to_contain_text(_caption(1))
        _press(page, "ArrowLeft")
        expect(_shown(page)).to_contain_text(_caption(0))
        expect(page.get_by_text("hidden until this caption's correction is saved")).to_be_visible()

        # Typing in the field: the page's keys are text there; Ctrl+Enter saves.
        box = page.get_by_role("textbox", name="Corrected caption")
        box.click()
        box.fill(_fixed(0))
        box.press("End")
        page.keyboard.type(" u")
        for key in ("ArrowLeft", "ArrowRight", "Backspace", "Backspace"):
            page.keyboard.press(key)
        assert caption_corrections(store, ids[0], "gender") == []
        expect(_shown(page)).to_contain_text(_caption(0))
        _press(page, "Control+Enter")
        expect(page.get_by_text("correction saved (revision 1)")).to_be_visible()
        assert [h.corrected_text for h in caption_corrections(store, ids[0], "gender")] == [_fixed(0)]

        # The page stays on the saved caption, its references and the score change shown, until moved on.
        expect(_references(page)).to_have_count(len(REFS), timeout=90_000)
        expect(_changed(page)).to_contain_text("1", timeout=90_000)
        page.wait_for_timeout(1500)
        wait_for_app(page)
        expect(_shown(page)).to_contain_text(_caption(0))
        expect(_references(page)).to_have_count(len(REFS))
        expect(_references(page).first).to_have_text(REFS[0])
        expect(_changed(page)).to_be_visible()

        # → moves on; u leaves that caption untouched and stays on it too.
        _unfocus(page)
        _press(page, "ArrowRight")
        expect(_shown(page)).to_contain_text(_caption(1))
        expect(_references(page)).to_have_count(0)
        _press(page, "u")
        expect(page.get_by_text("left untouched (revision 1)")).to_be_visible()
        (h,) = caption_corrections(store, ids[1], "gender")
        assert h.untouched
        expect(_shown(page)).to_contain_text(_caption(1))
        expect(_references(page)).to_have_count(len(REFS))

        # Enter saves an edit left with Esc; ← goes back.
        _press(page, "ArrowRight")
        expect(_shown(page)).to_contain_text(_caption(2))
        box = page.get_by_role("textbox", name="Corrected caption")
        box.click()
        box.fill(_fixed(2))
        _press(page, "Escape")
        _press(page, "Enter")
        expect(page.get_by_text("correction saved (revision 1)")).to_be_visible()
        assert [h.corrected_text for h in caption_corrections(store, ids[2], "gender")] == [_fixed(2)]
        expect(_shown(page)).to_contain_text(_caption(2))
        _press(page, "ArrowLeft")
        expect(_shown(page)).to_contain_text(_caption(1))
        assert len(caption_corrections(store, ids[0], "gender")) == 1
        # / goes to the field.
        _press(page, "/")
        expect(page.get_by_role("textbox", name="Corrected caption")).to_be_focused()
    finally:
        context.close()
