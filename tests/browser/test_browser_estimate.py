"""The error-estimates page in headless Chromium at 1280x720: chart, names shown as characters, CSV export (a zip of one CSV per
table) equal to the command line's figures."""

from __future__ import annotations

import io
import json
import zipfile

import pandas as pd
import pytest
from playwright.sync_api import expect

from annotator.accounts.auth import add_user
from annotator.cli import main
from tests.browser.conftest import signed_in, wait_for_app
from tests.browser.test_export_download import _download
from tests.core.test_estimate_cli import PROJECT, build_street

pytestmark = pytest.mark.browser

PW = "estimates for everyone"
POOR = "*poor* <b>sys</b>"


def open_estimates(server, page, names=("good", "poor")) -> None:
    """The street project (60 images, systems ``names``) on the Error estimates page at 1280×720, as an analyst."""
    store = server.store()
    build_street(store, n=60, names=names)
    add_user(store, "viewer", "analyst", PW)
    store.dispose()
    page.set_viewport_size({"width": 1280, "height": 720})
    signed_in(page, server, "viewer", PW)
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Error estimates").click()
    wait_for_app(page)


def test_estimates_page(server, page, capsys):
    open_estimates(server, page, names=("good", POOR))
    expect(page.get_by_text("Inaccurate (estimate)").first).to_be_visible()
    # the system name is shown as written, never as Markdown or HTML
    expect(page.get_by_role("heading", name=POOR)).to_be_visible()
    assert page.locator("b", has_text="sys").count() == 0
    expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible()
    # two tables: the CSV download is a zip with one CSV per table, each read back by pandas as written
    with zipfile.ZipFile(io.BytesIO(_download(page, "CSV"))) as zf:
        assert sorted(zf.namelist()) == ["Differences.csv", "Estimates.csv"]
        df = pd.read_csv(zf.open("Estimates.csv"))
        assert len(pd.read_csv(zf.open("Differences.csv"))) > 0
    assert main(["--db", server.db_url, "estimate", "--project", PROJECT, "--annotator", "ann", "--system", POOR,
                 "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    row = df[(df["system"] == POOR) & (df["target"] == "inaccurate")].iloc[0]
    assert row["estimate"] == pytest.approx(cli["inaccurate"]["estimate"])
    assert [row["ci_low"], row["ci_high"]] == pytest.approx(cli["inaccurate"]["ci"])


# The metric cards of a system at 1280×720: every value shows whole, and each card has room for its widest value
# (measured in the card's own font): "100.0–100.0%" for the interval (it was cut to "100.0–100…"), thousands of
# human labels, so no figure is ever cut.
WIDEST = {"Inaccurate (estimate)": "100.0%", "95% interval": "100.0–100.0%", "Human labels": "9,999 of 9,999",
          "CHAIR-i / CHAIR-s": "1.00 / 1.00"}
_CARDS = """(widest) => Array.from(document.querySelectorAll('[data-testid="stMetric"]')).map((card) => {
  const value = card.querySelector('[data-testid="stMetricValue"]');
  const inner = value.querySelector('div') || value;
  const label = card.querySelector('[data-testid="stMetricLabel"]').innerText.trim();
  const probe = document.createElement('span');
  probe.textContent = widest[label] || '';
  probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap';
  probe.style.font = getComputedStyle(inner).font;
  document.body.appendChild(probe);
  const needed = Math.max(inner.scrollWidth, probe.getBoundingClientRect().width);
  probe.remove();
  return {label, text: inner.innerText, room: inner.clientWidth, needed};
})"""


def test_metric_cards_show_whole_at_1280x720(server, page):
    open_estimates(server, page)
    expect(page.locator('[data-testid="stMetric"]')).to_have_count(8)  # four cards for each of two systems
    cards = page.evaluate(_CARDS, WIDEST)
    assert sorted({c["label"] for c in cards}) == sorted(WIDEST)
    cut = [c for c in cards if c["needed"] > c["room"] + 1]
    assert not cut, cut
