"""One length limit per free-text field, applied on every path that stores the field.

A note is written on the Annotate and Adjudication pages, in a draft, by ``annotator adjudicate --note`` and in
the rows ``annotator import jsonl`` reads back from a judgements export; an override reason on the Correction
page, by ``annotator correct save --override-reason`` and by ``annotator import corrections --reason``. Each of
those paths checks its field with :func:`check_free_text` against the one limit here, so what one path stores
another can show and save again, and a refusal names the field and its limit.
"""

from __future__ import annotations

from .errors import InputError
from .names import text_problem

#: Longest value, in characters, of each free-text field.
TEXT_LIMITS = {
    "note": 2000,
    "override reason": 2000,
}


def check_free_text(value, field: str, source=None, location=None) -> str:
    """``value`` if it is text within the limit of ``field`` (a key of :data:`TEXT_LIMITS`) with no control
    character but tab and line breaks; else InputError naming the field, its length and the limit (and
    ``source``/``location``, the file and line or the option it came from)."""
    limit = TEXT_LIMITS[field]
    if not isinstance(value, str):
        raise InputError(f"the {field} must be text, got {type(value).__name__}", source, location)
    if len(value) > limit:
        raise InputError(f"the {field} is {len(value):,} characters long; at most {limit:,} are allowed", source,
                         location)
    problem = text_problem(value)
    if problem:
        raise InputError(f"the {field} cannot contain {problem}", source, location)
    return value
