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
Target: report ≤ 1 s and tables ≤ 1 s (computation, excluding the DB read).

    .venv/bin/python bench/agreement_bench.py [--captions 500000] [--db PATH] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.model import Caption, Item, Project, Role  # noqa: E402
from annotator.store import open_store  # noqa: E402
from annotator.store.projects import project_id, write_project  # noqa: E402
from annotator.store.schema import captions, current_judgements, judgements, systems  # noqa: E402
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
                                   "revision": 1, "label": str(labels[i]), "error_types": type_str[i], "updated_at": now})
                conn.execute(judgements.insert(), j_rows)
                conn.execute(current_judgements.insert(), c_rows)
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
    args = ap.parse_args(argv)

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
    from annotator.store.analysis_queries import LiveJudgementFrame
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
    store.dispose()
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
