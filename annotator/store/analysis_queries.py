"""Read queries for agreement, adjudication and error analysis.

:func:`judgement_frame` is the bulk read behind the agreement dashboard, the
adjudication queue, the error tables and their CLI commands. It is
built for a million rows: the database returns each column of integer
codes (caption, user/kind/label, judgement id, error-type mask of migration
9) as one comma-joined text (group_concat on SQLite, string_agg on
PostgreSQL), numpy parses each in one call, and the DataFrame is built
column by column with categoricals for users, systems, kinds, labels and
type strings; no Python object is made per row. The other functions are
small look-ups for one screen (a caption with its image, its judgements
with notes).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals
from sqlalchemy import BigInteger, Connection, Text, and_, case, cast, extract, func, literal_column, select, text

from ..model import Box, Judgement, JudgementKind, Label
from . import Store
from .codec import decode_types, mask_types
from .judgements import newest_judgement_id
from .projects import practice_marks, project_id, project_image_root
from .schema import boxes, captions, current_judgements, items, judgements, systems, users

#: Columns of :func:`judgement_frame` (a superset of what annotator.agreement needs).
FRAME_COLUMNS = ["caption_id", "item_id", "is_practice", "system", "user", "kind", "label", "error_types", "judgement_id"]

log = logging.getLogger(__name__)

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
                    changed_after: int | None = None, with_timing: bool = False) -> pd.DataFrame:
    """Current judgements of a project, one row per (caption, user, kind).

    Columns (see ``FRAME_COLUMNS``): caption_id, item_id (int64), is_practice (bool),
    system, user, kind, label (categoricals; label NaN for a skipped item),
    error_types (categorical of the space-separated id strings), judgement_id (int64; a later save of any
    judgement has a larger id, which is how the newest adjudication is found).
    ``kinds`` limits the judgement kinds, ``system``/``users_`` filter by name
    (an unknown name gives an empty frame). Skipped items are left out unless
    ``include_skipped``. ``changed_after`` keeps only the keys whose current
    revision was saved after judgement id ``changed_after`` (what
    :class:`LiveJudgementFrame` reads to bring a frame up to date). ``with_timing``
    adds ``seconds`` (float, the current revision's working time) and ``saved_at``
    (float, its save time in seconds since the epoch, UTC), read through the
    revision's row (the team dashboard's figures). Rows come in no particular order (table order on SQLite).
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
            return _empty_frame(with_timing)
        sys_ids, user_ids = [r.id for r in sys_rows], [r.id for r in user_rows]
        cj = current_judgements
        # One row of comma-joined numbers per column (group_concat / string_agg): the database formats a
        # million integers in C and numpy parses each column in one call, instead of a Python tuple per row.
        # Aggregates of one query step through the same rows in the same order, so the columns line up.
        cols = [cj.c.caption_id,
                cast(cj.c.user_id, BigInteger) * 8 + case((cj.c.kind == JudgementKind.ADJUDICATION.value, 4), else_=0)
                + case((cj.c.label == Label.INACCURATE.value, 2), (cj.c.label == Label.ACCURATE.value, 1), else_=0),
                cj.c.judgement_id, func.coalesce(cj.c.type_mask, -1)]
        if with_timing:
            # The working time is kept beside the judgement since migration 9. Times are mostly whole hundredths
            # (the pages round them): those as integers, exact when k / 100.0 gives the stored double back; any
            # other (or one missing, written by another program) is -1 and read from its revision's row after.
            seconds = cj.c.seconds
            hundredths = cast(func.round(seconds * 100), BigInteger)
            code = case((and_(seconds >= 0, seconds < 1e12),  # (a CASE, so the cast never sees a huge value)
                         case((hundredths / literal_column("100.0") == seconds, hundredths), else_=-1)), else_=-1)
            cols += [code, _stamp(conn, cj.c.updated_at)]
        # The text of the rows without a mask (none since migration 9, unless another program wrote them),
        # each as <length>:<text> so any character may occur in it.
        untyped = case((cj.c.type_mask.is_(None),
                        cast(func.length(cj.c.error_types), Text) + literal_column("':'") + cj.c.error_types))
        where = [cj.c.kind.in_(kinds)]
        if users_ is not None:
            where.append(cj.c.user_id.in_(user_ids))
        if not include_skipped:
            where.append(cj.c.label.is_not(None))
        if changed_after is None:
            # Every judgement of the project: the project's captions in one read, then the current judgements
            # of their id range in table order, matched to them in numpy. "+ 0" keeps SQLite off the key index
            # (a look-up into the table for every row, half as fast again as walking the table).
            cap = _caption_columns(conn, sys_ids)
            if cap is None:
                return _empty_frame(with_timing)
            source = cj
            where.append(cj.c.caption_id + 0 >= int(cap[0][0]))
            where.append(cj.c.caption_id + 0 <= int(cap[0][-1]))
        else:
            # What changed since a judgement id: "+ 0" keeps SQLite (which has no statistics) from walking the
            # project's captions through their system index, 0.5 s on a million rows; it then takes the
            # judgement-id index of migration 3 and answers in milliseconds. PostgreSQL plans either form well.
            cap = None
            source = cj.join(captions, captions.c.id == cj.c.caption_id)
            cols += [captions.c.item_id, captions.c.system_id]
            where += [(captions.c.system_id + 0).in_(sys_ids), cj.c.judgement_id > int(changed_after)]
        q = select(*[_joined(conn, c) for c in cols], _joined(conn, untyped, "")).select_from(source).where(*where)
        parts = _table_parts(conn) if changed_after is None else []
        if parts:
            row = _read_in_parts(store, conn, q, parts)
        else:
            row = [r for chunk in _raw_chunks(conn, q) for r in chunk][0]
        dialect = conn.dialect.name
        if with_timing and row[0] is not None:
            # Revisions never change, so their times can be read in a statement of their own.
            judgement_ids, hundredths = _ints(row[2]), _ints(row[4])
            seconds = _seconds(conn, hundredths, judgement_ids[hundredths < 0])
    if row[0] is None:
        return _empty_frame(with_timing)
    caption_id, packed, judgement_id, masks = (_ints(v) for v in row[:4])
    n = len(caption_id)
    extra = 2 if with_timing else 0
    if cap is None:
        item_id, system_id = _ints(row[4 + extra]), _ints(row[5 + extra])  # after the timing columns
        keep = None
    else:
        # Rows of captions outside the project (or the chosen system) share the id range only: left out.
        ids, cap_items, cap_systems = cap
        pos = np.minimum(np.searchsorted(ids, caption_id), len(ids) - 1)
        keep = ids[pos] == caption_id
        item_id, system_id = cap_items[pos], cap_systems[pos]
    if any(len(a) != n for a in (packed, judgement_id, masks, item_id, system_id)):
        raise AssertionError("the columns of the judgement read do not line up")
    type_codes, vocab = _type_categories(masks, row[-1])
    timing = {}
    if with_timing:
        timing = {"seconds": seconds, "saved_at": _epoch_from_joined(row[5], n, dialect)}
        if len(seconds) != n:
            raise AssertionError("the columns of the judgement read do not line up")
    frame = pd.DataFrame({
        "caption_id": caption_id,
        "item_id": item_id,
        "is_practice": np.isin(item_id, practice_ids) if len(practice_ids) else np.zeros(n, bool),
        "system": pd.Categorical.from_codes(_codes(system_id, sys_ids), categories=[r.name for r in sys_rows]),
        "user": pd.Categorical.from_codes(_codes(packed >> 3, user_ids), categories=[r.name for r in user_rows]),
        "kind": pd.Categorical.from_codes(((packed >> 2) & 1).astype(np.int8), categories=_KINDS),
        "label": pd.Categorical.from_codes(((packed & 3) - 1).astype(np.int8), categories=_LABELS),
        "error_types": pd.Categorical.from_codes(type_codes, categories=vocab),
        "judgement_id": judgement_id,
        **timing,
    })
    if keep is not None and not keep.all():
        frame = frame[keep].reset_index(drop=True)
        frame["error_types"] = frame["error_types"].cat.remove_unused_categories()
    return frame


