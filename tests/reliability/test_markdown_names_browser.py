"""In Chromium: Markdown in project, system, item, box and user names is shown as characters. The Annotate
header and the lead's pages never fetch an image named in a project name (no request reaches the image's
server), and links, KaTeX and colour directives are not rendered.
"""

from __future__ import annotations

import http.server
import threading

import pytest
from playwright.sync_api import expect

from annotator.annotation import Queue
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.model import Box, Caption, Item, Project, Reference, Role
from annotator.store.projects import write_project
from tests.browser.conftest import app_server, login, wait_until_settled  # noqa: F401  (app_server is a fixture)

from reliability_browser import PW, run_with_browser

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802 - the http.server interface
        type(self).hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def image_host():
    """A web server that records every request (the image a name points at would be fetched from it)."""
    _Recorder.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}", _Recorder.hits
    server.shutdown()


def _names(host):
    payload = f"![b](http://{host}/x.png)[l](http://{host}/l)$x^2$:red[r]"
    return {"project": "p" + payload, "system": "s" + payload, "key": "k" + payload, "box": "dog" + payload,
            "payload": payload}


def _rendered(main, names) -> dict:
    """What Markdown would have made of the names (images, links, formulas, coloured text), and the visible
    text without the invisible word joiners that keep plain URLs from becoming links."""
    return {"img": main.locator("img[src*='x.png']").count(),
            "a": main.locator("a[href^='http'], a[href^='mailto']").count(),
            "katex": main.locator(".katex").count(),
            "colour": main.locator('.stMarkdownColoredText').count(),
            "visible": main.inner_text().replace("\u2060", "")}


def _visit(browser, server, names, requests: list) -> dict:
    shown = {}
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    ctx.set_default_timeout(30_000)
    ctx.on("request", lambda r: requests.append(r.url))
    page = ctx.new_page()
    login(page, server.url, "ann1", PW, path="/annotate")
    main = page.locator('[data-testid="stMain"]')
    expect(main.locator('[data-testid="ann-caption"]')).to_be_visible()
    wait_until_settled(page)
    shown["annotate"] = _rendered(main, names)
    assert f"Annotate · {names['project']}" in shown["annotate"].pop("visible")  # the name, character for character
    ctx.close()

    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    ctx.set_default_timeout(30_000)
    ctx.on("request", lambda r: requests.append(r.url))
    page = ctx.new_page()
    login(page, server.url, "lea", PW, path="/agreement")
    for title in ("Agreement", "Adjudication", "Error analysis", "Assignment"):
        page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title).first.click()
        expect(page.locator("h1").first).to_have_text(title)
        wait_until_settled(page)
        shown[title] = _rendered(page.locator('[data-testid="stMain"]'), names)
        shown[title]["text"] = shown[title].pop("visible").count(names["payload"])
    ctx.close()
    return shown


def test_markdown_in_names_is_never_rendered_nor_fetched(app_server, tmp_path, image_host):  # noqa: F811
    from annotator.store import open_store
    host, hits = image_host
    names = _names(host)
    store = open_store(f"sqlite:///{tmp_path / 'names.db'}")
    items = [Item(key=names["key"] + str(i), width=320, height=240, boxes=[Box("1", names["box"], 10, 10, 100, 100)],
                  references=[Reference("the dog")], captions=[Caption(names["system"], f"a dog number {i}")])
             for i in range(2)]
    with store.transaction() as conn:
        write_project(conn, Project(names["project"], items=items))
    for name in ("ann1", "ann2"):
        add_user(store, name, "annotator", PW)
    add_user(store, "lea", "lead", PW)
    assign(store, names["project"], ["ann1", "ann2"], double_fraction=1.0, second_pass="full")
    for name, label, types in (("ann1", "inaccurate", ("gender",)), ("ann2", "accurate", ())):
        q = Queue.open(store, name, Role.ANNOTATOR, names["project"])
        q.save(q.task(q.first_todo()), label, types, "", 1.0)
    server = app_server(store.url)
    requests: list[str] = []
    shown = run_with_browser(lambda browser: _visit(browser, server, names, requests))
    store.dispose()
    assert [u for u in requests if host in u] == [] and hits == []  # nothing asked the image's server
    assert all(s["img"] == s["a"] == s["katex"] == s["colour"] == 0 for s in shown.values()), shown
    # The names did reach these pages, as their literal characters.
    assert shown["Agreement"]["text"] >= 1 and shown["Adjudication"]["text"] >= 1, shown
