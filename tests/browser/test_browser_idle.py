"""An Annotate page left alone asks for no animation frames (widgets/frames.js), and wakes up when the page
changes: its scripts watch Streamlit's renders frame by frame only while there is something to watch."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.annotate_helpers import PW, caption, press, project, unfocus  # noqa: F401  (project: a fixture)
from tests.browser.conftest import signed_in, wait_until_settled

pytestmark = pytest.mark.browser

# Counts the frames the page asks for from now on.
_COUNT_FRAMES = """() => {
    window.__framesAsked = 0;
    if (!window.__countingFrames) {
        const ask = window.requestAnimationFrame.bind(window);
        window.requestAnimationFrame = (callback) => { window.__framesAsked += 1; return ask(callback); };
        window.__countingFrames = true;
    }
}"""


def _frames_asked_in(page, ms: int) -> int:
    page.evaluate(_COUNT_FRAMES)
    page.wait_for_timeout(ms)
    return page.evaluate("() => window.__framesAsked")


def test_an_idle_annotate_page_asks_for_no_frames_until_it_changes(server, project, page):
    signed_in(page, server, "alice", PW)
    expect(caption(page)).to_contain_text("number 0")
    unfocus(page)
    press(page, "n")  # a run of the page, and its renders
    wait_until_settled(page)
    page.wait_for_timeout(2500)  # the two seconds of frames after the last change
    assert _frames_asked_in(page, 1000) == 0
    # Any change to the page wakes its scripts (no Playwright wait runs while frames are counted here).
    page.evaluate("() => document.body.setAttribute('data-poked', '1')")
    assert _frames_asked_in(page, 300) > 0
    page.wait_for_timeout(2500)
    assert _frames_asked_in(page, 1000) == 0
