"""The dashboards' live judgement frames of one server process, and their warm-up when the server starts.

Agreement, Adjudication and Error analysis read one frame per project (current
annotations and adjudications); the Team page reads another (annotations with
skips and timing) and the project's assignments. Each frame is a
:class:`~annotator.store.analysis_queries.LiveJudgementFrame`: read once, then
brought up to date by reading only what was saved since. This module keeps one
of each per (database, project) for the whole process, so every session shares
it, and :func:`warm_up` reads them in a background thread as soon as the server
starts, so the first lead to open a dashboard finds the frame in memory
instead of waiting for a million rows (with a snapshot on disk the warm-up
takes well under a second; without one, a full read, which also writes the
snapshot for the next start).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

from .store import Store
from .store.judgements import newest_judgement_id
from .store.projects import projects_by_recent_judgements

log = logging.getLogger(__name__)

__all__ = ["MAX_FRAMES", "DASHBOARD_KINDS", "dashboard_frame", "team_live_frame", "recently_active_projects",
           "warm_up", "warm_up_in_background", "forget_frames"]

#: Frames kept per process (least recently used dropped first): a million judgements take about 60 MB.
MAX_FRAMES = 8
#: The judgement kinds the Agreement, Adjudication and Error analysis pages read.
DASHBOARD_KINDS = ("annotation", "adjudication")
#: How many projects :func:`warm_up` reads by default: those with the newest judgements.
WARM_PROJECTS = 3
#: A database with fewer judgement rows than this is not warmed at server start: its frames read in
#: milliseconds anyway, and the start of the server is left alone.
WARM_FROM_JUDGEMENTS = 20_000

_lock = threading.Lock()
_frames: OrderedDict[tuple, object] = OrderedDict()


def _shared(key: tuple, make):
    with _lock:
        live = _frames.get(key)
        if live is None:
            live = _frames[key] = make()
        _frames.move_to_end(key)
        while len(_frames) > MAX_FRAMES:
            _frames.popitem(last=False)
        return live


def dashboard_frame(store: Store, project: str, *, snapshots=None):
    """The process's live frame of ``project``'s current annotations and adjudications (created on first use;
    ``snapshots`` as for LiveJudgementFrame, taken from the call that creates it)."""
    from .store.analysis_queries import LiveJudgementFrame
    return _shared((store.url, project, "dashboard"),
                   lambda: LiveJudgementFrame(store, project, kinds=DASHBOARD_KINDS, snapshots=snapshots))


def team_live_frame(store: Store, project: str, *, snapshots=None):
    """The process's live frame of the Team page (annotator.team.team_frame) for ``project``."""
    from .team import team_frame
    return _shared((store.url, project, "team"), lambda: team_frame(store, project, snapshots=snapshots))


def forget_frames() -> None:
    """Drop every kept frame (tests; a process that switches databases)."""
    with _lock:
        _frames.clear()


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
    from .store.team_queries import assignment_frame, assignment_version
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
        from .errors import AnnotatorError
        from .store import open_existing_store
        try:
            store = open_existing_store(url)
        except AnnotatorError:
            return
        try:
            if projects is None and _judgement_rows_at_most(store) < WARM_FROM_JUDGEMENTS:
                store.dispose()  # nothing worth warming (the frames warmed keep this store otherwise)
                return
            from .store.frame_snapshots import folder_for  # (numpy and pandas: only once there is work)
            warm_up(store, snapshots=folder_for(url, snapshot_base), projects=projects)
        except Exception as exc:  # noqa: BLE001 - see warm_up
            log.warning("warming the dashboards failed: %s", exc)
    thread = threading.Thread(target=run, name="dashboard-warm-up", daemon=True)
    thread.start()
    return thread
