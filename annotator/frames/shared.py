"""The dashboards' live judgement frames of one server process: one per (database, project, kind), shared by
every session, the least recently used dropped first."""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..store import Store
from .live import LiveJudgementFrame, team_frame

__all__ = ["MAX_FRAMES", "DASHBOARD_KINDS", "dashboard_frame", "team_live_frame", "forget_frames"]

#: Frames kept per process (least recently used dropped first): a million judgements take about 60 MB.
MAX_FRAMES = 8


#: The judgement kinds the Agreement, Adjudication and Error analysis pages read.
DASHBOARD_KINDS = ("annotation", "adjudication")


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
    return _shared((store.url, project, "dashboard"),
                   lambda: LiveJudgementFrame(store, project, kinds=DASHBOARD_KINDS, snapshots=snapshots))


def team_live_frame(store: Store, project: str, *, snapshots=None):
    """The process's live frame of the Team page (annotator.team.team_frame) for ``project``."""
    return _shared((store.url, project, "team"), lambda: team_frame(store, project, snapshots=snapshots))


def forget_frames() -> None:
    """Drop every kept frame (tests; a process that switches databases)."""
    with _lock:
        _frames.clear()
