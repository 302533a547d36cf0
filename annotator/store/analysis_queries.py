"""The bulk judgement read behind agreement, adjudication and error analysis.

:func:`judgement_frame` is the bulk read behind the agreement dashboard, the
adjudication queue, the error tables and their CLI commands. It is
built for a million rows: the fields of a row (caption, user, kind and label,
judgement id, error-type mask of migration 9) are packed into two or three
integers (annotator.store.packing), the database returns each as one
comma-joined text (group_concat on SQLite, string_agg on PostgreSQL), numpy
parses each in one call, and the DataFrame is built column by column with
categoricals for users, systems, kinds, labels and type strings; no Python
object is made per row. The small look-ups for one screen (a caption with
its image, its judgements with notes) are in store/caption_queries.py; the
frames built on this read, in annotator/frames/.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
from sqlalchemy import (Connection, Integer, Text, and_, case, cast, func, literal_column, select,
                        text, type_coerce)

from ..model import JudgementKind, Label
from ..taxonomy import taxonomy
from . import Store
from .codec import HUNDREDTHS_BELOW, mask_texts
from .packing import Field, id_widths, pack
from .packing import joined_ints as _ints
from .save_times import epoch_seconds, seconds_of_micros  # noqa: F401 (epoch_seconds: part of this read's API)
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
    adds ``seconds`` (float, the current revision's working time: its whole hundredths as stored, else read from
    the revision's row) and ``saved_at`` (float, its save time in seconds since the epoch, UTC, stored as
    microseconds): the team dashboard's figures. Rows come in no particular order (table order on SQLite).
    """
    kinds = [JudgementKind(k).value for k in kinds]
    with store.read() as conn:
        pid = project_id(conn, project)
        sys_rows, user_rows, practice_ids = _frame_names(conn, pid, system, users_)
        if not sys_rows or not user_rows:
            return empty_frame(with_timing)
        sys_ids, user_ids = [r.id for r in sys_rows], [r.id for r in user_rows]
        read = _read_judgements(store, conn, kinds, sys_ids, user_ids if users_ is not None else None,
                                include_skipped, changed_after, with_timing)
        if read is None:
            return empty_frame(with_timing)
        fields, cap = read
        # Rows whose types have no mask (written by another program) and working times that are not whole
        # hundredths: read apart, by judgement id (few or none).
        texts = _untyped_texts(conn, fields["judgement_id"][fields["mask"] == 0])
        seconds = None
        if with_timing:
            hundredths = fields["hundredths"] - 1
            seconds = _seconds(conn, hundredths, fields["judgement_id"][hundredths < 0])
    return _frame_of_read(fields, texts, cap, sys_rows, user_rows, practice_ids, seconds)


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


#: Bits of the working-time field: whole hundredths of a second below HUNDREDTHS_BELOW seconds, plus one.
_HUNDREDTHS_BITS = (HUNDREDTHS_BELOW * 100).bit_length()
#: The save-time field: ``saved_us`` (microseconds since the epoch) plus SAVED_OFFSET, in SAVED_BITS bits; it holds
#: every time a Python datetime can (years 1 to 9999), which is every time the store's writers can write.
SAVED_OFFSET = 1 << 58
SAVED_BITS = 59


