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

Then the streaming imports' memory (``--jsonl 100000 1000000``, ``--jsonl`` with no size skips it): for each
size a native JSONL file of that many items (five references and captions of two systems each, about 630 bytes
an item, as an export writes them) is generated and imported by ``annotator.io.import_jsonl`` into a fresh SQLite
store in a process of its own; printed: the process's peak resident memory before and after the import, its CPU
time, and the file's size. Target: peak ≤ 1 GiB at 1,000,000 items (5.6 GB before the importers streamed).

The same for the JSON documents (``--coco N …``, ``--label-studio N …``; no size skips them): a COCO captions
file of N images with five captions each, the annotations after the images and scattered over them as in COCO's
own files (about 500 bytes an image), imported by ``annotator.io.import_coco``; and a Label Studio export of one
annotation of each of N captions (about 400 bytes a task) imported by ``import_label_studio`` into a store that
holds those captions (imported first, in a process of its own, not counted). Target: peak ≤ 1 GiB at 1,000,000;
before they streamed, a 1M-image COCO file was at 5.6 GB after 2 min 44 s, not done (the whole document parsed,
then every item built), and 100,000 of each peaked at the figures printed as "before" (measured on the tree of
2026-11-29 on this machine).

    .venv/bin/python bench/import_bench.py [--items 100000] [--db PATH] [--images] [--jsonl N ...]
        [--coco N ...] [--label-studio N ...] [--skip-lines]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.io import import_lines  # noqa: E402
from annotator.io.importers import paused_gc  # noqa: E402
from annotator.io import import_coco, import_jsonl  # noqa: E402
from annotator.io.lines import lines_batches  # noqa: E402
from annotator.store import open_store  # noqa: E402
from annotator.store.projects import table_counts  # noqa: E402

TARGET_S = 30.0
TARGET_PEAK_MIB = 1024.0
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


def vm_hwm_mb() -> float | None:
    """This program's own peak resident set size in MiB (VmHWM: ru_maxrss carries a larger peak of the process
    that started it across exec), or None where /proc has none."""
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024.0
    except (OSError, StopIteration):
        return None


def write_jsonl_file(path: Path, n: int, seed: int = 7) -> None:
    """A native JSONL file of ``n`` items: five references and one caption of each of two systems per item
    (texts drawn from a pool of 20,000 sentences, so that writing a million items takes seconds)."""
    rng = random.Random(seed)
    pool = [json.dumps(_sentence(rng)) for _ in range(20_000)]
    pick = rng.choice
    with path.open("w", encoding="utf-8") as out:
        out.write('{"format": "annotator-jsonl", "version": 1, "image_root": null}\n')
        for i in range(n):
            refs = ",".join(f'{{"text":{pick(pool)},"mentions":[]}}' for _ in range(5))
            caps = ",".join(f'{{"system":"{s}","line":{i},"n":0,"text":{pick(pool)},"mentions":[]}}'
                            for s in ("sys-a", "sys-b"))
            out.write(f'{{"key":"{i:012d}.jpg","image":"{i:012d}.jpg","width":640,"height":480,"is_practice":false,'
                      f'"boxes":[],"references":[{refs}],"captions":[{caps}]}}\n')


