"""Importing the estimators does not import scipy.stats (about a second on a first visit): the Assignment page
reads the sampling settings for its form, and only a computation that needs a quantile imports scipy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _modules_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code + "; print('scipy.stats' in sys.modules)"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return out.stdout.split() or [out.stderr]


def test_the_estimators_import_without_scipy_stats():
    assert _modules_after("import sys, annotator.estimate, annotator.estimate.sampling, annotator.estimate.project") \
        == ["False"]


def test_an_interval_still_imports_it_when_needed():
    from annotator.estimate.ppi import classical_mean
    assert _modules_after("import sys; from annotator.estimate.ppi import classical_mean; "
                          "classical_mean([0.0, 1.0, 1.0, 0.0], alpha=0.05)") == ["True"]
    est = classical_mean([0.0, 1.0, 1.0, 0.0], alpha=0.05)
    assert est.estimate == 0.5 and est.ci[0] < 0.5 < est.ci[1]
