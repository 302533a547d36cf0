"""Benchmark: ten browser sessions annotating at once against one app server (the full size of the suite's
four-session twin, tests/reliability/test_browser_load.py).

Each user logs in and saves three judgements, all at the same time, in one headless Chromium with a context per
user; then the same checks as the test (every confirmed save stored as chosen, no caption given to two users, the
SQLite file sound) and the save latency, from the click on "Save & next" to the confirmation on screen.

Run: .venv/bin/python bench/browser_load_bench.py [--sessions 10] [--saves 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import _paths  # the repository root and its tests/ folder as ``tests`` (bench/_paths.py)

ROOT = _paths.ROOT
_paths.on_path("tests/reliability")

from annotator.store import open_store  # noqa: E402
from browser_load import annotate_at_once, check_nothing_lost, latency_line, seed, user_names  # noqa: E402
from tests.browser.conftest import start_server  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10, help="users annotating at once (default 10)")
    parser.add_argument("--saves", type=int, default=3, help="judgements each user saves (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # The project's pictures are written under the temporary folder; the server (started below with this
        # environment) may read them from there.
        os.environ["ANNOTATOR_IMAGE_ROOTS"] = tmp
        store = open_store(f"sqlite:///{Path(tmp) / 'load.db'}")
        users = user_names(args.sessions)
        caps = seed(store, str(Path(tmp) / "img"), users)
        server = start_server(store.url, Path(tmp))
        try:
            results, wall = annotate_at_once(server.url, users, args.saves)
        finally:
            server.stop()
        latencies = check_nothing_lost(store, caps, users, results, args.saves)
        store.dispose()
    print(latency_line(args.sessions, latencies, wall, args.saves) + "; judgements lost: 0")


if __name__ == "__main__":
    main()
