"""The bulk judgement read behind agreement, adjudication and error analysis.

:func:`judgement_frame` is the bulk read behind the agreement dashboard, the
adjudication queue, the error tables and their CLI commands. It is
built for a million rows: the database returns each column of integer
codes (caption, user/kind/label, judgement id, error-type mask of migration
9) as one comma-joined text (group_concat on SQLite, string_agg on
PostgreSQL), numpy parses each in one call, and the DataFrame is built
column by column with categoricals for users, systems, kinds, labels and
type strings; no Python object is made per row. The small look-ups for one
screen (a caption with its image, its judgements with notes) are in
store/caption_queries.py; the frames built on this read, in annotator/frames/.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
from sqlalchemy import BigInteger, Connection, Text, and_, case, cast, extract, func, literal_column, select, text

from ..model import JudgementKind, Label
from . import Store
from .codec import mask_types
from .projects import project_id
from .schema import captions, current_judgements, items, judgements, systems, users

#: Columns of :func:`judgement_frame` (a superset of what annotator.agreement needs).
FRAME_COLUMNS = ["caption_id", "item_id", "is_practice", "system", "user", "kind", "label", "error_types", "judgement_id"]

log = logging.getLogger(__name__)

KINDS = [k.value for k in JudgementKind]
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
    :class:`annotator.frames.live.LiveJudgementFrame` reads to bring a frame up to date). ``with_timing``
    adds ``seconds`` (float, the current revision's working time) and ``saved_at``
    (float, its save time in seconds since the epoch, UTC), read through the
    revision's row (the team dashboard's figures). Rows come in no particular order (table order on SQLite).
    """
    kinds = [JudgementKind(k).value for k in kinds]
    with store.read() as conn:
        pid = project_id(conn, project)
        sys_rows, user_rows, practice_ids = _frame_names(conn, pid, system, users_)
        if not sys_rows or not user_rows:
            return empty_frame(with_timing)
        sys_ids, user_ids = [r.id for r in sys_rows], [r.id for r in user_rows]
        read = _read_joined_judgements(store, conn, kinds, sys_ids, user_ids if users_ is not None else None,
                                       include_skipped, changed_after, with_timing)
        if read is None:
            return empty_frame(with_timing)
        row, cap = read
        dialect = conn.dialect.name
        seconds = None
        if with_timing and row[0] is not None:
            # Revisions never change, so their times can be read in a statement of their own.
            judgement_ids, hundredths = _ints(row[2]), _ints(row[4])
            seconds = _seconds(conn, hundredths, judgement_ids[hundredths < 0])
    if row[0] is None:
        return empty_frame(with_timing)
    return _frame_of_joined(row, cap, sys_rows, user_rows, practice_ids, seconds, dialect)


def _frame_names(conn, pid: int, system: str | None, users_: list[str] | None) -> tuple[list, list, np.ndarray]:
    """The project's systems and the users (id, name), narrowed to ``system`` and ``users_`` where given, and the
    ids of its practice items."""
    sys_rows = conn.execute(select(systems.c.id, systems.c.name).where(systems.c.project_id == pid)
                            .order_by(systems.c.id)).all()
    if system is not None:
        sys_rows = [r for r in sys_rows if r.name == system]
    user_rows = conn.execute(select(users.c.id, users.c.name).order_by(users.c.name)).all()
    if users_ is not None:
        user_rows = [r for r in user_rows if r.name in set(users_)]
    practice_ids = np.array([r[0] for r in conn.execute(
        select(items.c.id).where(items.c.project_id == pid, items.c.is_practice.is_(True)))], dtype=np.int64)
    return sys_rows, user_rows, practice_ids


def _judgement_columns(conn, with_timing: bool) -> tuple[list, object]:
    """The columns of the joined read: caption id; user, kind and label packed in one integer; judgement id; type
    mask; with timing the working time in hundredths (-1: read it from the revision) and the save time. And the
    text of the types of rows without a mask."""
    cj = current_judgements
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
    return cols, untyped


def _read_joined_judgements(store: Store, conn, kinds: list[str], sys_ids: list[int], user_ids: list[int] | None,
                            include_skipped: bool, changed_after: int | None, with_timing: bool):
    """The current judgements as one row of comma-joined numbers per column, and the project's caption columns
    (None when only what changed after a judgement id is read: the row then ends with item and system ids).
    None when the project has no caption.

    One row of comma-joined numbers per column (group_concat / string_agg): the database formats a
    million integers in C and numpy parses each column in one call, instead of a Python tuple per row.
    Aggregates of one query step through the same rows in the same order, so the columns line up."""
    cj = current_judgements
    cols, untyped = _judgement_columns(conn, with_timing)
    where = [cj.c.kind.in_(kinds)]
    if user_ids is not None:
        where.append(cj.c.user_id.in_(user_ids))
    if not include_skipped:
        where.append(cj.c.label.is_not(None))
    if changed_after is None:
        # Every judgement of the project: the project's captions in one read, then the current judgements
        # of their id range in table order, matched to them in numpy. "+ 0" keeps SQLite off the key index
        # (a look-up into the table for every row, half as fast again as walking the table).
        cap = _caption_columns(conn, sys_ids)
        if cap is None:
            return None
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
        return _read_in_parts(store, conn, q, parts), cap
    return [r for chunk in _raw_chunks(conn, q) for r in chunk][0], cap


def _frame_of_joined(row, cap, sys_rows: list, user_rows: list, practice_ids: np.ndarray,
                     seconds: np.ndarray | None, dialect: str) -> pd.DataFrame:
    """The judgement frame from the joined row (with timing when ``seconds`` is given), its rows of captions
    outside the project or the chosen system left out."""
    with_timing = seconds is not None
    sys_ids, user_ids = [r.id for r in sys_rows], [r.id for r in user_rows]
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
        "kind": pd.Categorical.from_codes(((packed >> 2) & 1).astype(np.int8), categories=KINDS),
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


def text_dtype():
    """The dtype pandas gives an index of names: ``str`` under pandas 3, ``object`` under pandas 2 (or with
    pandas 3's ``future.infer_string`` off). Asked at call time, so one process follows the option it runs with."""
    return pd.Index(["name"]).dtype


def empty_frame(with_timing: bool = False) -> pd.DataFrame:
    # Empty categories of the same dtype a non-empty read gets, so a later merge can unite them.
    no_names = pd.Index([], dtype=text_dtype())
    timing = {"seconds": np.array([], np.float64), "saved_at": np.array([], np.float64)} if with_timing else {}
    return pd.DataFrame({
        "caption_id": np.array([], np.int64), "item_id": np.array([], np.int64), "is_practice": np.array([], bool),
        "system": pd.Categorical([], categories=no_names), "user": pd.Categorical([], categories=no_names),
        "kind": pd.Categorical([], categories=KINDS), "label": pd.Categorical([], categories=_LABELS),
        "error_types": pd.Categorical([], categories=no_names), "judgement_id": np.array([], np.int64), **timing})


def annotators_in(frame: pd.DataFrame) -> list[str]:
    """Sorted names of the users who have annotations (not only adjudications) in a judgement frame;
    read from the categorical codes, without copying the frame."""
    users_ = frame["user"].array
    codes = np.asarray(users_.codes)[np.asarray(frame["kind"].array.codes) == KINDS.index(JudgementKind.ANNOTATION.value)]
    return sorted(str(u) for u in users_.categories[np.unique(codes[codes >= 0])])
