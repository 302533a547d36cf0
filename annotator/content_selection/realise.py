"""Turn a selection of boxes into a (crude) sentence, for showing what a baseline chose.

The chosen boxes' labels, in selection order, are joined by a randomly drawn
preposition or conjunction, each followed by "the" half of the time; the
first word is capitalised and the sentence ends with " ." The result carries
inline correspondences (see :mod:`annotator.correspondence`), e.g.
``[Dog|5] against [dog|0] beside the [dog|6] .`` It only illustrates the
selection: the content-selection score ignores every word but the mentions.
"""

from __future__ import annotations

import random
from typing import Sequence

from ..correspondence import escape
from ..model import Box
from .data import display_name

__all__ = ["FUNCTION_WORDS", "realise"]

FUNCTION_WORDS = ("above", "against", "along", "among", "and", "around", "at", "behind", "below", "beneath",
                  "beside", "by", "in", "inside", "near", "next to", "on", "underneath", "with")


def realise(boxes: Sequence[Box], seed: int = 0) -> str:
    """A marked-up sentence naming ``boxes`` in order, joined by seeded random function words."""
    if not boxes:
        return ""
    rng = random.Random(seed)
    parts = []
    for j, box in enumerate(boxes):
        name = display_name(box.label) or box.box_id
        if j == 0:
            name = name[:1].upper() + name[1:]
        else:
            parts.append(rng.choice(FUNCTION_WORDS))
            if rng.random() < 0.5:
                parts.append("the")
        parts.append(f"[{escape(name)}|{box.box_id}]")
    return " ".join(parts) + " ."
