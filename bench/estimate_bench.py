"""Error detectors and estimates for 5 systems x 100,000 captions (target: 10 s).

A seeded generator builds a synthetic test set: per image a hidden scene (who,
wearing what in which colour, doing what, where, next to what) written up as
five references with synonyms and omissions, and per system a caption of the
same scene with errors put in at that system's rates (wrong gender, age,
garment, colour, activity, posture, place, relation, count, look-alike or
invented object, a repeated "and a ...", or a caption of another image). The
errors put in are the truth.

Timed, as a user meets them:

* detection: tokenising and scoring every caption of every system at once
  against the shared references (one :func:`annotator.estimate.detect` call);
* estimates: for each system, an :class:`EstimateReport` (inaccurate share and
  all 20 types) from a random human sample of ``--labels`` captions.

Then, per system, the estimated and true inaccurate share with both intervals,
and the detectors' precision/recall against the synthetic truth (optimistic:
the generator speaks the detectors' vocabulary).

With ``--compare-draws R`` (not timed), where to annotate next on these
detectors: per system, R repeats of a uniform pilot draw of ``--labels``
captions followed by a second draw of as many, active (aimed at the widest
intervals) or uniform, labelled with the truth and estimated from both draws;
the coverage of the true shares and the mean interval widths of the two designs.

    python bench/estimate_bench.py [--captions 100000] [--systems 5] [--labels 500] [--seed 0] [--compare-draws 0]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotator.estimate import (DETECTED_TYPES, INACCURATE, Evidence, HumanLabels, detect,  # noqa: E402
                                detector_quality, estimate_report)

PEOPLE = {"man": ("male", "adult"), "woman": ("female", "adult"), "boy": ("male", "child"),
          "girl": ("female", "child")}
PLURALS = {"man": "men", "woman": "women", "boy": "boys", "girl": "girls"}
SWAP_GENDER = {"man": "woman", "woman": "man", "boy": "girl", "girl": "boy"}
SWAP_AGE = {"man": "boy", "boy": "man", "woman": "girl", "girl": "woman"}
SYNONYMS = {"man": ["man", "guy", "man"], "woman": ["woman", "lady", "woman"], "boy": ["boy", "kid", "young boy"],
            "girl": ["girl", "little girl", "child"], "shirt": ["shirt", "t-shirt", "tee"],
            "beach": ["beach", "shore"], "street": ["street", "road"], "bicycle": ["bicycle", "bike"],
            "dog": ["dog", "puppy"], "sofa": ["sofa", "couch"], "field": ["field", "meadow"]}
GARMENTS = ["shirt", "jacket", "dress", "coat", "sweater", "hat", "hoodie"]
COLOURS = ["red", "blue", "green", "black", "white", "yellow", "orange", "brown", "pink", "grey"]
ACTIVITIES = ["walking", "running", "reading a book", "eating", "talking on a phone", "smiling", "waving",
              "climbing", "dancing", "painting"]
STANCES = ["standing", "sitting", "kneeling", "lying"]
SCENES = ["beach", "park", "street", "kitchen", "field", "garden", "city", "forest", "stadium", "office"]
OBJECTS = ["bicycle", "bench", "car", "tree", "fence", "umbrella", "ball", "boat", "building", "table"]
SIMILAR = {"bicycle": "motorcycle", "bench": "chair", "car": "truck", "tree": "bush", "fence": "wall",
           "umbrella": "parasol", "ball": "kite", "boat": "ship", "building": "tower", "table": "desk"}
INVENTED = ["surfboard", "guitar", "horse", "cake", "laptop", "suitcase", "piano", "camera"]
ANIMALS = ["dog", "cat", "horse", "bird"]
SIMILAR_ANIMAL = {"dog": "cat", "cat": "dog", "horse": "cow", "bird": "duck"}
RELATIONS = ["next to", "behind", "in front of", "near"]
OTHER_RELATION = {"next to": "under", "behind": "in front of", "in front of": "behind", "near": "on top of"}

# Relative rates of the error types put in (the study's table: clothing colour and activity common, extras rare).
TYPE_RATES = {"gender": 1.0, "age": 0.4, "clothing_type": 1.0, "clothing_color": 1.9, "color": 0.2,
              "subject_similar": 0.1, "subject_nonexistent": 0.1, "subject_extra": 0.3, "object_similar": 0.3,
              "object_nonexistent": 0.5, "object_extra": 0.1, "stance": 0.4, "activity": 1.6, "position": 0.4,
              "number": 0.6, "scene": 0.9, "unrelated": 2.5}


def pick(rng, options):
    return options[int(rng.integers(len(options)))]


def synonym(rng, word):
    return pick(rng, SYNONYMS.get(word, [word]))


def world(rng, n_items):
    """Hidden scenes of n images."""
    items = []
    for _ in range(n_items):
        if rng.random() < 0.75:
            items.append({"who": pick(rng, list(PEOPLE)), "garment": pick(rng, GARMENTS),
                          "colour": pick(rng, COLOURS), "doing": pick(rng, ACTIVITIES), "stance": pick(rng, STANCES),
                          "scene": pick(rng, SCENES), "object": pick(rng, OBJECTS), "rel": pick(rng, RELATIONS),
                          "count": 2 if rng.random() < 0.15 else 1})
        else:
            items.append({"animal": pick(rng, ANIMALS), "colour": pick(rng, COLOURS), "doing": pick(rng, ["running", "sleeping", "eating", "playing"]),
                          "scene": pick(rng, SCENES), "object": pick(rng, OBJECTS), "rel": pick(rng, RELATIONS),
                          "count": 1})
    return items


def describe(rng, s, reference: bool) -> str:
    """One sentence about a scene; references drop details at random and vary words."""
    drop = (lambda p: reference and rng.random() < p)
    if "who" in s:
        who = synonym(rng, s["who"]) if reference else s["who"]
        head = f"two {PLURALS[s['who']]}" if s["count"] == 2 else f"a {who}"
        parts = [head]
        if s.get("extra_subject"):
            parts.append(f"and {head}")
        if not drop(0.3):
            garment = synonym(rng, s["garment"]) if reference else s["garment"]
            parts.append(f"in a {s['colour']} {garment}" if not drop(0.3) else f"in a {garment}")
        if not drop(0.4):
            parts.append("is " + s["stance"])
        parts.append(s["doing"])
    else:
        animal = synonym(rng, s["animal"]) if reference else s["animal"]
        parts = [f"a {s['colour']} {animal}" if not drop(0.3) else f"a {animal}", "is " + s["doing"]]
    if not drop(0.4):
        obj = synonym(rng, s["object"]) if reference else s["object"]
        parts.append(f"{s['rel']} a {obj}")
        if s.get("extra_object"):
            parts.append(f"and a {obj}")
        if s.get("invented"):
            parts.append(f"with a {s['invented']}")
    if not drop(0.3):
        parts.append(f"in the {synonym(rng, s['scene']) if reference else s['scene']}")
    return " ".join(parts).capitalize()


def corrupt(rng, s, rate, others):
    """The scene a system describes, with errors put in at ``rate`` (relative per type); returns (scene, types)."""
    s = dict(s)
    types = set()
    if rng.random() < rate * TYPE_RATES["unrelated"]:
        return dict(pick(rng, others)), {"unrelated"}
    person = "who" in s

    def chance(t):
        return rng.random() < rate * TYPE_RATES[t]

    if person and chance("gender"):
        s["who"] = SWAP_GENDER[s["who"]]; types.add("gender")
    elif person and chance("age"):
        s["who"] = SWAP_AGE[s["who"]]; types.add("age")
    if person and chance("clothing_type"):
        s["garment"] = pick(rng, [g for g in GARMENTS if g != s["garment"]]); types.add("clothing_type")
    if person and chance("clothing_color"):
        s["colour"] = pick(rng, [c for c in COLOURS if c != s["colour"]]); types.add("clothing_color")
    if not person and chance("color"):
        s["colour"] = pick(rng, [c for c in COLOURS if c != s["colour"]]); types.add("color")
    if not person and chance("subject_similar"):
        s["animal"] = SIMILAR_ANIMAL[s["animal"]]; types.add("subject_similar")
    if person and chance("stance"):
        s["stance"] = pick(rng, [x for x in STANCES if x != s["stance"]]); types.add("stance")
    if chance("activity"):
        pool = ACTIVITIES if person else ["running", "sleeping", "eating", "playing"]
        s["doing"] = pick(rng, [a for a in pool if a != s["doing"]]); types.add("activity")
    if chance("scene"):
        s["scene"] = pick(rng, [x for x in SCENES if x != s["scene"]]); types.add("scene")
    if chance("position"):
        s["rel"] = OTHER_RELATION[s["rel"]]; types.add("position")
    if chance("object_similar"):
        s["object"] = SIMILAR[s["object"]]; types.add("object_similar")
    if chance("object_nonexistent"):
        s["invented"] = pick(rng, INVENTED); types.add("object_nonexistent")
    if chance("object_extra"):
        s["extra_object"] = True; types.add("object_extra")
    if person and chance("number"):
        s["count"] = 3 - s["count"]; types.add("number")
    if person and chance("subject_extra") and s["count"] == 1:
        s["extra_subject"] = True; types.add("subject_extra")
    return s, types


def build(n_items: int, n_systems: int, seed: int):
    rng = np.random.default_rng(seed)
    scenes = world(rng, n_items)
    evidence = [Evidence(tuple(describe(rng, s, True) for _ in range(5))) for s in scenes]
    rates = np.linspace(0.03, 0.12, n_systems)
    captions, truth = [], []
    for k in range(n_systems):
        caps, labels = [], []
        for s in scenes:
            scene, types = corrupt(rng, s, rates[k], scenes)
            caps.append(describe(rng, scene, False))
            labels.append(frozenset(types))
        captions.append(caps)
        truth.append(labels)
    return evidence, captions, truth


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captions", type=int, default=100_000, help="captions per system (= images)")
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--labels", type=int, default=500, help="human labels per system")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compare-draws", type=int, default=0, metavar="R",
                    help="also compare active and uniform second draws over R repeats per system (not timed)")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    evidence, captions, truth = build(args.captions, args.systems, args.seed)
    print(f"generated {args.systems} x {args.captions:,} captions, {5 * args.captions:,} references "
          f"in {time.perf_counter() - t0:.1f} s (not timed below)")

    all_captions = [c for caps in captions for c in caps]
    items = np.tile(np.arange(args.captions), args.systems)
    t1, c1 = time.perf_counter(), time.process_time()
    det = detect(all_captions, items, evidence)
    t_detect, c_detect = time.perf_counter() - t1, time.process_time() - c1

    rng = np.random.default_rng(args.seed + 1)
    t2, c2 = time.perf_counter(), time.process_time()
    reports = []
    for k in range(args.systems):
        rows = slice(k * args.captions, (k + 1) * args.captions)
        sys_det = det.subset(rows)
        sample = rng.choice(args.captions, args.labels, replace=False)
        human = HumanLabels.from_lists(sample, [bool(truth[k][i]) for i in sample], [truth[k][i] for i in sample])
        reports.append(estimate_report(sys_det, human, system=f"system-{k + 1}"))
    t_estimate, c_estimate = time.perf_counter() - t2, time.process_time() - c2
    total = t_detect + t_estimate
    load = os.getloadavg()[0]
    print(f"detection, all captions at once: {t_detect:.2f} s wall, {c_detect:.2f} s CPU "
          f"({len(all_captions) / t_detect:,.0f} captions/s)")
    print(f"estimates, {args.systems} reports of 21 targets: {t_estimate:.2f} s wall, {c_estimate:.2f} s CPU")
    print(f"total: {total:.2f} s wall, {c_detect + c_estimate:.2f} s CPU; load average {load:.1f} "
          f"(target <= 10 s: {'met' if total <= 10 else 'missed'}); peak memory "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print()
    print(f"{'system':10s} {'true':>6s} {'estimate':>8s} {'95% interval':>17s} {'classical':>17s} {'width ratio':>11s} "
          f"{'CHAIR-i':>7s} {'CHAIR-s':>7s}")
    for k, r in enumerate(reports):
        true = np.mean([bool(t) for t in truth[k]])
        e = r.inaccurate
        print(f"{r.system:10s} {true:6.3f} {e.estimate:8.3f} [{e.ci[0]:.3f}, {e.ci[1]:.3f}]  "
              f"[{e.classical_ci[0]:.3f}, {e.classical_ci[1]:.3f}]  {e.width / e.classical_width:11.2f} "
              f"{r.chair.chair_i:7.3f} {r.chair.chair_s:7.3f}")
    print()
    print("detectors against the synthetic truth (all captions of all systems; threshold 0.5):")
    flat_truth = [t for labels in truth for t in labels]
    for t in (INACCURATE, *DETECTED_TYPES):
        y = np.array([bool(ts) if t == INACCURATE else t in ts for ts in flat_truth])
        q = detector_quality(y, det.score(t))
        fmt = (lambda v: "  -  " if v is None else f"{v:.2f}")
        print(f"  {t:20s} P {fmt(q.precision)}  R {fmt(q.recall)}  AUC {fmt(q.auc)}  (true {q.positives:,})")
    if args.compare_draws:
        compare_draws(det, truth, args)
    return 0


def compare_draws(det, truth, args) -> None:
    """Active against uniform second draws on the benchmark's detectors (see the module documentation)."""
    from annotator.estimate import SampleDraw
    from annotator.estimate.sampling import TARGETS, allocate, interval_widths

    print()
    print(f"where to annotate next: a uniform pilot of about {args.labels}, then about {args.labels} more, "
          f"{args.compare_draws} repeats per system; mean interval width (coverage of the true share)")
    for k in range(args.systems):
        sys_det = det.subset(slice(k * args.captions, (k + 1) * args.captions))
        scores = {t: sys_det.score(t) for t in TARGETS}
        inaccurate = np.array([bool(t) for t in truth[k]])
        types = list(truth[k])
        true_share = {t: (inaccurate.mean() if t == INACCURATE else np.mean([t in ts for ts in types])) for t in TARGETS}

        def labels(rows, draws):
            rows = np.sort(np.asarray(rows, dtype=np.int64))
            return HumanLabels.from_lists(rows, inaccurate[rows], [types[i] for i in rows], draws=draws)

        rng = np.random.default_rng(args.seed + 7 + k)
        width = {d: {} for d in ("active", "uniform")}
        covered = {d: {} for d in ("active", "uniform")}
        for _ in range(args.compare_draws):
            pilot_alloc = allocate(scores, labels([], ()), args.labels, design="uniform")
            rows = pilot_alloc.draw(rng)
            pilot = SampleDraw(1, rows, pilot_alloc.probabilities[rows])
            first = labels(rows, (pilot,))
            before = estimate_report(sys_det, first)
            widths = interval_widths(before)
            aimed = sorted(widths, key=lambda t: -widths[t])[:3]
            for design in ("active", "uniform"):
                alloc = allocate(scores, first, args.labels, design=design, widths=widths)
                more = alloc.draw(rng)
                second = SampleDraw(2, more, alloc.probabilities[more])
                report = estimate_report(sys_det, labels(np.union1d(rows, more), (pilot, second)))
                for t in dict.fromkeys([INACCURATE, *aimed]):
                    e = report.target(t)
                    width[design].setdefault(t, []).append(e.width)
                    covered[design].setdefault(t, []).append(e.ci[0] <= true_share[t] <= e.ci[1])
        cells = []
        for t in width["active"]:
            a, u = np.mean(width["active"][t]), np.mean(width["uniform"][t])
            cells.append(f"{t} {a:.4f} ({np.mean(covered['active'][t]):.2f}) vs {u:.4f} "
                         f"({np.mean(covered['uniform'][t]):.2f}), ratio {a / u:.2f} [{len(width['active'][t])}]")
        print(f"  system-{k + 1}: " + "; ".join(cells))


if __name__ == "__main__":
    raise SystemExit(main())
