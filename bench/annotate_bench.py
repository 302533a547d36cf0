"""Benchmark: "Save & next" on the annotate page with a large SQLite store.

Builds (once, cached under bench/out/) a store with 100,000 items (one caption
each, two gold boxes, two references) and 1,000,000 judgements: the benchmark
annotator has all 100,000 captions in their queue and has judged the first
50,000; 19 other annotators hold the remaining 950,000 judgements.

Server side: the call sequence the page makes for one "Save & next" —
save the revision, find the next caption, load it, render its image with the
gold boxes, plus what every rerun of the page reads (project list, queue
size) — timed over 200 items (median, p95; target median <= 100 ms).

Browser: the app served by ``streamlit run`` against the same store, driven
by headless Chromium: "y", then a mouse click on "Save & next" (50 items) and,
in a second series, the Enter key (50 items); the time from the click / key to
the next caption on screen (median, p95; target p95 <= 500 ms).

Usage: .venv/bin/python bench/annotate_bench.py [--items N] [--judgements N] [--server-n 200]
       [--browser-n 50] [--no-browser] [--rebuild]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "out"
BENCH_USER = "bench"
BENCH_PASSWORD = "bench-password-1"
PROJECT = "bench"
N_IMAGES = 250


def _images(directory: Path) -> list[str]:
    """Distinct 800x600 photos-like JPEGs (noise + shapes), so every rendered item misses the cache."""
    import numpy as np
    from PIL import Image, ImageDraw
    directory.mkdir(parents=True, exist_ok=True)
    names = []
    rng = np.random.default_rng(0)
    for k in range(N_IMAGES):
        name = f"im{k:03d}.jpg"
        names.append(name)
        path = directory / name
        if path.exists():
            continue
        arr = (rng.random((600, 800, 3)) * 60 + rng.integers(40, 180, 3)).astype("uint8")
        img = Image.fromarray(arr)
        d = ImageDraw.Draw(img)
        for _ in range(6):
            x, y = int(rng.integers(0, 700)), int(rng.integers(0, 500))
            d.ellipse([x, y, x + int(rng.integers(30, 200)), y + int(rng.integers(30, 200))],
                      fill=tuple(int(v) for v in rng.integers(0, 255, 3)))
        img.save(path, quality=85)
    return names


def build(db: Path, n_items: int, n_judgements: int) -> str:
    """Create the benchmark store (skipped when ``db`` exists); return its URL."""
    from annotator.auth import add_user
    from annotator.model import Box, Caption, Item, Mention, Project, Reference
    from annotator.store import open_store
    from annotator.store.assignments import project_captions, replace_assignments
    from annotator.store.bulk import bulk_judgements
    from annotator.store.projects import project_id, write_project
    from annotator.store.users import user_id

    url = f"sqlite:///{db}"
    if db.exists():
        return url
    t0 = time.perf_counter()
    images = _images(OUT / "images")
    store = open_store(url)
    rng = random.Random(1)
    subjects = ["man", "woman", "dog", "child", "cyclist", "surfer"]
    items = []
    for i in range(n_items):
        s = subjects[i % len(subjects)]
        items.append(Item(
            key=f"item{i:06d}", image=images[i % len(images)], width=800, height=600,
            boxes=[Box("1", s, 40 + i % 50, 60, 300, 400), Box("2", "ball", 500, 300, 80, 80)],
            references=[Reference(f"A {s} plays with a red ball in the park", (Mention(0, 2, ("1",)), Mention(5, 8, ("2",)))),
                        Reference(f"The {s} is outside on a sunny day")],
            captions=[Caption("model-a", f"A {subjects[(i + 1) % len(subjects)]} is standing on a beach number {i}")]))
    with store.transaction() as conn:
        write_project(conn, Project(PROJECT, image_root=str(OUT / "images"), items=items))
    print(f"  {n_items} items written in {time.perf_counter() - t0:.1f} s", flush=True)

    add_user(store, BENCH_USER, "annotator", BENCH_PASSWORD)
    others = [f"other{k:02d}" for k in range(19)]
    for name in others:
        add_user(store, name, "annotator")
    with store.transaction() as conn:
        pid = project_id(conn, PROJECT)
        caps = [r.caption_id for r in project_captions(conn, pid)]
        bench_uid = user_id(conn, BENCH_USER)
        replace_assignments(conn, pid, [{"caption_id": c, "user_id": bench_uid, "position": k, "is_second": False}
                                        for k, c in enumerate(caps)])
        other_ids = [user_id(conn, n) for n in others]
    done = len(caps) // 2
    per_other = max(0, (n_judgements - done) // len(others))
    labels = ["accurate", "inaccurate"]

    def rows():
        for c in caps[:done]:
            lab = labels[rng.random() < 0.8]
            yield c, bench_uid, lab, ("activity",) if lab == "inaccurate" else ()
        for k, uid in enumerate(other_ids):
            start = (k * 5003) % len(caps)
            for j in range(per_other):
                lab = labels[rng.random() < 0.8]
                yield caps[(start + j) % len(caps)], uid, lab, ("gender", "scene") if lab == "inaccurate" else ()

    with store.transaction() as conn:
        n = bulk_judgements(conn, rows())
    store.dispose()
    print(f"  store built in {time.perf_counter() - t0:.1f} s: {n_items} items, {n} judgements", flush=True)
    return url


def _pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]


def server_side(url: str, n: int, *, prefetch_images: bool) -> dict:
    """Time the page's call sequence for one Save & next, ``n`` times.

    With ``prefetch_images`` the page's background prefetch of the next item's image runs (and is
    waited for, standing in for the seconds an annotator spends on a caption) before the timed
    save; without it the image of every next item is rendered inside the timed sequence.
    """
    from annotator.annotation import Queue, prefetch, task_image
    from annotator.images import clear_render_cache
    from annotator.store import open_store
    from annotator.store.projects import project_names

    clear_render_cache()
    store = open_store(url)
    q = Queue.open(store, BENCH_USER, "annotator", PROJECT)
    pos = q.first_todo()
    task = q.task(pos)
    task_image(task)
    totals, parts = [], {"save": [], "next": [], "load": [], "image": [], "rerun reads": []}
    for k in range(n):
        if prefetch_images:
            prefetch(q, task.position).join()
        t0 = time.perf_counter()
        q.save(task, "inaccurate" if k % 5 == 0 else "accurate", ["activity"] if k % 5 == 0 else [], "", 3.0)
        t1 = time.perf_counter()
        pos = q.next_todo(after=task.position)
        t2 = time.perf_counter()
        task = q.task(pos)
        t3 = time.perf_counter()
        task_image(task)
        t4 = time.perf_counter()
        project_names(store)
        t5 = time.perf_counter()
        totals.append(t5 - t0)
        for key, dt in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            parts[key].append(dt)
    # Where a brand-new session starts (after a reload or a new login): the first caption still to do.
    t0 = time.perf_counter()
    first = Queue.open(store, BENCH_USER, "annotator", PROJECT).first_todo()
    resume = time.perf_counter() - t0
    t0 = time.perf_counter()
    prog = q.progress()
    progress_t = time.perf_counter() - t0
    t0 = time.perf_counter()
    size = q.size()
    size_t = time.perf_counter() - t0
    store.dispose()
    return {"median": statistics.median(totals), "p95": _pct(totals, 0.95),
            "parts": {k: statistics.median(v) for k, v in parts.items()},
            "resume": resume, "first": first, "progress": progress_t, "done": prog.done, "assigned": prog.assigned,
            "size": size, "size_t": size_t}


def browser_side(url: str, n: int) -> dict:
    """Drive the real app: "y" then a mouse click on "Save & next" (and, in a second series, the
    Enter key); time from the click / key press to the next caption on screen."""
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from conftest import CHROMIUM, CHROMIUM_ARGS, login, start_server, wait_until_settled  # noqa: E402
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    server = start_server(url, OUT)
    times = {"click": [], "enter": []}
    changed = "(b) => { const c = document.querySelector('[data-testid=\"ann-caption\"]'); return c && c.textContent !== b; }"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(60_000)
            login(page, server.url, BENCH_USER, BENCH_PASSWORD)
            for how in ("click", "enter"):
                for k in range(n + 3):
                    page.evaluate("() => document.activeElement && document.activeElement.blur()")
                    wait_until_settled(page, quiet_ms=100)
                    before = page.locator('[data-testid="ann-caption"]').inner_text()
                    page.keyboard.press("y")
                    try:
                        page.wait_for_function("() => document.querySelectorAll('.st-key-ann_label input')[0]?.checked")
                    except Exception:
                        page.screenshot(path=str(OUT / "annotate_bench_failure.png"))
                        print("key log:", page.evaluate("() => JSON.stringify(window.__annotatorKeyState)"))
                        raise
                    wait_until_settled(page, quiet_ms=100)
                    box = page.locator(".st-key-ann_save button").bounding_box()
                    t0 = time.perf_counter()
                    if how == "click":
                        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                    else:
                        page.keyboard.press("Enter")
                    page.wait_for_function(changed, arg=before, polling="raf")
                    dt = time.perf_counter() - t0
                    if k >= 3:  # the first few warm the caches of a fresh server
                        times[how].append(dt)
            browser.close()
    finally:
        server.stop()
    return {how: {"median": statistics.median(v), "p95": _pct(v, 0.95), "n": len(v)} for how, v in times.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--judgements", type=int, default=1_000_000)
    ap.add_argument("--server-n", type=int, default=200)
    ap.add_argument("--browser-n", type=int, default=50)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args(argv)

    OUT.mkdir(parents=True, exist_ok=True)
    db = OUT / f"annotate_{args.items}_{args.judgements}.db"
    if args.rebuild and db.exists():
        db.unlink()
    print(f"== annotate bench: {args.items:,} items, {args.judgements:,} judgements (SQLite {db.name})")
    url = build(db, args.items, args.judgements)
    # Work on a copy so every run starts from the same state.
    import shutil
    run_db = OUT / "annotate_run.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(run_db) + suffix).unlink(missing_ok=True)
    shutil.copyfile(db, run_db)
    run_url = f"sqlite:///{run_db}"

    for prefetching in (True, False):
        s = server_side(run_url, args.server_n, prefetch_images=prefetching)
        what = "as the page runs it (next image prefetched)" if prefetching else "cold (image rendered in the step)"
        print(f"server-side save & next, {what}, over {args.server_n} items: median {s['median'] * 1000:.1f} ms, "
              f"p95 {s['p95'] * 1000:.1f} ms" + (f" (target: median <= 100 ms) -> {'OK' if s['median'] <= 0.1 else 'MISSED'}"
                                                 if prefetching else ""))
        print("  median per step: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in s["parts"].items()))
    print(f"  once per session: resume (first caption to do = position {s['first']:,}) {s['resume'] * 1000:.1f} ms; "
          f"progress count ({s['done']:,}/{s['assigned']:,}) {s['progress'] * 1000:.1f} ms; "
          f"queue size ({s['size']:,}) {s['size_t'] * 1000:.1f} ms")
    if not args.no_browser:
        for how, b in browser_side(run_url, args.browser_n).items():
            what = "mouse click on Save & next" if how == "click" else "Enter key"
            print(f"browser {what} -> next caption over {b['n']} items: median {b['median'] * 1000:.0f} ms, "
                  f"p95 {b['p95'] * 1000:.0f} ms (target: p95 <= 500 ms) -> {'OK' if b['p95'] <= 0.5 else 'MISSED'}")
    try:
        import os
        print(f"  (machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
