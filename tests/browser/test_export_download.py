"""Download a CSV export from the error-analysis page in headless Chromium and check its content."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import signed_in, wait_for_app
from tests.store.test_agreement_store import PROJECT, build_project

pytestmark = pytest.mark.browser

PW = "tables and more tables"


@pytest.fixture
def project(server):
    with server.seeded(build_project, ("viewer", "analyst", PW)) as seeded:
        yield seeded


def _download(page, label: str) -> bytes:
    button = page.locator('[data-testid="stDownloadButton"]').filter(has_text=label).first
    expect(button).to_be_visible()
    with page.expect_download() as info:
        button.locator("button, a").first.click()
    with open(info.value.path(), "rb") as fh:
        return fh.read()


def test_error_types_csv_download(server, project, page):
    signed_in(page, server, "viewer", PW)
    # Navigate inside the session (a reload would start a new, logged-out session).
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Error analysis").click()
    wait_for_app(page)
    expect(page.get_by_text("5 captions are left out")).to_be_visible()
    data = _download(page, "Error types")
    df = pd.read_csv(io.BytesIO(data))
    assert list(df.columns) == ["group", "type", "name", "sysA", "sysB", "sysA share of errors", "sysB share of errors",
                                "sysA share of descriptions", "sysB share of descriptions"]
    assert len(df) == 20
    rows = df.set_index("type")
    # Adjudicated layer: gender on c0, c1 (sysA) and c15 (sysB); activity on c1, c8 (sysA) and c16 (sysB).
    assert (rows.loc["gender", "sysA"], rows.loc["gender", "sysB"]) == (2, 1)
    assert (rows.loc["activity", "sysA"], rows.loc["activity", "sysB"]) == (2, 1)
    assert (rows.loc["color", "sysA"], rows.loc["number", "sysB"]) == (1, 1)
    assert rows["sysA"].sum() == 5 and rows["sysB"].sum() == 3
    assert rows.loc["gender", "sysA share of errors"] == pytest.approx(2 / 5)
    assert rows.loc["scene", "name"] == "Scene / event / location"
    # Groups come in order of their totals: General (activity 3, number 1, color 1) before People (gender 3).
    assert df["group"].tolist()[0] == "General"

    errors = pd.read_csv(io.BytesIO(_download(page, "Errors per description")))
    assert errors["errors"].astype(str).tolist() == ["1", "2", "3", "4+"]
    assert errors["sysA"].tolist() == [3, 1, 0, 0] and errors["sysB"].tolist() == [3, 0, 0, 0]
