"""Correct one caption in headless Chromium and watch the live score change update."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.correction import caption_corrections
from annotator.correction.blind import set_project_blind
from tests.browser.conftest import signed_in, wait_for_app
from tests.store.test_correction_store import CAPTIONS, build_demo

pytestmark = pytest.mark.browser

PW = "fix one thing at a time"


def _demo_shown_live(store):
    ids = build_demo(store)
    set_project_blind(store, "demo", False)  # the live score change shows while editing
    return ids


@pytest.fixture
def project(server):
    with server.seeded(_demo_shown_live, ("carol", "lead", PW)) as seeded:
        yield seeded


def metric(page, label: str):
    return page.locator('[data-testid="stMetric"]').filter(has_text=label).first


def test_one_correction_moves_the_live_delta(server, project, page):
    store, ids = project
    signed_in(page, server, "carol", PW)
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Correction").click()
    # The first build scores the whole system (METEOR starts its Java process): allow time.
    wait_for_app(page, timeout=90_000)
    expect(page.get_by_text("Score change from age corrections")).to_be_visible(timeout=90_000)
    # Default type "Age", adjudicated layer: the queue is line 0.
    expect(page.locator('[data-testid="stText"]').filter(has_text=CAPTIONS[0]).first).to_be_visible()
    expect(metric(page, "Captions changed")).to_contain_text("0")
    bleu = metric(page, "BLEU-4")
    expect(bleu.locator('[data-testid="stMetricDelta"]')).to_contain_text("±0.00")  # no change yet: grey, unsigned

    box = page.get_by_role("textbox", name="Corrected caption")
    box.fill("A boy in a blue shirt is climbing a rock.")
    box.press("Tab")  # leaving the field sends its text (Ctrl+Enter would save it at once: the page's key)
    wait_for_app(page)
    expect(page.locator(".correction-diff ins")).to_have_text("boy")
    expect(page.locator(".correction-diff del")).to_have_text("man")
    page.get_by_role("button", name="Save correction").click()
    wait_for_app(page)

    expect(page.get_by_text("correction saved (revision 1)")).to_be_visible()
    expect(metric(page, "Captions changed")).to_contain_text("1")
    delta = bleu.locator('[data-testid="stMetricDelta"]')
    expect(delta).not_to_contain_text("±0.00")
    expect(delta).not_to_contain_text("+0.00")
    expect(delta).to_contain_text("+")
    (h,) = caption_corrections(store, ids[0], "age")
    assert h.corrected_text == "A boy in a blue shirt is climbing a rock." and h.user == "carol"
