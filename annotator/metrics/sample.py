"""What a metric scores: a caption with its references, image and gold boxes.

Text metrics (BLEU, METEOR, ROUGE-L, CIDEr-D) read the references only, and
take them as plain lists of strings as well (their fast path). A metric that
looks at the image or the boxes (CLIPScore, a box-mention metric) declares so
in :attr:`Metric.requires` and is handed :class:`Sample` objects.

Two shapes are accepted wherever a metric or the scoring functions take a
caption's *context* (everything but the caption itself):

* reference sets: one sequence of reference strings per caption;
* samples: one :class:`Sample` per caption (its ``hypothesis`` is ignored
  where the captions are given separately, e.g. for a corrected variant).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Sequence

from ..model import Box
from ..errors import MetricInputError


@dataclass(frozen=True)
class Sample:
    """One caption to score and everything a metric may compare it with.

    ``image`` is the path of the image file (as the caller resolved it),
    ``image_size`` its (width, height) in pixels, ``boxes`` the item's gold
    boxes. Lists given for ``references`` or ``boxes`` are stored as tuples,
    so samples are hashable (prepared contexts are cached by value).
    """

    hypothesis: str
    references: tuple[str, ...] = ()
    image: str | None = None
    image_size: tuple[int, int] | None = None
    boxes: tuple[Box, ...] = ()

    def __post_init__(self):
        if isinstance(self.references, str):
            raise MetricInputError("a sample's references must be a list of strings, not one string")
        if not isinstance(self.references, tuple):
            object.__setattr__(self, "references", tuple(self.references))
        if not isinstance(self.boxes, tuple):
            object.__setattr__(self, "boxes", tuple(self.boxes))
        if self.image is not None and not isinstance(self.image, str):
            object.__setattr__(self, "image", str(self.image))
        if self.image_size is not None and not isinstance(self.image_size, tuple):
            object.__setattr__(self, "image_size", tuple(self.image_size))


def is_samples(values: Sequence) -> bool:
    """True if ``values`` is a non-empty sequence whose first element is a :class:`Sample`."""
    return len(values) > 0 and isinstance(values[0], Sample)


def normalise_refs(refs_list: Sequence[Sequence[str]], *, required: bool = True) -> tuple[tuple[str, ...], ...]:
    """Validate references (a list of strings per caption, non-empty when ``required``) and freeze them."""
    # the usual input, lists or tuples of plain strings, checked by type sets (no Python loop over a corpus's
    # half a million references); anything else goes through the loop below, which says what is wrong
    if set(map(type, refs_list)) <= {list, tuple}:
        out = tuple(map(tuple, refs_list))
        if set(map(type, chain.from_iterable(out))) <= {str} and (not required or min(map(len, out), default=1)):
            return out
    out = []
    for i, refs in enumerate(refs_list):
        if isinstance(refs, str):
            raise MetricInputError(f"references of caption {i} must be a list of strings, not one string")
        if isinstance(refs, Sample):
            raise MetricInputError(f"caption {i}: a Sample among reference lists; give samples for every caption")
        refs = tuple(refs)
        if required and not refs:
            raise MetricInputError(f"caption {i} has no reference")
        for r in refs:
            if not isinstance(r, str):
                raise MetricInputError(f"caption {i}: reference {r!r} is not a string")
        out.append(refs)
    return tuple(out)


def read_context(context: Sequence, *, references: bool = True
                 ) -> tuple[tuple[tuple[str, ...], ...], tuple[Sample, ...] | None]:
    """The reference sets of ``context`` (reference lists or samples) and the samples themselves (or None).

    With ``references`` every caption must have at least one reference.
    """
    if not is_samples(context):
        return normalise_refs(context, required=references), None
    samples = tuple(context)
    for i, s in enumerate(samples):
        if not isinstance(s, Sample):
            raise MetricInputError(f"caption {i}: {s!r} is not a Sample (the first caption's context is one)")
    return normalise_refs([s.references for s in samples], required=references), samples


def split_samples(hyps: Sequence, context) -> tuple[list[str], Sequence]:
    """Captions and context from ``(captions, context)`` or from ``(samples, None)``.

    With samples and no context, the samples are both: their hypotheses are
    the captions and the rest is the context.
    """
    if context is None:
        if not is_samples(hyps):
            raise MetricInputError("give the references (or samples) to score the captions against")
        return [s.hypothesis for s in hyps], hyps
    return hypotheses(hyps), context


def hypotheses(hyps: Sequence) -> list:
    """The caption texts of ``hyps`` (strings, or samples whose hypotheses are taken)."""
    if is_samples(hyps):
        return [s.hypothesis if isinstance(s, Sample) else s for s in hyps]
    return list(hyps)