def _judgement_fields(conn, caption: Field, with_timing: bool, widths: dict[str, int],
                      one_kind: bool = False) -> list[Field]:
    """The packed fields of the read (annotator.store.packing): ``caption``; the user id; kind and label as one
    code (4: adjudication; 2 inaccurate, 1 accurate, 0 skipped; the label alone when the read is of ``one_kind``,
    whose bit the caller adds); the judgement id; the type mask plus one (0: no
    mask in range, the text is read apart); with timing the working time in whole hundredths plus one (0: read
    the revision's time apart) and the save time (``saved_us`` + SAVED_OFFSET), both stored so (migration 21).

    Each expression is evaluated for every row, so on SQLite they take the forms its VM steps through fastest
    (a comparison as 0 or 1, a simple CASE on the label, the timing columns as they are)."""
    cj = current_judgements
    sqlite = conn.dialect.name == "sqlite"
    mask_bits = len(taxonomy().mask_ids)
    label = case({Label.INACCURATE.value: 2, Label.ACCURATE.value: 1}, value=cj.c.label, else_=0)
    if one_kind:
        code = label
    elif sqlite:
        code = type_coerce(cj.c.kind == JudgementKind.ADJUDICATION.value, Integer) * 4 + label
    else:
        code = case((cj.c.kind == JudgementKind.ADJUDICATION.value, 4), else_=0) + label
    # A mask outside the taxonomy's bits (another program's) would spill into the next field: its text is read.
    mask = case((and_(cj.c.type_mask >= 0, cj.c.type_mask < literal_column(str(1 << mask_bits))),
                 cj.c.type_mask + 1), else_=0)
    fields = [caption, Field("user_id", cj.c.user_id, widths["user"]), Field("code", code, 3),
              Field("judgement_id", cj.c.judgement_id, widths["judgement"]), Field("mask", mask, mask_bits + 1)]
    if with_timing:
        fields += [Field("hundredths", cj.c.hundredths, _HUNDREDTHS_BITS),
                   Field("saved", cj.c.saved_us + literal_column(str(SAVED_OFFSET)), SAVED_BITS)]
    return fields


def _read_judgements(store: Store, conn, kinds: list[str], sys_ids: list[int], user_ids: list[int] | None,
                     include_skipped: bool, changed_after: int | None, with_timing: bool):
    """The current judgements as int64 arrays by field (see :func:`_judgement_fields`; caption_id as it is, and
    item_id and system_id when only what changed after a judgement id is read) and the project's caption columns
    (None when only what changed is read). None when the project has no caption or nothing was read.

    The fields are packed into a few integers per row (annotator.store.packing), each word joined over every row
    into one text (group_concat / string_agg): the database formats them in C and numpy parses each in one call,
    instead of a Python tuple per row. Aggregates of one query step through the same rows in the same order, so
    the words line up."""
    cj = current_judgements
    widths = id_widths(conn)
    where = [] if set(kinds) == set(KINDS) else [cj.c.kind.in_(kinds)]
    if user_ids is not None:
        where.append(cj.c.user_id.in_(user_ids))
    if not include_skipped:
        where.append(cj.c.label.is_not(None))
    if changed_after is None:
        # Every judgement of the project: the project's captions in one read, then the current judgements
        # of their id range in table order, matched to them in numpy. "+ 0" keeps SQLite off the key index
        # (a look-up into the table for every row, half as fast again as walking the table).
        cap = _caption_columns(conn, sys_ids, widths)
        if cap is None:
            return None
        lo, hi = int(cap[0].min()), int(cap[0].max())
        source, extra = cj, []
        caption = Field("caption_id", cj.c.caption_id - lo, max(1, (hi - lo).bit_length()))
        where += [cj.c.caption_id + 0 >= lo, cj.c.caption_id + 0 <= hi]
    else:
        # What changed since a judgement id: "+ 0" keeps SQLite (which has no statistics) from walking the
        # project's captions through their system index, 0.5 s on a million rows; it then takes the
        # judgement-id index of migration 3 and answers in milliseconds. PostgreSQL plans either form well.
        cap, lo = None, 0
        source = cj.join(captions, captions.c.id == cj.c.caption_id)
        caption = Field("caption_id", cj.c.caption_id, widths["caption"])
        extra = [Field("item_id", captions.c.item_id, widths["item"]),
                 Field("system_id", captions.c.system_id, widths["system"])]
        where += [(captions.c.system_id + 0).in_(sys_ids), cj.c.judgement_id > int(changed_after)]
    packing = pack(_judgement_fields(conn, caption, with_timing, widths, one_kind=len(kinds) == 1) + extra)
    cols = [_joined(conn, w) for w in packing.columns(conn)]
    q = select(*cols).select_from(source).where(*where)
    parts = _table_parts(conn) if changed_after is None else []
    row = _read_in_parts(store, conn, q, parts) if parts else [r for chunk in _raw_chunks(conn, q) for r in chunk][0]
    if row[0] is None:
        return None
    words = [_ints(v) for v in row[:len(packing.words)]]
    if any(len(w) != len(words[0]) for w in words):
        raise AssertionError("the columns of the judgement read do not line up")
    fields = packing.unpack(words)
    fields["caption_id"] = fields["caption_id"] + lo
    if kinds == [JudgementKind.ADJUDICATION.value]:  # (a read of one kind: the code holds the label alone)
        fields["code"] = fields["code"] | 4
    return fields, cap


