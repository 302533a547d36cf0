"""Regenerate docs/img/annotate.png: the annotate page on the sample project, in headless Chromium.

Usage: .venv/bin/python tests/browser/make_screenshot.py [output.png]
       .venv/bin/python tests/browser/make_screenshot.py --spans [output.png]   (docs/img/annotate_spans.png)

Not a test (pytest does not collect it). It loads the sample project into a
temporary database, gives its captions to an annotator, logs in, starts a
judgement (Inaccurate, two error types, a note) and takes the picture.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _mark_spans(page, wait_until_settled) -> None:
    """The caption "A man in an orange jacket …": "man" marked as Gender, "jacket" as Type of clothing with the
    fix "space suit", by the word cursor and the type keys."""
    page.once("dialog", lambda d: d.accept("space suit"))
    for key in (".", ".", "2", ".", ".", ".", ".", "3", ",", ".", "/"):
        page.keyboard.press(key)
        page.wait_for_timeout(60)
    wait_until_settled(page, quiet_ms=300)


def main(out: Path, spans: bool = False) -> None:
    from conftest import CHROMIUM, CHROMIUM_ARGS, login, start_server, wait_until_settled
    from playwright.sync_api import sync_playwright

    from annotator.assignment import assign
    from annotator.auth import add_user
    from annotator.sample import SAMPLE_PROJECT, load_sample
    from annotator.store import open_store

    tmp = Path(tempfile.mkdtemp(prefix="annotator-shot-"))
    url = f"sqlite:///{tmp / 'shot.db'}"
    store = open_store(url)
    load_sample(store, with_judgements=False)
    add_user(store, "maria", "annotator", "screenshot-password")
    add_user(store, "tomas", "annotator")
    assign(store, SAMPLE_PROJECT, ["maria", "tomas"], double_fraction=0.0, systems=["sat-attn"])
    store.dispose()

    server = start_server(url, tmp)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 960}, device_scale_factor=1)
            login(page, server.url, "maria", "screenshot-password")
            page.evaluate("() => document.activeElement && document.activeElement.blur()")
            if spans:
                _mark_spans(page, wait_until_settled)
            for key in (() if spans else ("2", "3")):  # Gender, Type of clothing (ticking implies Inaccurate)
                page.keyboard.press(key)
                page.wait_for_timeout(200)
                wait_until_settled(page, quiet_ms=300)
            page.locator(".st-key-ann_note input").fill("the astronaut is a woman in a space suit")
            page.locator(".st-key-ann_note input").press("Tab")
            wait_until_settled(page, quiet_ms=500)
            page.evaluate("() => document.activeElement && document.activeElement.blur()")
            page.mouse.move(5, 950)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=False)
            browser.close()
    finally:
        server.stop()
    print(f"wrote {out}")


if __name__ == "__main__":
    args = sys.argv[1:]
    with_spans = "--spans" in args
    args = [a for a in args if a != "--spans"]
    default = ROOT / "docs" / "img" / ("annotate_spans.png" if with_spans else "annotate.png")
    main(Path(args[0]) if args else default, spans=with_spans)
