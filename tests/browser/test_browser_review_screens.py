"""The review screens in headless Chromium at 1280×720 and 1366×768 (issue 38, items 7, 9, 12, 14, 15): what a lead
or an analyst sees on the first screen of Team, Agreement, Error analysis, Adjudication of a long caption, and the
pages' tables, charts and buttons laid out whole."""

from __future__ import annotations

import pytest

from annotator.accounts.auth import add_user
from annotator.sample import SAMPLE_DIR, load_sample
from tests.browser.annotate_helpers import sized_page
from tests.browser.conftest import signed_in, wait_until_settled

pytestmark = [pytest.mark.browser]

PW = "correct horse battery"
SIZES = [(1280, 720), (1366, 768)]


@pytest.fixture
def sample(server):
    """The sample project with its two demo annotators' judgements; lea (lead) and ana (analyst)."""
    store = server.store()
    try:
        load_sample(store, with_judgements=True)
        add_user(store, "lea", "lead", PW)
        add_user(store, "ana", "analyst", PW)
    finally:
        store.dispose()
    return server


@pytest.fixture
def long_captions(server):
    """Only the long-caption example project (three paragraph-long captions, two annotators' spans); lea."""
    from annotator.io.jsonl import import_jsonl
    from annotator.io.judgement_rows import import_judgement_rows
    store = server.store()
    try:
        import_jsonl(store, "long-captions", SAMPLE_DIR / "long_captions.jsonl")
        import_judgement_rows(store, "long-captions", SAMPLE_DIR / "long_captions_judgements.jsonl")
        add_user(store, "lea", "lead", PW)
    finally:
        store.dispose()
    return server


def open_page(browser, server, size, user: str, path: str):
    """(context, page) of ``user`` on ``path`` in a window of ``size``, settled."""
    context, page = sized_page(browser, *size)
    signed_in(page, server, user, PW, path=path)
    wait_until_settled(page, quiet_ms=800)
    return context, page


def top_of(page, selector: str) -> float:
    """The top of the first element matching ``selector``, in the window (the page not scrolled)."""
    return page.locator(selector).first.bounding_box()["y"]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_review_pages_start_with_their_figures(sample, browser, size):
    """Item 14: a one-line header, the page's prose folded, and the first table (or figure) in the upper half
    of the first screen: Team's was at y≈520 of 720."""
    for user, path, first in (("lea", "/team", '[data-testid="stDataFrame"]'),
                              ("lea", "/agreement", '[data-testid="stMetric"]'),
                              ("ana", "/analysis", '[data-testid="stMetric"]')):
        context, page = open_page(browser, sample, size, user, path)
        try:
            # One line (polled: a page still drawing its header's columns may wrap the title for a moment).
            page.wait_for_function("""() => { const h = document.querySelector('h1');
                return h && h.getBoundingClientRect().height <= 60; }""", timeout=10_000)
            about = page.get_by_text("About this page")
            assert about.is_visible(), path
            y = top_of(page, first)
            assert y <= size[1] / 2, (path, y)
        finally:
            context.close()


