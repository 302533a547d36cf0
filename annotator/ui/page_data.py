"""What several pages read the same way: the project's systems and judgements, a case's picture, and a core
error shown as plain text (ending the page run)."""

from __future__ import annotations

import streamlit as st

from ..errors import AnnotatorError, StoreUnavailable
from .caches import cached_layer, get_store, live_judgements
from .shell import PageContext, require_project
from .state import outage_notice
from .text import md_escape


def refusal_text(exc: AnnotatorError) -> str:
    """A refused save as the judging pages say it: a broken rule as one sentence ("Choose Accurate or
    Inaccurate first."), any other error as its message."""
    from ..errors import InputError
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
    from ..store.projects import system_names
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
    boxes' labels as readable text over it (annotator.ui.figure), with the item's references if asked for."""
    from .figure import caption_figure
    caption_figure(get_store(), case.caption_id, references=references)


def judgement_layer(ctx: PageContext, frame, version: tuple, layer: str):
    """The layer ``layer`` (a Layer label) built from :func:`project_judgements`' frame, once per data version."""
    return cached_layer(ctx.store.url, require_project(ctx), version, layer, frame)
