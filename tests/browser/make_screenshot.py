"""Regenerate the screenshots of the README and docs/annotating.md in headless Chromium at 1280 x 720: Annotate
(docs/img/annotate.png), Adjudication (adjudicate.png), Correction (correct.png) and Error analysis (analysis.png),
on the sample project; with --spans, only the one of a caption with error spans (annotate_spans.png); with --long,
only the one of the bundled paragraph-length caption with a span (annotate-long.png); with --adjudicate-long, only
the Adjudication of that caption with the two demo annotators' spans as bars under its words (adjudicate-long.png).

Usage: .venv/bin/python tests/browser/make_screenshot.py [output folder]   (default: docs/img)
       .venv/bin/python tests/browser/make_screenshot.py --spans [output folder]
       .venv/bin/python tests/browser/make_screenshot.py --long [output folder]
       .venv/bin/python tests/browser/make_screenshot.py --adjudicate-long [output folder]

Not a test (pytest does not collect it). It loads the sample project with its two demo annotators' judgements
into a temporary database, gives its captions to an annotator, logs in as that annotator (a judgement under way:
Inaccurate, two error types, a note), then as a lead and as an analyst, and takes one picture per page. The
spans picture marks "man" as Gender and "jacket" as Type of clothing with the suggested fix "space suit", by
the word cursor and the type keys.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
# This checkout's tests folder is the `tests` package conftest imports from, even where an installed distribution
# brings a package of that name.
if str(ROOT / "tests") not in list(getattr(sys.modules.get("tests"), "__path__", [])):
    import types
    sys.modules["tests"] = types.ModuleType("tests")
    sys.modules["tests"].__path__ = [str(ROOT / "tests")]

SIZE = {"width": 1280, "height": 720}
PW = "screenshot-password"


def _settle(page, wait_until_settled) -> None:
    wait_until_settled(page, quiet_ms=800)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.mouse.move(5, SIZE["height"] - 5)


def main(out_dir: Path, spans: bool = False, long: bool = False, adjudicate_long: bool = False) -> None:
    from conftest import CHROMIUM, CHROMIUM_ARGS, choose_option, login, start_server, wait_until_settled
    from playwright.sync_api import sync_playwright

    from annotator.assignment import assign
    from annotator.accounts.auth import add_user
    from annotator.sample import SAMPLE_PROJECT, load_sample
    from annotator.store import open_store

    tmp = Path(tempfile.mkdtemp(prefix="annotator-shot-"))
    url = f"sqlite:///{tmp / 'shot.db'}"
    store = open_store(url)
    if adjudicate_long:
        from annotator.config import SAMPLE_DIR
        from annotator.io import import_jsonl
        from annotator.io.judgement_rows import import_judgement_rows
        import_jsonl(store, "long-captions", SAMPLE_DIR / "long_captions.jsonl")
        import_judgement_rows(store, "long-captions", SAMPLE_DIR / "long_captions_judgements.jsonl")
        add_user(store, "lea", "lead", PW)
    elif long:
        from annotator.config import SAMPLE_DIR
        from annotator.io import import_jsonl
        import_jsonl(store, "long-captions", SAMPLE_DIR / "long_captions.jsonl")
        add_user(store, "maria", "annotator", PW)
        assign(store, "long-captions", ["maria"], double_fraction=0.0)
    else:
        load_sample(store, with_judgements=True)
        add_user(store, "maria", "annotator", PW)
        add_user(store, "lea", "lead", PW)
        add_user(store, "ana", "analyst", PW)
        assign(store, SAMPLE_PROJECT, ["maria"], double_fraction=0.0, systems=["sat-attn"])
    store.dispose()

    out_dir.mkdir(parents=True, exist_ok=True)
    server = start_server(url, tmp)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

            def shot(user: str, path: str, name: str, before=None) -> None:
                context = browser.new_context(viewport=SIZE, device_scale_factor=1)
                page = context.new_page()
                login(page, server.url, user, PW, path=path)
                _settle(page, wait_until_settled)
                if before is not None:
                    before(page)
                    _settle(page, wait_until_settled)
                page.screenshot(path=str(out_dir / name), full_page=False)
                context.close()
                print(f"wrote {out_dir / name}")

            def judgement_under_way(page) -> None:
                page.wait_for_selector('[data-testid="ann-caption"]')
                for key in ("2", "3"):  # Gender, Type of clothing (ticking implies Inaccurate)
                    page.keyboard.press(key)
                    page.wait_for_timeout(200)
                page.locator(".st-key-ann_note input").fill("the astronaut is a woman in a space suit")
                page.locator(".st-key-ann_note input").press("Escape")

            def spans_under_way(page) -> None:
                # "A man in an orange jacket …": the cursor to "man", Gender; on to "jacket", Type of clothing;
                # back onto it and "/" for its fix.
                page.wait_for_selector('[data-testid="ann-caption"] .ann-w')
                for key in (".", ".", "2", ".", ".", ".", ".", "3", ",", ".", "/"):
                    page.keyboard.press(key)
                    page.wait_for_timeout(60)
                page.keyboard.type("space suit")  # in the span's fix field of the list under the caption
                page.keyboard.press("Enter")
                wait_until_settled(page, quiet_ms=300)
                page.locator(".st-key-ann_note input").fill("the astronaut is a woman in a space suit")
                page.locator(".st-key-ann_note input").press("Escape")

            def scroll_to(selector: str):
                def go(page) -> None:
                    page.wait_for_selector(selector)
                    page.evaluate("(s) => document.querySelector(s).scrollIntoView({block: 'start'})", selector)
                return go

            def gender_corrections(page) -> None:
                # One annotator's judgements (the adjudicated layer leaves out the types the two differ on).
                page.locator(".st-key-correct_layer").click()
                page.get_by_role("option").filter(has_text="sample-ann").first.click()
                wait_until_settled(page, quiet_ms=800)
                choose_option(page, page.locator(".st-key-correct_type"), "Gender")
                wait_until_settled(page, quiet_ms=800)
                # A correction under way: the word changes and the rule's verdict under the field.
                box = page.get_by_role("textbox", name="Corrected caption")
                box.fill(box.input_value().replace("A man", "A woman", 1))
                box.press("Escape")

            def long_span_under_way(page) -> None:
                # The bundled paragraph: "man" (word 22) marked Gender with its fix, in the caption's own pane.
                page.wait_for_selector('[data-testid="ann-caption"] .ann-w')
                for key in ["."] * 22 + ["2", ",", ".", "/"]:
                    page.keyboard.press(key)
                    page.wait_for_timeout(30)
                page.keyboard.type("woman")
                page.keyboard.press("Enter")
                wait_until_settled(page, quiet_ms=300)

            def adjudication_drawn(page) -> None:
                page.wait_for_function("""() => document.querySelectorAll('div[class*="st-key-adj_type_"] input')
                    .length === 20 && !!document.querySelector('.adj-marks')""")

            if adjudicate_long:
                shot("lea", "/adjudicate", "adjudicate-long.png", adjudication_drawn)
            elif long:
                shot("maria", "/annotate", "annotate-long.png", long_span_under_way)
            elif spans:
                shot("maria", "/annotate", "annotate_spans.png", spans_under_way)
            else:
                shot("maria", "/annotate", "annotate.png", judgement_under_way)
                shot("lea", "/adjudicate", "adjudicate.png", scroll_to(".st-key-adj_caption"))
                shot("ana", "/correct", "correct.png", gender_corrections)
                shot("ana", "/analysis", "analysis.png",
                     scroll_to("[data-testid='stHeading']:has(#errors-per-inaccurate-description)"))
            browser.close()
    finally:
        server.stop()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a not in ("--spans", "--long", "--adjudicate-long")]
    main(Path(args[0]) if args else ROOT / "docs" / "img", spans="--spans" in sys.argv[1:], long="--long" in sys.argv[1:],
         adjudicate_long="--adjudicate-long" in sys.argv[1:])