def in_view(page, selector: str, size) -> list[str]:
    """The elements matching ``selector`` that are not wholly inside the window (their test ids or classes)."""
    return page.evaluate("""([sel, w, h]) => Array.from(document.querySelectorAll(sel)).filter((e) => {
            const r = e.getBoundingClientRect();
            return r.top < 0 || r.left < 0 || r.bottom > h || r.right > w;
        }).map((e) => e.className.toString().split(' ').find((c) => c.startsWith('st-key-')) || e.tagName)""",
                         [selector, size[0], size[1]])


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_adjudicating_a_long_caption_keeps_the_decision_in_view(long_captions, browser, size):
    """Item 7: the bundled 1,968-character caption is shown once, each annotator's spans a row of marks under its
    words, and the decision (label, every type, Decide & next) in view on the first screen; the page was 5,860 px
    tall with the caption once per annotator."""
    context, page = open_page(browser, long_captions, size, "lea", "/adjudicate")
    try:
        # Every box drawn (a busy machine shows placeholders of another height first).
        page.wait_for_function("""() => document.querySelectorAll('div[class*="st-key-adj_type_"] input').length === 20
            && !!document.querySelector('.st-key-adj_save button') && !!document.querySelector('.st-key-adj_note input')""")
        wait_until_settled(page, quiet_ms=500)
        caption = page.locator('[data-testid="adj-caption"]')
        text = caption.inner_text()
        assert len(" ".join(text.split())) >= 1900
        main = page.locator('[data-testid="stMain"]')
        opening = " ".join(text.split()[:8])
        assert " ".join(main.evaluate("(m) => m.textContent").split()).count(opening) == 1   # the caption once
        picked = page.evaluate("""() => { const b = document.querySelector('.st-key-adj_caption');
            const i = b.querySelector('input'); return b.textContent + ' ' + (i ? i.value : ''); }""")
        assert "astronaut.jpg · vlm-para, line 0" in picked, picked   # item 8: named as the files name it
        # One row of marks per annotator under the words, where that annotator's spans are (astronaut.jpg's
        # caption: sample-ann marks words 19-21 as Gender, sample-ben 20-21).
        marks = page.evaluate("""() => Array.from(document.querySelectorAll('[data-testid="adj-caption"] .ann-w'))
            .map((w) => Array.from(w.querySelectorAll('.adj-marks i')).map((i) => i.dataset.who || ''))""")
        assert all(len(m) == 2 for m in marks)
        assert marks[19] == ["sample-ann", ""] and marks[20] == ["sample-ann", "sample-ben"] and marks[0] == ["", ""]
        # The decision in view at once: the label, all 20 types, the note and Decide & next.
        out = in_view(page, '.st-key-adj_label, div[class*="st-key-adj_type_"], .st-key-adj_note, .st-key-adj_save',
                      size)
        assert out == [], out
        assert page.locator('div[class*="st-key-adj_type_"]').count() == 20
        height = main.evaluate("(m) => m.scrollHeight")
        assert height <= 3 * size[1], height   # the picture and references below; it was 5,860 px
    finally:
        context.close()


def grids_overflowing(page) -> list[dict]:
    """Every table (streamlit's data grid) that scrolls inside itself: sideways (columns cut at the right edge) or
    up and down (rows hidden in an inner scroll)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('[data-testid="stDataFrame"]')).map((t, k) => {
            const s = t.querySelector('.dvn-scroller');
            return s && {k, wide: s.scrollWidth - s.clientWidth, tall: s.scrollHeight - s.clientHeight};
        }).filter((g) => g && (g.wide > 1 || g.tall > 1))""")


def cut_buttons(page) -> list[str]:
    """The buttons whose label does not fit them (shown with an ellipsis)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('[data-testid="stMain"] button'))
        .map((b) => b.querySelector('p') || b).filter((p) => p.scrollWidth > p.clientWidth + 1)
        .map((p) => p.textContent)""")


def show_all(page) -> None:
    """Scroll through the page so every table and chart is drawn (streamlit draws a grid when it comes into view)."""
    page.evaluate("""async () => { const m = document.querySelector('[data-testid="stMain"]');
        for (let y = 0; y < m.scrollHeight; y += 400) { m.scrollTo(0, y); await new Promise((r) => setTimeout(r, 60)); }
        m.scrollTo(0, 0); }""")
    wait_until_settled(page, quiet_ms=500)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_tables_and_buttons_are_whole(sample, browser, size):
    """Items 9 and 12: Error analysis shows its tables (≤ 25 rows each) whole, without an inner scroll; Lexical
    diversity's and Error estimates' tables fit the page's width; no button label is cut."""
    for path in ("/analysis", "/diversity", "/estimate"):
        context, page = open_page(browser, sample, size, "ana", path)
        try:
            show_all(page)
            assert page.locator('[data-testid="stDataFrame"]').count() >= 2, path
            # Error analysis' tables hold at most 25 rows: whole. The estimates' 42 rows may scroll, not sideways.
            over = [g for g in grids_overflowing(page) if g["wide"] > 1 or path == "/analysis"]
            assert over == [], (path, over)
            assert cut_buttons(page) == [], path
        finally:
            context.close()
