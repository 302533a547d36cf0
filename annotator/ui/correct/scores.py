"""The Correction page's score change: the system's scores with the chosen type's corrections applied, against the
captions as generated, kept up to date by one incremental scorer per choice that every session shares."""

from __future__ import annotations

import streamlit as st

from ... import rescoring, ui
from ...errors import AnnotatorError
from ...metric_settings import project_tokenize, tokenize_header
from ...metrics import REGISTRY
from ...taxonomy import taxonomy
from ..widgets.deltas import metric_delta
from .form import Choice

esc = ui.md_escape



@st.cache_resource(show_spinner="Scoring the system's captions…", max_entries=16)
def _live(url: str, project: str, system: str, etype: str, layer_label: str, metrics: tuple, tokenize: str):
    """One incremental scorer per (project, system, type, layer, metric tokenisation), shared by every session."""
    return rescoring.LiveDelta(ui.get_store(), project, system, etype, layer=layer_label, metrics=metrics,
                               tokenize=tokenize)


def live_scores(store, choice: Choice) -> None:
    """The system's scores with this type's corrections applied, and their change against the captions as
    generated. Metrics that need a warm-up (METEOR's Java processes) start in the background; until they are
    up, the other metrics are shown."""
    info = taxonomy().get(choice.etype)
    warming = [k for k, state in REGISTRY.warm_up(wait=False).items() if state == "warming"]
    metrics = tuple(m for m in REGISTRY.headline_keys(REGISTRY.defaults()) if REGISTRY.metric_of_score(m) not in warming)
    live, note = None, None
    try:
        live = _live(store.url, choice.project, choice.system, choice.etype, choice.layer_label, metrics,
                     project_tokenize(store, choice.project))
        # Picks up saves (this session's and others') by rescoring only the changed captions.
        live.sync(store)
    except AnnotatorError as exc:
        note = str(exc)
    st.markdown(f"**Score change from {info.name.lower()} corrections**")
    if live is None:
        st.info(f"Scores are not available: {esc(note)}")
        return
    d = live.delta()
    shown = [(REGISTRY.score_labels().get(m, m), f"{100 * d.scores[m]:.2f}", metric_delta(100 * d.delta[m]))
             for m in d.metrics] + [("Captions changed", d.changed, {})]
    for row in range(0, len(shown), 3):
        for col, (label, value, delta) in zip(st.columns(3), shown[row:row + 3]):
            col.metric(label, value, **delta, help="×100; the change is against the captions as generated"
                       if delta else None)
    st.caption("Metric input: " + tokenize_header(d.tokenize))
    if d.unavailable:
        st.caption(esc(d.unavailable))
    elif warming:
        names = " and ".join(REGISTRY.label(k) for k in warming)
        st.caption(f"{names} {'is' if len(warming) == 1 else 'are'} starting (the first start takes a while). "
                   "The figures follow on a later update.")
