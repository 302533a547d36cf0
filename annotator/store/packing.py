"""Several integer columns of a bulk read sent as one: the fields of a row packed into as few 62-bit integers as
their ranges allow, each word comma-joined over every row by the database and parsed by numpy in one call.

The cost of the dashboards' bulk reads on a million rows is mostly the database's per-value work: SQLite steps
an aggregate once per value of every row (about 0.1 s of CPU per column of a million rows), and formatting
and parsing are small beside it. A row of five small integers packed into two words costs two aggregate steps
instead of five. Each field is a non-negative integer expression with a known number of bits (ids: their
current maximum with room to grow while the read runs; codes: their fixed width); a field's value is
``(word >> shift) & (2**bits - 1)``. Words stay below 2**62, so the sums never overflow a signed 64-bit integer
in either database. Used by annotator.store.analysis_queries and annotator.store.team_queries.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import BigInteger, Connection, cast, func, literal_column, select

from .schema import captions, items, judgements, systems, users

#: Bits of one packed word (a signed 64-bit integer with room to spare).
WORD_BITS = 62
#: Ids grow while a read runs (saves, imports, new accounts): each id field has room for at least this many
#: more bits than its current maximum needs (twice the largest id), and never fewer than ID_MIN_BITS of its table
#: (room for the ids a burst of writes on a small store hands out).
ID_HEADROOM_BITS = 1
ID_MIN_BITS = {"caption": 24, "item": 24, "judgement": 24, "user": 16, "system": 12}


@dataclass(frozen=True)
class Field:
    """One field of a packed row: its name, its SQL expression (a non-negative integer below 2**bits) and width."""

    name: str
    expr: object
    bits: int


@dataclass(frozen=True)
class Packing:
    """Where each field sits: ``words[w]`` lists (name, shift, bits) of the fields packed into word ``w``."""

    words: tuple[tuple[tuple[str, int, int], ...], ...]
    exprs: dict

    def columns(self, conn: Connection) -> list:
        """One SQL expression per word: the sum of its fields, each shifted into place."""
        out = []
        for word in self.words:
            terms = []
            for name, shift, _ in word:
                expr = _big(conn, self.exprs[name])
                terms.append(expr if shift == 0 else expr * literal_column(str(1 << shift)))
            total = terms[0]
            for term in terms[1:]:
                total = total + term
            out.append(total)
        return out

    def unpack(self, words: list[np.ndarray]) -> dict[str, np.ndarray]:
        """The fields (int64 arrays) of the parsed words, in the order of :attr:`words`."""
        out = {}
        for word, values in zip(self.words, words):
            for name, shift, bits in word:
                out[name] = (values >> shift) & ((1 << bits) - 1) if shift or len(word) > 1 else values
        return out


def pack(fields: list[Field]) -> Packing:
    """Fields placed into as few words as first-fit of the widest first gives (a field never spans two words)."""
    words: list[list[tuple[str, int, int]]] = []
    used: list[int] = []
    for field in sorted(fields, key=lambda f: -f.bits):
        if not 0 < field.bits <= WORD_BITS:
            raise ValueError(f"field {field.name} of {field.bits} bits does not fit a word")
        for w, taken in enumerate(used):
            if taken + field.bits <= WORD_BITS:
                words[w].append((field.name, taken, field.bits))
                used[w] += field.bits
                break
        else:
            words.append([(field.name, 0, field.bits)])
            used.append(field.bits)
    return Packing(tuple(tuple(w) for w in words), {f.name: f.expr for f in fields})


def joined_ints(joined: str | None) -> np.ndarray:
    """The integers of one comma-joined text (a word or a column of a bulk read), parsed by numpy in one call."""
    if not joined:
        return np.array([], np.int64)
    return np.fromstring(joined, dtype=np.int64, sep=",")


def id_bits(largest: int | None, minimum: int) -> int:
    """Bits of an id field whose largest value is now ``largest`` (room to grow included), at least ``minimum``."""
    return max(int(largest or 0).bit_length() + ID_HEADROOM_BITS, minimum)


def id_widths(conn: Connection) -> dict[str, int]:
    """Bits of the id fields the bulk reads pack (caption, item, system, user, judgement): one primary-key look-up
    of each table's largest id."""
    tables = {"caption": captions, "item": items, "system": systems, "user": users, "judgement": judgements}
    row = conn.execute(select(*[select(func.max(t.c.id)).scalar_subquery() for t in tables.values()])).one()
    return {name: id_bits(value, ID_MIN_BITS[name]) for name, value in zip(tables, row)}


def _big(conn: Connection, expr):
    """``expr`` as a 64-bit integer where the database needs telling (PostgreSQL: integer columns are 32-bit)."""
    return cast(expr, BigInteger) if conn.dialect.name == "postgresql" else expr
