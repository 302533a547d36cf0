"""Save times of current judgements stored as whole microseconds since the epoch and working times as whole
hundredths (migration 21), on SQLite and PostgreSQL: a store holding them as timestamps and floats (the form
before) is converted to exactly the times the dashboards read from those, and the team read gives the same frame
before and after."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import Float, inspect, literal, select, text

from annotator.model import Role
from annotator.store import schema
from annotator.store.analysis_queries import epoch_seconds, judgement_frame
from annotator.store.codec import stored_hundredths, working_hundredths
from annotator.store.judgements import save_judgement
from annotator.store.migrations import MIGRATIONS, applied_versions
from annotator.store.save_times import NO_TIME, epoch_micros, seconds_of_micros, stored_micros
from annotator.store.users import user_id
from tests.apptest_helpers import seed_project

UTC = timezone.utc
# Microseconds that a float of seconds would not keep, a leap day, a year-end, the first year a datetime holds
# (an import's odd date) and one before 1970.
TIMES = [datetime(2026, 2, 28, 23, 59, 59, 999_999, tzinfo=UTC), datetime(2024, 2, 29, 12, 0, 0, 1, tzinfo=UTC),
         datetime(2025, 12, 31, 23, 59, 59, 123_457, tzinfo=UTC), datetime(1, 1, 1, 0, 0, 0, 7, tzinfo=UTC),
         datetime(1969, 7, 20, 20, 17, 40, 500_000, tzinfo=UTC), datetime(2026, 11, 29, 8, 30, tzinfo=UTC)]
# Working times: whole hundredths, and ones that are not (read from the revision's row).
SECONDS = [12.34, 0.1 + 0.2, 7.125, 1e-7, 1234.5678901234, 86_400.0, 0.29, 0.0]


def test_a_working_time_is_kept_as_whole_hundredths_as_the_read_tested_it(store):
    """The writers' hundredths (codec.working_hundredths) are what the read's test per row gave, on both
    databases; and they give the time back exactly."""
    values = SECONDS + [-0.0, 99_999.99, 100_000.0, 5e-3, 0.015, 2.675, 1.005, 1e308, -5.0]
    with store.read() as conn:
        stored = [conn.execute(select(stored_hundredths(literal(v, Float), store.is_sqlite))).scalar() for v in values]
    assert stored == [working_hundredths(v) for v in values]
    assert [working_hundredths(v) for v in (12.34, 0.1 + 0.2, 7.125, 0.29, 0.0, None)] == [1235, 0, 0, 30, 1, 0]
    for v in values:
        if working_hundredths(v):
            assert (working_hundredths(v) - 1) / 100.0 == v


def test_micros_are_what_the_timestamps_read_as():
    for at in TIMES:
        assert epoch_micros(at) == (at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert epoch_micros(datetime(2026, 3, 1, 10)) == epoch_micros(datetime(2026, 3, 1, 10, tzinfo=UTC))
    assert epoch_micros(datetime(2026, 3, 1, 11, tzinfo=timezone(timedelta(hours=1)))) == \
        epoch_micros(datetime(2026, 3, 1, 10, tzinfo=UTC))
    # SQLite's texts as SQLAlchemy writes them, parsed together; other forms one by one; no time at all marked.
    texts = [at.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds") for at in TIMES]
    assert stored_micros(texts).tolist() == [epoch_micros(at) for at in TIMES]
    odd = texts[:2] + ["2026-03-01T11:00:00+01:00", "2026-03-01 10:00:00", "yesterday", ""]
    assert stored_micros(odd).tolist() == [epoch_micros(TIMES[0]), epoch_micros(TIMES[1]),
                                           epoch_micros(datetime(2026, 3, 1, 10, tzinfo=UTC)),
                                           epoch_micros(datetime(2026, 3, 1, 10, tzinfo=UTC)), NO_TIME, NO_TIME]
    assert stored_micros([TIMES[2], TIMES[2].replace(tzinfo=None)]).tolist() == [epoch_micros(TIMES[2])] * 2
    # As float seconds: as pandas turns each timestamp into seconds (the year-1 one, beyond nanoseconds, from its
    # microseconds).
    seconds = seconds_of_micros(np.array([epoch_micros(at) for at in TIMES]))
    inside = [at for at in TIMES if at.year > 1677]
    assert seconds[[at.year > 1677 for at in TIMES]].tolist() == epoch_seconds(inside).tolist()
    assert seconds[3] == epoch_micros(TIMES[3]) / 1e6


@pytest.fixture
def saved(store):
    """Two annotators' judgements of a small project at the times of TIMES (one a skip, one saved twice)."""
    caps = seed_project(store, "p", n_items=len(TIMES))
    with store.transaction() as conn:
        a = user_id(conn, "ann_a", create_role=Role.ANNOTATOR)
        b = user_id(conn, "ann_b", create_role=Role.ANNOTATOR)
    for k, at in enumerate(TIMES):
        save_judgement(store, caps[k], (a, b)[k % 2], label=(None, "accurate", "inaccurate")[k % 3],
                       error_types=("age",) if k % 3 == 2 else (), seconds=SECONDS[k], at=at)
    save_judgement(store, caps[0], a, label="accurate", seconds=2.0, at=TIMES[1] + timedelta(microseconds=3))
    return store


