"""Benchmark: caption metrics vs pycocoevalcap on 1,000 captions × 5 references.

Data: ``annotator.metrics.synthetic.synthetic_corpus`` (seeded, image-caption
vocabulary). In the same run, for each metric, pycocoevalcap's scorer and ours
score the same input; the numbers must be identical (float equality) and the
times are printed with their ratio. Each time is the best of ``--repeat``
runs, pycocoevalcap and ours interleaved (this machine is shared; the best
run is the least disturbed one). For the pure-Python metrics the CPU time of
this process is printed too: it is what the work costs, independent of how
busy the machine's other processes keep the cores.

Ours is timed twice:
  * cold — references prepared from scratch (``prepare(..., cache=False)``),
    i.e. exactly the work pycocoevalcap does;
  * refs ready — references already prepared (they are fixed per project and
    cached in-process), only the captions are scored: what rescoring another
    system, a corrected variant or a resample costs.

METEOR: both sides use a warm Java process (pycocoevalcap's after one
untimed call on the corpus, ours after ``warm_up`` and one untimed call);
our segment cache is cleared before every timed run, so METEOR really
scores every caption. Ours splits the work over ``min(2, CPUs)`` processes.

Also printed: a full four-metric ``rescore`` with METEOR warm (nothing
cached), the same with references prepared and METEOR statistics cached,
one live update (``IncrementalScorer.replace`` + scores of all four metrics,
median and worst of 50 single-caption corrections), and a paired bootstrap
(1,000 resamples × 1,000 captions × 4 metrics).
Targets: identical numbers; BLEU, ROUGE-L, CIDEr-D ≥ 5× faster on the cold path
(checked on the last line);
full four-metric rescore with warm METEOR ≤ 1 s; one live update ≤ 20 ms.

    .venv/bin/python bench/rescore_bench.py [--captions 1000] [--refs 5] [--repeat 5] [--seed 0]

Scaling (``--sizes 1000,10000,100000``): BLEU, ROUGE-L and CIDEr-D on the cold
path at each size, pycocoevalcap and ours interleaved in this process (CPU
time, best of ``--repeat``), identical numbers checked, the speed-up printed
beside its target at 100,000 captions (BLEU ≥ 9×, ROUGE-L ≥ 5×, CIDEr-D ≥ 25×)
and the growth exponent of each side between consecutive sizes. ``--peak N``
scores N captions with the three metrics (or ``--metrics``) cold, one after the
other in a fresh process, and prints the process's peak resident memory
(VmHWM) after each, beside the target (1,000,000 captions in ≤ 4 GB; the
corpus itself, about 0.75 GB of Python strings at 1M, included).

    .venv/bin/python bench/rescore_bench.py --sizes 1000,10000,100000 --repeat 2
    .venv/bin/python bench/rescore_bench.py --peak 1000000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.metrics import (Bleu, CiderD, IncrementalScorer, Meteor, RougeL, meteor,  # noqa: E402
                               meteor_available, paired_bootstrap, rescore, resample_weights)
from annotator.metrics.base import PREPARED_CACHE  # noqa: E402
from annotator.metrics.synthetic import perturb, synthetic_corpus  # noqa: E402


def best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def timed(fn):
    """(wall seconds, CPU seconds of this process, result) of one call."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--captions", type=int, default=1000)
    ap.add_argument("--refs", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sizes", help="comma-separated caption counts: the scaling run (see above)")
    ap.add_argument("--peak", type=int, help="captions scored in a fresh process whose peak memory is printed")
    ap.add_argument("--metrics", default="bleu,rouge,cider", help="with --peak or --sizes: the metrics scored "
                    "(default all three)")
    args = ap.parse_args()
    if args.peak:
        return peak_run(args.peak, args.refs, args.seed, args.metrics.split(","))
    if args.sizes:
        return scaling_run([int(x) for x in args.sizes.split(",")], args.refs, args.repeat, args.seed,
                           args.metrics.split(","))

    from pycocoevalcap.bleu.bleu import Bleu as CocoBleu
    from pycocoevalcap.cider.cider import Cider as CocoCider
    from pycocoevalcap.meteor.meteor import Meteor as CocoMeteor
    from pycocoevalcap.rouge.rouge import Rouge as CocoRouge

    hyps, refs = synthetic_corpus(args.captions, args.refs, seed=args.seed)
    gts = {i: r for i, r in enumerate(refs)}
    res = {i: [h] for i, h in enumerate(hyps)}
    print(f"{args.captions} captions x {args.refs} references, seed {args.seed}, best of {args.repeat}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")

    rows = []  # (metric, coco s, cold s, ready s, identical)
    all_identical = True

    def compare(name, coco_fn, metric, keys):
        nonlocal all_identical
        prep = metric.prepare(refs)

        def cold():
            if name == "METEOR":
                meteor.clear_cache()
            return metric.aggregate(metric.stats(hyps, metric.prepare(refs, cache=False)), per_segment=True)

        def ready():
            if name == "METEOR":
                meteor.clear_cache()
            return metric.aggregate(metric.stats(hyps, prep))
        # interleaved, so a burst of load elsewhere on the machine hits both sides alike
        wall = {"coco": [], "cold": [], "ready": []}
        cpu = {"coco": [], "cold": [], "ready": []}
        for _ in range(args.repeat):
            for key, fn in (("coco", coco_fn), ("cold", cold), ("ready", ready)):
                w, c, out = timed(fn)
                wall[key].append(w)
                cpu[key].append(c)
                if key == "coco":
                    coco_out = out
                elif key == "cold":
                    ours = out
                else:
                    ours2 = out
        t_coco, t_cold, t_ready = min(wall["coco"]), min(wall["cold"]), min(wall["ready"])
        c_coco, c_cold, c_ready = min(cpu["coco"]), min(cpu["cold"]), min(cpu["ready"])
        coco_vals = coco_out[0] if isinstance(coco_out[0], list) else [float(coco_out[0])]
        mine = [ours.values[k] for k in keys]
        same = mine == coco_vals and [ours2.values[k] for k in keys] == coco_vals
        segs = coco_out[1]
        if name == "BLEU":
            same = same and all(ours.segments[k] == list(segs[j]) for j, k in enumerate(keys))
        else:
            same = same and ours.per_segment == list(segs)
        all_identical &= same
        java = name == "METEOR"  # its work happens in Java processes: this process's CPU time says nothing
        rows.append((name, t_coco, t_cold, t_ready, same, None if java else (c_coco, c_cold, c_ready)))
        print(f"{name:<8} pycocoevalcap {t_coco * 1000:8.1f} ms | ours cold {t_cold * 1000:8.1f} ms "
              f"({t_coco / t_cold:5.1f}x) | refs ready {t_ready * 1000:8.1f} ms ({t_coco / t_ready:5.1f}x) | "
              f"identical: {same}  {' '.join(f'{v:.6f}' for v in mine)}")
        if not java:
            print(f"{'':<8} CPU time: pycocoevalcap {c_coco * 1000:6.1f} ms | cold {c_cold * 1000:6.1f} ms "
                  f"({c_coco / c_cold:5.1f}x) | refs ready {c_ready * 1000:6.1f} ms ({c_coco / c_ready:5.1f}x)")

    compare("BLEU", lambda: CocoBleu(4).compute_score(gts, res, verbose=0), Bleu(), [f"Bleu_{k}" for k in range(1, 5)])
    compare("ROUGE-L", lambda: CocoRouge().compute_score(gts, res), RougeL(), ["ROUGE_L"])
    compare("CIDEr-D", lambda: CocoCider().compute_score(gts, res), CiderD(), ["CIDEr"])

    have_meteor = meteor_available()
    full = cached = None
    live = []
    if have_meteor:
        coco_m = CocoMeteor()
        coco_m.compute_score(gts, res)  # start and warm its JVM (untimed)
        meteor.warm_up()
        Meteor().stats(hyps, refs)  # one untimed pass over the same corpus, as for pycocoevalcap's process
        compare("METEOR", lambda: coco_m.compute_score(gts, res), Meteor(), ["METEOR"])
        del coco_m
    else:
        print("METEOR   skipped: Java is not available")

    def full_rescore():
        PREPARED_CACHE.clear()
        meteor.clear_cache()
        return rescore(hyps, refs)
    full, full_out = best(full_rescore, args.repeat)
    cached, _ = best(lambda: rescore(hyps, refs), args.repeat)
    print(f"\nfull four-metric rescore (METEOR warm, nothing cached): {full * 1000:.1f} ms")
    print(f"full four-metric rescore (refs prepared, METEOR statistics cached): {cached * 1000:.1f} ms")

    # live updates: one correction at a time, all four metrics re-aggregated
    inc = IncrementalScorer(hyps, refs)
    edits = perturb(hyps, 1.0, seed=5)
    rng = np.random.default_rng(1)
    for i in rng.choice(len(hyps), 50, replace=False).tolist():
        t = time.perf_counter()
        inc.replace(i, edits[i] + " today")
        live.append(time.perf_counter() - t)
    check = rescore(inc.hyps, refs)
    live_ok = all(inc.scores()[k] == check[k] for k in ("Bleu_4", "METEOR", "ROUGE_L", "CIDEr") if check[k] is not None)
    print(f"live update (replace + all four scores), 50 edits: median {statistics.median(live) * 1000:.1f} ms, "
          f"worst {max(live) * 1000:.1f} ms; equals full rescore: {live_ok}")

    # paired bootstrap, 1,000 resamples, all four metrics
    other = perturb(hyps, 0.2, seed=3)
    metrics = [Bleu(), RougeL(), CiderD()] + ([Meteor()] if have_meteor else [])
    stats_a = {m.label: m.stats(hyps, refs) for m in metrics}
    stats_b = {m.label: m.stats(other, refs) for m in metrics}

    def boot(exact=False):
        w = resample_weights(len(hyps), 1000, seed=1)
        return {m.label: paired_bootstrap(m, stats_a[m.label], stats_b[m.label], weights=w, meteor_exact=exact)
                for m in metrics}
    t_boot, _ = best(boot, args.repeat)
    t_boot_exact = None
    if have_meteor:
        t_boot_exact, _ = best(lambda: boot(True), max(1, args.repeat // 2))
    print(f"paired bootstrap, 1000 resamples x {len(hyps)} captions x {len(metrics)} metrics: {t_boot * 1000:.1f} ms"
          + (f" (METEOR resamples scored by the jar: {t_boot_exact * 1000:.1f} ms)" if t_boot_exact else ""))

    print("\n| metric | pycocoevalcap | ours, cold | speed-up | ours, refs ready | speed-up | CPU-time speed-up "
          "cold / ready | identical |")
    print("|---|---:|---:|---:|---:|---:|---:|:---:|")
    for name, tc, t1, t2, same, c in rows:
        cpu_txt = "n/a (Java)" if c is None else f"{c[0] / c[1]:.1f}x / {c[0] / c[2]:.1f}x"
        print(f"| {name} | {tc * 1000:.1f} ms | {t1 * 1000:.1f} ms | {tc / t1:.1f}x | {t2 * 1000:.1f} ms | "
              f"{tc / t2:.1f}x | {cpu_txt} | {'yes' if same else 'NO'} |")
    print("\n| measurement | time | target |")
    print("|---|---:|---:|")
    print(f"| full rescore, 4 metrics, METEOR warm, nothing cached | {full * 1000:.0f} ms | ≤ 1000 ms |")
    print(f"| full rescore, 4 metrics, refs prepared + METEOR cached | {cached * 1000:.0f} ms | |")
    print(f"| live update, all four (median / worst of 50) | {statistics.median(live) * 1000:.1f} / "
          f"{max(live) * 1000:.1f} ms | ≤ 20 ms |")
    print(f"| paired bootstrap, 1000 × {len(hyps)} × {len(metrics)} | {t_boot * 1000:.0f} ms | |")
    # the cold-path target: wall time and CPU time of this process, both against pycocoevalcap in the same run
    verdicts = []
    for name, tc, t1, _, same, c in rows:
        if name in ("BLEU", "ROUGE-L", "CIDEr-D"):
            cpu = f", CPU {c[0] / c[1]:.1f}x" if c else ""
            ok = same and tc / t1 >= 5
            verdicts.append(f"{name} {tc / t1:.1f}x{cpu} {'met' if ok else 'NOT met'}")
    print("\ncold path (nothing cached) vs pycocoevalcap, target ≥ 5x with identical numbers: " + "; ".join(verdicts))
    return 0 if all_identical and live_ok else 1


#: Cold-path CPU speed-up over pycocoevalcap required at 100,000 captions × 5 references.
SCALE_TARGETS = {"BLEU": 9.0, "ROUGE-L": 5.0, "CIDEr-D": 25.0}
PEAK_TARGET_GB = 4.0


def scaling_run(sizes: list[int], n_refs: int, repeat: int, seed: int, metrics: list[str]) -> int:
    """Cold-path CPU time of pycocoevalcap and ours at each size, with ratios and growth exponents."""
    import math

    from pycocoevalcap.bleu.bleu import Bleu as CocoBleu
    from pycocoevalcap.cider.cider import Cider as CocoCider
    from pycocoevalcap.rouge.rouge import Rouge as CocoRouge
    print(f"scaling: {', '.join(map(str, sizes))} captions x {n_refs} references, seed {seed}, CPU time of this "
          f"process, best of {repeat}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")
    cases = (("BLEU", lambda g, r: CocoBleu(4).compute_score(g, r, verbose=0), Bleu),
             ("ROUGE-L", lambda g, r: CocoRouge().compute_score(g, r), RougeL),
             ("CIDEr-D", lambda g, r: CocoCider().compute_score(g, r), CiderD))
    cases = tuple(c for c in cases if c[2].key in metrics)
    times: dict[tuple[str, int], tuple[float, float]] = {}
    ok = True
    for n in sizes:
        hyps, refs = synthetic_corpus(n, n_refs, seed=seed)
        gts = {i: r for i, r in enumerate(refs)}
        res = {i: [h] for i, h in enumerate(hyps)}
        for name, coco_fn, cls in cases:
            metric = cls()
            coco_cpu, our_cpu = [], []
            for _ in range(repeat):
                _, c, coco_out = timed(lambda: coco_fn(gts, res))
                coco_cpu.append(c)
                _, c, ours = timed(lambda: metric.aggregate(metric.stats(hyps, metric.prepare(refs, cache=False)),
                                                            per_segment=True))
                our_cpu.append(c)
            keys = metric.score_keys
            coco_vals = coco_out[0] if isinstance(coco_out[0], list) else [float(coco_out[0])]
            same = [ours.values[k] for k in keys] == coco_vals
            if name == "BLEU":
                same = same and all(ours.segments[k] == list(coco_out[1][j]) for j, k in enumerate(keys))
            else:
                same = same and ours.per_segment == list(coco_out[1])
            ok &= same
            times[name, n] = (min(coco_cpu), min(our_cpu))
            tc, to = times[name, n]
            target = SCALE_TARGETS[name] if n == 100_000 else None
            verdict = "" if target is None else f"  target ≥ {target:g}x: {'met' if tc / to >= target else 'NOT met'}"
            print(f"{name:<8} {n:>8,} captions: pycocoevalcap {tc:8.2f} s | ours {to:7.3f} s | {tc / to:5.1f}x | "
                  f"identical: {same}{verdict}", flush=True)
            del ours, coco_out
    print("\ngrowth exponent (CPU time ~ n^e between consecutive sizes): pycocoevalcap / ours")
    for name, _, _ in cases:
        parts = []
        for a, b in zip(sizes, sizes[1:]):
            ea = math.log(times[name, b][0] / times[name, a][0]) / math.log(b / a)
            eb = math.log(times[name, b][1] / times[name, a][1]) / math.log(b / a)
            parts.append(f"{a:,}→{b:,}: {ea:.2f} / {eb:.2f}")
        print(f"  {name:<8} " + "; ".join(parts))
    return 0 if ok else 1


def peak_run(n: int, n_refs: int, seed: int, metrics: list[str]) -> int:
    """Score n captions with ``metrics`` (of BLEU, ROUGE-L, CIDEr-D) cold in a fresh process, one after the
    other; print each one's CPU time and the process's peak resident memory (VmHWM) after each, beside the
    target."""
    import subprocess
    code = f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
from annotator.metrics import REGISTRY
from annotator.metrics.synthetic import synthetic_corpus

def status(key):  # this process's own figures: ru_maxrss would carry the starting process's peak across exec
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(key)) / 2**20

hyps, refs = synthetic_corpus({n}, {n_refs}, seed={seed})
print(f"corpus alone {{status('VmRSS:'):.2f}} GB", flush=True)
for m in REGISTRY.create({metrics!r}):
    c = time.process_time()
    s = m.aggregate(m.stats(hyps, m.prepare(refs, cache=False)))
    print(f"{{m.label:<8}} {{time.process_time() - c:7.1f}} s CPU, {{s.value:.6f}}, peak so far {{status('VmHWM:'):.2f}} GB",
          flush=True)
    del s
print(f"peak {{status('VmHWM:'):.2f}} GB")
"""
    print(f"{n:,} captions x {n_refs} references, {', '.join(metrics)} cold, fresh process, load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    print(out.stdout + out.stderr, end="")
    if out.returncode:
        return 1
    peak = float(out.stdout.rsplit("peak ", 1)[1].split()[0])
    print(f"peak {peak:.2f} GB at {n:,} captions, target ≤ {PEAK_TARGET_GB:g} GB at 1,000,000: "
          f"{'met' if peak <= PEAK_TARGET_GB else 'NOT met'}{'' if n >= 1_000_000 else ' (a smaller corpus)'}")
    return 0 if peak <= PEAK_TARGET_GB else 1


if __name__ == "__main__":
    sys.exit(main())
