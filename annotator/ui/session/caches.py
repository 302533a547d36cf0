"""What the pages keep per server process: the store, the dashboards' live frames and the layers built from them
(streamlit's resource cache)."""

from __future__ import annotations

import streamlit as st

from ...config import load_settings
from ...frames.shared import dashboard_frame
from ...frames.snapshots import folder_for
from ...layers import build_layer
from ...store import open_store


@st.cache_resource(show_spinner=False)
def store_for(url: str):
    """The store at ``url``, opened (and migrated) once per server process."""
    return open_store(url)


def get_store():
    """The process-wide store for the configured database URL (migrated once)."""
    return store_for(load_settings().database_url)


def frame_snapshots(url: str):
    """Where the dashboards' judgement frames of the database at ``url`` are kept between server starts
    (None when the settings turn that off)."""
    return folder_for(url, load_settings().frame_cache)


def live_judgements(url: str, project: str):
    """The live judgement frame of ``project`` (annotator.frames.shared.dashboard_frame)."""
    # The process's one live frame per project (annotator.frames), which the warm-up at server start
    # may have read already.
    return dashboard_frame(store_for(url), project, snapshots=frame_snapshots(url))


@st.cache_resource(show_spinner="Resolving the layer…", max_entries=8)
def cached_layer(url: str, project: str, version: tuple, layer: str, _frame):
    """:func:`annotator.layers.build_layer` of a frame, once per (project, data version, layer)."""
    return build_layer(_frame, layer)
