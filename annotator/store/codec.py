"""Encoding of small structured values stored in text columns."""

from __future__ import annotations

import json

from ..model import Mention


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


#: What bit i of ``current_judgements.type_mask`` stands for (migration 9). Stored masks keep their meaning only
#: while this stays as it is: never reorder or remove an id, only append (at most 62 ids).
TYPE_MASK_BITS = (
    "age", "gender", "clothing_type", "clothing_color",
    "subject_wrong", "subject_similar", "subject_nonexistent", "subject_extra",
    "object_wrong", "object_similar", "object_nonexistent", "object_extra",
    "stance", "activity", "position", "number", "scene", "color", "other", "unrelated",
)
_TYPE_BIT = {t: i for i, t in enumerate(TYPE_MASK_BITS)}


def type_mask(stored: str | None) -> int | None:
    """The integer mask stored beside a type string: bit i set for ``TYPE_MASK_BITS[i]``.

    None when :func:`mask_types` of the mask would not give back exactly ``stored`` (an id outside
    ``TYPE_MASK_BITS``, an id twice, another order, other spacing); readers then take such a row's text,
    so the mask is only ever a faster spelling of the text, never a different one.
    """
    if not stored:
        return 0
    mask, last = 0, -1
    for t in stored.split(" "):
        bit = _TYPE_BIT.get(t)
        if bit is None or bit <= last:
            return None
        mask, last = mask | (1 << bit), bit
    return mask


def mask_types(mask: int) -> str:
    """The stored type string a mask from :func:`type_mask` stands for."""
    mask = int(mask)
    return " ".join(t for i, t in enumerate(TYPE_MASK_BITS) if (mask >> i) & 1)
