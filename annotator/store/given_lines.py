"""The caption lines an import's file gives (a native JSONL file's ``line``): stored first as placeholders, each
line given twice refused as a batch is written, and numbered in the order of the lines when the import ends.

A caption of a given line is written with the placeholder line ``-1 - line``: unique for its system and sample
(the captions' unique (system, n, line) index), below every stored line, so a placeholder in the store is one
this import wrote. Nothing of the lines is kept in memory from one batch to the next: a line given twice is found
by that index (:func:`refuse_repeated_lines`); :func:`number_given_lines` replaces the placeholders at the end.
"""

from __future__ import annotations

from sqlalchemy import Connection, bindparam, select

from ..errors import InputError
from .schema import captions

_CHUNK = 5000


def refuse_repeated_lines(conn: Connection, cap_rows: list[dict], given_at: list[tuple[int, int, int]],
                          where: list, system_ids: dict[str, int], source: str) -> None:
    """Refuse the first caption of a batch whose given line its system and sample had already in this import: in
    an earlier batch (its placeholder is stored) or earlier in the batch. ``cap_rows`` are the batch's caption
    rows; ``given_at`` (row, item of the batch, given line) the ones with a given line, ``where`` where each of
    those came from (for the message, with ``source``); ``system_ids``: system name → id."""
    wanted: dict[tuple[int, int], list[int]] = {}
    for row, _, _ in given_at:
        wanted.setdefault((cap_rows[row]["system_id"], cap_rows[row]["n"]), []).append(cap_rows[row]["line_no"])
    taken: set[tuple[int, int, int]] = set()
    for (sid, sample), placeholders in wanted.items():
        for start in range(0, len(placeholders), _CHUNK):
            taken.update((sid, sample, line) for line in conn.execute(
                select(captions.c.line_no).where(captions.c.system_id == sid, captions.c.n == sample,
                                                 captions.c.line_no.in_(placeholders[start:start + _CHUNK]))).scalars())
    for (row, _, given), location in zip(given_at, where):
        cap = cap_rows[row]
        place = (cap["system_id"], cap["n"], cap["line_no"])
        if place in taken:
            system = next(name for name, sid in system_ids.items() if sid == cap["system_id"])
            sample = f" (n = {cap['n']})" if cap["n"] else ""
            raise InputError(f"system {system!r} has caption line {given}{sample} twice", source, location)
        taken.add(place)


def number_given_lines(conn: Connection, sid: int, sample: int, first: int) -> None:
    """Renumber the placeholder lines (-1 - given line) of a system's sample as ``first``, ``first + 1``, … in the
    order of the given lines, a chunk at a time (the unique (system, n, line) index finds each chunk)."""
    line = first
    while True:
        ids = conn.execute(select(captions.c.id).where(captions.c.system_id == sid, captions.c.n == sample,
                                                      captions.c.line_no < 0)
                           .order_by(captions.c.line_no.desc()).limit(_CHUNK)).scalars().all()
        if not ids:
            return
        conn.execute(captions.update().where(captions.c.id == bindparam("cid")).values(line_no=bindparam("line")),
                     [{"cid": cid, "line": line + k} for k, cid in enumerate(ids)])
        line += len(ids)
