"""Benchmark: agreement report and error tables on 1,000,000 judgements.

Two annotators judge the same 500,000 captions (250,000 items × 2 systems),
so the store holds 1,000,000 current judgements. Data is generated with a
fixed seed and bulk-inserted into a SQLite store through annotator.store
(``write_project`` for items/captions, the schema tables for judgements).

Printed separately, each the best of ``--repeat`` runs:
  * DB read   — the one query the pages and the CLI run (``analysis_queries.judgement_frame``)
  * report    — ``agreement.agreement_report`` on the frame (incl. 1,000-resample bootstrap)
  * layer     — ``layers.build_layer`` (one annotator; adjudicated consensus)
  * tables    — ``analysis.error_tables`` on a layer
  * refresh   — what a dashboard reads after one more save: ``LiveJudgementFrame.get`` merging the
                changed keys into the frame, against reading everything again (ratio)
  * team      — the Team dashboard (``team.team_report``): its read (current annotations with skips and
                timing), the report on A's captions assigned first and B's second, and its refresh after a save
  * cold       — each dashboard from a cold server: a fresh process opens the store, reads what the page
                reads and computes its first table (Agreement: the report behind the pair's figures;
                Adjudication: the disagreement queue and its first page; Error analysis: the adjudicated layer
                and the per-system tables; Team: the live frame, the assignments and the per-annotator counts),
                printed per page with its read and compute parts, the range over ``--cold-runs`` fresh processes;
                once as a server's first start (no frame snapshot) and once as a restarted server (the snapshot
                its last full read wrote, 1,000 saves since: each such run adds 1,000 revisions to the store);
                then twice more with serve.py's warm-up (annotator.frames.warm.warm_up) run first in the same
                process, from the snapshots and from none, its time printed beside the page's. OK only when
                every run is within the target.
                ``--code DIR`` runs those processes on another checkout of annotator (a figure before a change).
Target: report ≤ 1 s and tables ≤ 1 s (computation, excluding the DB read); each page's first table ≤ 1 s cold,
in wall time and in CPU time of the process (its threads included: the CPU figure holds on a loaded machine too).
``--cold-pages agreement team`` runs only those pages' cold figures (and ``--cold-first-only`` only the first start,
nothing warmed and no snapshot: what a project never read before costs).

    .venv/bin/python bench/agreement_bench.py [--captions 500000] [--db PATH] [--repeat 3] [--cold-runs 3]
    .venv/bin/python bench/agreement_bench.py --db PATH --cold-only [--code DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# --code DIR: import annotator from that checkout (the cold figures of another version of the code).
sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--code") + 1]).resolve() if "--code" in sys.argv[:-1] else ROOT))

from annotator.model import Caption, Item, Project, Role  # noqa: E402
from annotator.store import open_store  # noqa: E402
from annotator.store.projects import project_id, write_project  # noqa: E402
from annotator.store.schema import assignments, captions, current_judgements, judgements, systems  # noqa: E402
from annotator.store.users import user_id  # noqa: E402
from annotator.taxonomy import ERROR_TYPE_IDS  # noqa: E402

PROJECT = "bench"
TARGET_S = 1.0
# Rough type frequencies of the error-analysis study (Table 2), in ERROR_TYPE_IDS order.
TYPE_WEIGHTS = np.array([40, 98, 104, 195, 1, 3, 11, 34, 7, 31, 47, 1, 38, 168, 37, 61, 91, 14, 20, 264], float)


def _type_sets(rng, n: int) -> np.ndarray:
    """Random type bitmasks: 1–4 types per caption (study's 486/221/83/22 shape)."""
    k = rng.choice([1, 2, 3, 4], size=n, p=np.array([486, 221, 83, 22]) / 812)
    p = TYPE_WEIGHTS / TYPE_WEIGHTS.sum()
    masks = np.zeros(n, dtype=np.int64)
    for j in range(4):
        t = rng.choice(len(p), size=n, p=p)
        masks |= np.where(k > j, np.int64(1) << t, 0)
    return masks


def _encode(masks: np.ndarray) -> list[str]:
    uniq, inv = np.unique(masks, return_inverse=True)
    strings = [" ".join(ERROR_TYPE_IDS[b] for b in range(len(ERROR_TYPE_IDS)) if (int(m) >> b) & 1) for m in uniq]
    return [strings[i] for i in inv]


def build(db_path: Path, n_captions: int, seed: int = 7) -> tuple[str, float]:
    """Create the benchmark store; return (url, seconds)."""
    from annotator.store.project_settings import stamp_assignments
    from annotator.store.codec import type_mask
    t0 = time.perf_counter()
    url = f"sqlite:///{db_path}"
    store = open_store(url)
    n_items = n_captions // 2
    rng = np.random.default_rng(seed)
    project = Project(PROJECT, items=[
        Item(key=f"img{i:07d}", image=f"img{i:07d}.jpg", is_practice=i < 500,
             captions=[Caption("sysA", f"caption a {i}"), Caption("sysB", f"caption b {i}")]) for i in range(n_items)])
    with store.transaction() as conn:
        write_project(conn, project)
        uid_a = user_id(conn, "ann_a", create_role=Role.ANNOTATOR)
        uid_b = user_id(conn, "ann_b", create_role=Role.ANNOTATOR)
        pid = project_id(conn, PROJECT)
        cids = np.array([r[0] for r in conn.execute(
            captions.select().with_only_columns(captions.c.id).join(systems, systems.c.id == captions.c.system_id)
            .where(systems.c.project_id == pid).order_by(captions.c.id))])
    n = len(cids)
    # Annotator A: 80% inaccurate; B agrees on the label 91% of the time.
    inacc_a = rng.random(n) < 0.8
    inacc_b = np.where(rng.random(n) < 0.91, inacc_a, ~inacc_a)
    types_a = _type_sets(rng, n)
    # B keeps each caption's A types half of the time, else draws its own.
    types_b = np.where(rng.random(n) < 0.5, types_a, _type_sets(rng, n))
    now = datetime.now(timezone.utc)
    # The current row's save and working times (3 s): integers since migration 21, a timestamp and a float in
    # older code (--code).
    saved = ({"saved_us": (now - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1),
              "hundredths": 301} if "saved_us" in current_judgements.c else {"updated_at": now, "seconds": 3.0})
    jid = 0
    with store.transaction() as conn:
        for uid, inacc, masks in ((uid_a, inacc_a, types_a), (uid_b, inacc_b, types_b)):
            type_str = _encode(np.where(inacc, masks, 0))
            labels = np.where(inacc, "inaccurate", "accurate")
            for start in range(0, n, 50_000):
                stop = min(start + 50_000, n)
                j_rows, c_rows = [], []
                for i in range(start, stop):
                    jid += 1
                    cid = int(cids[i])
                    j_rows.append({"id": jid, "caption_id": cid, "user_id": uid, "kind": "annotation", "revision": 1,
                                   "label": str(labels[i]), "error_types": type_str[i], "note": "", "seconds": 3.0,
                                   "created_at": now})
                    c_rows.append({"caption_id": cid, "user_id": uid, "kind": "annotation", "judgement_id": jid,
                                   "revision": 1, "label": str(labels[i]), "error_types": type_str[i],
                                   "type_mask": type_mask(type_str[i]), **saved})
                conn.execute(judgements.insert(), j_rows)
                conn.execute(current_judgements.insert(), c_rows)
        # Every caption in both queues, A first and B the blind second (what the team page counts against).
        for uid, second in ((uid_a, False), (uid_b, True)):
            for start in range(0, n, 50_000):
                conn.execute(assignments.insert(), [
                    {"project_id": pid, "caption_id": int(cids[i]), "user_id": uid, "position": i, "is_second": second}
                    for i in range(start, min(start + 50_000, n))])
        # The stamp annotator.store.assignments writes with every change of a project's assignment rows.
        stamp_assignments(conn, pid)
    store.dispose()
    return url, time.perf_counter() - t0


def _best(func, repeat: int):
    best, value = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = func()
        best = min(best, time.perf_counter() - t0)
    return best, value


def main(argv=None) -> int:
    from annotator.agreement import agreement_report
    from annotator.analysis import error_tables
    from annotator.layers import build_layer
    from annotator.store.analysis_queries import judgement_frame

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captions", type=int, default=500_000)
    ap.add_argument("--db", type=Path, default=None, help="reuse/create this SQLite file (default: a temp file)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cold-runs", type=int, default=3, help="fresh processes per page for the cold figures")
    ap.add_argument("--cold-only", action="store_true", help="only the cold figures (the store must exist)")
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout of annotator the cold processes run")
    ap.add_argument("--cold-pages", nargs="+", choices=PAGES, default=list(PAGES), help="pages of the cold figures")
    ap.add_argument("--cold-first-only", action="store_true",
                    help="only the cold figures of a first start (nothing warmed, no snapshot)")
    ap.add_argument("--cold-page", choices=PAGES, help=argparse.SUPPRESS)  # one cold run, in this process
    ap.add_argument("--snapshots", type=Path, default=None, help=argparse.SUPPRESS)  # its frame snapshot folder
    ap.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)  # warm up first, as serve.py does
    ap.add_argument("--make-snapshots", type=Path, default=None, help=argparse.SUPPRESS)  # write them there
    args = ap.parse_args(argv)
    if args.cold_page:
        return _cold_page(args.cold_page, f"sqlite:///{args.db}", args.snapshots, args.warm)
    if args.make_snapshots:
        return _make_snapshots(f"sqlite:///{args.db}", args.make_snapshots)

    tmp = None
    if args.db is None:
        tmp = tempfile.TemporaryDirectory()
        db_path = Path(tmp.name) / "bench.db"
    else:
        db_path = args.db
    if not db_path.exists():
        url, secs = build(db_path, args.captions)
        print(f"built store: {args.captions:,} captions, {2 * args.captions:,} judgements in {secs:.1f} s ({db_path})")
    else:
        url = f"sqlite:///{db_path}"
        print(f"reusing store {db_path}")
    if args.cold_only:
        _cold(db_path, runs=args.cold_runs, code=args.code, pages=args.cold_pages, first_only=args.cold_first_only)
        return 0
    store = open_store(url)

    t_read, frame = _best(lambda: judgement_frame(store, PROJECT, kinds=("annotation", "adjudication")), args.repeat)
    print(f"DB read    (judgement_frame, {len(frame):,} rows): {t_read:.3f} s")

    t_rep, report = _best(lambda: agreement_report(frame, ["ann_a", "ann_b"], n_resamples=1000, seed=0), args.repeat)
    pair = report.pairs[0]
    print(f"report     (kappa + bootstrap CI, fine P/R/F, per type, alpha, Fleiss): {t_rep:.3f} s "
          f"[n={pair.n:,}, kappa={pair.kappa:.3f}, CI={pair.kappa_ci[0]:.3f}..{pair.kappa_ci[1]:.3f}, "
          f"fine P/R={pair.fine.precision:.3f}/{pair.fine.recall:.3f}, practice captions left out="
          f"{report.practice_captions_excluded:,}]  {'OK' if t_rep <= TARGET_S else 'OVER TARGET'}")

    t_layer1, layer_a = _best(lambda: build_layer(frame, "ann_a"), args.repeat)
    t_layer2, layer_adj = _best(lambda: build_layer(frame, "adjudicated"), args.repeat)
    print(f"layer      (one annotator): {t_layer1:.3f} s; (adjudicated consensus): {t_layer2:.3f} s")

    t_tab1, tables_a = _best(lambda: error_tables(layer_a), args.repeat)
    t_tab2, tables_adj = _best(lambda: error_tables(layer_adj), args.repeat)
    t_tab3, _ = _best(lambda: [error_tables(layer_adj, system=s) for s in ("sysA", "sysB")], args.repeat)
    print(f"tables     (one annotator, {tables_a.total:,} captions): {t_tab1:.3f} s; "
          f"(adjudicated, {tables_adj.total:,} resolved): {t_tab2:.3f} s; (per system ×2): {t_tab3:.3f} s")
    total_tables = t_layer2 + t_tab2
    print(f"layer+tables adjudicated: {total_tables:.3f} s  {'OK' if total_tables <= TARGET_S else 'OVER TARGET'}")
    print(f"end-to-end CLI-like (read + report): {t_read + t_rep:.3f} s; (read + layer + tables): {t_read + total_tables:.3f} s")

    # A lead's dashboard while annotators keep saving: one save, then the frame is brought up to date.
    from annotator.frames.live import LiveJudgementFrame
    from annotator.store.judgements import save_judgement
    live = LiveJudgementFrame(store, PROJECT)
    live.get()
    with store.read() as conn:
        uid = user_id(conn, "ann_a")
        caption_ids = [r[0] for r in conn.execute(captions.select().with_only_columns(captions.c.id).limit(50))]
    refresh = []
    for k, cid in enumerate(caption_ids):
        save_judgement(store, cid, uid, label="inaccurate" if k % 2 else "accurate",
                       error_types=("gender",) if k % 2 else ())
        t0 = time.perf_counter()
        fresh, _ = live.get()
        refresh.append(time.perf_counter() - t0)
    assert live.full_reads == 1 and live.delta_reads == len(caption_ids) and len(fresh) == len(frame)
    med = float(np.median(refresh))
    t_full, _ = _best(lambda: judgement_frame(store, PROJECT, kinds=("annotation", "adjudication")), 1)
    print(f"refresh    after one save ({len(refresh)} saves): median {med * 1000:.1f} ms, max {max(refresh) * 1000:.1f} ms; "
          f"a full read {t_full:.3f} s -> {t_full / med:.0f}x faster")
    _team(store, repeat=args.repeat)
    store.dispose()
    _cold(db_path, runs=args.cold_runs, code=args.code, pages=args.cold_pages, first_only=args.cold_first_only)
    if tmp is not None:
        tmp.cleanup()
    return 0


