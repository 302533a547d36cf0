"""The Team page's assignment frame, kept on disk between server starts like the judgement frames."""

from __future__ import annotations

import pandas as pd

from ..store import Store
from ..store.team_queries import read_assignment_frame, user_names
from . import snapshots as snapshot_files


def assignment_frame(store: Store, project: str, *, snapshots=None, version: tuple | None = None) -> pd.DataFrame:
    """One row per assignment of the project: caption_id (int64), user (categorical), is_second (bool,
    the blind second annotator of a double-annotated caption), is_practice (bool, the caption's item).

    With ``snapshots`` (a snapshots.SnapshotFolder) and the project's assignment_version (annotator.store.frame_versions), the
    frame is taken from the file a read of the same version left there (a restarted server), and a read
    writes one (in the background). The names of the users are checked against the store's."""
    if snapshots is None or version is None:
        return read_assignment_frame(store, project)
    path = snapshots.path(version[0], "assignments")
    names = user_names(store)
    loaded = snapshot_files.load(path)
    if loaded is not None:
        frame, meta = loaded
        if meta.get("version") == list(version) and meta.get("names") == names:
            return frame
    frame = read_assignment_frame(store, project)
    snapshot_files.save_later(path, frame, {"project": project, "version": list(version), "names": names})
    return frame
