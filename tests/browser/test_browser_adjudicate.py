"""Adjudication in headless Chromium against a real server: the form is pre-filled, the keyboard decides."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.accounts.auth import set_password
from annotator.store.analysis_queries import judgement_frame
from annotator.taxonomy import taxonomy
from tests.browser.annotate_helpers import laptop_page  # noqa: F401  (a 1280 x 720 window)
from tests.browser.conftest import signed_in, wait_for_app, wait_until_settled
from tests.store.test_agreement_store import PROJECT, build_project

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PW = "correct horse battery"


@pytest.fixture
def study(server):
    store = server.store()
    ids = build_project(store)
    set_password(store, "lea", PW)
    yield store, ids
    store.dispose()


def caption(page):
    return page.locator('[data-testid="adj-caption"]')


def checked_types(page) -> set[str]:
    return set(page.evaluate("""() => Array.from(document.querySelectorAll('div[class*="st-key-adj_type_"]'))
        .filter((d) => d.querySelector('input') && d.querySelector('input').checked)
        .map((d) => Array.from(d.classList).find((c) => c.startsWith('st-key-adj_type_')).slice(16))"""))


def assert_types(page, expected: set[str], timeout: float = 10.0) -> None:
    """The ticked error types become ``expected`` within ``timeout`` s (Streamlit may still be drawing
    the other checkboxes when the first one shows); the last set seen is in the failure."""
    import time
    deadline = time.monotonic() + timeout
    seen = checked_types(page)
    while seen != expected and time.monotonic() < deadline:
        page.wait_for_timeout(50)
        seen = checked_types(page)
    assert seen == expected


def press(page, key):
    page.keyboard.press(key)
    page.wait_for_timeout(30)
    page.wait_for_function("() => window.__adjudicateKeyState && !window.__adjudicateKeyState.busy"
                           " && window.__adjudicateKeyState.queue.length === 0")
    wait_for_app(page)


def decisions(store):
    f = judgement_frame(store, PROJECT, kinds=("adjudication",))
    return {(int(r.caption_id), str(r.user)): (str(r.label), str(r.error_types)) for r in f.itertuples()}


def test_prefilled_form_and_keyboard_flow(server, study, page):
    store, ids = study
    tax = taxonomy()
    signed_in(page, server, "lea", PW, path="/adjudicate")
    # The first undecided disagreement by caption id: c2, labels differ (ann3 said accurate).
    expect(caption(page)).to_contain_text("caption A2: a man in a *red* shirt | 2")
    votes = page.locator('[data-testid="adj-votes"]')
    expect(votes).to_contain_text("ann3")
    wait_until_settled(page)
    expect(page.locator(".st-key-adj_type_clothing_color input")).to_be_checked()
    assert_types(page, {"clothing_type", "clothing_color"})  # the union, before any choice
    expect(page.locator('.st-key-adj_label input[type="radio"]').nth(1)).not_to_be_checked()

    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    press(page, tax.inaccurate_key)
    expect(page.locator('.st-key-adj_label input[type="radio"]').nth(1)).to_be_checked()
    # A type's key sets it: pressing a pre-filled type's key to confirm it keeps it (it used to untick it);
    # a second press clears it (issue 24 item 7). The one-line hint says so.
    expect(page.get_by_text("a type's key sets it, a second press clears it")).to_be_visible()
    press(page, tax.get("clothing_type").key)
    page.wait_for_timeout(300)
    assert_types(page, {"clothing_type", "clothing_color"})
    press(page, tax.get("clothing_type").key)      # drop one of the annotators' types
    assert_types(page, {"clothing_color"})
    press(page, "Enter")                           # decide and go to the next
    expect(caption(page)).to_contain_text("caption B2: two dogs on grass 2")
    assert decisions(store)[(ids[2], "lea")] == ("inaccurate", "clothing_color")

    # c12: ann1 inaccurate (scene), ann2 accurate. Typed fast: y then Enter, then on c3 Enter straight away.
    page.keyboard.press(tax.accurate_key)
    page.keyboard.press("Enter")
    page.wait_for_timeout(30)
    page.wait_for_function("() => !window.__adjudicateKeyState.busy && window.__adjudicateKeyState.queue.length === 0")
    wait_for_app(page)
    expect(caption(page)).to_contain_text("caption A3:")
    assert decisions(store)[(ids[12], "lea")] == ("accurate", "")
    # c3: all inaccurate, types differ; label and union pre-filled, so Enter alone decides.
    assert_types(page, {"unrelated", "scene", "number"})
    press(page, "Enter")
    expect(caption(page)).to_contain_text("caption B3:")
    label, types = decisions(store)[(ids[3], "lea")]
    assert (label, set(types.split())) == ("inaccurate", {"scene", "number", "unrelated"})
    # Decided captions leave the undecided list: B3 is its first now; the arrows move along it.
    press(page, "ArrowRight")
    expect(caption(page)).to_contain_text("caption A5:")
    press(page, "ArrowLeft")
    expect(caption(page)).to_contain_text("caption B3:")
    assert len(decisions(store)) == 6  # the three above and the three the project came with (boss and lea on c4, lea on c1)


def decision_spans(store, caption_id):
    from annotator.store.judgements import current_judgement
    from annotator.store.users import user_id
    with store.read() as conn:
        decided = current_judgement(conn, caption_id, user_id(conn, "lea"), "adjudication")
    return None if decided is None else decided.spans


def test_the_lead_redraws_spans_with_the_annotate_keys_and_the_decision_stores_them(server, study, laptop_page):
    from annotator.spans import Span
    store, ids = study
    tax = taxonomy()
    page = laptop_page
    signed_in(page, server, "lea", PW, path="/adjudicate")
    # c2 "caption A2: a man in a *red* shirt | 2": no annotator marked words; its words become selectable.
    word = lambda i: caption(page).locator(f'.ann-w[data-i="{i}"]')  # noqa: E731
    expect(word(6)).to_have_text("*red*")
    wait_until_settled(page)
    listed = page.locator('[data-testid="adj-decision-spans"]')
    expect(listed).to_have_text("The decision marks no words yet.")
    # The mouse: click "*red*", shift-click "shirt", then Color of clothing's key (ticked already).
    word(6).click()
    word(7).click(modifiers=["Shift"])
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    press(page, tax.get("clothing_color").key)
    expect(word(7)).to_have_attribute("data-badge", tax.get("clothing_color").key)
    # The word cursor: "man" (3) as Gender (which ticks it), then removed again with Backspace.
    for key in (",", ",", ",", ","):
        page.keyboard.press(key)
    expect(word(3)).to_have_class("ann-w ann-sel ann-cur")
    press(page, tax.get("gender").key)
    expect(word(3)).to_have_attribute("data-badge", tax.get("gender").key)
    expect(page.locator(".st-key-adj_type_gender input")).to_be_checked()
    page.keyboard.press(".")
    page.keyboard.press(",")
    press(page, "Backspace")
    expect(word(3)).not_to_have_attribute("data-badge", tax.get("gender").key)
    # "/" on the colour span edits its fix; each change reaches the server, which lists the decision's spans.
    page.once("dialog", lambda d: d.accept("blue shirt"))
    page.keyboard.press(".")
    page.keyboard.press(".")
    page.keyboard.press(".")
    press(page, "/")
    expect(word(7)).to_have_attribute("data-badge", tax.get("clothing_color").key + " → blue shirt")
    expect(listed).to_have_text("Color of clothing: “*red* shirt” (words 6–7) → blue shirt")
    press(page, tax.inaccurate_key)
    press(page, "Enter")
    expect(caption(page)).to_contain_text("caption B2: two dogs on grass 2")
    assert decision_spans(store, ids[2]) == (Span(6, 8, "clothing_color", "blue shirt"),)
    assert decisions(store)[(ids[2], "lea")][0] == "inaccurate"
