"""What several pages read the same way: the project's systems and judgements, a case's picture, a core error shown
as plain text (ending the page run), and the detections and judges the Error estimates and Judges pages share."""

from __future__ import annotations

import streamlit as st

from ...errors import AnnotatorError, StoreUnavailable
from ..session.caches import cached_layer, get_store, live_judgements
from .frame import PageContext, require_project
from ..session.state import outage_notice
from ..widgets.text import md_escape


def refusal_text(exc: AnnotatorError) -> str:
    """A refused save as the judging pages say it: a broken rule as one sentence ("Choose Accurate or
    Inaccurate first."), any other error as its message."""
    from ...errors import InputError
    if isinstance(exc, InputError) and exc.source is None:
        return exc.detail[:1].upper() + exc.detail[1:] + "."
    return str(exc)


def show_error_and_stop(exc: AnnotatorError) -> None:
    """Show a core error as plain text and end the page run."""
    if isinstance(exc, StoreUnavailable):
        outage_notice(exc)
    else:
        st.error(md_escape(str(exc)))
    st.stop()


def project_systems(ctx: PageContext) -> list[str]:
    """The selected project's systems (caption sources) in import order."""
    from ...store.projects import system_names
    try:
        return system_names(ctx.store, require_project(ctx))
    except AnnotatorError as exc:
        show_error_and_stop(exc)
    raise AssertionError("unreachable")


def project_judgements(ctx: PageContext):
    """(frame, data version) of the selected project's current annotations and adjudications.

    One live frame per project serves the agreement, adjudication and analysis pages of every session;
    after a save it reads only what changed. Pass the version as the cache key of anything derived
    from the frame (and the frame itself as an ``_``-prefixed, unhashed argument).
    """
    project = require_project(ctx)
    try:
        with st.spinner("Reading judgements…", show_time=True):
            return live_judgements(ctx.store.url, project).get()
    except AnnotatorError as exc:
        show_error_and_stop(exc)
    raise AssertionError("unreachable")


def case_picture(case, *, references: bool = False) -> None:
    """A caption case's photo with its gold boxes (annotator.adjudication.caption_case) as Annotate shows it: the
    boxes' labels as readable text over it (annotator.ui.widgets.figure), with the item's references if asked for."""
    from ..widgets.figure import caption_figure
    caption_figure(get_store(), case.caption_id, references=references)


def judgement_layer(ctx: PageContext, frame, version: tuple, layer: str):
    """The layer ``layer`` (a Layer label) built from :func:`project_judgements`' frame, once per data version."""
    return cached_layer(ctx.store.url, require_project(ctx), version, layer, frame)


@st.cache_resource(show_spinner="Running the error detectors on every caption…", max_entries=4)
def scored_project(url: str, project: str, fingerprint: tuple, practice: tuple, _store):
    """The stored project ``project`` and its detections (annotator.estimate.project.project_detections), read once
    for the Error estimates and Judges pages alike."""
    # the detectors read items, boxes, references and captions (the fingerprint the content-selection and diversity
    # dashboards key on) and leave practice items out: computed again when either changes
    from ...estimate.project import project_detections
    from ...store.projects import load_project
    proj = load_project(_store, project)
    return proj, project_detections(proj)


def judges_stamp(store, project: str) -> tuple:
    """What changes when a judge is imported, run or removed: each judge's name, time and size (a cache key)."""
    from ...store.judges import project_judges
    from ...store.projects import project_id
    with store.read() as conn:
        return tuple((j.name, str(j.updated_at), j.outputs) for j in project_judges(conn, project_id(conn, project)))
