"""Inline correspondence markup: which words of a caption refer to which gold boxes.

A generated caption can carry its box correspondences inline. A mention is a
word or phrase in square brackets followed by a bar and the id(s) of the
box(es) it refers to::

    A [woman|2] in a white [dress|0] leans on a [police car|3] .
    Two [people|1,4] walk past a [dog|7].

Rules
-----
* A mention is ``[`` phrase ``|`` ids ``]``: the part before the first ``|``
  is the phrase (it may span several words), the part after it is a
  comma-separated list of box ids (spaces around the commas are allowed; ids
  cannot contain spaces, commas or brackets).
* A ``[`` opens a mention only when a ``|`` follows it before any other
  bracket. Every other bracket is plain text, so ``[UNK]``, ``a [sic] b``, a
  lone ``[`` or ``]`` are kept as written. Once the ``|`` is there, the rest
  must be right: a mention that is never closed, has a bad id list or an
  empty phrase is an error.
* Literal brackets, bars and backslashes may be written with a backslash:
  ``\\[``, ``\\]``, ``\\|``, ``\\\\`` (needed for a literal ``[a|b]``). A
  backslash before any other character is kept as it is. ``|`` outside a
  mention is plain text and needs no escape.
* Mentions need at least one id and a non-blank phrase, and two mentions may
  not touch the same whitespace token (``[a|1][b|2]`` is an error: put a
  space between them).
* Mentions are stored as :class:`~annotator.model.Mention` token ranges over
  the *whitespace tokens* of the plain text, so a mention covers every token
  its phrase touches: ``[boots|5],`` marks the token ``boots,``.

Captions are text as written unless their import says they carry this markup
(``--mentions inline``); the importer then parses each caption once and
stores the plain text with its mentions, so every later reader sees stored
mentions only.

:func:`parse_markup` turns marked-up text into ``(plain text, mentions)``;
:func:`format_markup` turns them back. ``format_markup`` keeps leading
opening and trailing closing punctuation of a mention's edge tokens outside
the brackets, so ``parse_markup(format_markup(t, m)) == (t, m)`` for any plain
text and non-overlapping mentions, and ``format_markup(*parse_markup(s)) == s``
for text written in that canonical style. Phrase types are not part of the
markup (they come back as None).
"""

from __future__ import annotations

import re
from typing import Iterable

from .errors import InputError
from .model import Caption, Item, Mention, Reference

__all__ = [
    "parse_markup", "format_markup", "has_markup", "escape", "mentioned_box_ids",
    "check_box_ids", "caption_mentions", "caption_correspondences", "caption_source",
]

_SPECIAL = "[]|\\"
_OPENING = "([{\"'“‘"
_CLOSING = ".,;:!?)]}\"'”’"
_TOKEN = re.compile(r"\S+")


def escape(text: str) -> str:
    """Escape the characters that the markup reserves (``[ ] | \\``)."""
    return "".join("\\" + c if c in _SPECIAL else c for c in text)


def _mention_bar(text: str, i: int) -> int | None:
    """Index of the ``|`` that makes the ``[`` before position ``i`` a mention, or None (a literal ``[``)."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in _SPECIAL:
            i += 2
            continue
        if c in "[]":
            return None
        if c == "|":
            return i
        i += 1
    return None


def has_markup(text: str) -> bool:
    """True when ``text`` holds at least one mention (``[phrase|ids]``, see the rules above)."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in _SPECIAL:
            i += 2
            continue
        if c == "[" and _mention_bar(text, i + 1) is not None:
            return True
        i += 1
    return False


def parse_markup(marked: str, *, box_ids: Iterable[str] | None = None, source: str = "caption",
                 location: int | str | None = None) -> tuple[str, tuple[Mention, ...]]:
    """Parse marked-up text into ``(plain text, mentions)``.

    Brackets that do not form a mention stay in the text (see the rules
    above). ``box_ids``, when given, are the ids of the item's boxes: a
    mention of any other id raises InputError naming ``source`` (e.g. the
    caption) and the id. A broken mention raises InputError with the
    character column (1-based), after ``location`` (a line number or a
    record name) when given.
    """
    def where(col: int) -> str:
        if location is None:
            return f"column {col}"
        return f"{f'line {location}' if isinstance(location, int) else location}, column {col}"

    out: list[str] = []
    spans: list[tuple[int, int, tuple[str, ...], int]] = []  # char start, char end, ids, column
    i, n = 0, len(marked)
    while i < n:
        c = marked[i]
        if c == "\\" and i + 1 < n and marked[i + 1] in _SPECIAL:
            out.append(marked[i + 1])
            i += 2
            continue
        bar = _mention_bar(marked, i + 1) if c == "[" else None
        if bar is None:
            out.append(c)
            i += 1
            continue
        # A mention: the phrase up to the bar, the ids up to the closing ']'.
        open_col = i + 1
        phrase: list[str] = []
        j = i + 1
        while j < bar:
            if marked[j] == "\\" and marked[j + 1] in _SPECIAL:
                phrase.append(marked[j + 1])
                j += 2
                continue
            phrase.append(marked[j])
            j += 1
        close = bar + 1
        while close < n and marked[close] not in "[]":
            close += 1
        if close >= n or marked[close] != "]":
            raise InputError("a mention '[words|ids' is never closed with ']' (write \\[ for a literal bracket)",
                             source, where(open_col))
        raw_ids = marked[bar + 1:close]
        if any(ch in raw_ids for ch in "|\\"):
            raise InputError(f"bad box id list {raw_ids!r}", source, where(bar + 2))
        ids = tuple(part.strip() for part in raw_ids.split(","))
        if not ids or any(not b or any(ch.isspace() for ch in b) for b in ids):
            raise InputError(f"bad box id list {raw_ids!r}: write ids separated by commas, e.g. [people|1,4]",
                             source, where(bar + 2))
        text = "".join(phrase)
        if not text.strip():
            raise InputError("mention has an empty phrase", source, where(open_col))
        start = len("".join(out))
        out.append(text)
        lead = len(text) - len(text.lstrip())
        trail = len(text) - len(text.rstrip())
        spans.append((start + lead, start + len(text) - trail, tuple(dict.fromkeys(ids)), open_col))
        i = close + 1
    plain = "".join(out)
    mentions = _spans_to_mentions(plain, spans, source, where)
    if box_ids is not None:
        check_box_ids(mentions, box_ids, source)
    return plain, mentions