def _frame_of_read(fields: dict, texts: list[str], cap, sys_rows: list, user_rows: list,
                   practice_ids: np.ndarray, seconds: np.ndarray | None) -> pd.DataFrame:
    """The judgement frame from the fields read (with timing when ``seconds`` is given), its rows of captions
    outside the project or the chosen system left out; ``texts``: the types of the rows without a mask, in order."""
    with_timing = seconds is not None
    sys_ids, user_ids = [r.id for r in sys_rows], [r.id for r in user_rows]
    caption_id, code = fields["caption_id"], fields["code"]
    n = len(caption_id)
    if cap is None:
        item_id, system_code = fields["item_id"], positions(sys_ids, fields["system_id"])
        is_practice = np.isin(item_id, practice_ids) if len(practice_ids) else np.zeros(n, bool)
        keep = None
    else:
        # Each caption's item, practice mark and system found once, then taken for its judgements; rows of
        # captions outside the project (or the chosen system) share the id range only: left out.
        ids, cap_items, cap_systems = cap
        pos = positions(ids, caption_id)
        keep = pos >= 0
        if keep.all():
            keep = None
        else:
            pos = np.where(keep, pos, 0)
        cap_practice = np.isin(cap_items, practice_ids) if len(practice_ids) else np.zeros(len(ids), bool)
        item_id, is_practice, system_code = cap_items[pos], cap_practice[pos], positions(sys_ids, cap_systems)[pos]
    type_codes, vocab = _type_categories(fields["mask"] - 1, texts)
    timing = {}
    if with_timing:
        timing = {"seconds": seconds, "saved_at": seconds_of_micros(fields["saved"] - SAVED_OFFSET)}
    # copy=False: the arrays become the frame's columns as they are (nothing else holds them), without pandas
    # first copying the columns of one dtype into one block.
    frame = pd.DataFrame({
        "caption_id": caption_id,
        "item_id": item_id,
        "is_practice": is_practice,
        "system": pd.Categorical.from_codes(system_code, categories=[r.name for r in sys_rows]),
        "user": pd.Categorical.from_codes(positions(user_ids, fields["user_id"]),
                                          categories=[r.name for r in user_rows]),
        "kind": pd.Categorical.from_codes(((code >> 2) & 1).astype(np.int8), categories=KINDS),
        "label": pd.Categorical.from_codes(((code & 3) - 1).astype(np.int8), categories=_LABELS),
        "error_types": pd.Categorical.from_codes(type_codes, categories=vocab),
        "judgement_id": fields["judgement_id"],
        **timing,
    }, copy=False)
    if keep is not None:
        frame = frame[keep].reset_index(drop=True)
        frame["error_types"] = frame["error_types"].cat.remove_unused_categories()
    return frame


