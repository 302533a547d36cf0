"""Peak memory of a piece of work, measured in a fresh Python process (the memory tests of the streaming imports).

A child program splices :data:`PEAK_KIB` into its source and prints its growth; :func:`run_child` runs it with
the checkout on its path and returns what it printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Source of ``peak_kib()`` for a child program. VmHWM is the program's own high-water mark: ru_maxrss carries
#: the larger peak of the process that started it across exec (a test worker of several hundred MiB), which hid
#: the growth measured.
PEAK_KIB = '''
def peak_kib():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
'''


def run_child(script: str, *args, timeout: int = 900) -> str:
    """Run ``script`` in a fresh interpreter (``python -c script *args``) from the checkout; its standard output.
    Fails the test with the end of its standard error when it exits non-zero."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script, *map(str, args)], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout
