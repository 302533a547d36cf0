"""In Chromium against a server bound to 127.0.0.1 with no account yet: a browser whose requests carry a proxy's
X-Forwarded-For gets the log-in form and the first-admin hint, never the local admin's pages; the same
browser without the header (straight from the server's machine) works in local mode. A page whose own name
was rebound to 127.0.0.1 (DNS rebinding, reproduced with Chromium's host resolver rules) gets the log-in form
too, and a page of another loopback origin cannot open the app's websocket.
"""

from __future__ import annotations

import http.server
import threading
from contextlib import contextmanager

import pytest
from playwright.sync_api import expect

from tests.apptest_helpers import seed_project
from tests.browser.conftest import app_server, wait_until_settled  # noqa: F401  (app_server is a fixture)

from reliability_browser import run_with_browser

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _visit(browser, server) -> None:
    proxied = browser.new_context(viewport={"width": 1280, "height": 720},
                                  extra_http_headers={"X-Forwarded-For": "203.0.113.9"})
    page = proxied.new_page()
    for path in ("/", "/data"):
        page.goto(server.url + path)
        wait_until_settled(page)
        expect(page.get_by_label("User name")).to_be_visible()
        expect(page.get_by_text("annotator users add NAME --role admin")).to_be_visible()
        expect(page.get_by_text("Local mode", exact=True)).to_have_count(0)
        expect(page.get_by_text("Data & users")).to_have_count(0)
    proxied.close()

    local = browser.new_context(viewport={"width": 1280, "height": 720})
    page = local.new_page()
    page.goto(server.url + "/")
    wait_until_settled(page)
    expect(page.get_by_text("Local mode", exact=True)).to_be_visible()
    expect(page.get_by_label("User name")).to_have_count(0)
    local.close()


def test_proxied_browser_is_not_the_local_admin(app_server, tmp_path):  # noqa: F811
    from annotator.store import open_store
    store = open_store(f"sqlite:///{tmp_path / 'local.db'}")
    seed_project(store, "demo", n_items=2)
    store.dispose()
    server = app_server(f"sqlite:///{tmp_path / 'local.db'}")
    run_with_browser(lambda browser: _visit(browser, server))


OPEN_WEBSOCKET = """(url) => new Promise(done => {
    const ws = new WebSocket(url, ["streamlit"]);
    ws.onopen = () => { done("open"); ws.close(); };
    ws.onerror = () => done("refused");
    setTimeout(() => done("timeout"), 10000);
})"""


@contextmanager
def _other_local_server():
    """Another web server on this machine (a loopback port of its own) serving a plain page; yields its port."""
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html><body>another local page</body></html>")

        def log_message(self, *args):
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        yield other.server_address[1]
    finally:
        other.shutdown()
        other.server_close()


def _open_websocket(page, server) -> str:
    """What became of a websocket to the app opened by the page in the browser: open, refused or timeout."""
    return page.evaluate(OPEN_WEBSOCKET, f"ws://127.0.0.1:{server.port}/_stcore/stream")


def _rebound(server) -> None:
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
    from reliability_browser import run_in_thread

    def fn():
        with sync_playwright() as p:
            # evil.example resolves to the server's address, as a rebinding DNS server would make it.
            browser = p.chromium.launch(executable_path=CHROMIUM,
                                        args=CHROMIUM_ARGS + ["--host-resolver-rules=MAP evil.example 127.0.0.1"])
            try:
                page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
                for path in ("/", "/people", "/data"):
                    page.goto(f"http://evil.example:{server.port}{path}")
                    wait_until_settled(page)
                    expect(page.get_by_label("User name")).to_be_visible()
                    expect(page.get_by_text("annotator users add NAME --role admin")).to_be_visible()
                    expect(page.get_by_text("Local mode", exact=True)).to_have_count(0)
                    expect(page.get_by_text("Data & users")).to_have_count(0)
                    expect(page.get_by_text("People", exact=True)).to_have_count(0)
                # A page of another web server on this machine (another port) opens the app's websocket.
                with _other_local_server() as other:
                    page.goto(f"http://localhost:{other}/")
                    outcome = _open_websocket(page, server)
                assert outcome == "refused", outcome
                # The app's own page still connects (the same check lets its own origin through).
                page.goto(server.url + "/")
                wait_until_settled(page)
                expect(page.get_by_text("Local mode", exact=True)).to_be_visible()
                own = _open_websocket(page, server)
                assert own == "open", own
            finally:
                browser.close()
    run_in_thread(fn, 400)


def test_rebound_name_is_not_the_local_admin(app_server, tmp_path):  # noqa: F811
    from annotator.store import open_store
    store = open_store(f"sqlite:///{tmp_path / 'local.db'}")
    seed_project(store, "demo", n_items=2)
    store.dispose()
    server = app_server(f"sqlite:///{tmp_path / 'local.db'}")
    _rebound(server)
