"""Ten browser sessions annotating at once against one app server.

Ten users log in and save three judgements each, all at the same time (one
Chromium, ten contexts, driven concurrently with Playwright's async API).
Nothing may be lost: every confirmed save is stored with the values chosen,
no user gets another's caption, the SQLite file stays sound. The save latency
(click on "Save & next" → confirmation on screen) is reported.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time

import pytest

from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.store import open_store
from annotator.store.projects import table_counts
from tests.apptest_helpers import seed_project
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, app_server  # noqa: F401  (app_server is a fixture)

from reliability_browser import IDLE, PW, TYPES, current_of, run_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

USERS = [f"user{k}" for k in range(10)]
SAVES_PER_USER = 3


async def _idle(page):
    await page.wait_for_timeout(30)
    await page.wait_for_function(IDLE, polling=25, timeout=60_000)


async def _session(browser, base: str, user: str) -> list[tuple[int, str, tuple, float]]:
    from playwright.async_api import expect
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(60_000)
    page = await ctx.new_page()
    # The app's root, not /annotate: see test_faults_browser's reconnect test for what ten first requests for a page do.
    await page.goto(base + "/")
    await _idle(page)
    try:
        await page.get_by_label("User name").fill(user)
    except Exception:
        raise AssertionError(f"{user}: no log-in form; the page shows {(await page.locator('body').inner_text())[:800]!r}")
    await page.get_by_label("Password", exact=True).fill(PW)
    await page.get_by_role("button", name="Log in").click()
    await page.wait_for_selector('[data-testid="ann-caption"]')
    await _idle(page)
    done = []
    for _ in range(SAVES_PER_USER):
        text = await page.locator('[data-testid="ann-caption"]').inner_text()
        n = int(re.search(r"number (\d+)", text).group(1))
        radios = page.locator('.st-key-ann_label input[type="radio"]')
        if n % 2 == 0:
            await page.locator(".st-key-ann_label label").filter(has_text=re.compile(r"^Accurate")).click()
            await expect(radios.nth(0)).to_be_checked(timeout=60_000)
            values = ("accurate", ())
        else:
            t = TYPES[n % len(TYPES)]
            await page.locator(f".st-key-ann_type_{t} label").click()
            await expect(radios.nth(1)).to_be_checked(timeout=60_000)  # set by the server's callback: the tick has arrived
            values = ("inaccurate", (t,))
        await _idle(page)
        t0 = time.monotonic()
        await page.locator(".st-key-ann_save button").click()
        try:
            await page.get_by_text(f"Saved item img{n}.jpg").wait_for(state="visible")
        except Exception:
            body = await page.locator("body").inner_text()
            await page.screenshot(path=f"/tmp/rel/load-{user}.png")
            raise AssertionError(f"{user}: save of caption {n} not confirmed; page shows {body[:1500]!r}")
        done.append((n, *values, time.monotonic() - t0))
        await _idle(page)
    await ctx.close()
    return done


async def _all_at_once(base: str):
    from playwright.async_api import async_playwright
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            t0 = time.monotonic()
            results = await asyncio.gather(*(_session(browser, base, u) for u in USERS))
            return results, time.monotonic() - t0
        finally:
            await browser.close()


@pytest.mark.slow
def test_ten_sessions_at_once_lose_nothing(app_server, tmp_path, reliability_report):  # noqa: F811
    url = f"sqlite:///{tmp_path / 'load.db'}"
    store = open_store(url)
    caps = seed_project(store, "demo", n_items=60, image_root=str(tmp_path / "img"), with_images=True)
    for u in USERS:
        add_user(store, u, "annotator", PW)
    assign(store, "demo", USERS, double_fraction=0)
    server = app_server(url)

    results, wall = run_in_thread(lambda: asyncio.run(_all_at_once(server.url)))

    latencies = sorted(s for r in results for *_, s in r)
    assert len(latencies) == len(USERS) * SAVES_PER_USER
    seen = [n for r in results for n, *_ in r]
    assert len(set(seen)) == len(seen), "two sessions saved the same caption"
    for user, r in zip(USERS, results):
        for n, label, types, _ in r:
            j = current_of(store, caps[n], user)
            assert j is not None and (j.label.value, j.error_types, j.revision) == (label, types, 1), (user, n)
    assert table_counts(store)["judgements"] == len(seen)
    assert store.integrity_check() == "ok"
    store.dispose()

    p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
    line = (f"10 browser sessions x {SAVES_PER_USER} saves: {len(latencies)} saves in {wall:.1f} s; save latency "
            f"median {statistics.median(latencies):.2f} s, p95 {p95:.2f} s, max {latencies[-1]:.2f} s")
    reliability_report(line)