def _team(store, *, repeat: int) -> None:
    """The Team dashboard's figures on the same judgements: A is every caption's first annotator, B its second."""
    import pandas as pd

    from annotator.store.judgements import save_judgement
    from annotator.team import team_frame, team_report

    t_read, frame = _best(lambda: judgement_frame_timed(store), repeat)
    caption_ids = np.unique(frame["caption_id"].to_numpy())
    n = len(caption_ids)
    assignments = pd.DataFrame({"caption_id": np.concatenate([caption_ids, caption_ids]),
                                "user": pd.Categorical(["ann_a"] * n + ["ann_b"] * n),
                                "is_second": np.r_[np.zeros(n, bool), np.ones(n, bool)],
                                "is_practice": np.zeros(2 * n, bool)})
    t_rep, report = _best(lambda: team_report(PROJECT, frame, assignments, n_resamples=1000), repeat)
    print(f"team       read (with skips and timing, {len(frame):,} rows): {t_read:.3f} s; report "
          f"({len(assignments):,} assignments, {report.totals['done']:,} done): {t_rep:.3f} s; cold end-to-end "
          f"{t_read + t_rep:.3f} s  {'OK' if t_read + t_rep <= TARGET_S else 'OVER TARGET'}")
    live = team_frame(store, PROJECT)
    live.get()
    with store.read() as conn:
        uid = user_id(conn, "ann_b")
    save_judgement(store, int(caption_ids[0]), uid, label="accurate")
    t0 = time.perf_counter()
    fresh, _ = live.get()
    t_fresh = time.perf_counter() - t0
    t_rep2, _ = _best(lambda: team_report(PROJECT, fresh, assignments, n_resamples=1000), 1)
    print(f"team       refresh after one save: read {t_fresh * 1000:.1f} ms + report {t_rep2:.3f} s")


