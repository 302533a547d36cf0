"""The annotate page at a laptop's window sizes (issue 24, items 1–3): every type, both choices and the action
bar in view together, whole labels, the references readable without scrolling, labels not zoomed, and the
keys working right after a choice in the sidebar."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.model import Box, Caption, Item, Mention, Project, Reference
from annotator.store.projects import write_project
from annotator.taxonomy import taxonomy
from tests.browser.annotate_helpers import PW, caption, choose_project, press, sized_page
from tests.browser.conftest import login, signed_in, wait_for_app, wait_until_settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZES = [(1280, 720), (1366, 768)]

#: Five references of the length real ones have (the sample's), with mentions of the boxes.
REFS = [
    "A smiling woman in an orange space suit poses between a flag and a model of the space shuttle",
    "An astronaut with short hair sits for a portrait next to her helmet on a stand",
    "A female astronaut wearing an orange pressure suit with a mission patch on her chest",
    "A woman in an orange suit smiles in front of the American flag and a shuttle model",
    "Official portrait of an astronaut with a space helmet and a shuttle model behind her",
]


def _seed(store, tmp_path, name: str, n: int = 3) -> None:
    from PIL import Image
    root = tmp_path / f"img-{name}"
    root.mkdir(parents=True, exist_ok=True)
    items = []
    for i in range(n):
        Image.new("RGB", (600, 600), (60 + 20 * i, 110, 150)).save(root / f"p{i}.jpg")
        boxes = [Box(str(k), label, 40 + 80 * k, 60 + 50 * k, 120, 140)
                 for k, label in enumerate(("woman", "space suit", "helmet", "flag", "shuttle model", "patch"), 1)]
        refs = [Reference(t, (Mention(1, 3, ("1",)), Mention(5, 8, ("2",)))) for t in REFS]
        items.append(Item(key=f"p{i}.jpg", image=f"p{i}.jpg", width=600, height=600, boxes=boxes, references=refs,
                          captions=[Caption("sys", f"A man in an orange jacket smiling in front of a flag {name} {i}")]))
    with store.transaction() as conn:
        write_project(conn, Project(name=name, image_root=str(root), items=items))


@pytest.fixture
def laptop_project(server, tmp_path):
    store = server.store()
    _seed(store, tmp_path, "alpha")
    _seed(store, tmp_path, "beta")
    add_user(store, "alice", "annotator", PW)
    assign(store, "alpha", ["alice"], double_fraction=0)
    assign(store, "beta", ["alice"], double_fraction=0)
    yield store
    store.dispose()


def _box(page, selector):
    return page.evaluate("(s) => { const r = document.querySelector(s).getBoundingClientRect();"
                         " return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }", selector)


def _cut_labels(page):
    """The main area's button and switch labels that do not show whole (an ellipsis or clipped text)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll(
            '[data-testid="stMain"] button p, [data-testid="stMain"] [data-testid="stCheckbox"] label p'))
        .filter((p) => p.offsetParent !== null && p.scrollWidth > p.clientWidth + 1)
        .map((p) => p.textContent)""")


@pytest.mark.parametrize("width,height", SIZES)
def test_every_type_both_choices_and_the_action_bar_are_in_view_together(server, laptop_project, browser,
                                                                          width, height):
    context, page = sized_page(browser, width, height)
    try:
        signed_in(page, server, "alice", PW)
        expect(caption(page)).to_contain_text("alpha 0")
        # The whole panel drawn (Streamlit draws a run's elements one after the other).
        expect(page.locator('div[class*="st-key-ann_type_"] label')).to_have_count(20)
        expect(page.locator(".st-key-ann_save button")).to_be_visible()
        expect(page.locator(".ann-ref")).to_have_count(5)
        wait_until_settled(page)
        assert page.evaluate("() => document.scrollingElement.scrollTop"
                             " + ((document.querySelector('[data-testid=\"stMain\"]') || {}).scrollTop || 0)") == 0
        bar = _box(page, ".st-key-ann_actionbar")
        assert 0 <= bar["top"] and bar["bottom"] <= height, bar
        for t in taxonomy().types:  # all 20, above the docked action bar (not hidden behind it)
            b = _box(page, f".st-key-ann_type_{t.id} label")
            assert b["top"] >= 0 and b["bottom"] <= bar["top"] + 1 and b["right"] <= width, (t.id, b, bar)
        # Both choices of Task 1 above the bar (waited for through the locator: a rerun may be redrawing them).
        choices = page.locator('.st-key-ann_label [role="radiogroup"] label')
        expect(choices).to_have_count(2)
        for i in range(2):
            b = choices.nth(i).bounding_box()
            assert b is not None and b["y"] + b["height"] <= bar["top"], (i, b, bar)
        # Every control's label whole (no "← Pre…", "Save d…", "Detec…", "Caption…").
        assert _cut_labels(page) == []
        # The five references readable without scrolling.
        refs = page.locator(".ann-ref")
        expect(refs).to_have_count(5)
        for i in range(5):
            b = refs.nth(i).bounding_box()
            assert b["y"] >= 0 and b["y"] + b["height"] <= height, (i, b)
        # A tick made by key is also shown as a chip beside Task 1.
        chips = page.locator('[data-testid="ann-chips"]')
        expect(chips).to_contain_text("No error type ticked")
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        press(page, "u")
        chip = chips.locator('[data-chip="unrelated"]')
        expect(chip).to_be_visible()
        expect(chip).to_have_text("Generally unrelated")
        b = chip.bounding_box()
        assert b["y"] >= 0 and b["y"] + b["height"] <= height
        expect(chips.locator("[data-chip-none]")).to_be_hidden()
        press(page, "u")
        expect(chip).to_be_hidden()
    finally:
        context.close()


def test_zoom_does_not_scale_the_box_labels(server, laptop_project, browser):
    context, page = sized_page(browser, 1280, 720)
    try:
        signed_in(page, server, "alice", PW)
        expect(caption(page)).to_contain_text("alpha 0")
        label = page.locator(".ann-boxlabel").first
        expect(label).to_be_visible()
        before = label.bounding_box()
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        press(page, "m")
        expect(page.locator(".st-key-ann_zoom input")).to_be_checked()
        page.wait_for_timeout(100)
        after = label.bounding_box()
        # Same size as unzoomed (the 2.5x zoom made a 12 px label 30 px tall).
        assert after["height"] == pytest.approx(before["height"], rel=0.1), (before, after)
    finally:
        context.close()


@pytest.mark.parametrize("width,height", SIZES)
def test_keys_work_right_after_choosing_a_project_in_the_sidebar(server, laptop_project, browser, width, height):
    context, page = sized_page(browser, width, height)
    try:
        login(page, server.url, "alice", PW)
        expect(caption(page)).to_contain_text("alpha 0")
        sidebar = page.locator('[data-testid="stSidebar"]')
        choose_project(page, "beta")
        expect(caption(page)).to_contain_text("beta 0")
        wait_for_app(page)
        # No click on the page, no Esc: the next keys are the page's, not the project box's search.
        press(page, "n")
        expect(page.locator('.st-key-ann_label input[type="radio"]').nth(1)).to_be_checked()
        press(page, "2")
        expect(page.locator(".st-key-ann_type_gender input")).to_be_checked()
        expect(sidebar.get_by_role("combobox", name="Project")).to_have_value("beta")
    finally:
        context.close()
