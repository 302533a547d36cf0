"""A project's judgement frame kept up to date by reading only what changed (:class:`LiveJudgementFrame`), and
how two frames are merged and compared."""

from __future__ import annotations

import json
import logging
import threading
import time

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ..store import Store
from ..store.analysis_queries import KINDS, empty_frame, judgement_frame, text_dtype
from ..store.frame_versions import data_version, fingerprint
from . import snapshots as snapshot_files

log = logging.getLogger(__name__)

def merge_judgement_frames(old: pd.DataFrame, changed: pd.DataFrame, *, include_skipped: bool = False) -> pd.DataFrame:
    """``old`` with every (caption, user, kind) key of ``changed`` replaced by its row there.

    ``changed`` holds the keys saved since ``old`` was read, skipped ones included
    (a skip replaces a judgement, so its key must leave ``old``); they stay out of
    the result unless ``include_skipped``. Categories (users, systems, type
    strings) are united. Neither frame is modified.
    """
    if changed.empty:
        return old
    users_ = old["user"].cat.categories.union(changed["user"].cat.categories, sort=False)
    kept = old[~np.isin(_key_codes(old, users_), _key_codes(changed, users_))]
    fresh = changed if include_skipped else changed[changed["label"].notna()]
    out = {}
    for col in old.columns:  # FRAME_COLUMNS, and the timing columns when the frames have them
        a, b = kept[col].array, fresh[col].array
        if isinstance(a, pd.Categorical):
            out[col] = union_categoricals(_same_category_dtype(a, b), ignore_order=True)
        else:
            out[col] = np.concatenate([np.asarray(a), np.asarray(b)])
    return pd.DataFrame(out)


def _same_category_dtype(a: pd.Categorical, b: pd.Categorical) -> list[pd.Categorical]:
    """``a`` and ``b`` with categories of one dtype, as union_categoricals requires (pandas 3 refuses to unite
    ``object`` names with ``str`` names, e.g. a frame kept from an older read or another pandas setting)."""
    if a.categories.dtype == b.categories.dtype:
        return [a, b]
    text = text_dtype()
    return [c.set_categories(c.categories.astype(text), rename=True) for c in (a, b)]


def _key_codes(frame: pd.DataFrame, users_: pd.Index) -> np.ndarray:
    """One int64 per row for its (caption, user, kind) key; ``users_`` must hold every user of the frames compared."""
    user = frame["user"].array
    user_code = users_.get_indexer(user.categories).astype(np.int64)[np.asarray(user.codes)]
    kind_code = np.asarray(frame["kind"].array.codes, dtype=np.int64)  # fixed categories: KINDS
    return (frame["caption_id"].to_numpy(np.int64) * len(users_) + user_code) * len(KINDS) + kind_code


