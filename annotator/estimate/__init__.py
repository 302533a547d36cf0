"""Error frequencies of whole systems from a small human sample.

* :mod:`.detectors`: automatic error detectors (a score per caption and error
  type, with the words behind it) and CHAIR object hallucination;
* :mod:`.ppi`: prediction-powered inference for a share, with the classical
  interval beside it, also from a sample drawn in recorded rounds;
* :mod:`.sampling`: where to annotate next (the inclusion probabilities of
  the next draw);
* :mod:`.report`: the :class:`EstimateReport` that the CLI and pages read.

The word lists are data: ``guidelines/detector_words.toml`` and the colour,
garment and gender classes of ``guidelines/correction_words.toml``.
"""

from .detectors import (DETECTED_TYPES, INACCURATE, SCORE_COLUMNS, ChairScore, Detections, Evidence, detect,
                        evidence_of_item, reference_similarity)
from .lexicon import Lexicon, lexicon, load_lexicon
from .ppi import (DifferenceEstimate, DrawUse, MeanEstimate, SampleDraw, classical_mean, difference, draws_means,
                  paired_difference, ppi_mean, ppi_means)
from .report import (DetectorQuality, EstimateReport, HumanLabels, compare, comparison_frame, detector_quality,
                     estimate_report)

__all__ = [
    "DETECTED_TYPES", "INACCURATE", "SCORE_COLUMNS", "ChairScore", "Detections", "Evidence", "detect",
    "evidence_of_item", "reference_similarity", "Lexicon", "lexicon", "load_lexicon", "DifferenceEstimate", "DrawUse",
    "MeanEstimate", "SampleDraw", "classical_mean", "difference", "draws_means", "paired_difference",
    "ppi_mean", "ppi_means",
    "DetectorQuality", "EstimateReport", "HumanLabels", "compare", "comparison_frame", "detector_quality", "estimate_report",
]
