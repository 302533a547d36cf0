"""How a report is written out for people and programs, shared by the command line and the pages.

:func:`printable` shows every character a terminal could act on (or that hides or reorders text) as a visible
escape; :func:`json_text` writes any report object (dataclasses, enums, numpy scalars, tuples) as strict JSON, NaN
and infinities as ``null`` and the same characters as ``\\uXXXX`` escapes (:func:`json_safe`). Nothing here knows
the command line or streamlit.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import asdict, is_dataclass


# Characters a terminal may act on or that hide text: control characters but newline and tab (C0, DEL, C1),
# format characters (bidirectional overrides, zero-width characters), line/paragraph separators, surrogates.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_NOT_PLAIN_ASCII = re.compile(r"[^\n\t\x20-\x7e]")  # a cheap first filter: only these can be unsafe


def _is_unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in _UNSAFE_CATEGORIES


def _text_escape(ch: str) -> str:
    code = ord(ch)
    if ch == "\r":
        return "\\r"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells characters beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def printable(text: str) -> str:
    """``text`` with every character a terminal could act on, or that hides or reorders text (escape
    sequences, carriage returns, bidirectional overrides, zero-width characters), written as a visible
    escape such as ``\\x1b`` or ``\\u202e``; newlines and tabs stay, everything else is unchanged."""
    return _NOT_PLAIN_ASCII.sub(lambda m: _text_escape(m.group()) if _is_unsafe(m.group()) else m.group(), str(text))


def json_text(obj) -> str:
    """``obj`` as strict JSON: NaN and infinities become ``null`` (JSON has no such numbers), and the
    characters :func:`printable` escapes are written as ``\\uXXXX`` escapes (:func:`json_safe`)."""
    return json_safe(json.dumps(_finite(to_jsonable(obj)), indent=2, ensure_ascii=False, allow_nan=False, default=str))


def json_safe(json_str: str) -> str:
    """JSON text with the characters :func:`printable` escapes written as ``\\uXXXX`` escapes: they can only
    stand inside strings, and the escapes parse back to the same string, so the JSON means exactly what it
    meant and is safe to show on a terminal."""
    return _NOT_PLAIN_ASCII.sub(lambda m: _json_escape(m.group()) if _is_unsafe(m.group()) else m.group(), json_str)


def _finite(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def to_jsonable(obj):
    """Dataclasses, enums, numpy scalars and tuples → plain JSON values."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(asdict(obj))
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in obj]
    if type(obj).__name__ in ("NAType", "NaTType"):  # pandas' missing value and missing time
        return None
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return obj.item()
    if hasattr(obj, "value") and obj.__class__.__module__ != "builtins" and not isinstance(obj, (int, float, str)):
        return obj.value
    return obj


class EscapingWriter:
    """A text stream that passes everything written through ``escape`` (one character never spans writes)."""

    def __init__(self, stream, escape):
        self._stream, self._escape = stream, escape

    def write(self, text: str) -> int:
        self._stream.write(self._escape(text))
        return len(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)
