"""Benchmark: how many annotators one app process serves — the knee, where Save & next's p95 passes 200 ms.

Simulated annotators speak Streamlit's websocket protocol to a real ``streamlit run serve.py`` server
(tests/reliability/ws_load.py: log in through the form, land on Annotate, then every ``--period`` seconds ± 50 % tick the
panel — Accurate, or Inaccurate with one error type — and press Save & next). The latency of a save is from its
message to the end of the server's answer (the run's ``script_finished``): what a browser waits for before it
draws the next caption. Steps of 2, 5, 10, 20, … annotators run for ``--duration`` seconds each (fresh sessions,
the same accounts, every account's queue long enough); the knee is the first step whose p95 passes 200 ms.
Printed per step: saves, median / p95 / max latency, the server processes' CPU per save and busy share, the load
client's own CPU, and the machine's load average (the client and the server share this machine's cores: on a
loaded machine the figures are pessimistic, and the target's figure needs a quiet run).

Set-ups (``--setup``, several allowed): ``sqlite`` (one process, a SQLite file), ``postgresql`` (one process,
a fresh database on ``--pg``), ``proxy`` (two processes on PostgreSQL behind nginx with the block of
docs/teams.md, TLS left out; each simulated annotator connects from its own 127.x.y.1 address so that
``ip_hash`` spreads them). After every set-up, every confirmed save is checked in the database (judgements
lost: 0). Target: ≥ 30 annotators per process, saving every 5 s, on this 2-core machine, quiet.

    .venv/bin/python bench/ws_load_bench.py [--setup sqlite postgresql proxy] [--steps 2,5,10,20,30,40,60]
                                            [--period 5] [--duration 30] [--stop-ms 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _paths  # the repository root and its tests/ folder as ``tests`` (bench/_paths.py)

ROOT = _paths.ROOT
_paths.on_path("tests/reliability")
# Accounts hashed with the suite's fast parameters: the log-ins happen before the measured part, and the real
# parameters' 0.2 s of CPU each would only delay it.
os.environ.setdefault("ANNOTATOR_PASSWORD_HASHING", "fast")

import ws_load  # noqa: E402

KNEE_MS = 200.0
TARGET = 30
PW = "load client pass"
PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def seed(store, users: list[str], n_items: int):
    """A project of ``n_items`` images × 1 system, an annotator account per user, the captions shared out."""
    from annotator.accounts.auth import add_user
    from annotator.assignment import assign
    from tests.apptest_helpers import seed_project
    caps = seed_project(store, "load", n_items=n_items)
    for u in users:
        add_user(store, u, "annotator", PW)
    assign(store, "load", users, double_fraction=0)
    return caps


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its finished children (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:13]) / os.sysconf("SC_CLK_TCK")


def server_pids(servers) -> list[int]:
    return [s.proc.pid for s in servers]


def run_step(urls, users, args, pids, local_hosts) -> dict:
    start = {}

    def on_start():  # every annotator logged in: the measured part begins
        start.update(cpu=[cpu_seconds(p) for p in pids], client=time.process_time(), load=os.getloadavg()[0])
    result = asyncio.run(ws_load.run_load(urls, users, PW, period=args.period, duration=args.duration,
                                          seed=len(users), local_hosts=local_hosts, on_start=on_start))
    server_cpu = sum(cpu_seconds(p) for p in pids) - sum(start["cpu"])
    lat = sorted(result.latencies)
    n = len(lat)
    return {"users": len(users), "saves": n, "errors": result.errors, "annotators": result.annotators,
            "median": statistics.median(lat) * 1000 if lat else None,
            "p95": result.quantile(0.95) * 1000 if lat else None, "max": lat[-1] * 1000 if lat else None,
            "cpu_per_save": server_cpu / n * 1000 if n else None,
            "busy": server_cpu / result.wall / len(pids), "client_cpu": time.process_time() - start["client"],
            "load": (start["load"] + os.getloadavg()[0]) / 2, "wall": result.wall}


def line(r: dict) -> str:
    if not r["saves"]:
        return f"{r['users']:>4} annotators: no save completed; errors: {r['errors'][:2]}"
    return (f"{r['users']:>4} annotators: {r['saves']:>4} saves, median {r['median']:6.0f} ms, p95 {r['p95']:6.0f} ms, "
            f"max {r['max']:6.0f} ms | server CPU {r['cpu_per_save']:5.1f} ms/save, {r['busy'] * 100:3.0f} % busy per "
            f"process | client CPU {r['client_cpu']:5.1f} s | load {r['load']:4.1f}"
            + (f" | errors {len(r['errors'])}: {r['errors'][0][:200]}" if r["errors"] else ""))


class Nginx:
    """nginx in the foreground with the documented block (TLS left out) in front of ``ports``."""

    def __init__(self, folder: Path, ports: list[int], port: int):
        teams = (ROOT / "docs" / "teams.md").read_text(encoding="utf-8")
        (block,) = re.findall(r"```nginx\n(.*?)```", teams, re.S)
        upstream = re.search(r"upstream annotator \{.*?\n\}", block, re.S).group(0)
        upstream = re.sub(r"    server 127\.0\.0\.1:850[12] [^\n]*\n", "", upstream)
        upstream = upstream.replace("\n}", "".join(f"\n    server 127.0.0.1:{p} max_fails=3 fail_timeout=10s;"
                                                    for p in ports) + "\n}")
        mapping = re.search(r"map \$http_upgrade.*?\n\}", block, re.S).group(0)
        location = re.search(r"    location / \{.*?\n    \}", block, re.S).group(0)
        site = f"{upstream}\n\n{mapping}\n\nserver {{\n    listen 127.0.0.1:{port};\n{location}\n}}\n"
        folder.mkdir(parents=True, exist_ok=True)
        temp = "".join(f"    {k}_temp_path {folder / k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        (folder / "nginx.conf").write_text(
            f"worker_processes 1;\npid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'} warn;\n"
            f"events {{ worker_connections 1024; }}\nhttp {{\n    access_log off;\n{temp}{site}\n}}\n")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.proc = subprocess.Popen([nginx, "-p", str(folder), "-e", str(folder / "error.log"), "-c",
                                      str(folder / "nginx.conf"), "-g", "daemon off;"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import socket
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"nginx did not start: {(folder / 'error.log').read_text()[-800:]}")
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def pg_database(base: str, name: str, *, drop: bool = False) -> str:
    from sqlalchemy import create_engine, text
    engine = create_engine(base, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        if not drop:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return base.rsplit("/", 1)[0] + "/" + name


def run_setup(setup: str, args, steps: list[int]) -> list[dict]:
    from annotator.store import open_store
    from tests.browser.conftest import free_port, start_server
    users = [f"ann{k:03d}" for k in range(max(steps))]
    per_user = int(len(steps) * args.duration / args.period * 1.6) + 10
    with tempfile.TemporaryDirectory() as tmp:
        db_name = f"annotator_wsload_{os.getpid()}"
        url = f"sqlite:///{Path(tmp) / 'load.db'}" if setup == "sqlite" else pg_database(args.pg, db_name)
        store = open_store(url)
        t = time.monotonic()
        seed(store, users, per_user * len(users))
        print(f"  seeded {per_user * len(users):,} captions, {len(users)} accounts in {time.monotonic() - t:.1f} s",
              flush=True)
        n_proc = 2 if setup == "proxy" else 1
        servers = [start_server(url, Path(tmp)) for _ in range(n_proc)]
        nginx = None
        try:
            if setup == "proxy":
                port = free_port()
                nginx = Nginx(Path(tmp) / "nginx", [s.port for s in servers], port)
                urls, local_hosts = [f"http://127.0.0.1:{port}"], True
            else:
                urls, local_hosts = [servers[0].url], False
            results = []
            for n in steps:
                r = run_step(urls, users[:n], args, server_pids(servers), local_hosts)
                results.append(r)
                print("  " + line(r), flush=True)
                if r["p95"] is None or r["p95"] > args.stop_ms:
                    break
            lost = ws_load.lost_saves(store, "load", [a for r in results for a in r["annotators"]])
            print(f"  judgements lost: {len(lost)}" + (f" e.g. {lost[:3]}" if lost else ""))
        finally:
            if nginx:
                nginx.stop()
            for s in servers:
                s.stop()
            store.dispose()
            if setup != "sqlite":
                pg_database(args.pg, db_name, drop=True)
    for r in results:
        r.pop("annotators")
    return results


def knee(results: list[dict], per: int) -> str:
    """The first step whose p95 passes 200 ms (per process), or that none did."""
    below = [r["users"] for r in results if r["p95"] is not None and r["p95"] <= KNEE_MS]
    above = [r["users"] for r in results if r["p95"] is None or r["p95"] > KNEE_MS]
    if not above:
        return f"p95 ≤ {KNEE_MS:.0f} ms up to {max(below)} annotators (no knee within the steps)"
    first = min(above)
    last_ok = max([u for u in below if u < first], default=None)
    return (f"knee between {last_ok} and {first} annotators" if last_ok else f"p95 over {KNEE_MS:.0f} ms from "
            f"{first} annotators on") + (f" ({per} processes)" if per > 1 else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--setup", nargs="+", default=["sqlite", "postgresql", "proxy"],
                    choices=["sqlite", "postgresql", "proxy"])
    ap.add_argument("--steps", default="2,5,10,20,30,40,60")
    ap.add_argument("--period", type=float, default=5.0, help="seconds between one annotator's saves (± 50 %%)")
    ap.add_argument("--duration", type=float, default=30.0, help="seconds each step runs")
    ap.add_argument("--stop-ms", type=float, default=1000.0, help="no larger step once a p95 passes this")
    ap.add_argument("--pg", default=os.environ.get("ANNOTATOR_TEST_PG_URL", PG))
    args = ap.parse_args()
    steps = [int(x) for x in args.steps.split(",")]
    print(f"Save & next under load: steps {steps} annotators, a save every {args.period:g} s ± 50 % each, "
          f"{args.duration:g} s per step, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start\n")
    summary = []
    for setup in args.setup:
        print(f"{setup}:", flush=True)
        results = run_setup(setup, args, steps)
        summary.append(f"{setup}: {knee(results, 2 if setup == 'proxy' else 1)}")
    print("\n" + "\n".join(summary))
    print(f"target: ≥ {TARGET} annotators per process with p95 ≤ {KNEE_MS:.0f} ms on a quiet machine "
          f"(load average at the end {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
