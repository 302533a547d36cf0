"""The lexical-gap study's protocols on a project of a few thousand images.

A seeded synthetic project (caption-like sentences from ``diversity_bench``):
``--images`` images, each with ``--references`` human descriptions and one
caption from each of ``--systems`` systems. Timed, wall clock and process CPU:

* the rich-versus-sparse table (Section 3.2): ``--draws`` evaluations of
  ``--ground-truth`` descriptions per image, the in-process default metrics
  (BLEU, ROUGE-L, CIDEr-D), all four cells;
* the µ estimate from per-image sub-corpora (HD-D);
* the per-image TTR comparison (every image's references against its captions).

    python bench/rich_sparse_bench.py [--images 3000] [--references 6] [--systems 6] [--draws 1000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from diversity_bench import caption_like_texts  # noqa: E402

from annotator.diversity.calibration import estimate_mu  # noqa: E402
from annotator.diversity.curves import compare_image_curves  # noqa: E402
from annotator.diversity.rich_sparse import DrawSettings, rich_sparse_table  # noqa: E402
from annotator.diversity.sources import pools_from  # noqa: E402
from annotator.metrics import REGISTRY  # noqa: E402


def timed(fn):
    """(wall seconds, CPU seconds, value) of one call."""
    c, t = time.process_time(), time.perf_counter()
    value = fn()
    return time.perf_counter() - t, time.process_time() - c, value


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=3000)
    ap.add_argument("--references", type=int, default=6)
    ap.add_argument("--systems", type=int, default=6)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--ground-truth", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    per_image = args.references + args.systems
    texts = iter(caption_like_texts(args.images * per_image * 12, args.seed))
    human = [[next(texts) for _ in range(args.references)] for _ in range(args.images)]
    machine = [[next(texts) for _ in range(args.systems)] for _ in range(args.images)]
    pools = pools_from([f"im{i:06d}.jpg" for i in range(args.images)], human, machine,
                       [f"system {k + 1}" for k in range(args.systems)])
    load = os.getloadavg()[0]
    print(f"{args.images:,} images x ({args.references} references + {args.systems} captions); load average {load:.1f}")

    metrics = REGISTRY.defaults(in_process_only=True)
    settings = DrawSettings(draws=args.draws, ground_truth=args.ground_truth, seed=args.seed)
    wall, cpu, report = timed(lambda: rich_sparse_table(pools, metrics=metrics, settings=settings))
    pairs = sum(c.pairs for c in report.cells)
    print(f"\nrich/sparse table, {args.draws} draws of {args.ground_truth}, {', '.join(map(REGISTRY.label, metrics))}: "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU; {pairs:,} (candidate, distinct draw) pairs scored, "
          f"{args.draws * 4:,} evaluations re-aggregated")
    table = report.table()
    table.columns = [f"{a[len('Ground truth: '):]}/{b[len('Candidates: '):]}" for a, b in table.columns]
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))

    refs = [t for image in human for t in image]
    wall, cpu, mu = timed(lambda: estimate_mu(pools, refs))
    print(f"\nmu estimate (HD-D, one sub-corpus per image and side): {wall:.2f} s wall, {cpu:.2f} s CPU; "
          f"mu = {mu.mu:.3f} ({mu.method}), {len(mu.rich) + len(mu.sparse):,} sub-corpora, {mu.dropped} left out")
    wall, cpu, cmp = timed(lambda: compare_image_curves(pools))
    print(f"per-image TTR comparison: {wall:.2f} s wall, {cpu:.2f} s CPU; references more diverse on "
          f"{cmp.human_higher:,} of {cmp.images:,} images")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
