"""Benchmark: how much larger the app process is after a big upload through the Data page.

A real ``streamlit run serve.py`` server (a process of its own, SQLite store) is driven the way a browser drives
it, over Streamlit's websocket protocol (tests/reliability/ws_load.py): an admin logs in, opens Data & users,
picks the native JSONL format, the generated file is uploaded to the server's upload endpoint (HTTP PUT, as the
uploader widget sends it) and the form is submitted. A small file is imported first the same way (project
"warm-up"), so that the import's code is loaded before memory is read. The server's resident memory (VmRSS of
/proc) is read once the page has been opened, again after the warm-up import (before), its high-water mark (VmHWM)
during the import, and its resident memory again after the import's run has finished and the page shows the
outcome, with the session still open (after). The store's item counts are read after the server has stopped.

Printed: the file's size and items, the page's answer, the items stored, the import's wall time and the server's
CPU, RSS at each point and the growth after the upload (over the warm-up and over the page before any import)
beside the target. Target: the app returns within 100 MB of its size after an
upload (a 199 MB upload left it 1.0 GB larger before uploads were spooled to disk and let go of, and the
importers streamed their files). ``--fail`` uploads a file whose last line is bad instead (the import reads it
all and stores nothing): the upload must be let go of on that path too.

    .venv/bin/python bench/upload_bench.py [--mb 199] [--fail]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "reliability")]
# The helpers import the suite's modules as ``tests.…`` (see ws_load_bench.py).
_tests = types.ModuleType("tests")
_tests.__path__ = [str(ROOT / "tests")]
sys.modules.setdefault("tests", _tests)
os.environ.setdefault("ANNOTATOR_PASSWORD_HASHING", "fast")
os.environ["ANNOTATOR_TEST_FORK_SERVERS"] = "0"  # a process of its own: its memory is the app's alone

from upload_client import upload_through_the_page, write_jsonl  # noqa: E402

TARGET_MB = 100.0
#: This client holds no XSRF cookie a browser would have: the check is off for the measured server only.
NO_XSRF = {"STREAMLIT_SERVER_ENABLE_XSRF_PROTECTION": "false"}
PW = "uploads a big file"
#: A small import first, so that the import's code is loaded before "before" is read (it is ~60 MiB of the app).
WARM_UP_MB = 0.2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=199.0, help="size of the uploaded JSONL file in MB")
    ap.add_argument("--fail", action="store_true", help="end the file with a bad line (nothing is stored)")
    args = ap.parse_args()
    from annotator.accounts.auth import add_user
    from annotator.store import open_store
    from annotator.store.projects import project_summaries
    from tests.browser.conftest import start_server
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "upload.jsonl"
        items = write_jsonl(path, args.mb, bad_last_line=args.fail)
        warm = folder / "warm-up.jsonl"
        warm_items = write_jsonl(warm, WARM_UP_MB)
        size = path.stat().st_size / 1e6
        url = f"sqlite:///{folder / 'app.db'}"
        store = open_store(url)
        add_user(store, "ada", "admin", PW)
        store.dispose()
        server = start_server(url, folder, env=NO_XSRF)
        try:
            r = asyncio.run(upload_through_the_page(server.url, server.proc.pid, path, "ada", PW, warm_up=warm))
        finally:
            server.stop()
        store = open_store(url)
        stored = {row["project"]: row["items"] for row in project_summaries(store)}
        store.dispose()
    said = r["outcome"].strip().splitlines()
    outcome = next((line for line in said if "import into" in line or ".jsonl, line" in line), "no outcome shown")
    growth, from_first = r["after"] - r["before"], r["after"] - r["first"]
    print(f"upload of {size:.0f} MB ({items:,} items"
          f"{', last line bad' if args.fail else ''}) through the Data page, one app process on SQLite, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"  page's answer: {outcome[:200]}" + (f" | exceptions: {r['exceptions']}" if r["exceptions"] else ""))
    print(f"  store holds: {stored.get('uploaded', 0):,} items in 'uploaded' (of {items:,}), "
          f"{stored.get('warm-up', 0):,} in 'warm-up' (of {warm_items:,})")
    print(f"  import: {r['wall']:.1f} s wall, server CPU {r['cpu']:.1f} s")
    print(f"  server RSS: page open {r['first']:.0f} MiB, after a {WARM_UP_MB} MB warm-up import {r['before']:.0f} MiB, "
          f"peak {r['peak']:.0f} MiB, after the upload {r['after']:.0f} MiB")
    print(f"  growth after the upload: {growth:+.0f} MiB over the warm-up, {from_first:+.0f} MiB over the page "
          f"before any import   (target: within {TARGET_MB:.0f} MB; before: a 199 MB upload left the app 1.0 GB "
          "larger)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