#: A full read of more current judgements than this is split over several connections (SQLite only).
PARALLEL_FROM_ROWS = 200_000
MAX_READ_THREADS = 4


def _table_parts(conn: Connection) -> list[tuple[int, int]]:
    """Row-id ranges that split current_judgements into one part per core (at most MAX_READ_THREADS), or []
    when one read is as good: not SQLite, one core, or a small table. SQLite lets go of Python's lock while it
    steps through rows, so the parts are read side by side; a range of row ids is a seek in the table."""
    workers = min(os.cpu_count() or 1, MAX_READ_THREADS)
    if conn.dialect.name != "sqlite" or workers < 2:
        return []
    lo, hi = conn.execute(text("SELECT min(rowid), max(rowid) FROM current_judgements")).one()
    if lo is None or hi - lo + 1 < PARALLEL_FROM_ROWS:
        return []
    step = (hi - lo + workers) // workers
    return [(a, min(a + step - 1, hi)) for a in range(lo, hi + 1, step)]


def _read_in_parts(store: Store, conn: Connection, query, parts: list[tuple[int, int]]) -> tuple:
    """The one row of comma-joined columns ``query`` gives, read as one query per row-id range of ``parts``
    (the first on ``conn``, the others each on a connection of its own, in threads) and joined in order."""
    rowid = literal_column("current_judgements.rowid")

    def read(part, connection):
        q = query.where(rowid >= part[0], rowid <= part[1])
        return [r for chunk in _raw_chunks(connection, q) for r in chunk][0]

    def read_apart(part):
        with store.read() as own:
            return read(part, own)

    with ThreadPoolExecutor(max_workers=len(parts) - 1, thread_name_prefix="frame-read") as pool:
        later = [pool.submit(read_apart, part) for part in parts[1:]]
        rows = [read(parts[0], conn)] + [f.result() for f in later]
    # Numbers are joined with commas, the last column (texts with their lengths) with nothing.
    seps = [","] * (len(rows[0]) - 1) + [""]
    return tuple(None if not any(r[i] for r in rows) else seps[i].join(r[i] for r in rows if r[i])
                 for i in range(len(rows[0])))


