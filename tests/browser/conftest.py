"""Browser-test fixtures: a real ``streamlit run serve.py`` server (app.py with its session-cookie routes) and headless Chromium (reusable by everyone).

Fixtures
--------
``app_server``   a factory: ``app_server(db_url, port=None, env=None)`` starts the app on a free port
                 against ``db_url`` and returns a :class:`Server` (``.url``, ``.port``, ``.stop()``,
                 ``.kill()``, ``.log()``); every server started is stopped after the test.
``server``       one server on a fresh temporary SQLite file (``server.db_url``, ``server.store()``,
                 ``server.seeded(build, *users)``).
``browser``      headless Debian Chromium through Playwright (one for the browser tests a worker runs in a row).
``page``         a fresh browser context and page (1400x1000), closed after the test.

Helpers
-------
``wait_for_app(page)``  wait until Streamlit has finished its current run.
``login(page, base_url, name, password)``  log in through the form.
``signed_in(page, server, name, password)``  open the app already logged in: the session the form would start,
                 its cookie set in the page's context (for tests whose subject is not the log-in itself).

Tests here are marked ``@pytest.mark.browser``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.zygote import launch

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("ANNOTATOR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
STARTUP_TIMEOUT = 60.0
#: Playwright waits (ms). Generous: CI machines are small and busy, and a rerun is a server round trip.
WAIT_MS = 30_000


def _configure_expect() -> None:
    from playwright.sync_api import expect
    expect.set_options(timeout=WAIT_MS)


_configure_expect()


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A running ``streamlit run serve.py`` process."""

    port: int
    db_url: str
    proc: subprocess.Popen  # or a ForkedServer (tests/zygote.py)
    log_path: Path
    env: dict = field(default_factory=dict)

    @property
    def url(self) -> str:
        """Base URL of the app."""
        return f"http://127.0.0.1:{self.port}"

    def store(self):
        """A Store on the same database (for checking rows); dispose it when done."""
        from annotator.store import open_store
        return open_store(self.db_url)

    @contextlib.contextmanager
    def seeded(self, build, *users):
        """This server's store with ``build(store)``'s data and ``users`` ((name, role, password) each) added;
        yields (store, what ``build`` returned) and disposes the store afterwards."""
        from annotator.accounts.auth import add_user
        store = self.store()
        try:
            built = build(store)
            for name, role, password in users:
                add_user(store, name, role, password)
            yield store, built
        finally:
            store.dispose()

    def log(self) -> str:
        """Everything the server printed so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        """Terminate politely (then kill)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def kill(self) -> None:
        """Kill -9, as a crash would."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def start_server(db_url: str, log_dir: Path, *, port: int | None = None, env: dict | None = None) -> Server:
    """Start the app and wait until /_stcore/health answers."""
    port = port or free_port()
    full_env = dict(os.environ)
    full_env.update({"ANNOTATOR_DATABASE_URL": db_url, "ANNOTATOR_SAMPLE": "0", "PYTHONPATH": str(ROOT)})
    full_env.update(env or {})
    log_path = log_dir / f"streamlit-{port}-{int(time.time() * 1000)}.log"
    args = ["run", str(ROOT / "serve.py"), "--server.port", str(port), "--server.address", "127.0.0.1",
            "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    zygote_env = dict(os.environ)
    zygote_env["PYTHONPATH"] = str(ROOT)
    proc = launch(args, env=full_env, cwd=str(ROOT), log_path=str(log_path), zygote_env=zygote_env)
    server = Server(port, db_url, proc, log_path, env or {})
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{server.log()}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return server
        except OSError:
            pass
        time.sleep(0.2)
    server.kill()
    raise RuntimeError(f"streamlit did not become healthy in {STARTUP_TIMEOUT}s:\n{server.log()}")


@pytest.fixture
def app_server(tmp_path):
    """Factory fixture: start app servers; all are stopped at the end of the test."""
    started: list[Server] = []

    def factory(db_url: str, *, port: int | None = None, env: dict | None = None) -> Server:
        server = start_server(db_url, tmp_path, port=port, env=env)
        started.append(server)
        return server

    yield factory
    for s in started:
        s.stop()


@pytest.fixture
def server(app_server, tmp_path):
    """The app on a fresh temporary SQLite database."""
    return app_server(f"sqlite:///{tmp_path / 'browser.db'}")


_shared: dict = {}  # the worker's Playwright and Chromium while it runs browser tests (see ``browser``)


@pytest.fixture
def browser():
    """Headless Chromium (Debian's), shared by the browser tests a worker runs one after another.

    Started by the first of them and stopped as the worker goes on to a test that does not use it
    (:func:`pytest_runtest_teardown`): while Playwright's synchronous API is open it keeps an event loop running in
    the main thread, and a later test that runs asyncio itself (``asyncio.run``) would fail there."""
    if "browser" not in _shared:
        from playwright.sync_api import sync_playwright
        if not Path(CHROMIUM).exists():
            pytest.fail(f"Chromium not found at {CHROMIUM} (set ANNOTATOR_CHROMIUM)")
        playwright = sync_playwright().start()
        _shared["playwright"] = playwright
        _shared["browser"] = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    return _shared["browser"]


@pytest.hookimpl(trylast=True)  # after the test's own fixtures (its pages and contexts) are torn down
def pytest_runtest_teardown(item, nextitem):
    """Stop the shared Chromium and Playwright when the next test does not use them, or none follows."""
    if _shared and (nextitem is None or "browser" not in nextitem.fixturenames):
        stop_shared_browser()


def stop_shared_browser() -> None:
    """Close the worker's shared Chromium and stop its Playwright (nothing if they are not running)."""
    browser, playwright = _shared.pop("browser", None), _shared.pop("playwright", None)
    try:
        if browser is not None:
            browser.close()
    finally:
        if playwright is not None:
            playwright.stop()


@pytest.fixture
def page(browser):
    """A fresh context and page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(WAIT_MS)
    pg = context.new_page()
    yield pg
    context.close()


def wait_for_app(page, timeout: float = WAIT_MS) -> None:
    """Wait until Streamlit is connected and no script run is in progress."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    page.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            if (!app) return false;
            const state = app.getAttribute('data-test-script-state');
            return state !== 'running' && state !== 'rerun'
                && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]');
        }""",
        timeout=timeout,
    )


def wait_until_settled(page, quiet_ms: int = 500, timeout: float = WAIT_MS) -> None:
    """Wait until Streamlit has been idle for ``quiet_ms`` in a row (a page load can chain
    several runs, e.g. the first request after a server start reruns once into app.py)."""
    wait_for_app(page, timeout)
    page.wait_for_function(
        """(quiet) => {
            const app = document.querySelector('[data-testid="stApp"]');
            const state = app && app.getAttribute('data-test-script-state');
            const now = Date.now();
            if (!app || state === 'running' || state === 'rerun') { window.__stIdleSince = null; return false; }
            window.__stIdleSince = window.__stIdleSince || now;
            return now - window.__stIdleSince >= quiet;
        }""",
        arg=quiet_ms, polling=50, timeout=timeout,
    )


def choose_option(page, box, option: str, *, attempts: int = 3) -> None:
    """Open the select box ``box`` (a locator of its combobox or of the element around it) and click ``option``.

    The box is scrolled into view first: a click on a box below the fold scrolls the page, and a scroll that
    lands after the list has opened closes it again, so the list is reopened if it is not there."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    for attempt in range(attempts):
        try:
            box.scroll_into_view_if_needed()
            break
        except PlaywrightError as exc:
            # A rerun can draw the box again between finding it and scrolling to it (seen after a dialog closed):
            # unlike a click, this scroll does not look the locator up again by itself.
            if "not attached" not in str(exc) or attempt == attempts - 1:
                raise
            wait_for_app(page)
    wanted = page.get_by_role("option", name=option, exact=True)
    for attempt in range(attempts):
        box.click()
        try:
            wanted.wait_for(state="visible", timeout=3_000)
        except PlaywrightTimeoutError:
            if attempt == attempts - 1:
                raise
            page.keyboard.press("Escape")
            continue
        wanted.click()
        return


