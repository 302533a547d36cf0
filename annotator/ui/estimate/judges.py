"""The Error estimates page's judges: which judge is the predictor, and every judge's intervals side by side.

Each judge's estimates are :func:`annotator.estimate.project.estimate_project` with that judge (what
``annotator estimate --judge NAME`` prints); the table sets their intervals and widths beside each other for the
same systems and targets, so a better judge shows as a narrower interval at the same confidence.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ... import ui
from ...errors import AnnotatorError
from ...estimate import INACCURATE
from ..shell.page_data import judges_stamp
from ..widgets.formatting import percent


def judge_choice(store, project: str) -> str:
    """The judge whose probabilities are the predictor (default the built-in detectors)."""
    from ...judges import judge_names
    names = judge_names(store, project)
    if st.session_state.get("est_judge") not in names:
        st.session_state.pop("est_judge", None)
    name = st.selectbox("Predictor", names, key="est_judge",
                        help="Whose scores of every caption the estimates lean on: the built-in detectors or an AI "
                             "judge (Judges page). Types a judge does not score get the classical interval.")
    from ...judges.outputs import signature_text
    st.caption(f"Judge {ui.md_escape(name)}: {ui.md_escape(signature_text(judge_object(store, project, name).signature))}")
    return name


@st.cache_resource(show_spinner=False, max_entries=16)
def _judge(url: str, project: str, stamp: tuple, name: str, _store):
    from ...judges import load_judge
    return load_judge(_store, project, name)


def judge_object(store, project: str, name: str):
    """The judge ``name`` (kept while its outputs stay as they are)."""
    return _judge(store.url, project, judges_stamp(store, project), name, store)


def widths_by_judge(store, project: str, estimate, chosen, kwargs: dict, target_name) -> None:
    """Every judge's interval and width for the same systems and targets, side by side (an expander)."""
    from ...judges import judge_names
    names = judge_names(store, project)
    if len(names) < 2:
        return
    with st.expander(f"Every judge's intervals side by side ({len(names)} judges)"):
        rows = []
        for name in names:
            try:
                result = estimate(judge=judge_object(store, project, name), **kwargs)
            except AnnotatorError as exc:
                st.caption(f"{ui.md_escape(name)}: {ui.md_escape(str(exc))}")
                continue
            for r in result.reports:
                for target in (INACCURATE, *r.types):
                    e = r.target(target)
                    lo, hi = (min(max(x, 0.0), 1.0) for x in e.ci)
                    rows.append({"system": r.system, "target": target_name(target), "judge": name,
                                 "estimate": e.estimate, "interval": f"{100 * lo:.1f}–{100 * hi:.1f}%"
                                 + ("*" if e.sparse else ""), "width": hi - lo,
                                 "classical only": target in r.classical_only})
        if not rows:
            return
        frame = pd.DataFrame(rows)
        st.caption("The same targets estimated with each judge as the predictor; a better judge gives a narrower "
                   "interval at the same confidence. Classical only: the judge does not score that type.")
        ui.show_table(frame, {"estimate": percent, "width": lambda v: percent(v, 1)}, hide_index=True,
                      width="stretch")
        wide = frame.pivot_table(index=["system", "target"], columns="judge", values="width", sort=False)
        st.caption("Interval widths (points), one column per judge")
        ui.show_table((100 * wide).round(1).reset_index(), hide_index=True, width="stretch")
