"""Save times of current judgements: stored as whole microseconds since the epoch, UTC (``saved_us``, migration
21), so the dashboards' bulk read (annotator.store.analysis_queries) gets them as integers; read as float seconds
since the epoch. Migration 21 converted the timestamps stored before: SQLite's texts parsed in numpy a two-digit
group at a time, the general parser for anything else."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def epoch_micros(at: datetime) -> int:
    """What ``saved_us`` holds for a save at ``at`` (a time without an offset is UTC, as the store keeps times)."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return (at - _EPOCH) // _MICROSECOND


def seconds_of_micros(micros: np.ndarray) -> np.ndarray:
    """Save times in microseconds since the epoch as float seconds (the ``saved_at`` column of the team read):
    whole nanoseconds as a float, over 1e9, as pandas turns a timestamp into seconds; times outside what
    nanoseconds hold in 64 bits (before 1677 or after 2262, an import's odd dates) from the microseconds instead."""
    micros = np.asarray(micros, np.int64)
    inside = np.abs(micros) < 9_000_000_000_000_000
    seconds = (np.where(inside, micros, 0) * 1000).astype(np.float64) / 1e9
    if not inside.all():
        seconds[~inside] = micros[~inside].astype(np.float64) / 1e6
    return seconds


#: What :func:`stored_micros` gives for a value that is no time at all.
NO_TIME = -(1 << 63)


def stored_micros(values: list) -> np.ndarray:
    """Microseconds since the epoch of timestamps as a store held them before migration 21: on SQLite the texts
    SQLAlchemy writes ('YYYY-MM-DD HH:MM:SS.ffffff', UTC), parsed together; any other text (ISO 8601) or datetime
    one by one (a time without an offset is UTC). :data:`NO_TIME` where a value is no time at all."""
    n = len(values)
    if n and all(isinstance(v, str) for v in values):
        micros = _sqlite_stamp_micros(",".join(values), n)
        if micros is not None:
            return micros
    return np.array([_one_micros(v) for v in values], np.int64)


def _one_micros(value) -> int:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return NO_TIME
    if not isinstance(value, datetime):
        return NO_TIME
    try:
        return epoch_micros(value)
    except OverflowError:  # at the edge of the calendar, moved by its offset beyond it
        return NO_TIME


_STAMP = "0000-00-00 00:00:00.000000,"
# The two-digit groups of a stamp (their first byte's offset) and its other characters, by offset.
_PAIRS = {"century": 0, "year": 2, "month": 5, "day": 8, "hour": 11, "minute": 14, "second": 17, "us_hi": 20,
          "us_mid": 22, "us_lo": 24}
_SEPARATORS = {k: ord(ch) for k, ch in enumerate(_STAMP) if ch != "0"}


@functools.cache
def _pair_values() -> np.ndarray:
    """Two ASCII digits read as one little-endian 16-bit number → their value 0-99; 255 for anything else."""
    table = np.full(1 << 16, 255, np.uint8)
    for tens in range(10):
        for ones in range(10):
            table[(48 + tens) | ((48 + ones) << 8)] = 10 * tens + ones
    return table


def _sqlite_stamp_micros(joined: str, n: int) -> np.ndarray | None:
    """Microseconds since the epoch of comma-joined 'YYYY-MM-DD HH:MM:SS.ffffff' texts (UTC, as SQLAlchemy stores
    DateTime on SQLite), parsed as fixed-width digits; None when any text has another form.

    Each two-digit group is read from every row at once as a 16-bit number through a strided view of the bytes
    and turned into its value by a table of the 65,536 byte pairs (non-digits marked), so a million stamps take
    a few dozen array operations on small integers."""
    raw = (joined + ",").encode("utf-8")
    width = len(_STAMP)
    if len(raw) != n * width:
        return None
    buffer = np.frombuffer(raw, np.uint8)
    for offset, ch in _SEPARATORS.items():
        if (buffer[offset::width] != ch).any():
            return None
    table = _pair_values()
    pairs = {}
    for name, offset in _PAIRS.items():
        view = np.ndarray((n,), dtype="<u2", buffer=raw, offset=offset, strides=(width,))
        pairs[name] = table[view]
        if pairs[name].max(initial=0) > 99:
            return None
    y = pairs["century"].astype(np.int32) * 100 + pairs["year"]
    mo, day = pairs["month"].astype(np.int32), pairs["day"].astype(np.int32)
    h, mi, sec = pairs["hour"], pairs["minute"], pairs["second"]
    if ((mo < 1) | (mo > 12) | (day < 1) | (day > 31) | (h > 23) | (mi > 59) | (sec > 59)).any():
        return None
    late = day > 28  # (the only days a month may lack)
    if late.any() and (day[late] > _month_days(y[late], mo[late])).any():
        return None
    # Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    y = y - (mo <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (mo + np.where(mo > 2, -3, 9)) + 2) // 5 + day - 1
    days = (era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468).astype(np.int64)
    clock = h.astype(np.int32) * 3600 + mi.astype(np.int32) * 60 + sec
    us = (pairs["us_hi"].astype(np.int32) * 100 + pairs["us_mid"]) * 100 + pairs["us_lo"]
    return (days * 86400 + clock) * 1_000_000 + us


def _month_days(year: np.ndarray, month: np.ndarray) -> np.ndarray:
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    return np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], np.int32)[month] + (leap & (month == 2))


def epoch_seconds(values) -> np.ndarray:
    """Timestamps as the DB-API gives them (datetime objects, or ISO text on SQLite; without an offset
    they are UTC, as the store writes them) as float seconds since the epoch."""
    stamps = pd.to_datetime(pd.Series(list(values), dtype=object), utc=True, format="ISO8601")
    return ((stamps - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)).to_numpy(np.float64)
