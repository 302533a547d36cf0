"""Untrusted text in a real browser: captions, references, notes, item keys, box labels, system and project
names carrying HTML, script and Markdown are shown as text on every page that shows them, and no script runs.

Each payload, if it ever ran, would set ``window.__pwned`` or open a dialog; the test reads both after
every page, and checks that the caption's markup is visible as literal characters.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.annotation import Queue
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.model import Box, Caption, Item, Mention, Project, Reference, Role
from annotator.store.projects import write_project
from tests.browser.conftest import app_server, login, wait_until_settled  # noqa: F401  (app_server is a fixture)

from reliability_browser import PW, run_with_browser

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

IMG = '<img src=x onerror="window.__pwned=(window.__pwned||[]).concat(\'{}\')">'
SCRIPT = "<script>window.__pwned=(window.__pwned||[]).concat('{}')</script>"
SVG = "<svg onload=\"window.__pwned=(window.__pwned||[]).concat('{}')\"></svg>"


def payload(where: str) -> str:
    """Markup that would record ``where`` in window.__pwned if the browser ever ran it, plus Markdown."""
    return f"{IMG.format(where)} {SCRIPT.format(where)} {SVG.format(where)} **{where}** [link](javascript:alert(1))"


PROJECT = "p<b>x</b>"
SYSTEM = "sys<i>y</i>"
CAPTION = "A dog " + payload("caption")
NOTE = "note " + payload("note")


@pytest.fixture
def hostile_app(app_server, tmp_path):  # noqa: F811
    """Two annotators double-annotate two captions full of markup; lea is their lead."""
    from annotator.store import open_store
    url = f"sqlite:///{tmp_path / 'hostile.db'}"
    store = open_store(url)
    items = [Item(key=f"k{i}" + IMG.format(f"item-key-{i}"), width=320, height=240,
                  boxes=[Box("1", "dog" + IMG.format("box-label"), 10, 10, 100, 100)],
                  references=[Reference("the dog " + payload("reference"), (Mention(0, 2, ("1",)),))],
                  captions=[Caption(SYSTEM, CAPTION + f" number {i}")]) for i in range(2)]
    with store.transaction() as conn:
        write_project(conn, Project(PROJECT, items=items))
    for name in ("ann1", "ann2"):
        add_user(store, name, "annotator", PW)
    add_user(store, "lea", "lead", PW)
    assign(store, PROJECT, ["ann1", "ann2"], double_fraction=1.0, second_pass="full")
    # Disagreeing judgements with hostile notes, so the lead's pages show captions and notes side by side.
    for name, label, types in (("ann1", "inaccurate", ("gender",)), ("ann2", "accurate", ())):
        q = Queue.open(store, name, Role.ANNOTATOR, PROJECT)
        task = q.task(q.first_todo())
        q.save(task, label, types, NOTE, 3.0)
    server = app_server(url)
    yield server
    store.dispose()


def _pwned(page) -> list:
    return page.evaluate("() => window.__pwned || []")


def _visit_all(browser, server, shown: dict) -> dict[str, list]:
    found: dict[str, list] = {}
    dialogs: list[str] = []
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(30_000)
    page = ctx.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    login(page, server.url, "ann1", PW, path="/annotate")
    caption = page.locator('[data-testid="ann-caption"]')
    expect(caption).to_contain_text("<script>window.__pwned")  # the markup is visible, as characters
    expect(caption).to_contain_text("**caption**")
    expect(page.locator('[data-testid="stMain"]')).to_contain_text(f"Annotate · {PROJECT}")  # the project name, literally
    page.locator(".st-key-ann_prev button").click()  # the judged caption, with the own note in its history
    expect(caption).to_contain_text("number 0")
    page.get_by_text("History of your judgement").click()
    expect(page.get_by_text("note <img src=x").first).to_be_attached()  # a cell of the history grid
    wait_until_settled(page)
    found["annotate"] = _pwned(page)
    ctx.close()

    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(30_000)
    page = ctx.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login(page, server.url, "lea", PW, path="/agreement")
    # A page load is a new session (logged out): move through the menu, as a lead does.
    for title in ("Agreement", "Adjudication", "Error analysis", "Correction", "Data & users"):
        page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title).first.click()
        expect(page.locator("h1").first).to_be_visible()
        wait_until_settled(page)
        for exp in page.locator('[data-testid="stExpander"] summary').all()[:6]:
            exp.click()
        wait_until_settled(page)
        found[title] = _pwned(page)
        shown[title] = page.locator("body").inner_text().count("<script>window.__pwned")
    ctx.close()
    found["dialogs"] = dialogs
    return found


def test_markup_in_every_text_field_never_runs(hostile_app):
    shown: dict[str, int] = {}
    found = run_with_browser(lambda browser: _visit_all(browser, hostile_app, shown))
    ran = {page: hits for page, hits in found.items() if hits}
    assert ran == {}, f"markup ran in the browser: {ran}"
    # The hostile texts did reach the lead's pages (as visible characters), so the check above means something.
    assert shown["Agreement"] >= 1 and shown["Adjudication"] >= 2, shown