def positions(ordered_ids, values: np.ndarray) -> np.ndarray:
    """The position in ``ordered_ids`` (distinct ids, in any order) of each of ``values`` (int32; -1 where it is not
    there): one look-up in a table over the ids' range where that range is dense enough, else a sorted search."""
    ordered = np.asarray(ordered_ids, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    if not len(ordered) or not len(values):
        return np.full(len(values), -1, np.int32)
    low, high = int(ordered.min()), int(ordered.max())
    if high - low < 4 * (len(ordered) + len(values)) + 1_000_000:
        table = np.full(high - low + 2, -1, np.int32)  # the last slot: every value outside the range
        table[ordered - low] = np.arange(len(ordered), dtype=np.int32)
        offset = values - low
        return table[np.where((offset >= 0) & (offset <= high - low), offset, high - low + 1)]
    sorter = np.argsort(ordered, kind="stable")
    at = np.minimum(np.searchsorted(ordered, values, sorter=sorter), len(ordered) - 1)
    found = sorter[at]
    return np.where(ordered[found] == values, found, -1).astype(np.int32)


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
    return tuple(None if not any(r[i] for r in rows) else ",".join(r[i] for r in rows if r[i])
                 for i in range(len(rows[0])))


def _caption_columns(conn: Connection, sys_ids: list[int], widths: dict[str, int]):
    """(ids, their item ids, their system ids) of the captions of the given systems; None when there are none."""
    # "+ 0": walking the table is twice as fast on SQLite as its system index plus a look-up per caption.
    packing = pack([Field("id", captions.c.id, widths["caption"]), Field("item_id", captions.c.item_id, widths["item"]),
                    Field("system_id", captions.c.system_id, widths["system"])])
    q = select(*[_joined(conn, w) for w in packing.columns(conn)]).where((captions.c.system_id + 0).in_(sys_ids))
    row = [r for chunk in _raw_chunks(conn, q) for r in chunk][0]
    if row[0] is None:
        return None
    fields = packing.unpack([_ints(v) for v in row])
    return fields["id"], fields["item_id"], fields["system_id"]


def _joined(conn: Connection, expr, sep: str = ","):
    """``expr`` of every row joined into one text, in row order (NULLs left out)."""
    if conn.dialect.name == "postgresql":
        return func.string_agg(cast(expr, Text), literal_column(f"'{sep}'"))
    return func.group_concat(expr, literal_column(f"'{sep}'"))


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


def _type_categories(masks: np.ndarray, texts: list[str]) -> tuple[np.ndarray, pd.Index]:
    """Codes and categories of the error_types column: each mask spelled out (codec.mask_types), the
    rows without one (mask -1) taking their texts from ``texts`` in order; categories in order of first
    appearance, each text once."""
    row_codes, uniq = pd.factorize(masks)
    masked = uniq[uniq >= 0].tolist()
    spelled = dict(zip(masked, mask_texts(masked)))
    names = [spelled.get(m) for m in uniq.tolist()]
    missing = np.flatnonzero(uniq < 0)
    if not len(missing):  # every row has a mask (the usual case): distinct masks are distinct texts
        return row_codes.astype(np.int32), pd.Index(names)
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


def _untyped_texts(conn: Connection, judgement_ids: np.ndarray) -> list[str]:
    """The stored type texts of the current judgements ``judgement_ids`` (in that order): those whose mask the read
    could not use. A judgement replaced since the read (its row now holds a newer one) gives its revision's text."""
    if not len(judgement_ids):
        return []
    cj, found = current_judgements, {}
    ids = np.unique(judgement_ids).tolist()
    for start in range(0, len(ids), 5000):
        chunk = ids[start:start + 5000]
        found.update(conn.execute(select(cj.c.judgement_id, cj.c.error_types).where(cj.c.judgement_id.in_(chunk))).all())
        gone = [i for i in chunk if i not in found]
        if gone:
            found.update(conn.execute(select(judgements.c.id, judgements.c.error_types)
                                      .where(judgements.c.id.in_(gone))).all())
    return [found[i] or "" for i in judgement_ids.tolist()]


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
