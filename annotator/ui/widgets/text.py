"""User-given text shown as itself where streamlit renders Markdown."""

from __future__ import annotations

import re
import string

#: Every ASCII punctuation character: CommonMark lets a backslash make any of them literal, and together they
#: cover Markdown and what Streamlit adds to it (images, links, autolinks, emphasis, ``$…$`` KaTeX, ``:red[…]``
#: colours, ``:emoji:`` and ``:material/…:`` icons, entities such as ``&lt;``).
_MD_SPECIAL = frozenset(string.punctuation)
#: Where the browser would turn plain text into a link (``scheme://``, ``www.``, ``name@host.tld``): escapes do
#: not stop that, it runs on the text after Markdown; an invisible word joiner there does.
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?i:(?<=www))(?=\.)|(?<=[\w.+-])(?=@[\w-]+\.)")
WORD_JOINER = "\u2060"


def md_escape(text: str) -> str:
    """``text`` shown as itself inside Markdown: every punctuation character backslash-escaped, and an
    invisible word joiner where the text would otherwise become a link.

    Every user-given string (project, system, user and annotator names, item keys, captions, notes, error
    messages that quote input) goes through this wherever Streamlit renders Markdown: headers, markdown,
    captions, alert boxes, metric labels and help, image captions, button, radio, tab and expander labels.
    Plain-text places (st.text, st.code, tables, select-box options) need nothing.
    """
    text = _AUTOLINK.sub(WORD_JOINER, str(text))
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text)
