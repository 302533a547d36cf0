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
