"""In Chromium: a lead on the Agreement page is demoted on the command line, and the next click in the open tab
loses the lead pages; an annotator whose password is changed is logged out at the next click and that click
stores nothing.
"""

from __future__ import annotations

import io

import pytest
from playwright.sync_api import expect

from annotator.assignment import assign
from annotator.accounts.auth import SESSION_ENDED_MESSAGE, add_user
from annotator.cli import main
from tests.apptest_helpers import seed_project
from tests.browser.conftest import app_server, wait_until_settled  # noqa: F401  (app_server is a fixture)

from reliability_browser import PW, choose, current_of, new_page, run_with_browser

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

NEW_PW = "a brand new secret"


def _nav(page):
    return page.locator('[data-testid="stSidebarNav"] a')


def _revoked(browser, server, caption_id, monkeypatch) -> None:
    url = server.db_url
    # A lead on Agreement, demoted from the command line.
    ctx, lea = new_page(browser, server.url, "lea", path="/agreement")
    expect(lea.locator("h1").first).to_have_text("Agreement")
    expect(_nav(lea).filter(has_text="Agreement")).to_have_count(1)
    assert main(["--db", url, "users", "role", "lea", "annotator"]) == 0
    _nav(lea).filter(has_text="Guidelines").first.click()  # the next click
    expect(lea.get_by_text(SESSION_ENDED_MESSAGE)).to_be_visible()
    expect(lea.get_by_label("User name")).to_be_visible()
    lea.get_by_label("User name").fill("lea")
    lea.get_by_label("Password", exact=True).fill(PW)
    lea.get_by_role("button", name="Log in").click()
    lea.wait_for_selector('[data-testid="stSidebar"]')
    wait_until_settled(lea)
    expect(_nav(lea).filter(has_text="Guidelines")).to_have_count(1)
    for title in ("Agreement", "Adjudication", "Assignment", "Data & users"):
        expect(_nav(lea).filter(has_text=title)).to_have_count(0)
    ctx.close()

    # An annotator mid-caption; her password is changed; her next click (Save & next) stores nothing.
    ctx, alice = new_page(browser, server.url, "alice")
    expect(alice.locator('[data-testid="ann-caption"]')).to_be_visible()
    choose(alice, 0)
    monkeypatch.setattr("sys.stdin", io.StringIO(NEW_PW + "\n"))
    assert main(["--db", url, "users", "passwd", "alice", "--password-stdin"]) == 0
    alice.locator(".st-key-ann_save button").click()
    expect(alice.get_by_text(SESSION_ENDED_MESSAGE)).to_be_visible()
    expect(alice.locator('[data-testid="ann-caption"]')).to_have_count(0)
    ctx.close()


def test_demotion_and_new_password_reach_the_open_tab(app_server, tmp_path, monkeypatch):  # noqa: F811
    from annotator.store import open_store
    store = open_store(f"sqlite:///{tmp_path / 'revoke.db'}")
    caps = seed_project(store, "demo", n_items=4)
    add_user(store, "lea", "lead", PW)
    add_user(store, "alice", "annotator", PW)
    assign(store, "demo", ["alice"], double_fraction=0.0)
    server = app_server(store.url)
    run_with_browser(lambda browser: _revoked(browser, server, caps[0], monkeypatch))
    assert current_of(store, caps[0], "alice") is None
    store.dispose()
