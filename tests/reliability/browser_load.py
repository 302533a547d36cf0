"""Many browser sessions annotating at once against one app server: the suite's test and the benchmark share this.

Each user logs in and saves ``saves`` judgements, all users at the same time (one Chromium, a context per user,
driven concurrently with Playwright's async API). :func:`check_nothing_lost` asserts what must hold at any size:
every confirmed save is stored with the values chosen, no user got another's caption, the SQLite file is sound.
tests/reliability/test_browser_load.py runs four sessions; bench/browser_load_bench.py runs the full ten and
prints the save latency.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time

from annotator.accounts.auth import add_user
from annotator.assignment import assign
from annotator.store.projects import table_counts
from tests.apptest_helpers import seed_project
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

from reliability_browser import IDLE, PW, TYPES, current_of, run_in_thread

SAVES_PER_USER = 3


def user_names(sessions: int) -> list[str]:
    """The accounts of ``sessions`` concurrent users."""
    return [f"user{k}" for k in range(sessions)]


def seed(store, image_root: str, users: list[str]) -> list:
    """A 60-caption project with images, an annotator account per user, every caption assigned to one of them.
    Returns the caption ids in item order."""
    caps = seed_project(store, "demo", n_items=60, image_root=image_root, with_images=True)
    for user in users:
        add_user(store, user, "annotator", PW)
    assign(store, "demo", users, double_fraction=0)
    return caps


async def _idle(page):
    await page.wait_for_timeout(30)
    await page.wait_for_function(IDLE, polling=25, timeout=60_000)


#: The panel takes clicks: no save pending (Save & next shows the next caption at once and keeps its panel inert
#: until the server has stored the save, annotate/next.js), nothing inert. A click on an inert panel reaches
#: nothing, as it would for a person clicking the dimmed panel; a loaded machine stretched that window past the
#: "Saved" line and the idle script state this test waited for.
PANEL_OPEN = """() => !document.body.hasAttribute('data-ann-pending')
                      && !document.querySelector('[data-testid="stForm"][inert]')"""


async def _panel_open(page):
    await _idle(page)
    await page.wait_for_function(PANEL_OPEN, polling=25, timeout=60_000)


async def _session(browser, base: str, user: str, saves: int) -> list[tuple[int, str, tuple, float]]:
    from playwright.async_api import expect
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(60_000)
    page = await ctx.new_page()
    # The app's root, not /annotate: see test_faults_browser's reconnect test for what many first requests for a
    # page at once do.
    await page.goto(base + "/")
    await _idle(page)
    try:
        await page.get_by_label("User name").fill(user)
    except Exception:
        raise AssertionError(f"{user}: no log-in form; the page shows {(await page.locator('body').inner_text())[:800]!r}")
    await page.get_by_label("Password", exact=True).fill(PW)
    await page.get_by_role("button", name="Log in").click()
    await page.wait_for_selector('[data-testid="ann-caption"]')
    done = []
    for _ in range(saves):
        await _panel_open(page)
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
    await ctx.close()
    return done


async def _all_at_once(base: str, users: list[str], saves: int):
    from playwright.async_api import async_playwright
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            t0 = time.monotonic()
            results = await asyncio.gather(*(_session(browser, base, u, saves) for u in users))
            return results, time.monotonic() - t0
        finally:
            await browser.close()


def annotate_at_once(base_url: str, users: list[str], saves: int = SAVES_PER_USER):
    """Every user logs in and saves ``saves`` judgements, all at once. Returns (per user: a list of (caption
    number, label, error types, save latency in s)), wall time in s)."""
    return run_in_thread(lambda: asyncio.run(_all_at_once(base_url, users, saves)))


def check_nothing_lost(store, caps: list, users: list[str], results, saves: int = SAVES_PER_USER) -> list[float]:
    """Assert that every confirmed save is stored as chosen, once, by its user, and the store is sound; return the
    save latencies, sorted."""
    latencies = sorted(s for r in results for *_, s in r)
    assert len(latencies) == len(users) * saves
    seen = [n for r in results for n, *_ in r]
    assert len(set(seen)) == len(seen), "two sessions saved the same caption"
    for user, r in zip(users, results):
        for n, label, types, _ in r:
            j = current_of(store, caps[n], user)
            assert j is not None and (j.label.value, j.error_types, j.revision) == (label, types, 1), (user, n)
    assert table_counts(store)["judgements"] == len(seen)
    assert store.integrity_check() == "ok"
    return latencies


def latency_line(sessions: int, latencies: list[float], wall: float, saves: int = SAVES_PER_USER) -> str:
    """The figures of one run, as one line."""
    p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
    return (f"{sessions} browser sessions x {saves} saves: {len(latencies)} saves in {wall:.1f} s; save latency "
            f"median {statistics.median(latencies):.2f} s, p95 {p95:.2f} s, max {latencies[-1]:.2f} s")
