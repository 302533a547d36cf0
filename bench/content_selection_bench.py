"""Benchmark: content selection on 30,000 synthetic images × 5 references.

Scores the human upper bound and all nine baselines for k = 1 … 15 (random
with its default 5 runs), learning priors from a separate 30,000-image
training set, plus one system with a caption per image. Target: ≤ 10 s on
2 cores for the scoring (compile + priors + baselines + upper bound). Also
timed, outside that total: the textual baselines with leave-one-image-out
priors (no training set), what a project without one gets.

Run: .venv/bin/python bench/content_selection_bench.py [n_images]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotator.content_selection import BASELINES, compile_items, evaluate, learn_priors, needs_priors  # noqa: E402
from annotator.model import Box, Caption, Item, Mention, Reference  # noqa: E402


def synthetic(n_images: int, seed: int, prefix: str) -> list[Item]:
    """Images with 1–30 boxes (mean ≈ 7), 5 references mentioning 1–5 boxes, bigger boxes more often."""
    rng = np.random.default_rng(seed)
    concepts = [f"concept{j}" for j in range(400)]
    pop = 1.0 / np.arange(1, len(concepts) + 1)
    pop /= pop.sum()
    w, h = 500, 375
    counts = np.minimum(30, 1 + rng.poisson(6, n_images))
    total = int(counts.sum())
    xs, ys = rng.uniform(0, w * 0.8, total), rng.uniform(0, h * 0.8, total)
    ws, hs = rng.uniform(10, w * 0.6, total), rng.uniform(10, h * 0.6, total)
    labels = rng.choice(len(concepts), size=total, p=pop)
    # Gumbel top-m: a weighted sample without replacement per reference, in bulk.
    logw = np.log(ws * hs) + 0.3 * np.log(pop[labels])
    sizes = 1 + rng.poisson(1.9, (n_images, 6))
    items = []
    off = 0
    for i, n in enumerate(counts.tolist()):
        sl = slice(off, off + n)
        off += n
        boxes = [Box(str(j), concepts[lab], x, y, bw, bh)
                 for j, (lab, x, y, bw, bh) in enumerate(zip(labels[sl].tolist(), xs[sl].tolist(), ys[sl].tolist(),
                                                             ws[sl].tolist(), hs[sl].tolist()))]
        keys = logw[sl][None, :] + rng.gumbel(size=(6, n))
        orders = np.argsort(-keys, axis=1).tolist()
        refs = []
        for r in range(5):
            chosen = orders[r][:min(n, sizes[i, r])]
            mentions = tuple(Mention(2 * t, 2 * t + 1, (str(b),)) for t, b in enumerate(chosen))
            refs.append(Reference(" ".join(f"w {boxes[b].label}" for b in chosen), mentions))
        cap = Caption("sys", "x", tuple(Mention(t, t + 1, (str(b),)) for t, b in enumerate(orders[5][:3])))
        items.append(Item(f"{prefix}{i}", width=w, height=h, boxes=boxes, references=refs, captions=[cap]))
    return items


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30_000
    t0 = time.perf_counter()
    train = synthetic(n, 1, "train")
    test = synthetic(n, 2, "test")
    t1 = time.perf_counter()
    print(f"synthetic data: {n} train + {n} test images, {sum(len(i.boxes) for i in test)} test boxes ({t1 - t0:.1f} s, not timed)")

    t = time.perf_counter()
    priors = learn_priors(train)
    t_pri = time.perf_counter() - t
    t = time.perf_counter()
    es = compile_items(test, min_descriptions=2)
    old = {"empty_descriptions": "drop", "single_descriptions": "skip"}  # the set es was compiled for (figures kept)
    t_comp = time.perf_counter() - t
    t = time.perf_counter()
    report = evaluate(test, priors=priors, evalset=es, baselines=BASELINES, ks=range(1, 16), **old)
    t_eval = time.perf_counter() - t
    t = time.perf_counter()
    evaluate(test, evalset=es, baselines=(), systems=["sys"], **old)
    t_sys = time.perf_counter() - t
    total = t_pri + t_comp + t_eval
    print(f"learn priors          {t_pri:6.2f} s")
    print(f"compile test images   {t_comp:6.2f} s")
    print(f"9 baselines × 15 k + upper bound {t_eval:6.2f} s")
    print(f"  total               {total:6.2f} s   (target ≤ 10 s)  {'OK' if total <= 10 else 'TOO SLOW'}")
    print(f"one system (30k captions) {t_sys:6.2f} s")
    t = time.perf_counter()
    held = evaluate(test, evalset=es, baselines=[b for b in BASELINES if needs_priors(b)], ks=range(1, 16), **old)
    t_held = time.perf_counter() - t
    print(f"6 textual baselines, leave-one-image-out priors {t_held:6.2f} s")
    ub = report.upper_bound
    print(f"upper bound F = {ub.F:.3f} ± {ub.F_sd:.3f}")
    for name in BASELINES:
        s = report.baselines[name]
        print(f"{name:17s} F@1 {s[1].F:.3f}  F@3 {s[3].F:.3f}  F@4 {s[4].F:.3f}  F@15 {s[15].F:.3f}")
    for name, s in held.baselines.items():
        print(f"{name + ' (held out)':28s} F@3 {s[3].F:.3f}")


if __name__ == "__main__":
    main()