def _caption_columns(conn: Connection, sys_ids: list[int]):
    """(ids sorted, their item ids, their system ids) of the captions of the given systems; None when there are none."""
    # "+ 0": walking the table is twice as fast on SQLite as its system index plus a look-up per caption.
    q = select(*[_joined(conn, c) for c in (captions.c.id, captions.c.item_id, captions.c.system_id)]).where(
        (captions.c.system_id + 0).in_(sys_ids))
    row = [r for chunk in _raw_chunks(conn, q) for r in chunk][0]
    if row[0] is None:
        return None
    ids, item_ids, system_ids = (_ints(v) for v in row)
    order = np.argsort(ids, kind="stable")
    return ids[order], item_ids[order], system_ids[order]


def _joined(conn: Connection, expr, sep: str = ","):
    """``expr`` of every row joined into one text, in row order (NULLs left out)."""
    if conn.dialect.name == "postgresql":
        return func.string_agg(cast(expr, Text), literal_column(f"'{sep}'"))
    return func.group_concat(expr, literal_column(f"'{sep}'"))


def _stamp(conn: Connection, expr):
    """A timestamp column as text: SQLite's stored text as it is; on PostgreSQL microseconds since the
    epoch (EXTRACT gives an exact numeric there)."""
    if conn.dialect.name == "postgresql":
        return cast(extract("epoch", expr) * 1_000_000, BigInteger)
    return expr


def _ints(joined: str | None) -> np.ndarray:
    if not joined:
        return np.array([], np.int64)
    return np.fromstring(joined, dtype=np.int64, sep=",")


def _seconds(conn: Connection, hundredths: np.ndarray, other_ids: np.ndarray) -> np.ndarray:
    """Working times from whole hundredths; where -1, the time of judgement ``other_ids`` (in order) read exactly."""
    values = hundredths / 100.0
    if len(other_ids):
        exact = {}
        ids = np.unique(other_ids).tolist()
        for start in range(0, len(ids), 5000):
            exact.update(conn.execute(select(judgements.c.id, judgements.c.seconds)
                                      .where(judgements.c.id.in_(ids[start:start + 5000]))).all())
        values[hundredths < 0] = [exact[i] for i in other_ids.tolist()]
    return values


