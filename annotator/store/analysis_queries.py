"""Read queries for agreement, adjudication and error analysis.

:func:`judgement_frame` is the bulk read behind the agreement dashboard, the
adjudication queue, the error tables and their CLI commands. It is
built for a million rows: it selects integer codes plus the type string,
reads them through the DB-API cursor (no per-row SQLAlchemy Row objects),
and builds the DataFrame column by column with categoricals for users,
systems, kinds and labels. The other functions are small look-ups for
one screen (a caption with its image, its judgements with notes).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals
from sqlalchemy import Connection, case, func, select

from ..model import Box, Judgement, JudgementKind, Label
from . import Store
from .codec import decode_types
from .projects import project_id, project_image_root
from .schema import boxes, captions, current_judgements, items, judgements, systems, users

#: Columns of :func:`judgement_frame` (a superset of what annotator.agreement needs).
FRAME_COLUMNS = ["caption_id", "item_id", "is_practice", "system", "user", "kind", "label", "error_types", "judgement_id"]

_KINDS = [k.value for k in JudgementKind]
_LABELS = [Label.ACCURATE.value, Label.INACCURATE.value]


_CHUNK_ROWS = 100_000


def _raw_chunks(conn: Connection, query, size: int = _CHUNK_ROWS):
    """Run a Core query (bound values: integers and fixed literals only) through the DB-API cursor,
    yielding lists of plain tuples; converting chunk by chunk keeps memory and time down."""
    sql = str(query.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    cur = conn.connection.dbapi_connection.cursor()
    try:
        cur.execute(sql)
        while True:
            rows = cur.fetchmany(size)
            if not rows:
                break
            yield rows
    finally:
        cur.close()


def judgement_frame(store: Store, project: str, *, kinds=("annotation",), system: str | None = None,
                    users_: list[str] | None = None, include_skipped: bool = False,
                    changed_after: int | None = None) -> pd.DataFrame:
    """Current judgements of a project, one row per (caption, user, kind).

    Columns (see ``FRAME_COLUMNS``): caption_id, item_id (int64), is_practice (bool),
    system, user, kind, label (categoricals; label NaN for a skipped item),
    error_types (categorical of the space-separated id strings), judgement_id (int64; a later save of any
    judgement has a larger id, which is how the newest adjudication is found).
    ``kinds`` limits the judgement kinds, ``system``/``users_`` filter by name
    (an unknown name gives an empty frame). Skipped items are left out unless
    ``include_skipped``. ``changed_after`` keeps only the keys whose current
    revision was saved after judgement id ``changed_after`` (what
    :class:`LiveJudgementFrame` reads to bring a frame up to date).
    """
    kinds = [JudgementKind(k).value for k in kinds]
    with store.read() as conn:
        pid = project_id(conn, project)
        sys_rows = conn.execute(select(systems.c.id, systems.c.name).where(systems.c.project_id == pid)
                                .order_by(systems.c.id)).all()
        if system is not None:
            sys_rows = [r for r in sys_rows if r.name == system]
        user_rows = conn.execute(select(users.c.id, users.c.name).order_by(users.c.name)).all()
        if users_ is not None:
            user_rows = [r for r in user_rows if r.name in set(users_)]
        practice_ids = np.array([r[0] for r in conn.execute(
            select(items.c.id).where(items.c.project_id == pid, items.c.is_practice.is_(True)))], dtype=np.int64)
        if not sys_rows or not user_rows:
            return _empty_frame()
        cj = current_judgements
        system_id = captions.c.system_id
        if changed_after is not None:
            # "+ 0" keeps SQLite (which has no statistics) from walking the project's captions through their
            # system index, 0.5 s on a million rows; it then takes the judgement-id index of migration 3
            # and answers in milliseconds. PostgreSQL plans either form well.
            system_id = system_id + 0
        q = (select(cj.c.caption_id, captions.c.item_id, captions.c.system_id, cj.c.user_id,
                    case((cj.c.kind == JudgementKind.ADJUDICATION.value, 1), else_=0),
                    case((cj.c.label == Label.INACCURATE.value, 1), (cj.c.label == Label.ACCURATE.value, 0), else_=-1),
                    cj.c.judgement_id, cj.c.error_types)
             .select_from(cj.join(captions, captions.c.id == cj.c.caption_id))
             .where(system_id.in_([r.id for r in sys_rows]), cj.c.kind.in_(kinds)))
        if users_ is not None:
            q = q.where(cj.c.user_id.in_([r.id for r in user_rows]))
        if not include_skipped:
            q = q.where(cj.c.label.is_not(None))
        if changed_after is not None:
            q = q.where(cj.c.judgement_id > int(changed_after))
        int_parts, type_parts = [], []
        for rows in _raw_chunks(conn, q):
            cols = list(zip(*rows))
            int_parts.append(np.array(cols[:7], dtype=np.int64))
            # Few distinct type strings: factorise per chunk, merge the small vocabularies after.
            type_parts.append(pd.factorize(np.array(cols[7], dtype=object)))
    if not int_parts:
        return _empty_frame()
    ints = np.concatenate(int_parts, axis=1)
    vocab = pd.Index(pd.unique(np.concatenate([u for _, u in type_parts]).astype(object)))
    type_codes = np.concatenate([vocab.get_indexer(u)[c] for c, u in type_parts]).astype(np.int32)
    caption_id, item_id = ints[0], ints[1]
    return pd.DataFrame({
        "caption_id": caption_id,
        "item_id": item_id,
        "is_practice": np.isin(item_id, practice_ids) if len(practice_ids) else np.zeros(len(item_id), bool),
        "system": pd.Categorical.from_codes(_codes(ints[2], [r.id for r in sys_rows]), categories=[r.name for r in sys_rows]),
        "user": pd.Categorical.from_codes(_codes(ints[3], [r.id for r in user_rows]), categories=[r.name for r in user_rows]),
        "kind": pd.Categorical.from_codes(ints[4].astype(np.int8), categories=_KINDS),
        "label": pd.Categorical.from_codes(ints[5].astype(np.int8), categories=_LABELS),
        "error_types": pd.Categorical.from_codes(type_codes, categories=vocab),
        "judgement_id": ints[6],
    })


def _codes(ids: np.ndarray, ordered_ids: list[int]) -> np.ndarray:
    """Map database ids to positions in ``ordered_ids`` (vectorised)."""
    order = np.asarray(ordered_ids, dtype=np.int64)
    sorter = np.argsort(order)
    return sorter[np.searchsorted(order, ids, sorter=sorter)].astype(np.int32)


def _text_dtype():
    """The dtype pandas gives an index of names: ``str`` under pandas 3, ``object`` under pandas 2 (or with
    pandas 3's ``future.infer_string`` off). Asked at call time, so one process follows the option it runs with."""
    return pd.Index(["name"]).dtype


def _empty_frame() -> pd.DataFrame:
    # Empty categories of the same dtype a non-empty read gets, so a later merge can unite them.
    no_names = pd.Index([], dtype=_text_dtype())
    return pd.DataFrame({
        "caption_id": np.array([], np.int64), "item_id": np.array([], np.int64), "is_practice": np.array([], bool),
        "system": pd.Categorical([], categories=no_names), "user": pd.Categorical([], categories=no_names),
        "kind": pd.Categorical([], categories=_KINDS), "label": pd.Categorical([], categories=_LABELS),
        "error_types": pd.Categorical([], categories=no_names), "judgement_id": np.array([], np.int64)})


def annotators_in(frame: pd.DataFrame) -> list[str]:
    """Sorted names of the users who have annotations (not only adjudications) in a judgement frame;
    read from the categorical codes, without copying the frame."""
    users_ = frame["user"].array
    codes = np.asarray(users_.codes)[np.asarray(frame["kind"].array.codes) == _KINDS.index(JudgementKind.ANNOTATION.value)]
    return sorted(str(u) for u in users_.categories[np.unique(codes[codes >= 0])])


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
    for col in FRAME_COLUMNS:
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
    text = _text_dtype()
    return [c.set_categories(c.categories.astype(text), rename=True) for c in (a, b)]


def _key_codes(frame: pd.DataFrame, users_: pd.Index) -> np.ndarray:
    """One int64 per row for its (caption, user, kind) key; ``users_`` must hold every user of the frames compared."""
    user = frame["user"].array
    user_code = users_.get_indexer(user.categories).astype(np.int64)[np.asarray(user.codes)]
    kind_code = np.asarray(frame["kind"].array.codes, dtype=np.int64)  # fixed categories: _KINDS
    return (frame["caption_id"].to_numpy(np.int64) * len(users_) + user_code) * len(_KINDS) + kind_code


def data_version(store: Store, project: str) -> tuple:
    """A cheap fingerprint that changes when judgements or a project's practice marks change.

    Pages use it as a cache key for :func:`judgement_frame`. Every save appends a
    judgement row, so the newest judgement id moves; it is taken over the whole
    database (a primary-key look-up, instant on a million rows), so a save in
    another project merely refreshes the cache. Marking practice items changes
    the practice count/sum.
    """
    with store.read() as conn:
        pid = project_id(conn, project)
        newest = conn.execute(select(func.max(judgements.c.id))).scalar()
        practice = conn.execute(select(func.count(), func.coalesce(func.sum(items.c.id), 0))
                                .where(items.c.project_id == pid, items.c.is_practice.is_(True))).one()
    return (pid, newest or 0, int(practice[0]), int(practice[1]))


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
    """

    def __init__(self, store: Store, project: str, *, kinds=("annotation", "adjudication"),
                 full_every: float = 300.0, lookback: int = 10_000, clock=None):
        self.store, self.project, self.kinds = store, project, tuple(kinds)
        self.full_every, self.lookback = float(full_every), int(lookback)
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._frame: pd.DataFrame | None = None
        self._version: tuple | None = None
        self._full_at = 0.0
        self.full_reads = 0
        self.delta_reads = 0

    def get(self) -> tuple[pd.DataFrame, tuple]:
        """(frame, data version it reflects); the frame is never modified after it was returned."""
        with self._lock:
            version = data_version(self.store, self.project)
            if version == self._version:
                return self._frame, version
            old = self._version
            incremental = (self._frame is not None and old[0] == version[0] and old[2:] == version[2:]
                           and version[1] >= old[1] and self._clock() - self._full_at < self.full_every)
            if incremental:
                changed = judgement_frame(self.store, self.project, kinds=self.kinds, include_skipped=True,
                                          changed_after=max(0, old[1] - self.lookback))
                self._frame = merge_judgement_frames(self._frame, changed)
                self.delta_reads += 1
            else:
                self._frame = judgement_frame(self.store, self.project, kinds=self.kinds)
                self._full_at = self._clock()
                self.full_reads += 1
            self._version = version
            return self._frame, version


def caption_details(store: Store, project: str, caption_ids) -> pd.DataFrame:
    """Caption rows for display: caption_id, item_id, item_key, image_path, width, height,
    is_practice, system, line_no, text (in the order of ``caption_ids``; unknown ids left out)."""
    ids = [int(c) for c in caption_ids]
    cols = ["caption_id", "item_id", "item_key", "image_path", "width", "height", "is_practice", "system", "line_no", "text"]
    if not ids:
        return pd.DataFrame(columns=cols)
    with store.read() as conn:
        pid = project_id(conn, project)
        rows = []
        for start in range(0, len(ids), 5000):
            chunk = ids[start:start + 5000]
            rows += conn.execute(
                select(captions.c.id, items.c.id, items.c.key, items.c.image_path, items.c.width, items.c.height,
                       items.c.is_practice, systems.c.name, captions.c.line_no, captions.c.text)
                .select_from(captions.join(items, items.c.id == captions.c.item_id)
                             .join(systems, systems.c.id == captions.c.system_id))
                .where(captions.c.id.in_(chunk), systems.c.project_id == pid)).all()
    df = pd.DataFrame([tuple(r) for r in rows], columns=cols)
    if df.empty:
        return df
    df["is_practice"] = df["is_practice"].astype(bool)
    order = {c: n for n, c in enumerate(ids)}
    return df.sort_values("caption_id", key=lambda s: s.map(order)).reset_index(drop=True)


def caption_judgements(store: Store, caption_id: int) -> list[Judgement]:
    """The current judgement of every user and kind for one caption (with notes), by kind then user."""
    with store.read() as conn:
        q = (select(judgements, users.c.name.label("user_name"))
             .join(current_judgements, current_judgements.c.judgement_id == judgements.c.id)
             .join(users, users.c.id == judgements.c.user_id)
             .where(current_judgements.c.caption_id == int(caption_id))
             .order_by(judgements.c.kind, users.c.name))
        out = []
        for r in conn.execute(q):
            out.append(Judgement(caption_id=r.caption_id, user=r.user_name, label=Label(r.label) if r.label else None,
                                 error_types=decode_types(r.error_types), note=r.note, seconds=r.seconds,
                                 kind=JudgementKind(r.kind), revision=r.revision, created_at=r.created_at,
                                 judgement_id=r.id))
        return out


def item_boxes(store: Store, item_id: int) -> list[Box]:
    """The gold boxes of one item."""
    with store.read() as conn:
        return [Box(b.box_key, b.label, b.x, b.y, b.w, b.h, b.synset)
                for b in conn.execute(select(boxes).where(boxes.c.item_id == int(item_id)).order_by(boxes.c.id))]


def image_root(store: Store, project: str) -> str | None:
    """The project's image root directory (None if not set)."""
    with store.read() as conn:
        return project_image_root(conn, project_id(conn, project))


def practice_items(store: Store, project: str) -> list[str]:
    """Keys of the items marked as practice/guideline examples, in import order."""
    with store.read() as conn:
        pid = project_id(conn, project)
        return [r[0] for r in conn.execute(select(items.c.key).where(items.c.project_id == pid, items.c.is_practice.is_(True))
                                           .order_by(items.c.position))]


def item_keys(store: Store, project: str, item_ids) -> dict[int, str]:
    """Item id → key for the given ids."""
    ids = [int(i) for i in item_ids]
    out: dict[int, str] = {}
    with store.read() as conn:
        pid = project_id(conn, project)
        for start in range(0, len(ids), 5000):
            for r in conn.execute(select(items.c.id, items.c.key).where(items.c.project_id == pid,
                                                                       items.c.id.in_(ids[start:start + 5000]))):
                out[r.id] = r.key
    return out


def user_role(store: Store, name: str) -> str | None:
    """The role of user ``name`` (None if there is no such user)."""
    with store.read() as conn:
        return conn.execute(select(users.c.role).where(users.c.name == name)).scalar()
