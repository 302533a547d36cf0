"""Word-level diffs of a correction against its original, as segments, HTML or plain text."""

from __future__ import annotations

import html
from dataclasses import dataclass

from .tokens import _NO_SPACE_BEFORE, Token, _opcodes, tokenize


@dataclass(frozen=True)
class DiffSegment:
    """A stretch of the word diff: ``tag`` is equal/replace/delete/insert; texts as written."""

    tag: str
    old: str
    new: str


def _join(tokens: list[Token], text: str) -> str:
    return text[tokens[0].start:tokens[-1].end] if tokens else ""


def word_diff(original: str, corrected: str) -> list[DiffSegment]:
    """Word-level diff of two captions (case-insensitive alignment, original spelling kept)."""
    ta, tb = tokenize(original), tokenize(corrected)
    segs = []
    for tag, i1, i2, j1, j2 in _opcodes([t.text.lower() for t in ta], [t.text.lower() for t in tb]):
        segs.append(DiffSegment(tag, _join(ta[i1:i2], original), _join(tb[j1:j2], corrected)))
    return segs


def _render_diff(original: str, corrected: str, equal, old, new) -> str:
    out = ""
    for seg in word_diff(original, corrected):
        pieces = [equal(seg.new)] if seg.tag == "equal" else ([old(seg.old)] if seg.old else []) + ([new(seg.new)] if seg.new else [])
        for text, first in ((p, (seg.old or seg.new)[0]) for p in pieces):
            # No space before closing punctuation, as in the caption itself.
            out += ("" if not out or first in _NO_SPACE_BEFORE else " ") + text
    return out


def diff_html(original: str, corrected: str) -> str:
    """The word diff as escaped HTML: removed words in <del>, added words in <ins>.

    Equal stretches show the corrected spelling (case changes are not edits).
    """
    return _render_diff(original, corrected, html.escape, lambda t: f"<del>{html.escape(t)}</del>",
                        lambda t: f"<ins>{html.escape(t)}</ins>")


def diff_text(original: str, corrected: str) -> str:
    """The word diff as plain text: [-removed-] {+added+} (for the CLI and exports)."""
    return _render_diff(original, corrected, lambda t: t, lambda t: f"[-{t}-]", lambda t: f"{{+{t}+}}")
