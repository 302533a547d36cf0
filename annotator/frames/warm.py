"""The dashboards' frames read when the server starts, so the first lead to open a dashboard finds the frame in
memory instead of waiting for a million rows (with a snapshot on disk the warm-up takes well under a second;
without one, a full read, which also writes the snapshot for the next start)."""

from __future__ import annotations

import logging
import threading

from ..errors import AnnotatorError
from ..store import Store, open_existing_store
from ..store.frame_versions import assignment_version
from ..store.judgements import newest_judgement_id
from ..store.projects import projects_by_recent_judgements
from .assignments import assignment_frame
from .shared import dashboard_frame, team_live_frame
from .snapshots import folder_for

log = logging.getLogger(__name__)

#: How many projects :func:`warm_up` reads by default: those with the newest judgements.
WARM_PROJECTS = 3


#: A database with fewer judgement rows than this is not warmed at server start: its frames read in
#: milliseconds anyway, and the start of the server is left alone.
WARM_FROM_JUDGEMENTS = 20_000


def recently_active_projects(store: Store, limit: int = WARM_PROJECTS) -> list[str]:
    """Up to ``limit`` project names, those whose judgements were saved most recently first (looked up from
    the newest 2,000 judgement rows: a primary-key walk, instant on any size), then the rest by name."""
    with store.read() as conn:
        ordered = projects_by_recent_judgements(conn, 2000)
    return ordered[:max(0, int(limit))]


def warm_up(store: Store, *, snapshots=None, projects: list[str] | None = None) -> list[str]:
    """Read the dashboard frames, the Team frame and the assignments of ``projects`` (default:
    :func:`recently_active_projects`) into this process, writing their snapshots where there were none;
    return the projects warmed. A project that fails is logged and skipped."""
    names = recently_active_projects(store) if projects is None else list(projects)
    done = []
    for name in names:
        try:
            dashboard_frame(store, name, snapshots=snapshots).get()
            team_live_frame(store, name, snapshots=snapshots).get()
            # The Team page takes the assignments from the snapshot this leaves (keyed by their stamp).
            assignment_frame(store, name, snapshots=snapshots, version=assignment_version(store, name))
            done.append(name)
        except Exception as exc:  # noqa: BLE001 - warming only saves time; the page reads again if it must
            log.warning("warming the dashboards of %s failed: %s", name, exc)
    return done


def _judgement_rows_at_most(store: Store) -> int:
    """The newest judgement id: at least as many as the judgement rows there are (one primary-key look-up)."""
    with store.read() as conn:
        return newest_judgement_id(conn)


def warm_up_in_background(url: str, *, snapshot_base=None, projects: list[str] | None = None) -> threading.Thread:
    """:func:`warm_up` in a daemon thread on the existing store at ``url``; returns the thread. Nothing happens
    when there is no annotator database there yet, or its schema is older (the app creates or migrates it),
    or, unless ``projects`` are named, when it holds fewer than WARM_FROM_JUDGEMENTS judgements."""
    def run():
        try:
            store = open_existing_store(url)
        except AnnotatorError:
            return
        try:
            if projects is None and _judgement_rows_at_most(store) < WARM_FROM_JUDGEMENTS:
                store.dispose()  # nothing worth warming (the frames warmed keep this store otherwise)
                return
            warm_up(store, snapshots=folder_for(url, snapshot_base), projects=projects)
        except Exception as exc:  # noqa: BLE001 - see warm_up
            log.warning("warming the dashboards failed: %s", exc)
    thread = threading.Thread(target=run, name="dashboard-warm-up", daemon=True)
    thread.start()
    return thread
