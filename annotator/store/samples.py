"""Which of a system's several descriptions of an image the human work is about.

A system may hold a pool of descriptions per image (samples or beams, numbered ``n`` = 0, 1, …; migration 14).
Lexical diversity, rich-sparse, µ and the lexical gap read the whole pool. Annotation, assignment, agreement,
correction, rescoring, human scores and every import or export keyed by (image, system) work on one caption per
system and image: the one :func:`annotated_sample` selects, the first (``n`` = 0). This is the one place that
rule lives; every query that lists a project's or a system's captions for that work filters through it.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Table

from .schema import captions

#: The sample index annotation and the scores work on.
ANNOTATED_SAMPLE = 0


def annotated_sample(table: Table = captions) -> ColumnElement[bool]:
    """The SQL condition that keeps, of each system's descriptions of an image, the one annotators see."""
    return table.c.n == ANNOTATED_SAMPLE


def is_annotated(n: int) -> bool:
    """True for the sample index annotation works on (the same rule for captions already read)."""
    return int(n) == ANNOTATED_SAMPLE