def _spans_to_mentions(plain: str, spans, source: str, where) -> tuple[Mention, ...]:
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(plain)]
    mentions: list[Mention] = []
    last_end_token = -1
    t = 0
    for cstart, cend, ids, col in spans:
        # Token containing the first character, then the one containing the last.
        while t < len(tokens) and tokens[t][1] <= cstart:
            t += 1
        first = t
        last = first
        while last + 1 < len(tokens) and tokens[last + 1][0] < cend:
            last += 1
        if first <= last_end_token:
            raise InputError("two mentions share a word: separate them with a space", source, where(col))
        mentions.append(Mention(first, last + 1, ids))
        last_end_token = last
    return tuple(mentions)


def format_markup(text: str, mentions: Iterable[Mention]) -> str:
    """Write ``text`` with ``mentions`` (token ranges) as inline markup.

    Raises ValueError for mentions that overlap, are empty or fall outside the
    text's tokens (a programming error, not bad user input).
    """
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    ordered = sorted(mentions, key=lambda m: (m.start, m.end))
    pieces: list[str] = []
    pos = 0
    prev_end = 0
    for m in ordered:
        if not (0 <= m.start < m.end <= len(tokens)):
            raise ValueError(f"mention {m} is outside the {len(tokens)} tokens of {text!r}")
        if m.start < prev_end:
            raise ValueError(f"mentions overlap at token {m.start}")
        if not m.box_ids:
            raise ValueError(f"mention {m} has no box id")
        for b in m.box_ids:
            if not b or any(ch.isspace() or ch in ",[]|\\" for ch in b):
                raise ValueError(f"box id {b!r} cannot be written in the markup")
        prev_end = m.end
        cstart, cend = tokens[m.start][0], tokens[m.end - 1][1]
        # Keep edge punctuation outside the brackets when something is left inside.
        # Only within the edge tokens, and never emptying one.
        inner_start, inner_end = cstart, cend
        while inner_start < tokens[m.start][1] - 1 and text[inner_start] in _OPENING:
            inner_start += 1
        while inner_end - 1 > max(tokens[m.end - 1][0], inner_start) and text[inner_end - 1] in _CLOSING:
            inner_end -= 1
        pieces.append(escape(text[pos:inner_start]))
        pieces.append("[" + escape(text[inner_start:inner_end]) + "|" + ",".join(m.box_ids) + "]")
        pos = inner_end
    pieces.append(escape(text[pos:]))
    return "".join(pieces)


def mentioned_box_ids(obj: Reference | Caption | Iterable[Mention]) -> frozenset[str]:
    """The set of box ids a Reference, a Caption or a sequence of mentions refers to."""
    mentions = obj.mentions if isinstance(obj, (Reference, Caption)) else obj
    return frozenset(b for m in mentions for b in m.box_ids)


def check_box_ids(mentions: Iterable[Mention], box_ids: Iterable[str], source: str) -> None:
    """Raise InputError naming ``source`` and the id if a mention points at an unknown box."""
    known = set(box_ids)
    for m in mentions:
        for b in m.box_ids:
            if b not in known:
                have = ", ".join(sorted(known, key=_natural)) or "none"
                raise InputError(f"unknown box id {b!r} (the item's boxes: {have})", source)


def caption_correspondences(caption: Caption, item: Item, *, source: str | None = None) -> tuple[str, tuple[Mention, ...]]:
    """``(text, mentions)`` of a generated caption, its stored mentions checked against the item's boxes.

    The text is taken as it is: brackets in it are never read as markup here
    (captions with inline markup are parsed once, at import). A mention of an
    unknown box raises InputError naming the caption (system, line, item) and the id.
    """
    if caption.mentions:
        where = source or caption_source(caption, item)
        check_box_ids(caption.mentions, [b.box_id for b in item.boxes], where)
    return caption.text, tuple(caption.mentions)


def caption_source(caption: Caption, item: Item) -> str:
    """How a message names a generated caption: its system, its line (when known) and its item."""
    line = f", caption line {caption.line}" if caption.line is not None else ""
    return f"system {caption.system!r}{line} (item {item.key!r})"


def caption_mentions(caption: Caption, item: Item, *, source: str | None = None) -> tuple[Mention, ...]:
    """The mentions of a generated caption (see :func:`caption_correspondences`)."""
    return caption_correspondences(caption, item, source=source)[1]


def _natural(s: str):
    return (0, int(s), "") if s.isdigit() else (1, 0, s)