def write_coco_file(path: Path, n: int) -> None:
    """A COCO captions file of ``n`` images with five captions each, the annotations after the images and
    scattered over them (image ``7919 a mod n`` for annotation a), as COCO's own files list them."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write('{"info": {"description": "generated"}, "images": [\n')
        for i in range(n):
            fh.write(f'{"," if i else ""}{{"id": {i}, "file_name": "{i:012d}.jpg", "width": 640, "height": 480}}\n')
        fh.write('],\n"annotations": [\n')
        for a in range(5 * n):
            fh.write(f'{"," if a else ""}{{"id": {a}, "image_id": {(a * 7919) % n}, "caption": "a caption number {a} '
                     'of a dog on a mat"}\n')
        fh.write("]}\n")


def write_label_studio_files(path: Path, db: Path, n: int) -> None:
    """A project ``bench`` of ``n`` captions (system ``s``, items ``k0``, ``k1``, …) stored at ``db`` (imported in a
    process of its own, so the figures of the import measured next do not count it), and at ``path`` a Label
    Studio export of one annotation of each caption by one of twenty people."""
    items = path.with_suffix(".jsonl")
    with items.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"key": f"k{i}", "captions": [{"system": "s", "text": f"a cat number {i}"}]}) + "\n")
    subprocess.run([sys.executable, __file__, "--child", "jsonl", str(items), str(db)], check=True,
                   capture_output=True, text=True)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[\n")
        for i in range(n):
            task = {"id": i + 1, "data": {"caption": f"a cat number {i}", "system": "s", "item": f"k{i}"},
                    "annotations": [{"id": i + 1, "completed_by": {"email": f"a{i % 20}@lab.example.org"},
                                     "result": [{"id": "j", "from_name": "judgement", "to_name": "caption",
                                                 "type": "choices", "value": {"choices": ["accurate"]}}],
                                     "lead_time": 3.5, "updated_at": "2026-11-20T10:00:00+00:00"}]}
            fh.write(("," if i else "") + json.dumps(task) + "\n")
        fh.write("]\n")


def import_child(mode: str, path: str, db: str) -> int:
    """Import ``path`` (``mode``: jsonl, coco or label-studio) into the store at ``db``; print the figures as JSON
    (run in a process of its own)."""
    from annotator.exchange.label_studio import import_label_studio
    store = open_store(f"sqlite:///{db}")
    before = peak_rss_mb()
    c0, t0 = time.process_time(), time.perf_counter()
    if mode == "jsonl":
        done = import_jsonl(store, "bench", path).items_created
    elif mode == "coco":
        done = import_coco(store, "bench", path).items_created
    else:
        done = import_label_studio(store, "bench", path).judgements
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    counts = table_counts(store)
    store.dispose()
    print(json.dumps({"done": done, "counts": counts, "before_mib": before, "peak_mib": peak_rss_mb(),
                      "vm_hwm_mib": vm_hwm_mb(), "cpu_s": cpu, "wall_s": wall}))
    return 0


#: What each memory figure imports: its title, what one unit is, the rows it must leave, and today's reference.
KINDS = {
    "jsonl": ("streaming JSONL import into a fresh SQLite store (5 references, 2 systems per item)", "items",
              lambda n: {"captions": 2 * n, "refs": 5 * n}, {1_000_000: "5.6 GB before the importers streamed"}),
    "coco": ("streaming COCO captions import into a fresh SQLite store (5 captions per image, scattered)", "images",
             lambda n: {"items": n, "refs": 5 * n},
             {100_000: "before: 414 MiB, 10.3 s CPU", 1_000_000: "before: 5.6 GB after 2 min 44 s, not done"}),
    "label-studio": ("streaming Label Studio import into a store of N captions (one annotation each)",
                     "annotations", lambda n: {"judgements": n}, {100_000: "before: 397 MiB, 110 s CPU"}),
}


def memory_figures(kind: str, sizes: list[int]) -> bool:
    """The streaming import's peak memory and CPU time at each size (see the module docstring)."""
    title, unit, rows, reference = KINDS[kind]
    ok = True
    print(title + "; a process each")
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix=f"import-bench-{kind}-") as tmp:
            db = Path(tmp) / "bench.db"
            path = Path(tmp) / ("items.jsonl" if kind == "jsonl" else "input.json")
            t0 = time.perf_counter()
            if kind == "jsonl":
                write_jsonl_file(path, n)
            elif kind == "coco":
                write_coco_file(path, n)
            else:
                write_label_studio_files(path, db, n)
            gen_s, size_mb = time.perf_counter() - t0, path.stat().st_size / 2**20
            out = subprocess.run([sys.executable, __file__, "--child", kind, str(path), str(db)], check=True,
                                 capture_output=True, text=True).stdout
            fig = json.loads(out.strip().splitlines()[-1])
        assert fig["done"] == n and all(fig["counts"][t] == c for t, c in rows(n).items()), fig
        met = fig["peak_mib"] <= TARGET_PEAK_MIB
        ok &= met
        print(f"  {n:>9,} {unit} ({size_mb:,.0f} MiB file, generated in {gen_s:.0f} s): peak RSS {fig['peak_mib']:,.0f} "
              f"MiB (VmHWM {fig['vm_hwm_mib'] or 0:,.0f} MiB; before the import {fig['before_mib']:.0f} MiB), CPU {fig['cpu_s']:.1f} s, wall {fig['wall_s']:.1f} s "
              f"({n / fig['wall_s']:,.0f} {unit}/s)   target peak <= {TARGET_PEAK_MIB:,.0f} MiB: {'OK' if met else 'MISSED'}"
              + (f"   ({reference[n]})" if n in reference else ""))
    print(f"  load average {os.getloadavg()[0]:.1f}")
    return ok


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        return import_child(*sys.argv[2:5])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--jsonl", type=int, nargs="*", default=[100_000, 1_000_000],
                        help="item counts of the streaming JSONL memory figures (none: skip them)")
    parser.add_argument("--coco", type=int, nargs="*", default=[100_000, 1_000_000],
                        help="image counts of the streaming COCO memory figures (none: skip them)")
    parser.add_argument("--label-studio", type=int, nargs="*", default=[100_000, 1_000_000],
                        help="annotation counts of the streaming Label Studio memory figures (none: skip them)")
    parser.add_argument("--skip-lines", action="store_true", help="only the memory figures")
    parser.add_argument("--db", help="SQLite file to create (default: in the temporary folder)")
    parser.add_argument("--images", action="store_true", help="also give an image list (items keyed by file name)")
    args = parser.parse_args()
    ok = lines_bench(args) if not args.skip_lines else True
    for kind, sizes in (("jsonl", args.jsonl), ("coco", args.coco), ("label-studio", args.label_studio)):
        if sizes:
            ok &= memory_figures(kind, sizes)
    return 0 if ok else 1


def lines_bench(args) -> bool:
    """The line-aligned import of two systems (see the module docstring)."""
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
            for _ in lines_batches("bench", "sys-a", paths["caps_a"], paths["refs"], images=paths["images"])[1]:
                pass
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
    return total <= TARGET_S


if __name__ == "__main__":
    sys.exit(main())
