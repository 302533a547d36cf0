"""Every caption opens with its own state only (issue 38, item 1): after a save with a span, the next caption
(and the first caption of another project) shows no span, badge or chip of the previous one, and its hidden
spans field holds its own spans."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.model import Label
from annotator.spans import Span
from annotator.taxonomy import taxonomy
from tests.browser.annotate_helpers import (  # noqa: F401
    PW, caption, choose_project, keys_settled, laptop_page, press, rows, unfocus,
)
from tests.browser.conftest import signed_in, wait_for_app
from tests.browser.test_browser_annotate_layout import laptop_project  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]
KEY = {t.id: t.key for t in taxonomy().types}


def _marks(page) -> dict:
    """What the caption and the panel show of spans and ticks now."""
    return page.evaluate("""() => ({
        marked: document.querySelectorAll('[data-testid="ann-caption"] .ann-marked').length,
        badges: document.querySelectorAll('[data-testid="ann-caption"] [data-badge]').length,
        chips: Array.from(document.querySelectorAll('[data-testid="ann-chips"] [data-chip]'))
                 .filter((c) => !c.hidden).map((c) => c.getAttribute('data-chip')),
        field: (document.querySelector('.st-key-ann_spans input') || {}).value,
    })""")


def _mark_gender(page) -> None:
    """Cursor to the second word, the Gender key: a span there (and Gender ticked)."""
    unfocus(page)
    keys_settled(page)
    page.keyboard.press(".")
    page.keyboard.press(".")
    page.keyboard.press(KEY["gender"])
    expect(caption(page).locator('.ann-w[data-i="1"]')).to_have_attribute("data-badge", KEY["gender"])
    expect(page.locator('[data-testid="ann-chips"] [data-chip="gender"]')).to_be_visible()


def _fresh(page) -> None:
    """The caption on screen carries nothing of the previous one (waited for: the page settles)."""
    keys_settled(page)
    page.wait_for_timeout(400)  # a stale mark came back a render after the caption
    assert _marks(page) == {"marked": 0, "badges": 0, "chips": [], "field": "[]"}
    expect(page.locator('[data-testid="ann-chips"] [data-chip-none]')).to_be_visible()


def test_the_next_caption_and_another_project_open_without_the_last_span(server, laptop_project, laptop_page):
    store = laptop_project
    page = laptop_page
    signed_in(page, server, "alice", PW, path="/annotate")
    expect(caption(page)).to_contain_text("alpha 0")
    _mark_gender(page)
    press(page, "Enter")
    expect(caption(page)).to_contain_text("alpha 1")
    _fresh(page)
    from annotator.store.projects import load_project
    first = load_project(store, "alpha").items[0].captions[0].caption_id
    (j,) = rows(store, first)
    assert j.label is Label.INACCURATE and j.spans == (Span(1, 2, "gender"),)
    # Marked again, then another project chosen in the sidebar: its caption opens clean too.
    _mark_gender(page)
    choose_project(page, "beta")
    expect(caption(page)).to_contain_text("beta 0")
    wait_for_app(page)
    _fresh(page)
    # Back on the saved caption (alpha's first), its own span shows again.
    choose_project(page, "alpha")
    expect(caption(page)).to_contain_text("alpha 1")
    wait_for_app(page)
    _fresh(page)
    unfocus(page)
    press(page, "ArrowLeft")
    expect(caption(page)).to_contain_text("alpha 0")
    expect(caption(page).locator('.ann-w[data-i="1"]')).to_have_attribute("data-badge", KEY["gender"])


def test_span_keys_do_nothing_where_types_are_not_asked(server, tmp_path, laptop_page):
    # The label-only step of a staged second pass (issue 38, item 2): the word cursor and a type key mark
    # nothing, and Enter saves the choice without a refusal the page offers no way out of.
    from annotator.accounts.auth import add_user
    from annotator.assignment import assign
    from tests.apptest_helpers import seed_project
    store = server.store()
    try:
        caps = seed_project(store, "demo", n_items=2, image_root=str(tmp_path / "img"), with_images=True)
        add_user(store, "ann1", "annotator", PW)
        add_user(store, "ann2", "annotator", PW)
        assign(store, "demo", ["ann1", "ann2"], double_fraction=1.0, second_pass="staged")
        page = laptop_page
        signed_in(page, server, "ann2", PW, path="/annotate")
        expect(page.get_by_text("Second annotation: accurate / inaccurate only")).to_be_visible()
        expect(caption(page).locator(".ann-w").first).to_be_visible()
        shown = caption(page).text_content()
        unfocus(page)
        keys_settled(page)
        for key in (".", ".", ">", KEY["gender"]):
            page.keyboard.press(key)
        page.wait_for_timeout(300)
        assert _marks(page)["marked"] == 0 and _marks(page)["field"] == "[]"
        assert page.locator('[data-testid="ann-caption"] .ann-sel').count() == 0
        caption(page).locator('.ann-w[data-i="3"]').click()
        assert page.locator('[data-testid="ann-caption"] .ann-sel').count() == 0
        unfocus(page)
        press(page, "n")
        press(page, "Enter")
        expect(caption(page)).not_to_have_text(shown)
        assert not page.locator('[data-testid="stAlert"]').count()
        mine = [j for c in caps for j in rows(store, c) if j.user == "ann2"]
        assert [(j.label, j.spans) for j in mine] == [(Label.INACCURATE, ())]
    finally:
        store.dispose()
