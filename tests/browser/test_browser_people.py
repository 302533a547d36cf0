"""The People page in headless Chromium: an admin adds an account, reads its one-time password, changes its role;
the person logs in with that password and the changes are recorded with the admin's name."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.auth import add_user, authenticate
from annotator.people import account_changes
from tests.browser.conftest import choose_option, login, wait_for_app, wait_until_settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PW = "correct horse battery"


def test_admin_adds_a_person_who_logs_in(server, page, browser):
    store = server.store()
    try:
        add_user(store, "root", "admin", PW)
        login(page, server.url, "root", PW, path="/people")
        wait_until_settled(page)
        page.get_by_label("User name").fill("dana")
        page.get_by_role("button", name="Add with a generated password").click()
        wait_for_app(page)
        code = page.locator('[data-testid="stCode"]')
        expect(code).to_have_count(1)
        password = code.inner_text().strip()
        assert len(password) == 16
        assert authenticate(store, "dana", password).role.value == "annotator"

        # The new account is the one selected below, and the password is not shown again after the next run
        # (choosing a role starts one).
        expect(page.get_by_role("combobox", name="Account")).to_have_value("dana")
        choose_option(page, page.locator(".st-key-ppl_role_dana").get_by_role("combobox"), "lead")
        wait_for_app(page)
        expect(code).to_have_count(0)
        page.get_by_role("button", name="Set role").click()
        wait_for_app(page)
        expect(page.get_by_text("dana is now lead")).to_be_visible()

        other = browser.new_context(viewport={"width": 1280, "height": 720})
        try:
            p2 = other.new_page()
            login(p2, server.url, "dana", password)
            expect(p2.locator('[data-testid="stSidebar"]')).to_contain_text("Logged in as dana (lead)")
        finally:
            other.close()
        rows = account_changes(store).to_dict("records")[::-1]
        assert [(r["by"], r["action"], r["account"], r["detail"]) for r in rows] == [
            ("command line", "created", "root", "role admin, with a password"),
            ("root", "created", "dana", "role annotator, with a password"),
            ("root", "role", "dana", "annotator → lead")]
    finally:
        store.dispose()