def login(page, base_url: str, name: str, password: str, *, path: str = "/") -> None:
    """Open the app (at ``path``) and log in through the form."""
    page.goto(base_url + path)
    wait_until_settled(page)
    page.get_by_label("User name").fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_selector('[data-testid="stSidebar"]', state="attached")  # folded on an annotator's Annotate
    wait_for_app(page)


def signed_in(page, server: Server, name: str, password: str, *, path: str = "/") -> None:
    """Open the app (at ``path``) with ``name`` already logged in, as a reload or a new tab finds it.

    The session is started in the store as the log-in form starts it (authenticate, then start_session and the
    cookie route's redeem_handoff), and its cookie is set in the page's context before the page opens. The
    form's own page, its 0.5 s of settling and its round trips are skipped: about 1 s of a test's time and 1 to
    1.5 s of Chromium's CPU (measured 2026-11-28: 46 converted calls, 332.7 s before, 299.7 s after). Tests about
    logging in (test_browser_sessions, the people, security and markdown tests, the first annotate test) and
    those about keys typed as the page first appears after a log-in go through the form with :func:`login`."""
    from annotator.accounts.auth import authenticate
    from annotator.accounts.sessions import COOKIE_NAME, redeem_handoff, start_session
    store = server.store()
    try:
        started = start_session(store, authenticate(store, name, password))
        value, _max_age = redeem_handoff(store, started.handoff_code)
    finally:
        store.dispose()
    page.context.add_cookies([{"name": COOKIE_NAME, "value": value, "url": server.url, "httpOnly": True,
                               "sameSite": "Strict"}])
    page.goto(server.url + path)
    page.wait_for_selector('[data-testid="stSidebar"]', state="attached")  # folded on an annotator's Annotate
    wait_for_app(page)
