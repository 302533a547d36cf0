"""Benchmark: importing a large line-aligned project into a fresh SQLite store.

Generates (fixed seed) a captions file for two systems and five reference
files of ``--items`` lines each (default 100,000) in a temporary folder, then
runs the real importer (``annotator.io.import_lines``, one transaction each):

  1. system A with the five references: creates every item, reference and caption;
  2. system B with the same references: attaches to the existing items, which
     means reading back and comparing 500,000 stored references.

Printed: wall time, CPU time and items/s per step, the total, peak resident
memory of the process (``resource.getrusage``), and the time split reader vs
store for step 1. CPU time is printed because wall time on a shared 2-core
machine also counts other processes. Target: total ≤ 30 s on a 2-core machine.

    .venv/bin/python bench/import_bench.py [--items 100000] [--db PATH] [--images]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.io import import_lines  # noqa: E402
from annotator.io.importers import paused_gc  # noqa: E402
from annotator.io.lines import read_lines_project  # noqa: E402
from annotator.store import open_store  # noqa: E402
from annotator.store.projects import table_counts  # noqa: E402

TARGET_S = 30.0
WORDS = ("a man woman dog cat child group of people two young girl boy in on with the red blue white black shirt "
         "standing sitting running playing street grass water beach front table holding ball bike car snow field "
         "near next to wearing green small large old").split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))


def generate(folder: Path, n: int, *, images: bool, seed: int = 7) -> dict[str, object]:
    """Write the input files; return their paths."""
    rng = random.Random(seed)
    paths: dict[str, object] = {"caps_a": folder / "sys_a.txt", "caps_b": folder / "sys_b.txt",
                                "refs": [folder / f"ref{k}.txt" for k in range(5)], "images": None}
    for key in ("caps_a", "caps_b"):
        paths[key].write_text("\n".join(_sentence(rng) for _ in range(n)) + "\n", encoding="utf-8")
    for p in paths["refs"]:
        p.write_text("\n".join(_sentence(rng) for _ in range(n)) + "\n", encoding="utf-8")
    if images:
        paths["images"] = folder / "images.txt"
        paths["images"].write_text("\n".join(f"{i:012d}.jpg" for i in range(n)) + "\n", encoding="utf-8")
    return paths


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--db", help="SQLite file to create (default: in the temporary folder)")
    parser.add_argument("--images", action="store_true", help="also give an image list (items keyed by file name)")
    args = parser.parse_args()
    n = args.items

    with tempfile.TemporaryDirectory(prefix="import-bench-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        paths = generate(folder, n, images=args.images)
        gen_s = time.perf_counter() - t0
        db = Path(args.db) if args.db else folder / "bench.db"
        if db.exists():
            raise SystemExit(f"{db} exists; the benchmark needs a fresh store")
        store = open_store(f"sqlite:///{db}")
        rss_before = peak_rss_mb()

        t0 = time.perf_counter()
        with paused_gc():  # as the importer does
            read_lines_project("bench", "sys-a", paths["caps_a"], paths["refs"], images=paths["images"])
        read_s = time.perf_counter() - t0

        t0, c0 = time.perf_counter(), time.process_time()
        r1 = import_lines(store, "bench", "sys-a", paths["caps_a"], paths["refs"], images=paths["images"])
        step1, cpu1 = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        r2 = import_lines(store, "bench", "sys-b", paths["caps_b"], paths["refs"], images=paths["images"])
        step2, cpu2 = time.perf_counter() - t0, time.process_time() - c0
        counts = table_counts(store)
        store.dispose()
        db_mb = db.stat().st_size / 2**20

    assert (r1.items_created, r1.references, r1.captions) == (n, 5 * n, n), r1
    assert (r2.items_created, r2.references, r2.captions) == (0, 0, n), r2
    assert counts["items"] == n and counts["refs"] == 5 * n and counts["captions"] == 2 * n
    total = step1 + step2
    print(f"import bench: {n:,} items x 5 references x 2 systems into a fresh SQLite store "
          f"({'image list' if args.images else 'line keys'})")
    print(f"  generate files          {gen_s:7.2f} s")
    print(f"  read only (system A)    {read_s:7.2f} s   ({n / read_s:,.0f} items/s)")
    print(f"  import system A         {step1:7.2f} s   ({n / step1:,.0f} items/s)   CPU {cpu1:.2f} s, store part ~{step1 - read_s:.2f} s")
    print(f"  import system B         {step2:7.2f} s   ({n / step2:,.0f} items/s)   CPU {cpu2:.2f} s (attach + compare {5 * n:,} references)")
    print(f"  total import            {total:7.2f} s   ({2 * n / total:,.0f} captions/s)   target <= {TARGET_S:.0f} s: "
          f"{'OK' if total <= TARGET_S else 'MISSED'}")
    print(f"  CPU time of the imports {cpu1 + cpu2:7.2f} s   (wall minus CPU = waiting for the disk or for other processes;"
          f" load average {os.getloadavg()[0]:.1f})")
    print(f"  peak RSS                {peak_rss_mb():7.0f} MiB (before imports {rss_before:.0f} MiB)   database {db_mb:.0f} MiB")
    return 0 if total <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
