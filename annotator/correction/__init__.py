"""Conservative correction: guards, word-level diff and correction sets.

The package is split along its seams: :mod:`.tokens` (tokens and alignment),
:mod:`.diff` (word diffs), :mod:`.words` (the guards' word lists),
:mod:`.guards` (the guard and the word-class rules), :mod:`.rules` (the phrase
rules), :mod:`.saving` (storing corrections and their
history), :mod:`.queue` (what to correct) and :mod:`.sets` (correction sets
for rescoring). Everything public is importable from ``annotator.correction``.

The correction step asks, for one error type at a time, how much a system's
scores would improve if that error were fixed and nothing else. To keep the
estimate honest the edits must be small, so every save passes a *guard*
chosen by the error type (rules and word lists: guidelines/correction_words.toml):

* colour types (``clothing_color``, ``color``): only colour words change, and
  only into colour words. A colour phrase may grow or shrink next to a colour
  word ("blue" → "blue and white"), but a colour cannot be added to or removed
  from a noun that had none.
* ``gender``: word-for-word swaps that keep age and number (man ↔ woman,
  boy ↔ girl, his ↔ her …); man → girl is refused because it changes age too.
* ``age``: swaps that keep gender (man ↔ boy, woman ↔ girl …); age adjectives
  (young, little, old …) may be added, dropped or swapped next to a person word.
* ``clothing_type``: garment phrases into garment phrases, fewer garments or
  a garment that is not there dropped; colours stay.
* activity, scene, number, position, stance, subjects and objects, other:
  the phrase rules of :mod:`.rules` (docs/correction.md has the table); no
  word moved; other types' words (colours, garments, numbers, gender and age
  swaps) stay. A cap on changed words is an option, off by default.

Words are compared case-insensitively; the text is saved exactly as typed.
*Articles*: "a" and "an" may switch into each other inside a changed stretch
that is otherwise allowed ("a blue shirt" → "an orange shirt"), because the
swap would be ungrammatical otherwise; an article may not appear, disappear or
change on its own.

*Reordering* is defined on the token alignment of :func:`align` (difflib's
SequenceMatcher on lower-cased tokens, a monotone alignment): a word moved
elsewhere appears as a deletion in one place and an insertion of the same
word in another. Function words listed in ``reorder_ignore`` do not count,
so "a" dropped here and added there is not a move.

A violation blocks the save unless the user overrides it with a reason; the
reason is stored with the correction and shown in every export.

*Correction sets* turn stored corrections into caption lists for rescoring:
one list per error type with only that type's corrections applied (every
other caption as generated) and an "all" list. For the "all" list a caption
with corrections for several types gets their word-level edits merged when
the edits touch different words of the original; when two types edited the
same words (or inserted at the same place) the edits of the type that comes
first in the taxonomy are kept, the other type's edits are left out of "all"
and the caption is reported as a conflict.
"""

from .diff import DiffSegment, diff_html, diff_text, word_diff
from .guards import GuardReport, check_correction, enforce
from .plan import CorrectionPlan, correction_plan, plan_from_counts
from .queues import (
    CurrentCorrection, QueueEntry, default_layer, layer_types, queue, require_system, state_version, untagged_reason,
)
from .saving import SavedCorrection, caption_corrections, correct_caption, corrections_table, leave_untouched
from .sets import CorrectionSet, Merge, correction_set, merge_corrections
from .tokens import Edit, Token, align, tokenize
from .words import (
    WORDS_FILE, CorrectionWords, Rule, correctable_types, correction_words, load_correction_words, rule_description,
)

__all__ = [
    "CorrectionPlan", "CorrectionSet", "CorrectionWords", "CurrentCorrection", "DiffSegment", "Edit", "GuardReport",
    "Merge", "QueueEntry", "Rule", "SavedCorrection", "Token", "WORDS_FILE", "align", "caption_corrections",
    "check_correction", "correct_caption", "correctable_types", "correction_plan", "correction_set",
    "correction_words", "corrections_table", "default_layer", "diff_html", "diff_text", "enforce", "layer_types",
    "leave_untouched", "load_correction_words", "merge_corrections", "plan_from_counts", "queue", "require_system",
    "rule_description", "state_version", "tokenize", "untagged_reason", "word_diff",
]