def judgement_frame_timed(store):
    """The Team dashboard's read: current annotations with skips, seconds and save times."""
    from annotator.store.analysis_queries import judgement_frame
    return judgement_frame(store, PROJECT, kinds=("annotation",), include_skipped=True, with_timing=True)


PAGES = ("agreement", "adjudication", "analysis", "team")


def _cold(db_path: Path, *, runs: int, code: Path, pages=PAGES, first_only: bool = False) -> None:
    """Each page's first table from a cold server: ``runs`` fresh processes per page (range printed), once as
    a server's very first start (no frame snapshot on disk) and once as a restarted server (the snapshot its
    last full read wrote, with 1,000 saves made since)."""
    import os
    import shutil

    _cold_runs(db_path, runs=runs, code=code, snapshots=None, pages=pages)
    if first_only or not (code / "annotator" / "frames" / "snapshots.py").exists():
        return  # older code: no snapshots
    folder = Path(tempfile.mkdtemp(prefix="frame-snapshots-"))
    try:
        _run_step(db_path, code, ["--make-snapshots", str(folder)])
        _save_since(f"sqlite:///{db_path}", 1000)
        _cold_runs(db_path, runs=runs, code=code, snapshots=folder, pages=pages)
        if (code / "annotator" / "frames" / "warm.py").exists():
            # What serve.py does at start: the warm-up reads the frames in the background, then a lead opens
            # the page. Once from the snapshots, once as a server's very first start (no snapshot).
            _cold_runs(db_path, runs=runs, code=code, snapshots=folder, warm=True, pages=pages)
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            _cold_runs(db_path, runs=runs, code=code, snapshots=folder, warm=True, first=True, pages=pages)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop("ANNOTATOR_FRAME_CACHE", None)


