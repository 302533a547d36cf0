"""Shared hand-made data for the content-selection tests (imported by the other test files)."""

from __future__ import annotations

from annotator.correspondence import parse_markup
from annotator.model import Box, Caption, Item, Reference

# The worked example of the content-selection study: seven descriptions of a
# woman leaning on a car. woman = box 2 and car = box 3 in all seven, boots =
# box 5 in four, dress/top = box 0 in two. Boxes 1 and 4 are never mentioned.
FIGURE2_REFERENCES = (
    "A [woman|2] in a white [dress|0] and gold [boots|5] leaning on a [car|3] .",
    "A [woman|2] poses along a [car|3] .",
    "[Woman|2] dressed in white with gold [boots|5] poses next to a police [car|3] .",
    "A [woman|2] dressed in white leans against a white [car|3] .",
    "A [woman|2] is leaning against a [car|3] .",
    "A [woman|2] with gold [boots|5] leans against an Indy pace [car|3] .",
    "A blonde [woman|2] wearing gold shiny [boots|5], a white [top|0] and short white skirt is leaning on a [car|3].",
)

FIGURE2_BOXES = (
    Box("0", "dress", 100, 150, 60, 90),
    Box("1", "building", 0, 0, 400, 100),
    Box("2", "woman", 90, 60, 80, 250),
    Box("3", "car", 150, 180, 250, 120),
    Box("4", "tree", 350, 0, 50, 200),
    Box("5", "boot", 110, 270, 50, 40),
)


def refs(*marked: str) -> list[Reference]:
    """References from marked-up strings."""
    out = []
    for m in marked:
        text, mentions = parse_markup(m)
        out.append(Reference(text, mentions))
    return out


def marked_caption(system: str, marked: str) -> Caption:
    """A caption with its mentions, written as inline markup (as ``import --mentions inline`` stores it)."""
    text, mentions = parse_markup(marked)
    return Caption(system, text, mentions)


def figure2_item(key: str = "fig2", captions=()) -> Item:
    """The worked example as an Item (image 400 × 300)."""
    return Item(key, image=None, width=400, height=300, boxes=list(FIGURE2_BOXES),
                references=refs(*FIGURE2_REFERENCES), captions=list(captions))


def item(key: str, boxes, marked_refs=(), width=100, height=100, captions=()) -> Item:
    """A small hand-made item; ``boxes`` are (id, label, x, y, w, h) tuples."""
    return Item(key, width=width, height=height, boxes=[Box(*b) for b in boxes], references=refs(*marked_refs),
                captions=[marked_caption(s, t) for s, t in captions])
