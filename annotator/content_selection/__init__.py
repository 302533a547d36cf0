"""Content selection with gold visual input: which of an image's boxes does a description mention?

Given the gold boxes of an image, a describer first has to *select* what to
talk about. This package measures that step alone:

* :mod:`.metric` — the score: per image, precision and recall of the set of
  boxes a description mentions against each gold description's set, averaged
  over the gold descriptions, F their harmonic mean; then means and
  (population) standard deviations over images. All edge cases are defined
  there.
* :mod:`.baselines` — nine rankings of an image's boxes (random, size,
  position, unigram, bigram and four textual+visual combinations), of which
  the first k are selected, k = 1 … 15.
* :mod:`.priors` — the unigram/start/follow counts the textual baselines learn
  from training descriptions, and each image's own counts for ranking it
  with the priors of every other image (leave one image out).
* :mod:`.evaluate` — scoring a project: the human upper bound (each gold
  description against the others), every baseline at every k, and systems'
  captions with correspondences (:mod:`annotator.correspondence`), all over
  the same images.
* :mod:`.stats` — how many box instances gold descriptions mention, per
  description, per image and over the corpus.
* :mod:`.realise` — a crude sentence from a selection, for illustration.
* :mod:`.examples` — the baselines' example sentences for chosen images (the CLI's ``--examples``).

The position cue is the distance of the box centroid to the image centre,
closest first.
"""

from .baselines import BASELINES, TEXTUAL, VISUAL, average_ranks, bigram_rest_rank, needs_priors
from .data import EMPTY_DESCRIPTIONS, SKIP_REASONS, box_concept, compile_items, concept, gold_sets
from .evaluate import (
    DEFAULT_KS, DEFAULT_RUNS, LEAVE_ONE_OUT, Choice, Report, evaluate, evaluate_project, explain_image, mention_counts,
    parse_baselines, parse_ks, scope_lines,
)
from .metric import Scores, score_selection, summarise
from .priors import TextPriors, concept_sequence, held_out_priors, learn_priors
from .realise import realise
from .stats import MentionStats

__all__ = [
    "BASELINES", "TEXTUAL", "VISUAL", "DEFAULT_KS", "DEFAULT_RUNS", "EMPTY_DESCRIPTIONS", "LEAVE_ONE_OUT",
    "SKIP_REASONS", "Choice", "MentionStats", "Report", "Scores", "TextPriors", "average_ranks", "bigram_rest_rank",
    "box_concept", "compile_items", "concept", "concept_sequence", "evaluate", "evaluate_project", "explain_image",
    "gold_sets", "held_out_priors", "learn_priors", "mention_counts", "needs_priors", "parse_baselines", "parse_ks",
    "realise", "scope_lines", "score_selection", "summarise",
]
