"""What a judge suggests, where a page may show it (annotator.judges.suggestions decides where it may not)."""

from __future__ import annotations

import streamlit as st

from ... import ui


def correction_fixes(store, project: str, caption_id: int, error_type: str, references_shown: bool) -> None:
    """The suggesting judge's fixes of this type on the Correction page; nothing in blind correction (while the
    caption's references are hidden)."""
    from ...judges.suggestions import judge_fixes
    found = judge_fixes(store, project, int(caption_id), error_type, references_shown=references_shown)
    if found is None:
        return
    judge, fixes = found
    st.caption(f"Judge {ui.md_escape(judge)} suggests: " + "; ".join(
        f"“{ui.md_escape(words)}” → “{ui.md_escape(fix)}”" for words, fix in fixes))
