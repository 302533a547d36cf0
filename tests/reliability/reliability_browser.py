"""Browser helpers of the reliability tests: drive the annotate page, notice a dead server at once."""

from __future__ import annotations

import re
import time

from annotator.store.judgements import current_judgement

PW = "correct horse battery"
TYPES = ["scene", "gender", "activity"]


class ServerGone(Exception):
    """The server died before the page confirmed the save."""


IDLE = """() => { const a = document.querySelector('[data-testid="stApp"]');
                   const s = a && a.getAttribute('data-test-script-state');
                   return !!a && s !== 'running' && s !== 'rerun'; }"""


def until(page, cond, what: str, server=None, timeout: float = 30.0) -> None:
    """Poll ``cond()`` until true; ServerGone at once if ``server`` died, AssertionError (with the page text) on timeout."""
    t0 = time.monotonic()
    while not cond():
        if server is not None and server.proc.poll() is not None:
            raise ServerGone(what)
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"{what}: not within {timeout} s; the page at {page.url} shows "
                                 f"{page.locator('body').inner_text()[:800]!r}")
        page.wait_for_timeout(25)


def click(page, locator, what: str, server=None, timeout: float = 30.0) -> None:
    """Click ``locator`` once it can be clicked; ServerGone at once if ``server`` died meanwhile.

    Streamlit disables its widgets when the server goes away, and a plain click waits for them to come back until
    Playwright's timeout: after a kill, the killed-server test spent 30 s of its 40 there."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    def clicked() -> bool:
        try:
            locator.click(timeout=1000)  # then ask again whether the server is alive
        except PlaywrightTimeout:
            return False
        return True
    until(page, clicked, f"{what} clicked", server, timeout)


def caption_number(page, server=None) -> int:
    """The number of the caption on screen."""
    loc = page.locator('[data-testid="ann-caption"]')
    until(page, lambda: loc.count() > 0, "a caption on the page", server)
    return int(re.search(r"number (\d+)", loc.first.inner_text()).group(1))


def settle(page, server=None) -> None:
    """Wait until Streamlit has finished its run (like conftest's wait_for_app, but noticing a dead server)."""
    page.wait_for_timeout(30)
    until(page, lambda: page.evaluate(IDLE), "the app finishing its run", server)


def choose(page, n: int, server=None) -> tuple[str, tuple[str, ...]]:
    """Set the widgets for caption ``n``: accurate for even n, else one error type (implies inaccurate)."""
    # Once the page's run is over: a click while a run is still applying its values (a page just loaded or
    # reconnected to a restarted server) is overwritten by them, as it would be for a person.
    settle(page, server)
    radios = page.locator('.st-key-ann_label input[type="radio"]')
    if n % 2 == 0:
        click(page, page.locator(".st-key-ann_label label").filter(has_text=re.compile(r"^Accurate")), "Accurate", server)
        until(page, lambda: radios.nth(0).is_checked(), "Accurate chosen", server)
        settle(page, server)
        return "accurate", ()
    t = TYPES[n % len(TYPES)]
    click(page, page.locator(f".st-key-ann_type_{t} label"), f"type {t}", server)
    # Inaccurate is set by the server's callback for the tick: once it shows, the tick has arrived.
    until(page, lambda: radios.nth(1).is_checked(), f"type {t} ticked", server)
    settle(page, server)
    return "inaccurate", (t,)


def save_and_confirm(page, n: int, server=None) -> None:
    """Click "Save & next" and wait until the page confirms caption ``n``."""
    click(page, page.locator(".st-key-ann_save button"), "Save & next", server)
    ack = page.get_by_text(f"Saved item img{n}.jpg")
    until(page, ack.is_visible, f"save of caption {n} confirmed", server)


def current_of(store, caption_id, user="alice"):
    """``user``'s current judgement of a caption (None if there is none)."""
    from annotator.store.users import user_id
    with store.read() as conn:
        return current_judgement(conn, caption_id, user_id(conn, user))


def run_in_thread(fn, timeout: float = 400.0):
    """Run ``fn()`` in a fresh thread and return its result (its exception is raised again here).

    The browser tests in tests/browser keep a Playwright open in the main
    thread while a worker runs them one after another, and Playwright refuses
    a second one (sync or async) in a thread whose event loop is taken; a
    fresh thread has none, so these tests do not depend on which other tests
    ran before them.
    """
    import threading
    out: dict = {}

    def target():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            out["error"] = exc

    t = threading.Thread(target=target, name="browser-test", daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise TimeoutError(f"the browser part of the test did not finish within {timeout} s")
    if "error" in out:
        raise out["error"]
    return out.get("value")


def run_with_browser(body, timeout: float = 400.0):
    """``body(browser)`` with a headless Chromium of its own, in a thread of its own (see :func:`run_in_thread`)."""
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    def fn():
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                return body(browser)
            finally:
                browser.close()
    return run_in_thread(fn, timeout)


def new_page(browser, base_url: str | None = None, user: str | None = None, *, path: str = "/annotate"):
    """A fresh context and page (1400x1000), logged in as ``user`` when given; returns (context, page)."""
    from tests.browser.conftest import login
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(30_000)
    page = ctx.new_page()
    if user is not None:
        login(page, base_url, user, PW, path=path)
    return ctx, page
