"""The Agreement page's suggestion figures: human judgements made with the annotate panel pre-filled from a
judge, beside those made without, against that judge (annotator.judges.report.suggestion_figures)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ... import ui
from ...errors import AnnotatorError


def suggestion_section(store, project: str) -> None:
    """Agreement with the suggesting judge and seconds per caption, with and without a suggestion (nothing when
    the project has no suggestions and none were ever recorded)."""
    from ...judges.report import suggestion_figures
    try:
        judge, effects = suggestion_figures(store, project)
    except AnnotatorError as exc:
        st.caption(ui.md_escape(str(exc)))
        return
    if judge is None:
        return
    st.subheader("Suggestions: anchoring on the judge")
    st.caption(f"The annotate panel starts from judge {ui.md_escape(judge)} for first annotators. Human judgements "
               "made with that suggestion beside those made without: how often they agree with the judge, and how "
               "long they took. Much higher agreement with a suggestion means annotators anchor on the judge.")
    rows = [{"judgements": e.group, "count": e.judgements,
             "agreement with the judge": e.agreement.accuracy if e.agreement else None,
             "kappa with the judge": e.agreement.kappa if e.agreement else None,
             "median seconds per caption": e.median_seconds, "mean seconds per caption": e.mean_seconds}
            for e in effects]
    ui.show_table(pd.DataFrame(rows), hide_index=True, width="stretch")
