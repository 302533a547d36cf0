"""Shared pieces of the annotate page's browser tests: the seeded project, key presses, reads."""

from __future__ import annotations

import pytest

from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.store.judgements import history
from tests.apptest_helpers import seed_project
from tests.browser.conftest import WAIT_MS, choose_option, login, wait_for_app, wait_until_settled

PW = "correct horse battery"


def seeded(server, tmp_path, n_items: int = 8):
    """A project 'demo' of ``n_items`` captions (with images) all assigned to annotator alice."""
    store = server.store()
    caps = seed_project(store, "demo", n_items=n_items, image_root=str(tmp_path / "img"), with_images=True)
    add_user(store, "alice", "annotator", PW)
    assign(store, "demo", ["alice"], double_fraction=0)
    return store, caps


@pytest.fixture
def project(server, tmp_path):
    """(store, caption ids) of an 8-caption project assigned to alice."""
    store, caps = seeded(server, tmp_path)
    yield store, caps
    store.dispose()


def sized_page(browser, width: int, height: int):
    """(context, page) with a window of ``width`` x ``height``; close the context when done."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(WAIT_MS)
    return context, context.new_page()


def caption(page):
    """The caption on screen."""
    return page.locator('[data-testid="ann-caption"]')


def rows(store, caption_id):
    """Every stored revision of a caption."""
    with store.read() as conn:
        return history(conn, caption_id)


def unfocus(page):
    """Keys go to the page itself, as after opening it (no widget has the focus)."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")


def keys_settled(page):
    """Wait until the page's key handler has nothing in flight, then until Streamlit is idle."""
    page.wait_for_function("() => !window.__annotatorKeyState || (!window.__annotatorKeyState.busy"
                           " && window.__annotatorKeyState.queue.length === 0)")
    wait_for_app(page)


def stored(page, caption_id: int, revision: int = 1) -> None:
    """Wait until the page says the save of ``caption_id`` (at ``revision`` or later) is in the store: Save & next
    shows the next caption before the server has stored the judgement (annotate/next.js), so a test reads the
    store only once the page's state marker names the save."""
    page.wait_for_function(
        """([c, r]) => { const m = document.querySelector('[data-testid="ann-state"]');
                         return !!m && Number(m.getAttribute('data-stored-caption')) === c
                                && Number(m.getAttribute('data-stored-revision')) >= r; }""", arg=[caption_id, revision])


def press(page, key):
    """Press ``key`` and wait until what it started is over. Waits first for the page's key handler, as a
    person waits for the page to appear: a key pressed before the handler is on the page reaches nothing."""
    page.wait_for_function("() => !!window.__annotatorKeyState")
    page.keyboard.press(key)
    page.wait_for_timeout(30)  # let the handler start before checking that it settled
    keys_settled(page)


@pytest.fixture
def small_project(server, tmp_path):
    """(store, caption ids) of a 4-caption project assigned to alice."""
    store, caps = seeded(server, tmp_path, n_items=4)
    yield store, caps
    store.dispose()


@pytest.fixture
def laptop_page(browser):
    """A page in a 1280 x 720 window, closed after the test."""
    context, pg = sized_page(browser, 1280, 720)
    yield pg
    context.close()


def resume(page, base_url: str, name: str, password: str, *, path: str = "/annotate") -> None:
    """Open ``path`` again and log in only when the app asks (a stored session survives reloads and,
    while it is valid, a restart of the server)."""
    page.goto(base_url + path)
    wait_until_settled(page)
    if page.get_by_label("User name").count():
        login(page, base_url, name, password, path=path)


def choose_project(page, name: str) -> None:
    """Open the sidebar when it is folded and choose project ``name`` in it."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    if sidebar.get_attribute("data-collapsed") == "true":
        page.locator('[data-testid="stExpandSidebarButton"]').click()
        from playwright.sync_api import expect
        expect(sidebar).to_have_attribute("data-collapsed", "false")
    choose_option(page, sidebar.get_by_role("combobox", name="Project"), name)
