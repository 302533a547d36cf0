"""Benchmark: what one annotator's session costs on the server as the queue grows.

For each size (``--sizes``, default 1,000 and 100,000 captions) a fresh SQLite store gets that many items with
one caption each, assigned to two annotators with a blind double sample of 10 % under a staged second pass
(annotator.assignment.assign); half of ann1's queue is judged already (bulk), and ann2 has judged the double
sample inaccurate, so ann1's staged second pass has captions waiting for their error types. Then, each the
median of ``--repeat`` runs, CPU time of this process:

  * open      Queue.open (the page's first read of a queue)
  * resume    Queue.first_todo (where a new session starts)
  * progress  Queue.progress (the progress line; with the staged second pass's waiting captions)
  * counts    Queue.listing_counts (the caption list's filter counts)
  * save      Queue.task + Queue.save + Queue.next_todo + Queue.progress (one Save & next, picture aside)

Target: each figure at 100,000 captions within 1.5× of its figure at 1,000 (flat in the queue's length).
Before the queues' counts were kept as saves happen (the figures of the issue that asked for it, the same
machine): resume 1.6 → 139 ms, the progress count 18 → 332 ms, the list counts 2 → 352 ms from 1k to 100k.

    .venv/bin/python bench/queue_bench.py [--sizes 1000 100000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.accounts.auth import add_user  # noqa: E402
from annotator.annotation import Queue  # noqa: E402
from annotator.assignment import assign  # noqa: E402
from annotator.model import Caption, Item, Project  # noqa: E402
from annotator.store import open_store  # noqa: E402
from annotator.store.bulk import bulk_judgements  # noqa: E402
from annotator.store.projects import write_project  # noqa: E402

RATIO = 1.5


def build(store, n: int) -> None:
    """The project, the two queues and the judgements described in the module docstring."""
    with store.transaction() as conn:
        write_project(conn, Project("bench", items=[
            Item(key=f"{i:08d}.jpg", captions=[Caption("sys", f"a dog runs on the grass number {i}")])
            for i in range(n)]))
    for name in ("ann1", "ann2"):
        add_user(store, name, "annotator")
    assign(store, "bench", ["ann1", "ann2"], double_fraction=0.1, seed=0, second_pass="staged")
    a, b = (Queue.open(store, name, "annotator", "bench") for name in ("ann1", "ann2"))
    rows = []
    with store.read() as conn:
        from annotator.store.assignments import user_queue
        for uid, queue in ((a.user_id, user_queue(conn, a.user_id, a.project_id)),
                           (b.user_id, user_queue(conn, b.user_id, b.project_id))):
            for position, caption_id, is_second in queue:
                if uid == b.user_id:
                    rows.append((caption_id, uid, "inaccurate", ("gender",)))
                elif is_second or position < len(queue) // 2:
                    rows.append((caption_id, uid, "inaccurate" if is_second else "accurate", ()))
    with store.transaction() as conn:
        bulk_judgements(conn, rows)


def cpu_ms(call, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        c0 = time.process_time()
        call()
        times.append((time.process_time() - c0) * 1000)
    return statistics.median(times)


def session(store, repeat: int) -> dict[str, float]:
    queue = Queue.open(store, "ann1", "annotator", "bench")
    out = {"open": cpu_ms(lambda: Queue.open(store, "ann1", "annotator", "bench"), repeat),
           "resume": cpu_ms(queue.first_todo, repeat),
           "progress": cpu_ms(queue.progress, repeat),
           "counts": cpu_ms(queue.listing_counts, repeat)}
    assert queue.staged and queue.progress().fine_waiting > 0
    position = queue.first_todo()

    def save_and_next():
        nonlocal position
        task = queue.task(position)
        queue.save(task, "accurate")
        position = queue.next_todo(position)
        queue.progress()

    out["save"] = cpu_ms(save_and_next, repeat)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    figures = {}
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="queue-bench-") as tmp:
            store = open_store(f"sqlite:///{Path(tmp) / 'bench.db'}")
            t0 = time.perf_counter()
            build(store, n)
            built = time.perf_counter() - t0
            figures[n] = session(store, args.repeat)
            store.dispose()
        print(f"{n:>9,} captions (store built in {built:.0f} s): " + ", ".join(
            f"{k} {v:.2f} ms" for k, v in figures[n].items()) + " (CPU, median)")
    small, large = figures[min(figures)], figures[max(figures)]
    ok = True
    if len(figures) > 1:
        for what in small:
            ratio = large[what] / max(small[what], 0.01)
            met = large[what] <= RATIO * small[what] + 0.5
            ok &= met
            print(f"  {what:9s} {small[what]:7.2f} -> {large[what]:7.2f} ms ({ratio:.2f}x)   target <= {RATIO}x: "
                  f"{'OK' if met else 'MISSED'}")
    print(f"  load average {os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