def _run_step(db_path: Path, code: Path, extra: list[str]) -> str:
    import os
    import subprocess
    env = dict(os.environ, PYTHONPATH=str(code))
    proc = subprocess.run([sys.executable, __file__, "--db", str(db_path), "--code", str(code), *extra],
                          capture_output=True, text=True, env=env, cwd=str(code))
    if proc.returncode:
        raise SystemExit(f"{' '.join(extra)} failed:\n{proc.stderr}")
    return proc.stdout


def _save_since(url: str, n: int) -> None:
    """``n`` saves by annotator A on random captions (what a restarted server finds since its snapshot)."""
    from annotator.store.judgements import save_judgement
    store = open_store(url)
    with store.read() as conn:
        uid = user_id(conn, "ann_a")
        ids = [r[0] for r in conn.execute(captions.select().with_only_columns(captions.c.id))]
    rng = np.random.default_rng(11)
    for k, cid in enumerate(rng.choice(ids, size=n, replace=False).tolist()):
        save_judgement(store, int(cid), uid, label="inaccurate" if k % 3 else "accurate",
                       error_types=("scene",) if k % 3 else (), seconds=4.0 + k % 7)
    store.dispose()


def _make_snapshots(url: str, folder: Path) -> int:
    """What a running server leaves on disk: each dashboard frame read in full and its snapshot written."""
    from annotator.frames.live import LiveJudgementFrame
    from annotator.frames.snapshots import folder_for
    from annotator.team import team_frame
    store = open_store(url)
    snapshots = folder_for(url, folder)
    import threading

    from annotator.frames.assignments import assignment_frame
    from annotator.store.frame_versions import assignment_version
    for live in (LiveJudgementFrame(store, PROJECT, kinds=("annotation", "adjudication"), snapshots=snapshots),
                 team_frame(store, PROJECT, snapshots=snapshots)):
        live.get()
        live.wait_for_snapshot()
    assignment_frame(store, PROJECT, snapshots=snapshots, version=assignment_version(store, PROJECT))
    for thread in threading.enumerate():
        if thread.name == "frame-snapshot":
            thread.join()
    store.dispose()
    return 0


