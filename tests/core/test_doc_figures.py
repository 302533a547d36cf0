"""Figures and defaults the docs state, read from the docs and checked against the code and independent
computations (as tests/core/test_docs_complete.py does for commands and formats): a doc that drifts fails here.

The sparse-interval widths of docs/estimates.md are checked by tests/core/test_estimate_coverage.py, whose
simulations they come from."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import ppi_py
import pytest

from annotator.cli import build_parser
from annotator.content_selection import metric
from annotator.content_selection.evaluate import evaluate
from annotator.diversity import lexical_gap
from annotator.diversity.gap import gap_preset
from annotator.diversity.indices import DiversitySettings
from annotator.diversity.mtld_variants import MTLD_PRESETS
from annotator.estimate import ppi_mean

ROOT = Path(__file__).resolve().parents[2]
LEXICAL_GAP = (ROOT / "docs" / "lexical_gap.md").read_text(encoding="utf-8")
ESTIMATES = (ROOT / "docs" / "estimates.md").read_text(encoding="utf-8")
# The study's Table 3 (tests/core/test_diversity_gap_presets.py holds it too): (ld, Lg) per row, in its order.
TABLE3 = [(1.03, 0.98), (0.63, 0.02), (0.70, 0.08), (0.71, 0.11), (0.92, 0.89), (0.71, 0.10), (0.65, 0.03),
          (0.97, 0.95), (0.72, 0.11), (0.73, 0.13), (0.73, 0.13)]


def _one(pattern: str, text: str, what: str) -> re.Match:
    found = list(re.finditer(pattern, " ".join(text.split())))
    assert len(found) == 1, f"{what}: expected one sentence matching {pattern!r}, found {len(found)}"
    return found[0]


def test_the_table3_preset_s_deviation_is_the_one_the_doc_states():
    m = _one(r"come within ([0-9.]+) of every printed Lg: the largest deviation is ([0-9.]+), .*? rounded to two "
             r"decimals (\d+) of the (\d+) rows match the table exactly and the other (\d+) are 0\.01 off",
             LEXICAL_GAP, "docs/lexical_gap.md on the table3 preset")
    ld, printed = np.array(TABLE3).T
    curve = lexical_gap(ld, *gap_preset("table3"))
    deviation = np.abs(curve - printed)
    assert round(float(deviation.max()), 3) == float(m.group(2)) and deviation.max() < float(m.group(1))
    rounded_off = np.abs(np.round(curve, 2) - printed) > 1e-9
    assert (int(m.group(3)), int(m.group(4)), int(m.group(5))) == (int((~rounded_off).sum()), len(TABLE3),
                                                                  int(rounded_off.sum()))
    assert np.abs(np.round(curve, 2) - printed).max() <= 0.01 + 1e-9


def test_the_text_s_constants_are_cited_from_the_section_that_sets_them():
    # µ = 0.81 and α = 5 are set in the study's Section 4.1 (Measuring the Lexical Gap), not 3.3.
    m = _one(r"sets µ = 0\.81 and α = 5 \(Section ([0-9.]+)\)", LEXICAL_GAP, "docs/lexical_gap.md on µ and α")
    assert m.group(1) == "4.1"
    assert gap_preset("text") == (0.81, 5.0)


def test_the_mtld_default_the_doc_states_is_the_one_used():
    m = _one(r"The default MTLD is (\w+)'s \(`--mtld ([a-z-]+)`\): a factor ends when its TTR falls to ([0-9.]+) or "
             r"below, with no minimum length", LEXICAL_GAP, "docs/lexical_gap.md on MTLD")
    command = build_parser().parse_args(["diversity", "--project", "p"])
    assert m.group(2) == command.mtld == m.group(1)
    default = DiversitySettings().mtld
    assert MTLD_PRESETS[m.group(2)] == default and not default.strict and default.min_factor_length <= 1
    assert float(m.group(3)) == command.mtld_threshold == default.threshold


def test_the_content_selection_docstring_names_the_default_in_use():
    stated = re.search(r"by default \(``(\w+)``", metric.__doc__).group(1)
    assert stated == inspect.signature(evaluate).parameters["empty_descriptions"].default == "count"
    command = build_parser().parse_args(["content-selection", "--project", "p"])
    assert command.empty_descriptions == stated


def test_population_equals_ppi_py_given_every_caption_s_score():
    _one(r"reproduces when that function is given the scores of \*every\* caption as `Yhat_unlabeled`", ESTIMATES,
         "docs/estimates.md on --population and ppi_py")
    rng = np.random.default_rng(7)
    N, n = 2000, 150
    y_all = (rng.random(N) < 0.3).astype(float)
    f_all = np.clip(0.6 * y_all + 0.4 * rng.random(N), 0, 1)
    rows = rng.choice(N, n, replace=False)
    unlabelled = np.setdiff1d(np.arange(N), rows)
    mine = ppi_mean(y_all[rows], f_all[rows], f_all, finite_population=False)
    lo, hi = ppi_py.ppi_mean_ci(y_all[rows], f_all[rows], f_all, alpha=0.05)
    assert mine.ci == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)
    lo2, hi2 = ppi_py.ppi_mean_ci(y_all[rows], f_all[rows], f_all[unlabelled], alpha=0.05)
    assert abs(float(lo2[0]) - mine.ci[0]) > 1e-6 and abs(float(hi2[0]) - mine.ci[1]) > 1e-6
