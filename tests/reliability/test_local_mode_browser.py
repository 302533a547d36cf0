"""In Chromium against a server bound to 127.0.0.1 with no account yet: a browser whose requests carry a proxy's
X-Forwarded-For gets the log-in form and the first-admin hint, never the local admin's pages; the same
browser without the header (straight from the server's machine) works in local mode.
"""

from __future__ import annotations

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