class LiveJudgementFrame:
    """The current judgements of one project, brought up to date by reading only what changed.

    :meth:`get` compares :func:`data_version` with the version the frame reflects.
    When only judgements moved on, it reads the keys whose current revision is
    newer than the last version (an index look-up) and merges them in
    (:func:`merge_judgement_frames`), instead of reading every row again: on a
    million judgements that is milliseconds instead of seconds. It reads
    everything again when practice marks change, when the database went back
    (a restore), and at least every ``full_every`` seconds. The look-back of
    ``lookback`` judgement ids covers saves that took their id before the last
    version was read but committed after it (possible on PostgreSQL, where ids
    are handed out before commit); the periodic full read bounds what even a
    save stalled for longer could leave out. Safe to share between threads.

    With ``snapshots`` (an annotator.frames.snapshots.SnapshotFolder) the frame also survives
    the process: every full read is written there in the background, and the
    first :meth:`get` of a new process starts from that file when it still
    matches the store (annotator.store.frame_versions.fingerprint), reading only what was saved
    since. ``verify_after`` seconds later a full read in the background checks it;
    should the frames differ, the new one replaces it and the version returned
    by :meth:`get` changes, so whatever a page derived from the old one is
    computed again.
    """

    def __init__(self, store: Store, project: str, *, kinds=("annotation", "adjudication"),
                 full_every: float = 300.0, lookback: int = 10_000, clock=None, include_skipped: bool = False,
                 with_timing: bool = False, snapshots=None, verify_after: float = 20.0):
        self.store, self.project, self.kinds = store, project, tuple(kinds)
        # Skips kept as rows (label missing) and the timing columns: what the team dashboard reads.
        self.include_skipped, self.with_timing = bool(include_skipped), bool(with_timing)
        self.full_every, self.lookback = float(full_every), int(lookback)
        self.snapshots, self.verify_after = snapshots, float(verify_after)
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._frame: pd.DataFrame | None = None
        self._version: tuple | None = None
        self._generation = 0  # bumped when a background check replaced a frame started from a snapshot
        self._full_at = 0.0
        self.full_reads = 0
        self.delta_reads = 0
        self.snapshot_loads = 0
        self._writer: threading.Thread | None = None
        self.snapshot_mismatches = 0

    @property
    def snapshot_kind(self) -> str:
        """The part of the snapshot file name that says which frame this is."""
        return ("+".join(self.kinds) + ("-skips" if self.include_skipped else "")
                + ("-timing" if self.with_timing else ""))

    def get(self) -> tuple[pd.DataFrame, tuple]:
        """(frame, version it reflects: the data version plus a generation); the frame is never modified
        after it was returned."""
        with self._lock:
            version = data_version(self.store, self.project)
            if version == self._version:
                return self._frame, (*version, self._generation)
            old = self._version
            if self._frame is None:
                if self.snapshots is None or not self._start_from_snapshot(version):
                    self._full_read()
            elif (old[0] == version[0] and old[2:] == version[2:] and version[1] >= old[1]
                  and self._clock() - self._full_at < self.full_every):
                self._merge_changes_since(old[1])
            else:
                self._full_read()
            self._version = version
            return self._frame, (*version, self._generation)

    def _with_changes_since(self, frame: pd.DataFrame, newest: int) -> pd.DataFrame:
        """``frame`` (which reflects judgement ids up to ``newest``) with what was saved since merged in."""
        changed = judgement_frame(self.store, self.project, kinds=self.kinds, include_skipped=True,
                                  changed_after=max(0, newest - self.lookback), with_timing=self.with_timing)
        return merge_judgement_frames(frame, changed, include_skipped=self.include_skipped)

    def _merge_changes_since(self, newest: int) -> None:
        self._frame = self._with_changes_since(self._frame, newest)
        self.delta_reads += 1

    def _read_everything(self) -> tuple[pd.DataFrame, tuple]:
        version = data_version(self.store, self.project)
        return judgement_frame(self.store, self.project, kinds=self.kinds, include_skipped=self.include_skipped,
                               with_timing=self.with_timing), version

    def _full_read(self) -> None:
        # The version is taken before the read: what is saved meanwhile is read again by the next refresh.
        self._frame, version = self._read_everything()
        self._full_at = self._clock()
        self.full_reads += 1
        if self.snapshots is not None:
            self._save_snapshot_later(self._frame, version)

    def _start_from_snapshot(self, version: tuple) -> bool:
        path = self.snapshots.path(version[0], self.snapshot_kind)
        loaded = snapshot_files.load(path)
        if loaded is None:
            return False
        frame, meta = loaded
        expected = empty_frame(self.with_timing)
        if list(frame.columns) != list(expected.columns) or any(
                frame[c].dtype.kind != expected[c].dtype.kind for c in expected.columns
                if not isinstance(expected[c].dtype, pd.CategoricalDtype)):
            return False  # written by a version of the code that read other columns
        newest = int(meta.get("version", [0, -1])[1])
        if list(meta.get("version", [])) != [version[0], newest, *version[2:]] or newest > version[1]:
            return False
        mark = meta.get("fingerprint") or {}
        with self.store.read() as conn:
            now = fingerprint(conn, version[0], newest, known_users=mark.get("known_users", 0),
                                              known_systems=mark.get("known_systems", 0))
        if mark != json_ready(now):
            return False
        self._frame = frame
        self._merge_changes_since(newest)
        # The periodic full read counts from the snapshot's time; the check below comes much sooner.
        self._full_at = self._clock()
        self.snapshot_loads += 1
        timer = threading.Timer(self.verify_after, self._check_snapshot_start)
        timer.daemon = True
        timer.start()
        return True

    def _check_snapshot_start(self) -> None:
        """The background check of a frame started from a snapshot: read everything and compare."""
        try:
            fresh, version = self._read_everything()
        except Exception as exc:  # noqa: BLE001 - the next periodic full read tries again
            log.warning("checking the judgement frame of %s failed: %s", self.project, exc)
            return
        with self._lock:
            if self._version is None or self._version[0] != version[0] or self._version[2:] != version[2:]:
                return  # the practice marks changed meanwhile: the frame was read in full again anyway
            # Saves since the check's read: bring it as far as the frame it checks.
            current = self._with_changes_since(fresh, version[1]) if self._version[1] > version[1] else fresh
            if not same_judgements(self._frame, current):
                self.snapshot_mismatches += 1
                self._generation += 1
                log.warning("the judgement frame of %s started from a snapshot differed from the store; replaced",
                            self.project)
            self._frame, self._full_at = current, self._clock()
            self.full_reads += 1
        self._save_snapshot_later(fresh, version)

    def _save_snapshot_later(self, frame: pd.DataFrame, version: tuple) -> None:

        def meta() -> dict:  # read in the writer's thread, off the page's path
            with self.store.read() as conn:
                mark = json_ready(fingerprint(conn, version[0], version[1]))
            return {"project": self.project, "version": list(version), "fingerprint": mark}
        self._writer = snapshot_files.save_later(self.snapshots.path(version[0], self.snapshot_kind), frame, meta)

    def wait_for_snapshot(self, timeout: float | None = None) -> None:
        """Wait until the snapshot being written (if any) is on disk: before a process that read the frame
        once ends (a benchmark, a test)."""
        writer = self._writer
        if writer is not None:
            writer.join(timeout)