def _as_before_migration_21(store, odd: dict[int, str] | None = None) -> None:
    """Put the store back in the form before migration 21: each current judgement's save time a timestamp
    (``updated_at``) and its working time a float (``seconds``), written as the store wrote them (its revision's
    ``created_at`` and ``seconds`` hold the same values in the same types); ``odd``: judgement id -> a text another
    program wrote in ``updated_at`` instead (SQLite)."""
    sqlite = store.is_sqlite
    with store.transaction() as conn:
        kind = "DATETIME NOT NULL DEFAULT ''" if sqlite else "TIMESTAMP WITH TIME ZONE"
        conn.execute(text(f"ALTER TABLE current_judgements ADD COLUMN updated_at {kind}"))
        conn.execute(text(f"ALTER TABLE current_judgements ADD COLUMN seconds {'REAL' if sqlite else 'DOUBLE PRECISION'}"))
        for column, source in (("updated_at", "created_at"), ("seconds", "seconds")):
            conn.execute(text(f"UPDATE current_judgements SET {column} = (SELECT {source} FROM judgements "
                              "WHERE judgements.id = current_judgements.judgement_id)"))
        if not sqlite:
            conn.execute(text("ALTER TABLE current_judgements ALTER COLUMN updated_at SET NOT NULL"))
        for jid, value in (odd or {}).items():
            conn.execute(text("UPDATE current_judgements SET updated_at = :v WHERE judgement_id = :j"),
                         {"v": value, "j": jid})
        conn.execute(text("ALTER TABLE current_judgements DROP COLUMN saved_us"))
        conn.execute(text("ALTER TABLE current_judgements DROP COLUMN hundredths"))
        conn.execute(schema.schema_migrations.delete().where(schema.schema_migrations.c.version == 21))


def _stored_times(store) -> dict[int, float]:
    """Judgement id -> the save time as the dashboards read it before migration 21 (the timestamp, through pandas)."""
    with store.read() as conn:
        rows = conn.execute(text("SELECT judgement_id, updated_at FROM current_judgements")).all()
    out = {}
    for jid, value in rows:
        try:
            out[jid] = epoch_seconds([value])[0]
        except (ValueError, OverflowError):  # year 1: beyond pandas' nanoseconds
            continue
    return out


def _team_read(store) -> pd.DataFrame:
    frame = judgement_frame(store, "p", include_skipped=True, with_timing=True)
    return frame.sort_values("judgement_id").reset_index(drop=True)


def test_a_store_holding_timestamps_is_converted_to_the_same_times(saved):
    store = saved
    before = _team_read(store)
    assert len(before) == len(TIMES)  # (one key saved twice, one revision replaced)
    _as_before_migration_21(store)
    stored = _stored_times(store)
    assert store.migrate() == [21]
    with store.read() as conn:
        assert applied_versions(conn) == [v for v, _, _ in MIGRATIONS]
        columns = {c["name"] for c in inspect(conn).get_columns("current_judgements")}
        cj = schema.current_judgements
        micros = dict(conn.execute(select(cj.c.judgement_id, cj.c.saved_us)).all())
        hundredths = sorted(conn.execute(select(cj.c.hundredths)).scalars())
    # updated_at and seconds gone, saved_us and hundredths there
    assert columns == {c.name for c in schema.current_judgements.columns}
    assert hundredths == sorted(working_hundredths(s) for s in SECONDS[1:len(TIMES)] + [2.0])
    after = _team_read(store)
    pd.testing.assert_frame_equal(after, before)
    # The times read after are those the timestamps gave (bit for bit; the year-1 one beyond pandas' reach).
    assert len(stored) == len(TIMES) - 1
    for jid, at in zip(after["judgement_id"].tolist(), after["saved_at"].tolist()):
        assert at == stored[jid] if jid in stored else at == epoch_micros(TIMES[3]) / 1e6
    assert sorted(micros.values()) == sorted([epoch_micros(t) for t in TIMES[1:]]
                                             + [epoch_micros(TIMES[1] + timedelta(microseconds=3))])
    # A save after the migration stores and reads its time.
    with store.read() as conn:
        a = user_id(conn, "ann_a")
        cid = int(after["caption_id"].iloc[-1])
    at = datetime(2026, 11, 30, 1, 2, 3, 456_789, tzinfo=UTC)
    save_judgement(store, cid, a, label="accurate", seconds=9.0, at=at)
    again = judgement_frame(store, "p", include_skipped=True, with_timing=True)
    assert epoch_seconds([at])[0] in again["saved_at"].tolist()


def test_texts_another_program_wrote_are_read_as_times_or_take_their_revisions(sqlite_store):
    store = sqlite_store
    caps = seed_project(store, "p", n_items=3)
    with store.transaction() as conn:
        a = user_id(conn, "ann_a", create_role=Role.ANNOTATOR)
    for k in range(3):
        save_judgement(store, caps[k], a, label="accurate", seconds=1.0, at=TIMES[k])
    with store.read() as conn:
        jids = [r[0] for r in conn.execute(text("SELECT judgement_id FROM current_judgements ORDER BY judgement_id"))]
    # ISO 8601 with an offset, without microseconds, and a text that is no time (its revision's time is taken).
    _as_before_migration_21(store, {jids[0]: "2026-03-01T11:00:00.25+01:00", jids[1]: "2026-03-01 10:00:00",
                                    jids[2]: "not a time"})
    assert store.migrate() == [21]
    got = dict(zip(*[judgement_frame(store, "p", with_timing=True)[c].tolist() for c in ("judgement_id", "saved_at")]))
    assert got == dict(zip(jids, epoch_seconds([datetime(2026, 3, 1, 10, 0, 0, 250_000, tzinfo=UTC),
                                                 datetime(2026, 3, 1, 10, tzinfo=UTC), TIMES[2]])))
