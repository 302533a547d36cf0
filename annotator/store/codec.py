"""Encoding of small structured values stored in text columns, and the integer forms stored beside them for the
dashboards' bulk read (type masks, working times in whole hundredths)."""

from __future__ import annotations

import json

from sqlalchemy import BigInteger, Integer, and_, case, cast, func, literal_column

from ..model import Mention
from ..taxonomy import taxonomy


def encode_mentions(mentions) -> str | None:
    """Mentions → compact JSON (None when there are none)."""
    if not mentions:
        return None
    return json.dumps([[m.start, m.end, list(m.box_ids), m.phrase_type] for m in mentions], separators=(",", ":"))


def decode_mentions(raw: str | None) -> tuple[Mention, ...]:
    """JSON from :func:`encode_mentions` → mentions."""
    if not raw:
        return ()
    return tuple(Mention(int(s), int(e), tuple(b), t) for s, e, b, t in json.loads(raw))


def encode_types(type_ids) -> str:
    """Error type ids → the space-separated form stored in the database."""
    return " ".join(type_ids)


def decode_types(raw: str | None) -> tuple[str, ...]:
    """Stored form → tuple of error type ids."""
    return tuple(raw.split()) if raw else ()


#: Working times below this many seconds are kept as whole hundredths too (:func:`working_hundredths`).
HUNDREDTHS_BELOW = 100_000


def working_hundredths(seconds) -> int:
    """What ``current_judgements.hundredths`` holds for a working time (migration 21): its whole hundredths plus one
    when ``k / 100.0`` gives the time back exactly and it lies from 0 to below HUNDREDTHS_BELOW (the pages round
    times to hundredths), else 0 (the read then takes the time from the revision's row)."""
    if seconds is None:
        return 0
    value = float(seconds)
    if not 0 <= value < HUNDREDTHS_BELOW:  # (NaN too)
        return 0
    k = int(value * 100 + 0.5)
    return k + 1 if k / 100.0 == value else 0


def stored_hundredths(seconds, sqlite: bool):
    """A working time (an SQL expression) as whole hundredths plus one, 0 where it is not one: times are mostly
    whole hundredths (the pages round them), exact when k / 100.0 gives the stored double back; any other (or one
    missing, or from HUNDREDTHS_BELOW up) is read from its revision's row. Migration 21 stored it so
    (``current_judgements.hundredths``, what :func:`working_hundredths` gives the writers since); the dashboards'
    read evaluated it for every row before."""
    if sqlite:
        # CAST truncates on SQLite, so + 0.5 rounds as round() does for the times that pass (none is negative
        # but -0.0, which gives 0 as round() does); a huge time saturates the cast and fails the bound.
        hundredths = cast(seconds * 100 + literal_column("0.5"), Integer)
        return case((and_(hundredths.op("/")(literal_column("100.0")) == seconds, seconds < HUNDREDTHS_BELOW),
                     hundredths + 1), else_=0)
    hundredths = cast(func.round(seconds * 100), BigInteger)
    return case((and_(seconds >= 0, seconds < HUNDREDTHS_BELOW),  # (a CASE, so the cast never sees a huge value)
                 case((hundredths / literal_column("100.0") == seconds, hundredths + 1), else_=0)), else_=0)


def _mask_ids() -> tuple[str | None, ...]:
    # What bit i of ``current_judgements.type_mask`` stands for (migration 9): each type's ``bit`` in
    # guidelines/taxonomy.toml. Stored masks keep their meaning only while a type keeps its bit, so a bit is
    # never changed or reused (the taxonomy loader checks that no two types share one).
    return taxonomy().mask_ids


def type_mask(stored: str | None) -> int | None:
    """The integer mask stored beside a type string: bit b set for the type whose taxonomy ``bit`` is b.

    None when :func:`mask_types` of the mask would not give back exactly ``stored`` (an id the taxonomy does not
    know, an id twice, another order than the bits', other spacing); readers then take such a row's text,
    so the mask is only ever a faster spelling of the text, never a different one.
    """
    if not stored:
        return 0
    bit_of = taxonomy().bit_of
    mask, last = 0, -1
    for t in stored.split(" "):
        bit = bit_of.get(t)
        if bit is None or bit <= last:
            return None
        mask, last = mask | (1 << bit), bit
    return mask


def mask_types(mask: int) -> str:
    """The stored type string a mask from :func:`type_mask` stands for."""
    mask, ids = int(mask), _mask_ids()
    if mask >> len(ids) or any(ids[i] is None and (mask >> i) & 1 for i in range(len(ids))):
        raise ValueError(f"type mask {mask} has a bit that no type of the taxonomy has (was a type's bit changed?)")
    return " ".join(t for i, t in enumerate(ids) if (mask >> i) & 1)


def mask_texts(masks) -> list[str]:
    """:func:`mask_types` of each of many masks (the distinct masks of a bulk read), spelled a byte of bits at a
    time from tables of the 256 spellings of each byte instead of bit by bit. ValueError as :func:`mask_types`."""
    ids = _mask_ids()
    holes = sum(1 << i for i, t in enumerate(ids) if t is None)
    tables = [[" ".join(ids[start + i] for i in range(8) if start + i < len(ids) and (byte >> i) & 1)
               for byte in range(256)] for start in range(0, len(ids), 8)]
    out = []
    for mask in masks:
        mask = int(mask)
        if mask < 0 or mask >> len(ids) or mask & holes:
            return [mask_types(m) for m in masks]  # (names the bad mask)
        out.append(" ".join(part for part in (table[(mask >> (8 * k)) & 255] for k, table in enumerate(tables))
                            if part))
    return out
