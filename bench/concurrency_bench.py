"""Concurrent judgement saves: N processes × M saves at once, SQLite and PostgreSQL.

Prints saves per second and save latency (median, p95, p99, max) for each
backend, after checking that every acknowledged save is stored (revisions
1..n per key, current pointer at the highest). The default size, 20 processes × 500 saves, is the full size of
tests/reliability/test_concurrency.py's 8 × 50 twin in the suite. Usage:

    python bench/concurrency_bench.py [--procs 20] [--saves 500] [--pg URL | --no-pg]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "reliability")]

import reliability_helpers as H  # noqa: E402

from annotator.store import open_store  # noqa: E402


def run(url: str, procs: int, saves: int, shared_every: int) -> dict:
    """One run on a fresh store at ``url``; returns the latency summary."""
    store = open_store(url)
    users = [(f"u{n:02d}", "annotator") for n in range(procs)] + [("shared", "annotator")]
    cids, uids = H.seed_project(store, n_items=100, users=users)

    def key(rng, n: int, j: int) -> tuple[int, int]:
        uid = uids["shared"] if shared_every and j % shared_every == 0 else uids[f"u{n:02d}"]
        return (cids[rng.randrange(4)] if uid == uids["shared"] else cids[j % 100]), uid

    plans = H.random_plans(procs, saves, key)
    with tempfile.TemporaryDirectory() as logs:
        t0 = time.perf_counter()
        acks = H.run_writers(H.mp_context(), url, plans, Path(logs))
        wall = time.perf_counter() - t0
    H.check_against_acks(store, acks)
    store.dispose()
    return H.latency_summary(acks, wall)


def _pg_schema_url(base: str) -> tuple[str, callable]:
    from sqlalchemy import create_engine, text
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))

    def drop():
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
    return f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3D{schema}", drop


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=20)
    ap.add_argument("--saves", type=int, default=500)
    ap.add_argument("--shared-every", type=int, default=5, help="every k-th save goes to one of 4 keys all processes share (0: none)")
    ap.add_argument("--pg", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    ap.add_argument("--no-pg", action="store_true")
    args = ap.parse_args()
    print(f"{args.procs} processes x {args.saves} saves, every {args.shared_every}th on a shared key")
    with tempfile.TemporaryDirectory() as d:
        print("sqlite     ", run(f"sqlite:///{d}/bench.db", args.procs, args.saves, args.shared_every))
    if not args.no_pg:
        url, drop = _pg_schema_url(args.pg)
        try:
            print("postgresql ", run(url, args.procs, args.saves, args.shared_every))
        finally:
            drop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
