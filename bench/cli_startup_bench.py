"""Benchmark: what a command costs before it does anything.

Runs ``python -m annotator --version`` and ``python -m annotator projects`` (on an empty SQLite store) as fresh
interpreters, ``--runs`` times each, and prints the CPU time (user + system, from each child's rusage) and the
peak resident memory of each, beside ``python -c pass`` and ``python -c "import sqlalchemy"`` (the floor a command
that opens the store cannot go below). Python's bytecode cache is on, as for a user (the variable
PYTHONDONTWRITEBYTECODE is taken out of the children's environment). Target: ≤ 0.4 s of CPU for both commands.

    .venv/bin/python bench/cli_startup_bench.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 0.4


def measure(argv: list[str], runs: int) -> tuple[list[float], float]:
    """CPU seconds of each of ``runs`` fresh processes of ``argv``, and the largest peak RSS in MiB."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cpu, rss = [], 0.0
    for _ in range(runs):
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"{' '.join(argv)} failed with exit code {proc.returncode}")
        cpu.append(usage.ru_utime + usage.ru_stime)
        rss = max(rss, usage.ru_maxrss / 1024.0)
    return cpu, rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="cli-bench-") as tmp:
        db = str(Path(tmp) / "a.db")
        subprocess.run([py, "-m", "annotator", "--db", db, "init"], cwd=ROOT, check=True, capture_output=True)
        cases = [("python -c pass", [py, "-c", "pass"], None),
                 ("python -c 'import sqlalchemy'", [py, "-c", "import sqlalchemy"], None),
                 ("annotator --version", [py, "-m", "annotator", "--version"], TARGET_S),
                 ("annotator projects", [py, "-m", "annotator", "--db", db, "projects"], TARGET_S)]
        print(f"CLI start-up, {args.runs} fresh processes each (load average {os.getloadavg()[0]:.1f}); CPU = user + system")
        ok = True
        for label, argv, target in cases:
            cpu, rss = measure(argv, args.runs)
            verdict = ""
            if target is not None:
                met = statistics.median(cpu) <= target
                ok &= met
                verdict = f"   target <= {target:.1f} s: {'OK' if met else 'MISSED'}"
            print(f"  {label:32s} CPU median {statistics.median(cpu):.3f} s (min {min(cpu):.3f}, "
                  f"max {max(cpu):.3f}), peak {rss:.0f} MiB{verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
