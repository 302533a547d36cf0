"""Sessions that survive reloads, in headless Chromium against real servers: the HttpOnly cookie keeps the log-in
and the project through a reload, a new tab and a typed URL; a role change from the command line, a log-out,
an expired or forged cookie each end up at the log-in form; two app processes on one PostgreSQL share sessions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from playwright.sync_api import expect
from sqlalchemy import text

from annotator.accounts.auth import add_user
from annotator.cli import main
from annotator.accounts.sessions import COOKIE_NAME
from tests.apptest_helpers import seed_project
from tests.browser.conftest import choose_option, login, wait_for_app, wait_until_settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PW = "correct horse battery"


def _team(store):
    seed_project(store, "alpha", n_items=3)
    seed_project(store, "beta", n_items=3)
    add_user(store, "lea", "lead", PW)


@pytest.fixture
def team(server):
    store = server.store()
    _team(store)
    yield store
    store.dispose()


def sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


def project_box(page):
    return sidebar(page).get_by_role("combobox", name="Project")


def expect_project(page, name):
    expect(project_box(page)).to_have_value(name)


def choose_project(page, name):
    choose_option(page, project_box(page), name)
    wait_for_app(page)
    expect_project(page, name)


def project_remembered(page, store, user, name):
    """Wait until the store remembers ``name`` as ``user``'s project. The box shows a choice as soon as it is
    clicked, before the run that stores it has started: a page opened on another process in that moment (a
    slow machine) still found the project before it."""
    from annotator.accounts.landing import LAST_PROJECT
    from annotator.accounts.sessions import recall
    from annotator.store.users import user_id
    with store.read() as conn:
        uid = user_id(conn, user)
    for _ in range(300):
        if recall(store, uid, [LAST_PROJECT]).get(LAST_PROJECT) == name:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"{user}'s project {name!r} is not remembered after 30 s")


def session_cookie(context):
    """The session cookie once the page has handed its log-in over (the route answers within moments)."""
    for _ in range(100):
        found = [c for c in context.cookies() if c["name"] == COOKIE_NAME]
        if found:
            return found[0]
        context.pages[0].wait_for_timeout(100)
    raise AssertionError(f"no {COOKIE_NAME} cookie: {context.cookies()}")


def shows_login_form(page):
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    expect(page.get_by_text("Logged in as")).to_have_count(0)


def gets_login_form_with_cookie(browser, url, cookie, value):
    """A browser of its own that sends only ``value`` as the session cookie gets the log-in form."""
    context = browser.new_context()
    try:
        context.add_cookies([{"name": COOKIE_NAME, "value": value, "domain": cookie["domain"], "path": "/",
                              "httpOnly": True, "sameSite": "Strict"}])
        tab = context.new_page()
        tab.goto(url + "/agreement")
        wait_until_settled(tab)
        shows_login_form(tab)
    finally:
        context.close()


def open_logged_in(page, url, path="/"):
    page.goto(url + path)
    wait_until_settled(page)
    expect(sidebar(page)).to_contain_text("Logged in as lea")


def test_reload_new_tab_and_typed_url_keep_the_login_and_the_project(server, team, page):
    login(page, server.url, "lea", PW)
    choose_project(page, "beta")
    cookie = session_cookie(page.context)
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
    assert COOKIE_NAME not in page.evaluate("() => document.cookie")  # page scripts cannot read it
    page.get_by_role("link", name="Agreement").click()
    wait_until_settled(page)
    expect(page).to_have_url(server.url + "/agreement")

    page.reload()
    wait_until_settled(page)
    expect(sidebar(page)).to_contain_text("Logged in as lea")
    expect(page.get_by_role("heading", name="Agreement").first).to_be_visible()
    expect_project(page, "beta")

    tab = page.context.new_page()
    open_logged_in(tab, server.url, "/")
    expect_project(tab, "beta")

    open_logged_in(tab, server.url, "/assign")  # typed into the address bar
    expect(tab.get_by_role("heading", name="Assignment").first).to_be_visible()
    expect_project(tab, "beta")
    expect(tab.get_by_role("button", name="Log in")).to_have_count(0)

    # The annotate page by its own address, with the session known from the first run: no "Page not found"
    # (the root URL's page is a page of its own, so /annotate is a page like any other).
    for path in ("/annotate", "/"):
        open_logged_in(tab, server.url, path)
        expect(tab.get_by_role("heading", name="Annotate · beta").first).to_be_visible()
        assert tab.get_by_text("Page not found").count() == 0, path


def test_a_demotion_from_the_command_line_ends_the_open_tab_at_its_next_click(server, team, page):
    login(page, server.url, "lea", PW)
    session_cookie(page.context)
    page.get_by_role("link", name="Agreement").click()
    wait_until_settled(page)
    expect(page.get_by_role("heading", name="Agreement").first).to_be_visible()
    assert main(["--db", server.db_url, "users", "role", "lea", "annotator"]) == 0
    page.get_by_role("link", name="Guidelines").click()  # the next click
    wait_until_settled(page)
    shows_login_form(page)
    expect(page.get_by_text("Your account was changed since you logged in")).to_be_visible()
    # the cookie is of no use either: a new tab gets the form, and logging in again gives the new role only
    tab = page.context.new_page()
    tab.goto(server.url + "/agreement")
    wait_until_settled(tab)
    shows_login_form(tab)
    login(tab, server.url, "lea", PW, path="/agreement")
    expect(tab.get_by_text("Not allowed")).to_be_visible()
    expect(sidebar(tab).get_by_role("link", name="Agreement")).to_have_count(0)


def test_logging_out_ends_the_session_and_its_cookie(server, team, page, browser):
    login(page, server.url, "lea", PW)
    cookie = session_cookie(page.context)
    other_tab = page.context.new_page()
    open_logged_in(other_tab, server.url, "/agreement")
    sidebar(page).get_by_role("button", name="Log out").click()
    wait_until_settled(page)
    shows_login_form(page)
    for _ in range(50):  # the log-in page asks the route to clear the cookie
        if not [c for c in page.context.cookies() if c["name"] == COOKIE_NAME]:
            break
        page.wait_for_timeout(100)
    assert [c for c in page.context.cookies() if c["name"] == COOKIE_NAME] == []
    page.reload()
    wait_until_settled(page)
    shows_login_form(page)
    # the other tab of the same session ends at its next click
    other_tab.get_by_role("link", name="Guidelines").click()
    wait_until_settled(other_tab)
    shows_login_form(other_tab)
    expect(other_tab.get_by_text("You were logged out")).to_be_visible()
    # the old cookie, replayed in another browser, is nobody
    gets_login_form_with_cookie(browser, server.url, cookie, cookie["value"])


def test_expired_and_forged_cookies_get_the_login_form(server, team, page, browser):
    login(page, server.url, "lea", PW)
    cookie = session_cookie(page.context)
    token, signature = cookie["value"].split(".")
    for forged in (f"{token}.{signature[::-1]}", f"{token[::-1]}.{signature}", "nonsense"):
        gets_login_form_with_cookie(browser, server.url, cookie, forged)
    # idle longer than the policy allows (8 hours by default)
    with team.transaction() as conn:
        conn.execute(text("UPDATE sessions SET last_seen_at = :t"),
                     {"t": datetime.now(timezone.utc) - timedelta(hours=9)})
    tab = page.context.new_page()
    tab.goto(server.url + "/agreement")
    wait_until_settled(tab)
    shows_login_form(tab)
    expect(tab.get_by_text("Your session expired")).to_be_visible()
    with team.read() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM sessions")).scalar() == 0


def test_two_app_processes_on_one_postgresql_share_the_session(app_server, page):
    from tests.conftest import SKIP_PG, _drop_pg_schema, _pg_schema_store
    if SKIP_PG:
        pytest.skip("ANNOTATOR_TEST_SKIP_PG=1")
    store, schema, url = _pg_schema_store()
    try:
        _team(store)
        first, second = app_server(url), app_server(url)
        login(page, first.url, "lea", PW)
        choose_project(page, "beta")
        project_remembered(page, store, "lea", "beta")
        session_cookie(page.context)
        # the browser sends the cookie to the other process on the same host (cookies ignore the port)
        open_logged_in(page, second.url, "/agreement")
        expect_project(page, "beta")
        sidebar(page).get_by_role("button", name="Log out").click()
        wait_until_settled(page)
        shows_login_form(page)
        page.goto(first.url + "/agreement")
        wait_until_settled(page)
        shows_login_form(page)
    finally:
        store.dispose()
        _drop_pg_schema(schema)


def test_an_annotator_lands_on_the_project_with_their_work(server, team, page):
    from annotator.assignment import assign
    add_user(team, "alice", "annotator", PW)
    assign(team, "beta", ["alice"], double_fraction=0.0)
    login(page, server.url, "alice", PW)
    expect_project(page, "beta")  # alpha comes first by name but has nothing for her
    expect(page.locator('[data-testid="ann-caption"]')).to_contain_text("number 0")
    expect(sidebar(page)).to_contain_text("Your progress: 0 / 3")


def test_a_lead_lands_on_the_last_page_and_project(server, team, page, browser):
    login(page, server.url, "lea", PW)
    choose_project(page, "beta")
    page.get_by_role("link", name="Agreement").click()
    wait_until_settled(page)
    expect(page).to_have_url(server.url + "/agreement")
    fresh = browser.new_context()
    try:
        tab = fresh.new_page()
        login(tab, server.url, "lea", PW)
        wait_until_settled(tab)
        expect(tab).to_have_url(server.url + "/agreement")
        expect(tab.get_by_role("heading", name="Agreement").first).to_be_visible()
        expect_project(tab, "beta")
    finally:
        fresh.close()


def test_local_mode_works_without_a_cookie(server, page):
    store = server.store()
    try:
        seed_project(store, "alpha", n_items=2)
        page.goto(server.url + "/")
        wait_until_settled(page)
        expect(sidebar(page)).to_contain_text("Local mode")
        page.reload()
        wait_until_settled(page)
        expect(sidebar(page)).to_contain_text("Local mode")
        assert [c for c in page.context.cookies() if c["name"] == COOKIE_NAME] == []
        with store.read() as conn:
            assert conn.execute(text("SELECT COUNT(*) FROM sessions")).scalar() == 0
    finally:
        store.dispose()
