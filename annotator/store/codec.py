"""Encoding of small structured values stored in text columns."""

from __future__ import annotations

import json

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
