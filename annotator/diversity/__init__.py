"""Lexical diversity of caption corpora, the lexical diversity ratio and the lexical gap.

A *corpus* is a list of texts (one system's captions, or a set of reference
descriptions). It is tokenised once by :mod:`annotator.tokenize.words` and every
measure reads the same integer token ids, so the measures can never disagree
about what a token is.

The package, along its seams:

* :mod:`~annotator.diversity.profile`        the prepared corpus (ids, frequencies, occurrence links);
* :mod:`~annotator.diversity.indices`        TTR, root TTR, log TTR, HD-D, MATTR and :func:`measures`;
* :mod:`~annotator.diversity.mtld_variants`  MTLD, its published variants and its fast factor passes;
* :mod:`~annotator.diversity.curves`         TTR curves;
* :mod:`~annotator.diversity.gap`            the lexical diversity ratio ld, the lexical gap Lg, weighting;
* :mod:`~annotator.diversity.sources`        the reference corpus cr and per-image description pools;
* :mod:`~annotator.diversity.report`         :class:`DiversityReport`, the one object page, CLI and exports read;
* :mod:`~annotator.diversity.correlation`    correlations of metrics, M·ld, M·Lg, ld and Lg with human scores;
* :mod:`~annotator.diversity.rich_sparse`    metrics on human and machine descriptions, each as ground truth;
* :mod:`~annotator.diversity.calibration`    µ from the ld distributions of rich and sparse sub-corpora.

The public names of profile, indices, mtld_variants, curves, gap and report
are importable from ``annotator.diversity`` itself; the other modules (which
need the store's texts or the caption metrics) are imported on their own.
"""

from __future__ import annotations

from .curves import TTRCurve, ttr_curve
from .gap import RATIO_MEASURES, GapSettings, lexical_diversity_ratio, lexical_gap, weighted
from .indices import MEASURE_LABELS, MEASURES, DiversitySettings, hdd, log_ttr, mattr, measures, root_ttr, ttr
from .mtld_variants import (
    MTLD_LEXICALRICHNESS, MTLD_MCCARTHY_JARVIS, MTLD_PRESETS, MTLD_TAALED_MEAN_LENGTH, MTLDOptions, mtld,
    mtld_factors,
)
from .profile import Profile
from .report import CorpusDiversity, DiversityReport, diversity_report, project_diversity

__all__ = [
    "MEASURES", "MEASURE_LABELS", "RATIO_MEASURES", "MTLDOptions", "MTLD_LEXICALRICHNESS", "MTLD_MCCARTHY_JARVIS",
    "MTLD_TAALED_MEAN_LENGTH", "MTLD_PRESETS", "DiversitySettings", "GapSettings", "Profile",
    "ttr", "root_ttr", "log_ttr", "hdd", "mtld", "mtld_factors", "mattr", "measures",
    "TTRCurve", "ttr_curve", "lexical_diversity_ratio", "lexical_gap", "weighted",
    "CorpusDiversity", "DiversityReport", "diversity_report", "project_diversity",
]
