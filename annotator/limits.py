"""One length limit per free-text field, applied on every path that stores the field.

A note is written on the Annotate and Adjudication pages, in a draft, by ``annotator adjudicate --note`` and in
the rows ``annotator import jsonl`` reads back from a judgements export; an override reason on the Correction
page, by ``annotator correct save --override-reason`` and by ``annotator import corrections --reason``. Each of
those paths checks its field with :func:`check_free_text` against the one limit here, so what one path stores
another can show and save again, and a refusal names the field and its limit.

Caption and reference text have one limit each too (:func:`check_text_length`), applied by every importer
with the file and line: paragraph-length descriptions of vision-language models run to a few thousand
characters, and the Annotate page stays quick with the longest one allowed. A working time (``seconds`` of a
judgement, ``lead_time`` of a Label Studio annotation) lies between 0 and :data:`MAX_SECONDS` on every path
that stores one (:func:`check_seconds`); a page's timer is held to it with :func:`measured_seconds`.
"""

from __future__ import annotations

import math

from .errors import InputError
from .names import text_problem

#: Longest value, in characters, of each free-text field.
TEXT_LIMITS = {
    "note": 2000,
    "override reason": 2000,
    "caption": 10_000,
    "reference": 10_000,
}

#: Longest working time of one judgement, in seconds (a day): a timer left running over a weekend is not work.
MAX_SECONDS = 86_400.0


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


def check_text_length(value: str, field: str, source=None, location=None, *, named: str | None = None) -> str:
    """``value`` if it holds at most the limit of ``field`` (a key of :data:`TEXT_LIMITS`) in characters; else
    InputError naming the field (or ``named``, such as "the caption of 'nic'"), its length and the limit (and
    ``source``/``location``). What the text may contain is checked elsewhere (annotator.io.validate.check_text)."""
    limit = TEXT_LIMITS[field]
    if len(value) > limit:
        raise InputError(f"{named or 'the ' + field} is {len(value):,} characters long; at most {limit:,} are "
                         "allowed", source, location)
    return value


def check_seconds(value, field: str = "seconds", source=None, location=None) -> float:
    """A working time as stored: a number from 0 to :data:`MAX_SECONDS`, as a float (None: 0, no time kept).

    Refused with InputError naming ``field``, the value and the bound (and ``source``/``location``): true and
    false, text, NaN, infinities, negative numbers and anything above a day, such as ``1e308``.
    """
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{field} must be a number of seconds, got {_shown(value)}", source, location)
    try:
        seconds = float(value)
    except OverflowError:  # an integer too large for a float
        seconds = math.inf
    if not 0 <= seconds <= MAX_SECONDS:  # also false for NaN
        raise InputError(f"{field} must be a number of seconds from 0 to {MAX_SECONDS:,.0f} (a day), got "
                         f"{_shown(value)}", source, location)
    return seconds


def measured_seconds(started: float, now: float) -> float:
    """The working time a page's timer measured between two ``time.monotonic()`` readings, rounded to 1/100 s
    and held within 0 and :data:`MAX_SECONDS` (a caption left open for days counts as a day)."""
    return round(min(MAX_SECONDS, max(0.0, now - started)), 2)


def _shown(value) -> str:
    try:
        text = repr(value)
    except ValueError:  # an integer past Python's digit limit for text
        return "a number too long to show"
    return text if len(text) <= 40 else text[:39] + "…"
