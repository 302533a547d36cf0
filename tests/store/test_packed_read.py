"""The dashboards' bulk reads send each row's fields packed into a few integers (annotator.store.packing): the
packing gives every value back at any width, the reads stay exact when ids are large enough to need more words,
and the database computes two values per judgement row for the dashboards' frame (three with the Team page's
working and save times) and one per assignment, where it computed one per field before (five and seven): that
per-row work is what a cold dashboard's read of a million judgements costs."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import event, select, text

from annotator.model import Caption, Item, Project, Role
from annotator.store.analysis_queries import judgement_frame
from annotator.store.judgements import save_judgement
from annotator.store.packing import WORD_BITS, Field, pack
from annotator.store.projects import write_project
from annotator.store.schema import captions
from annotator.store.team_queries import read_assignment_frame
from annotator.store.users import user_id
from tests.store.test_judgement_frame_read import _build, _expected, _plain


def test_pack_gives_every_value_back_at_every_width():
    rng = np.random.default_rng(3)
    widths = [1, 3, 12, 16, 21, 24, 25, 31, 32, 40, 62]
    fields = [Field(f"f{i}", None, bits) for i, bits in enumerate(widths)]
    packing = pack(fields)
    assert sum(len(w) for w in packing.words) == len(fields)
    assert all(sum(bits for _, _, bits in word) <= WORD_BITS for word in packing.words)
    assert len(packing.words) == 5  # 267 bits: first fit, widest first, needs five words of 62
    n = 1000
    values = {f.name: np.concatenate([[0, (1 << f.bits) - 1], rng.integers(0, 1 << f.bits, n - 2, dtype=np.uint64)
                                      .astype(np.int64)]) for f in fields}
    words = []
    for word in packing.words:
        total = np.zeros(n, np.int64)
        for name, shift, _ in word:
            total += values[name] << shift
        assert (total >= 0).all() and (total < (1 << WORD_BITS)).all()
        words.append(total)
    back = packing.unpack(words)
    for f in fields:
        assert np.array_equal(back[f.name], values[f.name]), f.name
    with pytest.raises(ValueError, match="does not fit"):
        pack([Field("huge", None, WORD_BITS + 1)])


@pytest.mark.parametrize("options", [dict(kinds=("annotation", "adjudication")),
                                     dict(include_skipped=True, with_timing=True)], ids=["dashboard", "team"])
def test_large_ids_widen_the_fields_and_the_read_stays_exact(store, options):
    """Captions, users and judgements with ids near 2**31 (the largest a 32-bit key holds on PostgreSQL) need wider
    fields, so the words are laid out again; the frame still holds exactly what the tables hold."""
    big = 2**31 - 5000
    _ids_from(store, big)
    _build(store)
    for project in ("p", "q"):
        got = judgement_frame(store, project, **options)
        pd.testing.assert_frame_equal(_plain(got), _plain(_expected(store, project, **options)))
        assert min(got["caption_id"].min(), got["judgement_id"].min()) > big and len(got)


def _ids_from(store, big: int) -> None:
    """Make the next caption, user and judgement ids start above ``big``: rows of a project of their own with such
    ids (SQLite hands out the largest id plus one), and PostgreSQL's sequences moved there."""
    from datetime import datetime, timezone

    from annotator.store.schema import judgements, users
    with store.transaction() as conn:
        write_project(conn, Project("z", items=[Item(key="z0", captions=[Caption("z", "zz")])]))
        uid = user_id(conn, "zz", create_role=Role.ANNOTATOR)
        conn.execute(users.update().where(users.c.id == uid).values(id=big))
        cid = conn.execute(select(captions.c.id).order_by(captions.c.id.desc())).scalars().first()
        conn.execute(captions.update().where(captions.c.id == cid).values(id=big))
        conn.execute(judgements.insert().values(id=big, caption_id=big, user_id=big, kind="annotation", revision=1,
                                                label="accurate", error_types="", note="", seconds=0.0,
                                                created_at=datetime.now(timezone.utc)))
        if not store.is_sqlite:
            for table in ("captions", "judgements", "users"):
                conn.execute(text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {big})"))


def _aggregates_per_statement(store, read) -> list[int]:
    """How many values per row each statement ``read`` runs over current_judgements or assignments computes (its
    group_concat calls), caught by SQLite's trace of the statements it runs."""
    seen: list[str] = []

    def trace(dbapi_conn, _record):
        dbapi_conn.set_trace_callback(seen.append)

    event.listen(store.engine, "connect", trace)
    store.engine.dispose()  # new connections, each traced
    try:
        read()
    finally:
        event.remove(store.engine, "connect", trace)
        store.engine.dispose()
    bulk = [s for s in seen if re.search(r"FROM (current_judgements|assignments)\b", s) and "group_concat" in s]
    return [s.count("group_concat(") for s in bulk]


def test_the_database_computes_two_values_per_judgement_row(sqlite_store):
    """Five judgements of each of 40 captions would be the same at a million: the count is per row. The read
    formerly asked for caption, user-kind-label, judgement id, type mask and the untyped text (five values per
    row; seven with the Team page's timing), each an aggregate step of the database for every row."""
    store = sqlite_store
    with store.transaction() as conn:
        write_project(conn, Project("p", items=[Item(key=f"i{i}", captions=[Caption("a", f"cap {i}"),
                                                                              Caption("b", f"other {i}")])
                                                for i in range(20)]))
        uids = [user_id(conn, f"u{k}", create_role=Role.ANNOTATOR) for k in range(5)]
        ids = conn.execute(select(captions.c.id)).scalars().all()
    for n, cid in enumerate(ids):
        for uid in uids:
            save_judgement(store, cid, uid, label="inaccurate" if n % 3 else "accurate",
                           error_types=("age",) if n % 3 else (), seconds=1.5 + n)
    dashboard = _aggregates_per_statement(store, lambda: judgement_frame(store, "p", kinds=("annotation", "adjudication")))
    team = _aggregates_per_statement(store, lambda: judgement_frame(store, "p", include_skipped=True, with_timing=True))
    assert dashboard == [2] and team == [3]  # (2 packed words; with timing the times in one more word, the stamps)
    assert _aggregates_per_statement(store, lambda: read_assignment_frame(store, "p")) == [1]
