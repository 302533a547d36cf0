"""The notice a page shows when a save was refused because a newer judgement was saved since it showed the
caption (annotator.errors.JudgementChanged): that judgement in words, and buttons to load it or to keep the
panel as it is and save it over the newer one. The refused panel itself is left alone, so nothing typed is lost.
"""

from __future__ import annotations

import streamlit as st

from ...model import Judgement
from ...taxonomy import taxonomy
from .text import md_escape


def judgement_words(j: Judgement | None) -> str:
    """A stored judgement as the notice shows it (plain text): label, type names, note, revision, who and when."""
    if j is None:
        return "nothing (the earlier judgement is gone)"
    tax = taxonomy()
    what = {"accurate": "Accurate", "inaccurate": "Inaccurate"}.get(j.label.value if j.label else "", "Skipped")
    if j.error_types:
        what += " — " + ", ".join(tax.get(t).name if t in tax.ids else t for t in j.error_types)
    when = f" at {j.created_at:%Y-%m-%d %H:%M} UTC" if j.created_at is not None else ""
    out = f"{what} (revision {j.revision}, saved by {j.user}{when})"
    return out + (f". Note: {j.note}" if j.note else "")


def newer_notice(newer: Judgement | None, *, what: str, key: str, on_load, on_keep) -> None:
    """Draw the notice for ``newer`` (the judgement stored now): a warning naming it (user text escaped) and two
    buttons, ``{key}_load_newer`` (calls ``on_load(True)``) and ``{key}_keep_mine`` (``on_keep(False)``)."""
    st.warning(md_escape(f"Not saved: this caption's {what} changed since the page showed it. Saved now: "
                         f"{judgement_words(newer)}. Your panel below is as you left it: load the newer {what} "
                         f"in its place, or keep yours and save it over the newer one."),
               icon=":material/sync_problem:")
    c1, c2, _ = st.columns([1.4, 1.6, 2])
    c1.button(f"Load the newer {what}", key=f"{key}_load_newer", on_click=on_load, args=(True,), width="stretch")
    c2.button("Keep mine (Save then replaces it)", key=f"{key}_keep_mine", on_click=on_keep, args=(False,),
              width="stretch")