def _cold_runs(db_path: Path, *, runs: int, code: Path, snapshots: Path | None, warm: bool = False,
               first: bool = False, pages=PAGES) -> None:
    import json
    import shutil
    for page in pages:
        results = []
        for _ in range(runs):
            if first and snapshots is not None:  # every run a server's very first start: no snapshot yet
                shutil.rmtree(snapshots, ignore_errors=True)
                snapshots.mkdir()
            out = _run_step(db_path, code, ["--cold-page", page, *(["--snapshots", str(snapshots)] if snapshots else []),
                                            *(["--warm"] if warm else [])])
            results.append(json.loads(out.strip().splitlines()[-1]))
        total = [r["read"] + r["compute"] for r in results]
        span = lambda key: f"{min(r[key] for r in results):.2f}–{max(r[key] for r in results):.2f}"  # noqa: E731
        start = "restarted (snapshot + 1,000 saves since)" if snapshots else "first start (no snapshot)"
        if warm:
            start = (f"{'first start' if first else 'restarted'}, warmed at server start "
                     f"(warm-up {span('warm')} s in the background)")
        cpu_top = max(r["cpu"] for r in results)
        print(f"cold       {page:<13} {start}: first table {min(total):.2f}–{max(total):.2f} s (read {span('read')} s, "
              f"compute {span('compute')} s; {results[0]['what']})  {'OK' if max(total) <= TARGET_S else 'OVER TARGET'}"
              f"; CPU {span('cpu')} s (target ≤ {TARGET_S:.0f} s of CPU)  {'OK' if cpu_top <= TARGET_S else 'OVER TARGET'}")


