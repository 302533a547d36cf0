"""``annotator judge run`` against the local chat-completions stand-in: captions per second at concurrency 8.

A synthetic project of ``--captions`` captions (the sample's eight photographs in turn, five references each) is
judged k = 5 times per caption by tests/judge_server.py's stand-in, which answers in a process of its own after
``--latency`` seconds (0: as fast as it can, which measures the runner's own cost; 0.2: a model that takes 200 ms
per answer, where 8 requests at once cannot do better than 8 / 0.2 = 40 answers a second). Printed: captions and
answers per second (wall clock) beside that ceiling, the runner process's CPU time per answer, and a second run
that finds every answer stored (what a resumed run costs before it asks anything).

    python bench/judge_bench.py [--captions 400] [--k 5] [--concurrency 8] [--latency 0 0.2]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import tempfile
import time

import _paths  # the repository root and its tests/ folder as ``tests`` (bench/_paths.py)

ROOT = _paths.ROOT

TARGET_CAPTIONS_PER_SECOND = 20.0  # at concurrency 8, k = 5 and no model latency: the runner's own cost


def _serve(latency: float, urls, stop) -> None:
    from tests.judge_server import StandIn
    with StandIn(answer=lambda caption, seed: '{"inaccurate": true, "types": ["gender"], "spans": []}',
                 delay=latency) as server:
        urls.put(server.url)
        stop.wait()


def build_project(store, n: int) -> None:
    from annotator.model import Caption, Item, Project, Reference
    from annotator.store.projects import write_project
    photos = sorted(p.name for p in (ROOT / "data" / "sample" / "images").glob("*.jpg"))
    items = [Item(key=f"img{i}", image=photos[i % len(photos)],
                  references=[Reference(f"reference {r} of picture {i}") for r in range(5)],
                  captions=[Caption("sys", f"A man in a red shirt number {i} is walking in the park")])
             for i in range(n)]
    with store.transaction() as conn:
        write_project(conn, Project("bench", items=items, image_root=str(ROOT / "data" / "sample" / "images")))


def one_run(store, url: str, args) -> tuple[float, float, object]:
    from annotator.judges.runner import RunSettings, run_judge
    settings = RunSettings(url, "stand-in", k=args.k, concurrency=args.concurrency, backoff=0.01)
    wall, cpu = time.perf_counter(), time.process_time()
    result = run_judge(store, "bench", "bench-judge", settings)
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captions", type=int, default=400)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--latency", type=float, nargs="+", default=[0.0, 0.2])
    args = ap.parse_args(argv)
    from annotator.store import open_store
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {args.captions} captions, k = {args.k}, "
          f"concurrency {args.concurrency}")
    ctx = mp.get_context("spawn")
    for latency in args.latency:
        with tempfile.TemporaryDirectory() as tmp:
            store = open_store(f"sqlite:///{tmp}/bench.db")
            build_project(store, args.captions)
            urls, stop = ctx.Queue(), ctx.Event()
            server = ctx.Process(target=_serve, args=(latency, urls, stop), daemon=True)
            server.start()
            url = urls.get(timeout=60)
            try:
                wall, cpu, result = one_run(store, url, args)
                again_wall, again_cpu, again = one_run(store, url, args)
            finally:
                stop.set()
                server.join(10)
            answers = result.stats.answered
            ceiling = (f"; ceiling {args.concurrency / latency / args.k:.1f} captions/s "
                       f"({args.concurrency / latency:.0f} answers/s)") if latency else ""
            met = "" if latency else (" (target >= %.0f: %s)" % (TARGET_CAPTIONS_PER_SECOND, "met" if
                                      args.captions / wall >= TARGET_CAPTIONS_PER_SECOND else "MISSED"))
            print(f"latency {latency:.2f} s: {args.captions / wall:.1f} captions/s, {answers / wall:.1f} answers/s "
                  f"wall{met}{ceiling}; {1000 * cpu / max(answers, 1):.2f} ms CPU per answer in the runner; "
                  f"{result.stats.requests} requests, {result.stats.failed} given up")
            print(f"  second run, every answer stored: {again_wall:.2f} s wall, {again_cpu:.2f} s CPU, "
                  f"{again.stats.requests} requests")
            store.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
