"""The Team page in headless Chromium: a lead sees the hand-counted figures of the constructed team, and a
save elsewhere shows after Refresh."""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.sync_api import expect

from annotator.accounts.auth import add_user
from annotator.store.judgements import insert_judgement
from annotator.store.users import user_id
from tests.browser.conftest import signed_in, wait_for_app, wait_until_settled
from tests.core.test_team import DAY3, build_team

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PW = "correct horse battery"


def metric(page, label: str):
    return page.locator('[data-testid="stMetric"]').filter(has_text=label).locator('[data-testid="stMetricValue"]')


def test_team_figures_in_the_browser(server, page):
    store = server.store()
    try:
        c = build_team(store)
        add_user(store, "lea", "lead", PW)
        signed_in(page, server, "lea", PW, path="/team")
        wait_until_settled(page)
        expect(page.get_by_role("heading", name="Team")).to_be_visible()
        for label, value in (("Assigned", "12"), ("Done", "7"), ("Skipped", "2"), ("Fine pass pending", "1"),
                             ("Not started", "2")):
            expect(metric(page, label)).to_have_text(value)
        expect(page.locator('[data-testid="stVegaLiteChart"]')).to_have_count(1)
        with store.transaction() as conn:
            insert_judgement(conn, c[0], user_id(conn, "bob"), label="inaccurate", error_types=["gender"], seconds=20,
                             at=DAY3 + timedelta(hours=2))
        page.get_by_role("button", name="Refresh").click()
        wait_for_app(page)
        expect(metric(page, "Done")).to_have_text("8")
        expect(metric(page, "Fine pass pending")).to_have_text("0")
    finally:
        store.dispose()
