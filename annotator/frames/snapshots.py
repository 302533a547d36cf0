"""Judgement frames kept on disk between server starts, so a dashboard opens fast on a cold server.

A :class:`~annotator.frames.live.LiveJudgementFrame` given a
:class:`SnapshotFolder` writes its frame to a file after every full read (in a
background thread) and, when a new server process first asks for the frame,
starts from that file instead of reading a million rows: it reads only what
was saved since (the same look-up a refresh makes) and merges it in.

A snapshot is used only when the store still holds exactly the judgements it
was taken from. Judgement rows are never changed once written and their ids
only grow, so a store that went on from the snapshot's state has the same rows
up to the snapshot's newest id, while a store that did not (a backup restored,
the database emptied and imported again, another database at the same URL)
differs there. The check (:func:`annotator.store.frame_versions.fingerprint`) compares the number of
judgement rows up to that id and the content of the rows at 17 ids spread
over the range (each a primary-key look-up), the names of the users and of
the project's systems the snapshot knew, its practice marks and the schema
version. A snapshot that
fails the check, or cannot be read, is ignored and replaced after the full
read. The live frame also reads everything again in the background a little
after starting from a snapshot and replaces its frame if anything differs, so
even an undetected mismatch is short-lived.

Files live in ``<ANNOTATOR_DATA_DIR>/cache/frames`` unless
``ANNOTATOR_FRAME_CACHE`` names another folder (``off`` turns snapshots off);
one sub-folder per database URL (passwords left out of the name), one file per
project and frame kind. Deleting them is always safe.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sqlalchemy.engine import make_url

log = logging.getLogger(__name__)

#: Bumped whenever the file layout or the meaning of a column changes; older files are ignored.
FORMAT = 1


@dataclass(frozen=True)
class SnapshotFolder:
    """Where the frame snapshots of one database live."""

    root: Path

    def path(self, project_id: int, kind: str) -> Path:
        """The file of one project's frame of one kind (a name made of the frame's settings)."""
        return self.root / f"project-{int(project_id)}-{kind}.npz"


def folder_for(store_url: str, base: Path | str | None) -> SnapshotFolder | None:
    """The snapshot folder of the database at ``store_url`` under ``base`` (None: snapshots off)."""
    if base is None:
        return None
    url = make_url(store_url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        url = url.set(database=str(Path(url.database).resolve()))  # one folder however the path is spelt
    shown = url.render_as_string(hide_password=True) if url.password else str(url)
    digest = hashlib.sha256(shown.encode("utf-8")).hexdigest()[:16]
    return SnapshotFolder(Path(base) / f"{url.get_backend_name()}-{digest}")


def save(path: Path, frame: pd.DataFrame, meta: dict) -> None:
    """Write ``frame`` and ``meta`` to ``path`` atomically (a reader sees the old file or the new one)."""
    arrays = {"__meta__": np.asarray(json.dumps({**meta, "format": FORMAT, "columns": list(frame.columns)}))}
    for col in frame.columns:
        values = frame[col].array
        if isinstance(values, pd.Categorical):
            arrays[f"{col}.codes"] = np.asarray(values.codes)
            arrays[f"{col}.categories"] = np.array([str(c) for c in values.categories] or [""], dtype=str)
            arrays[f"{col}.n_categories"] = np.asarray(len(values.categories))
        else:
            arrays[col] = np.asarray(values)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def save_later(path: Path, frame: pd.DataFrame, meta) -> threading.Thread:
    """:func:`save` in a background thread (returned; a write that fails is reported in the log). ``meta``
    is a dict, or a function giving it that the thread calls first (when it has to be read from the store)."""
    def write():
        try:
            save(path, frame, meta() if callable(meta) else meta)
        except Exception as exc:  # noqa: BLE001 - a missing snapshot only costs the next cold start
            log.warning("frame snapshot %s was not written: %s", path, exc)
    thread = threading.Thread(target=write, name="frame-snapshot", daemon=True)
    thread.start()
    return thread


def load(path: Path) -> tuple[pd.DataFrame, dict] | None:
    """(frame, meta) written by :func:`save`; None when there is no such file or it cannot be read
    (a damaged or older-format file is reported in the log and ignored)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["__meta__"]))
            if meta.get("format") != FORMAT:
                return None
            columns = {}
            for col in meta["columns"]:
                if f"{col}.codes" in data.files:
                    n = int(data[f"{col}.n_categories"])
                    categories = data[f"{col}.categories"].tolist()[:n]
                    columns[col] = pd.Categorical.from_codes(data[f"{col}.codes"], categories=categories)
                else:
                    columns[col] = data[col]
        frame = pd.DataFrame(columns)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - any unreadable file is only a missed shortcut
        log.warning("frame snapshot %s ignored: %s", path, exc)
        return None
    return frame, meta