def _type_categories(masks: np.ndarray, untyped: str | None) -> tuple[np.ndarray, pd.Index]:
    """Codes and categories of the error_types column: each mask spelled out (codec.mask_types), the
    rows without one (mask -1) taking their texts from ``untyped`` in order; categories in order of first
    appearance, each text once."""
    row_codes, uniq = pd.factorize(masks)
    names = [mask_types(m) if m >= 0 else None for m in uniq.tolist()]
    missing = np.flatnonzero(uniq < 0)
    if not len(missing):  # every row has a mask (the usual case): distinct masks are distinct texts
        return row_codes.astype(np.int32), pd.Index(names)
    texts = _length_prefixed(untyped or "")
    rows = np.flatnonzero(row_codes == missing[0])
    if len(texts) != len(rows):
        raise AssertionError("the types of the judgement read do not line up")
    text_codes, text_uniq = pd.factorize(np.array(texts, dtype=object))
    row_codes = row_codes.copy()
    row_codes[rows] = len(names) + text_codes
    names += list(text_uniq)
    # The same text twice (a mask-less row whose text has a mask) is one category.
    first = {}
    merged = np.array([first.setdefault(t, len(first)) for t in names], dtype=np.int64)
    codes, order = pd.factorize(merged[row_codes])
    vocab = list(first)
    return codes.astype(np.int32), pd.Index([vocab[k] for k in order])


def _length_prefixed(joined: str) -> list[str]:
    out, pos = [], 0
    while pos < len(joined):
        colon = joined.index(":", pos)
        end = colon + 1 + int(joined[pos:colon])
        out.append(joined[colon + 1:end])
        pos = end
    return out


def _epoch_from_joined(joined: str | None, n: int, dialect: str) -> np.ndarray:
    """Save times read by :func:`_stamp` as float seconds since the epoch (what :func:`epoch_seconds` gives)."""
    if not joined:
        micros = np.array([], np.int64)
    elif dialect == "postgresql":
        micros = _ints(joined)
    else:
        micros = _sqlite_stamp_micros(joined, n)
        if micros is None:  # not all in the form SQLAlchemy writes: the general parser
            return epoch_seconds(joined.split(","))
    if len(micros) != n:
        raise AssertionError("the columns of the judgement read do not line up")
    # As epoch_seconds computes it: whole nanoseconds as a float, over 1e9; times outside what nanoseconds
    # hold in 64 bits (before 1677 or after 2262, an import's odd dates) from the microseconds instead.
    inside = np.abs(micros) < 9_000_000_000_000_000
    seconds = (np.where(inside, micros, 0) * 1000).astype(np.float64) / 1e9
    if not inside.all():
        seconds[~inside] = micros[~inside].astype(np.float64) / 1e6
    return seconds


_STAMP = "0000-00-00 00:00:00.000000,"


def _sqlite_stamp_micros(joined: str, n: int) -> np.ndarray | None:
    """Microseconds since the epoch of comma-joined 'YYYY-MM-DD HH:MM:SS.ffffff' texts (UTC, as SQLAlchemy stores
    DateTime on SQLite), parsed as fixed-width digits; None when any text has another form."""
    raw = (joined + ",").encode("utf-8")
    if len(raw) != n * len(_STAMP):
        return None
    a = np.frombuffer(raw, np.uint8).reshape(n, len(_STAMP))
    template = _STAMP.encode("ascii")
    cols = {}
    for k, ch in enumerate(template):
        if ch == ord("0"):
            cols[k] = a[:, k] - np.uint8(48)  # a wrapped byte (below '0') is above 9 too
            if (cols[k] > 9).any():
                return None
        elif (a[:, k] != ch).any():
            return None

    def num(lo, hi):
        out = np.zeros(n, np.int64)
        for k in range(lo, hi):
            out = out * 10 + cols[k]
        return out

    y, mo, day, h, mi, sec, us = num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 26)
    if ((mo < 1) | (mo > 12) | (day < 1) | (day > 31) | (h > 23) | (mi > 59) | (sec > 59)).any():
        return None
    # Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    y = y - (mo <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (mo + np.where(mo > 2, -3, 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    if (day > _month_days(y + (mo <= 2), mo)).any():
        return None
    return ((days * 86400 + h * 3600 + mi * 60 + sec) * 1_000_000) + us


