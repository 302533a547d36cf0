"""A long caption at a laptop's window sizes (issue 38, items 3 and 4): with the bundled 1,968-character caption
(data/sample/long_captions.jsonl) and one of 3,000 characters, Task 1, all 20 types (whole words, each key beside
its name) and the action bar are in view together and the caption scrolls in its own pane; the same with the
local-mode notice above the page and the sidebar open."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from annotator.accounts.auth import add_user
from annotator.assignment import assign
from annotator.config import SAMPLE_DIR
from annotator.io import import_jsonl
from annotator.taxonomy import taxonomy
from tests.browser.annotate_helpers import PW, caption, sized_page
from tests.browser.conftest import login, wait_for_app, wait_until_settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZES = [(1280, 720), (1366, 768)]
LONG_FILE = SAMPLE_DIR / "long_captions.jsonl"
BUNDLED = json.loads(LONG_FILE.read_text(encoding="utf-8").splitlines()[1])["captions"][0]["text"]


def _with_3000(tmp_path):
    """The bundled file with its first caption made 3,000 characters long."""
    lines = LONG_FILE.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[1])
    text = first["captions"][0]["text"]
    first["captions"][0]["text"] = (text + " " + text)[:2999].rstrip() + "."
    lines[1] = json.dumps(first)
    out = tmp_path / "long3000.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "images").symlink_to(SAMPLE_DIR / "images")
    return out, first["captions"][0]["text"]


def _panel_in_view(page, width: int, height: int) -> None:
    """Task 1, the 20 types and the action bar in view together at the top of the page; the caption in its own
    scrolling pane; every type's label whole (no word cut, its key beside its last word)."""
    expect(page.locator('div[class*="st-key-ann_type_"] label')).to_have_count(20)
    expect(page.locator('.st-key-ann_label [role="radiogroup"] label')).to_have_count(2)
    wait_until_settled(page)
    page.wait_for_timeout(300)  # the caption pane takes its height on the frames after the last render
    found = page.evaluate("""() => {
        const box = (el) => { const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, right: r.right}; };
        const cap = document.querySelector('[data-testid="ann-caption"]');
        const main = document.querySelector('[data-testid="stMain"]');
        const broken = [];
        document.querySelectorAll('div[class*="st-key-ann_type_"] label p').forEach((p) => {
          const text = p.firstChild;  // the name, then the key's code element
          const code = p.querySelector('code');
          const range = document.createRange();
          let pos = 0, lastTop = null;
          for (const w of text.textContent.split(/[\\s\\u00a0]+/)) {
            const at = text.textContent.indexOf(w, pos); pos = at + w.length;
            if (!w) continue;
            range.setStart(text, at); range.setEnd(text, at + w.length);
            const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0);
            const tops = new Set(rects.map((r) => Math.round(r.top)));
            if (tops.size > 1) broken.push(p.textContent + ': ' + w);
            if (rects.length) lastTop = rects[rects.length - 1].top;
          }
          if (code && lastTop !== null && Math.abs(code.getBoundingClientRect().top - lastTop) > 6)
            broken.push(p.textContent + ': key on its own line');
        });
        return {
          scrolled: document.scrollingElement.scrollTop + (main ? main.scrollTop : 0),
          pane: {client: cap.clientHeight, scroll: cap.scrollHeight, top: box(cap).top, bottom: box(cap).bottom},
          bar: box(document.querySelector('.st-key-ann_actionbar')),
          choices: Array.from(document.querySelectorAll('.st-key-ann_label [role="radiogroup"] label')).map(box),
          types: Array.from(document.querySelectorAll('div[class*="st-key-ann_type_"] label')).map(box),
          broken: broken,
        };
    }""")
    assert found["scrolled"] == 0, found
    bar = found["bar"]
    assert 0 <= bar["top"] and bar["bottom"] <= height, bar
    pane = found["pane"]
    assert pane["scroll"] > pane["client"] + 10 and pane["top"] >= 0 and pane["bottom"] <= bar["top"], pane
    assert pane["client"] >= 90, pane  # at least four lines of the caption in view
    for b in found["choices"] + found["types"]:
        assert b["top"] >= pane["bottom"] - 1 and b["bottom"] <= bar["top"] + 1 and b["right"] <= width, (b, bar)
    assert found["broken"] == [], found["broken"]


@pytest.mark.parametrize("width,height", SIZES)
@pytest.mark.parametrize("length", [1968, 3000])
def test_a_long_caption_leaves_the_panel_in_view(server, tmp_path, browser, width, height, length):
    store = server.store()
    try:
        if length == 3000:
            path, text = _with_3000(tmp_path)
        else:
            path, text = LONG_FILE, BUNDLED
        assert len(text) == length
        import_jsonl(store, "long", path)
        add_user(store, "maria", "annotator", PW)
        assign(store, "long", ["maria"], double_fraction=0)
    finally:
        store.dispose()
    context, page = sized_page(browser, width, height)
    try:
        login(page, server.url, "maria", PW, path="/annotate")
        expect(caption(page)).to_contain_text(text[-40:])
        _panel_in_view(page, width, height)
    finally:
        context.close()


@pytest.mark.parametrize("width,height", SIZES)
def test_the_local_mode_notice_and_the_open_sidebar_leave_the_panel_in_view(server, browser, width, height):
    # No account with a password: the browser on the server's machine works as the local admin, under the
    # local-mode notice, with the sidebar open.
    store = server.store()
    try:
        import_jsonl(store, "long", LONG_FILE)
    finally:
        store.dispose()
    context, page = sized_page(browser, width, height)
    try:
        page.goto(server.url + "/annotate")
        page.locator(".st-key-ann_assign_me button").click()
        expect(caption(page)).to_contain_text(BUNDLED[-40:])
        wait_for_app(page)
        expect(page.get_by_test_id("stAlertContentInfo").get_by_text("Local mode")).to_be_visible()
        expect(page.locator('[data-testid="stSidebar"]')).not_to_have_attribute("data-collapsed", "true")
        _panel_in_view(page, width, height)
    finally:
        context.close()