def _cold_page(page: str, url: str, snapshot_folder: Path | None = None, warm: bool = False) -> int:
    """One cold run of ``page`` in this fresh process: open the store, read what the page reads, compute its
    first table; print the read and compute seconds as JSON (imports of the libraries are not counted: a
    server has them loaded before anyone opens a page)."""
    import json

    from annotator.adjudication import adjudication_queue, filter_queue
    from annotator.agreement import agreement_report
    from annotator.analysis import compare_systems, error_tables
    from annotator.layers import ADJUDICATED, build_layer
    from annotator.frames.live import LiveJudgementFrame
    from annotator.store.analysis_queries import annotators_in
    from annotator.team import team_frame, team_report
    from annotator.team_selection import default_team

    snapshots = None
    if snapshot_folder is not None:
        from annotator.frames.snapshots import folder_for
        snapshots = folder_for(url, snapshot_folder)
    warm_seconds = 0.0
    if warm:  # serve.py's warm-up at server start, finished before the lead opens the page
        from annotator.frames.shared import dashboard_frame, team_live_frame
        from annotator.frames.warm import warm_up
        store = open_store(url)
        t_w = time.perf_counter()
        warm_up(store, snapshots=snapshots, projects=[PROJECT])
        warm_seconds = time.perf_counter() - t_w
    t0, c0 = time.perf_counter(), time.process_time()
    if not warm:
        store = open_store(url)
    if page == "team":
        from annotator.frames.assignments import assignment_frame
        from annotator.store.frame_versions import assignment_version
        live = team_live_frame(store, PROJECT, snapshots=snapshots) if warm else team_frame(store, PROJECT,
                                                                                          snapshots=snapshots)
        frame, _ = live.get()
        a_version = assignment_version(store, PROJECT)
        try:
            assigned = assignment_frame(store, PROJECT, snapshots=snapshots, version=a_version)
        except TypeError:  # older code (--code)
            assigned = assignment_frame(store, PROJECT)
        t1 = time.perf_counter()
        try:  # the page's first table: the counts (the agreement half follows it on the page)
            from annotator.team import team_counts
            report = team_counts(PROJECT, frame, assigned)
        except ImportError:  # older code (--code): the page waited for the whole report
            report = team_report(PROJECT, frame, assigned)
        what = f"{len(report.annotators)} annotators, {report.totals['done']:,} done of {report.totals['assigned']:,}"
    else:
        live = (dashboard_frame(store, PROJECT, snapshots=snapshots) if warm else
                LiveJudgementFrame(store, PROJECT, kinds=("annotation", "adjudication"), snapshots=snapshots))
        frame, _ = live.get()
        t1 = time.perf_counter()
        team = default_team(annotators_in(frame), minimum=2 if page != "analysis" else 1)
        if page == "agreement":
            report = agreement_report(frame, team)
            pair = report.pairs[0]
            what = f"kappa {pair.kappa:.4f} [{pair.kappa_ci[0]:.4f}, {pair.kappa_ci[1]:.4f}] on {pair.n:,} captions"
        elif page == "adjudication":
            queue = adjudication_queue(frame, annotators=team, include_types=True)
            shown = filter_queue(queue, disagreement="any", status="undecided").iloc[:200]
            what = f"{len(queue):,} disagreements, first page {len(shown)} rows"
        else:
            layer = build_layer(frame, ADJUDICATED)
            systems = list(layer.systems.categories)
            tables = compare_systems(layer, systems)
            error_tables(layer)
            what = "; ".join(f"{s}: {t.inaccurate:,} of {t.total:,} inaccurate" for s, t in tables.tables.items())
    t2, c2 = time.perf_counter(), time.process_time()
    if snapshots is not None and not live.snapshot_loads and not warm:
        raise SystemExit("the cold run did not start from the snapshot")
    store.dispose()
    # CPU time beside the wall time: on a shared machine the wall time also counts waiting for a core.
    print(json.dumps({"read": t1 - t0, "compute": t2 - t1, "cpu": c2 - c0, "what": what, "warm": warm_seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