def json_ready(value):
    """``value`` as it reads back from JSON (tuples become lists), for comparing with a stored one."""
    return json.loads(json.dumps(value))


def same_judgements(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """True when two judgement frames hold the same rows, in whatever order (each current judgement has
    its own judgement id, so rows are matched by it)."""
    if len(a) != len(b) or list(a.columns) != list(b.columns):
        return False
    order_a = np.argsort(a["judgement_id"].to_numpy(), kind="stable")
    order_b = np.argsort(b["judgement_id"].to_numpy(), kind="stable")
    for col in a.columns:
        x, y = a[col].array, b[col].array
        if isinstance(x, pd.Categorical) != isinstance(y, pd.Categorical):
            return False
        if isinstance(x, pd.Categorical):
            # Compare the names each row stands for, through one code space.
            names = pd.Index(x.categories.astype(str)).union(pd.Index(y.categories.astype(str)), sort=False)
            cx = np.append(names.get_indexer(x.categories.astype(str)), -1)[np.asarray(x.codes)]
            cy = np.append(names.get_indexer(y.categories.astype(str)), -1)[np.asarray(y.codes)]
            if not np.array_equal(cx[order_a], cy[order_b]):
                return False
        elif not np.array_equal(np.asarray(x)[order_a], np.asarray(y)[order_b], equal_nan=True):
            return False
    return True


def team_frame(store, project: str, *, snapshots=None):
    """The live frame the team report reads (current annotations, skips kept, with timing); ``snapshots``
    as for LiveJudgementFrame."""
    return LiveJudgementFrame(store, project, kinds=("annotation",), include_skipped=True, with_timing=True,
                              snapshots=snapshots)
