"""Caption metrics that reproduce coco-caption (pycocoevalcap 1.2) exactly.

BLEU-1…4, METEOR 1.5, ROUGE-L and CIDEr-D give the same numbers as
pycocoevalcap's ``Bleu``, ``Meteor``, ``Rouge`` and ``Cider`` classes on the
same input (tests compare them float for float); SPICE 1.0 runs pycocoevalcap's
jar where the Stanford CoreNLP 3.6.0 jars are present (:mod:`.spice`). All are
built for rescoring:
every metric keeps per-caption *sufficient statistics*, so one edited
caption, a corrected variant of a system, or a bootstrap resample is
re-aggregated instead of rescored from text.

Quick use
---------
::

    from annotator.metrics import rescore, IncrementalScorer, delta_table

    rescore(hyps, refs)                 # {"Bleu_1": …, "Bleu_4": …, "METEOR": …, "ROUGE_L": …,
                                        #  "CIDEr": …, "signatures": {...}, "notes": [...], ...}
    rescore(hyps, refs, tokenize="ptb") # coco-caption's PTB tokenisation first

    live = IncrementalScorer(hyps, refs)
    live.replace(17, "a woman in a black shirt is standing")   # → updated scores, milliseconds
    live.delta()                        # current − baseline per key
    live.caption_scores(17)             # that caption's own scores, baseline and current
    live.bootstrap(resamples=1000)      # paired bootstrap of the edits so far
    live.revert(17)

    delta_table(hyps, refs, {"gender": hyps_gender_fixed, "colour": hyps_colour_fixed},
                seed=1, resamples=1000)  # the correction study's Δ table with CIs and p-values

``hyps`` is a list of caption strings; ``refs`` a list (same length) of
non-empty lists of reference strings, or of :class:`Sample` objects (caption,
references, image path and size, gold boxes) — what a metric that looks at
the image needs; ``rescore(samples)`` scores the samples' own captions.
Scores use coco-caption's scale (0–1 for BLEU, METEOR, ROUGE-L; CIDEr-D
roughly 0–10); multiply by 100 for the "points" papers print.

The registry
------------
:data:`REGISTRY` knows every metric, in table order. Each metric class
declares its ``key`` (``bleu``), ``label`` (``BLEU``), ``aliases``,
``settings`` (the fields of its signature), ``score_keys`` and what it
``requires`` of a sample; the registry derives from them every list the tool
shows or accepts::

    REGISTRY.keys()            # ('bleu', 'meteor', 'rouge', 'cider', 'spice'): CLI choices, page options
    REGISTRY.resolve("CIDEr-D")  # 'cider' (keys and aliases, any case)
    REGISTRY.score_keys()      # ('Bleu_1', …, 'CIDEr'): table columns in order
    REGISTRY.score_labels()    # {'Bleu_1': 'BLEU-1', …, 'CIDEr': 'CIDEr-D'}
    REGISTRY.headline_keys()   # ('Bleu_4', 'METEOR', 'ROUGE_L', 'CIDEr'): compact and live views
    REGISTRY.unavailable()     # {'meteor': 'METEOR needs Java, …'} on a machine without Java
    REGISTRY.warm_up()         # start METEOR's processes in the background, once per process

A new metric is one module with a :class:`Metric` subclass and one entry in
the list in :mod:`annotator.metrics.registry`.

Input text
----------
By default the raw text is scored with no tokenisation (which reproduces the
error-analysis study's released scores; the study never states a tokenisation): each scorer splits strings exactly as coco-caption's scorers
do when handed raw strings. ``tokenize="ptb"`` first applies coco-caption's
PTBTokenizer (the Stanford jar it ships, run by Java; lower-cases and drops
punctuation). The choice is part of every metric's signature, e.g.
``BLEU|n=4|ref=closest|smooth=1e-9,1e-15|tok=none|coco-caption-1.2``.

The metric interface (``base.Metric``)
--------------------------------------
``m = Bleu() | Meteor() | RougeL() | CiderD()`` (each takes ``tokenize=``):

* ``m.signature`` — settings string;
* ``m.prepare(refs_or_samples)`` → ``Prepared``: the context-side work
  (n-gram tables, CIDEr-D document frequencies, ROUGE-L token keys), cached per
  reference set;
* ``m.stats(hyps, refs_or_samples_or_prepared)`` or ``m.stats(samples)`` →
  N × ``m.width`` float array;
* ``m.segment_stats(hyp, refs)`` or ``m.segment_stats(hyp, prepared=p, index=i)``
  → one row (CIDEr-D needs the prepared set: its weights depend on all references);
* ``m.aggregate(stats, per_segment=False)`` → ``Score(name, value, values,
  signature, n, per_segment, extra, segments)``;
* ``m.corpus_score(hyps, refs)`` → ``Score``;
* ``m.resample(stats, weights)`` → corpus values for bootstrap resamples.

Statistics rows: BLEU ``[testlen, closest reflen, guess_1..4, correct_1..4]``;
METEOR the jar's 23 statistics; ROUGE-L and CIDEr-D the per-caption score
(CIDEr-D's with the scored set's document frequencies fixed, which is exact
because they depend on the references only).

METEOR and Java
---------------
METEOR runs ``meteor-1.5.jar`` in long-lived processes (one per core, at most
two; ``ANNOTATOR_METEOR_PROCESSES`` overrides), started on first use — call
``meteor.warm_up(wait=False)`` early (once per process; later calls find it
started), startup takes several seconds — thread-safe, restarted if they
die, closed at exit. Without Java, ``Meteor`` raises ``MetricUnavailable``
and ``rescore``/``IncrementalScorer``/``delta_table`` report the other
metrics with ``METEOR: None`` and a note.

Bootstrap
---------
``bootstrap.paired_bootstrap(metric, stats_a, stats_b, resamples=1000,
seed=…)`` resamples captions (paired) and re-aggregates statistics with numpy;
it reports Δ, a percentile interval and a two-sided p-value (plus the one-sided
share of resamples with Δ* ≤ 0). See :mod:`annotator.metrics.bootstrap`.

Where we differ from pycocoevalcap (only where it fails or misaligns)
---------------------------------------------------------------------
* a caption with no references, or a corpus whose references are all empty
  (CIDEr-D): pycocoevalcap asserts/crashes, we raise ``MetricInputError``;
* line breaks inside a caption or reference (METEOR, PTB): pycocoevalcap's
  stdio protocol or its line-per-caption tokeniser file gets out of step;
  we turn them into spaces.
Empty captions and references are scored exactly as pycocoevalcap scores them.
"""

from .base import COCO_CAPTION, Metric, Prepared, Score, Setting
from .bleu import Bleu
from .bootstrap import BootstrapResult, paired_bootstrap, resample_weights
from .cider import CiderD
from ..errors import MetricInputError, MetricUnavailable
from .meteor import Meteor, meteor_available, warm_up
from .registry import REGISTRY, MetricRegistry
from .rouge import RougeL
from .spice import Spice
from .sample import Sample
from .scoring import (DEFAULT_METRICS, RESULT_KEYS, IncrementalScorer, delta_table, make_metrics, merge_variants,
                      rescore)
from ..tokenize.ptb import TOKENIZERS, ptb_tokenize

__all__ = [
    "COCO_CAPTION", "Metric", "MetricInputError", "MetricUnavailable", "Prepared", "Score", "Setting", "Sample",
    "REGISTRY", "MetricRegistry", "TOKENIZERS",
    "Bleu", "Meteor", "RougeL", "CiderD", "Spice", "meteor_available", "warm_up", "ptb_tokenize",
    "BootstrapResult", "paired_bootstrap", "resample_weights",
    "DEFAULT_METRICS", "RESULT_KEYS", "IncrementalScorer", "delta_table", "make_metrics", "merge_variants", "rescore",
]