def _month_days(year: np.ndarray, month: np.ndarray) -> np.ndarray:
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    return np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])[month] + (leap & (month == 2))


def epoch_seconds(values) -> np.ndarray:
    """Timestamps as the DB-API gives them (datetime objects, or ISO text on SQLite; without an offset
    they are UTC, as the store writes them) as float seconds since the epoch."""
    stamps = pd.to_datetime(pd.Series(list(values), dtype=object), utc=True, format="ISO8601")
    return ((stamps - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)).to_numpy(np.float64)


def _codes(ids: np.ndarray, ordered_ids: list[int]) -> np.ndarray:
    """Map database ids to positions in ``ordered_ids`` (vectorised)."""
    order = np.asarray(ordered_ids, dtype=np.int64)
    sorter = np.argsort(order)
    return sorter[np.searchsorted(order, ids, sorter=sorter)].astype(np.int32)


def _text_dtype():
    """The dtype pandas gives an index of names: ``str`` under pandas 3, ``object`` under pandas 2 (or with
    pandas 3's ``future.infer_string`` off). Asked at call time, so one process follows the option it runs with."""
    return pd.Index(["name"]).dtype


def _empty_frame(with_timing: bool = False) -> pd.DataFrame:
    # Empty categories of the same dtype a non-empty read gets, so a later merge can unite them.
    no_names = pd.Index([], dtype=_text_dtype())
    timing = {"seconds": np.array([], np.float64), "saved_at": np.array([], np.float64)} if with_timing else {}
    return pd.DataFrame({
        "caption_id": np.array([], np.int64), "item_id": np.array([], np.int64), "is_practice": np.array([], bool),
        "system": pd.Categorical([], categories=no_names), "user": pd.Categorical([], categories=no_names),
        "kind": pd.Categorical([], categories=_KINDS), "label": pd.Categorical([], categories=_LABELS),
        "error_types": pd.Categorical([], categories=no_names), "judgement_id": np.array([], np.int64), **timing})


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
        newest = newest_judgement_id(conn)
        practice = practice_marks(conn, pid)
    return (pid, newest, *practice)


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

    With ``snapshots`` (a frame_snapshots.SnapshotFolder) the frame also survives
    the process: every full read is written there in the background, and the
    first :meth:`get` of a new process starts from that file when it still
    matches the store (frame_snapshots.fingerprint), reading only what was saved
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
        from . import frame_snapshots
        path = self.snapshots.path(version[0], self.snapshot_kind)
        loaded = frame_snapshots.load(path)
        if loaded is None:
            return False
        frame, meta = loaded
        expected = _empty_frame(self.with_timing)
        if list(frame.columns) != list(expected.columns) or any(
                frame[c].dtype.kind != expected[c].dtype.kind for c in expected.columns
                if not isinstance(expected[c].dtype, pd.CategoricalDtype)):
            return False  # written by a version of the code that read other columns
        newest = int(meta.get("version", [0, -1])[1])
        if list(meta.get("version", [])) != [version[0], newest, *version[2:]] or newest > version[1]:
            return False
        mark = meta.get("fingerprint") or {}
        with self.store.read() as conn:
            now = frame_snapshots.fingerprint(conn, version[0], newest, known_users=mark.get("known_users", 0),
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
        from . import frame_snapshots

        def meta() -> dict:  # read in the writer's thread, off the page's path
            with self.store.read() as conn:
                mark = json_ready(frame_snapshots.fingerprint(conn, version[0], version[1]))
            return {"project": self.project, "version": list(version), "fingerprint": mark}
        self._writer = frame_snapshots.save_later(self.snapshots.path(version[0], self.snapshot_kind), frame, meta)

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
    from ..spans import decode_spans
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
                                 judgement_id=r.id, spans=decode_spans(r.spans)))
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
