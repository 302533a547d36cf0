"""Small helpers for reading text and JSON input files with errors that name the file and line."""

from __future__ import annotations

import json
import re
from json.decoder import scanstring
from pathlib import Path

from ..errors import InputError


def decode_utf8(raw: bytes, source: str | None) -> str:
    """``raw`` decoded as UTF-8 (a leading byte-order mark dropped); InputError naming the line of a bad byte."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"the file is not UTF-8 text (byte {exc.start}: {exc.reason})", source, line) from None


def read_bytes(path: Path | str) -> bytes:
    """The bytes of an input file; InputError naming it when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", str(path)) from None


def read_lines(path: Path | str) -> list[str]:
    """The lines of a UTF-8 text file, exactly as written.

    Only the line terminator (``\\n``, ``\\r\\n`` or a lone ``\\r`` at the end)
    is removed; no other whitespace is touched. A byte-order mark at the very
    start is dropped. Splitting is on ``\\n`` only (not on the other characters
    ``str.splitlines`` treats as breaks) so line numbers agree with ``wc -l``,
    ``multi-bleu.perl`` and coco-caption. A final line without a terminator
    counts; the empty string after a final terminator does not.
    """
    text = decode_utf8(read_bytes(path), str(path))
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise InputError("contains a NUL character (is this a text file?)", str(path), line)
    if text == "":
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def read_json(path: Path | str):
    """Parse a UTF-8 JSON file with :func:`parse_json`; errors name the file and line."""
    return read_json_text(path)[0]


def read_json_text(path: Path | str) -> tuple[object, str]:
    """(parsed value, text) of a UTF-8 JSON file, for readers that name lines in later messages (:class:`MemberLines`)."""
    text = decode_utf8(read_bytes(path), str(path))
    return parse_json(text, str(path)), text


class MemberLines:
    """The line on which each member of a JSON document's top-level object or array starts.

    Found by walking the text only when a message first asks for one, so
    reading valid files costs nothing. ``where(n, key)`` gives a location such
    as ``line 12 (key '7')`` for the n-th member.
    """

    def __init__(self, text: str):
        self.text = text
        self._lines: list[int] | None = None

    def line(self, n: int) -> int | None:
        """The line of the n-th (0-based) top-level member, or None."""
        if self._lines is None:
            self._lines = _member_lines(self.text)
        return self._lines[n] if 0 <= n < len(self._lines) else None

    def where(self, n: int, key) -> str:
        """``line L (key 'K')`` for the n-th member called ``key``."""
        line = self.line(n)
        label = f"key {shorten(key)!r}"
        return label if line is None else f"line {line} ({label})"


def _member_lines(text: str) -> list[int]:
    lines: list[int] = []
    depth, line, pending = 0, 1, False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif c not in " \t\r":
            if pending and depth == 1 and c not in "]}":
                lines.append(line)
                pending = False
            if c == '"':
                i = scanstring(text, i + 1)[1]  # a valid document's strings hold no raw line breaks
                continue
            if c in "{[":
                depth += 1
                pending = depth == 1
            elif c in "]}":
                depth -= 1
            elif c == "," and depth == 1:
                pending = True
        i += 1
    return lines


# ------------------------------------------------------------------ JSON

class _Refused(ValueError):
    """Raised by the decoding hooks; :func:`parse_json` then finds where in the text it happened."""


def _unique_pairs(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Refused("duplicate key")
    return obj


def _reject_constant(name: str):
    raise _Refused(name)


def parse_json(text: str, source: str | None = None, location=None):
    """``json.loads`` for input files: every failure is an InputError naming the line.

    Refused besides syntax errors: a key given twice in one object (``json``
    would silently keep the last), ``NaN``/``Infinity`` (not JSON), and integers
    too long for Python to convert. ``location`` is the line of a one-line
    document (a JSONL line); otherwise lines are counted in ``text``.
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        line = exc.lineno if location is None else location
        raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})", source, line) from None
    except RecursionError:
        line = location if location is not None else text.count("\n", 0, _too_deep_at(text)) + 1
        raise InputError("invalid JSON: nested too deeply", source, line) from None
    except ValueError:
        # A refused key or value (or an integer beyond Python's digit limit): walk the text to say which and where.
        problem, pos = _find_problem(text)
        line = location if location is not None or pos is None else text.count("\n", 0, pos) + 1
        raise InputError(f"invalid JSON: {problem}", source, line) from None


#: How deep :func:`_too_deep_at` lets arrays and objects nest before it names the place (json itself gives up
#: near the interpreter's recursion limit, 1,000 by default).
_DEEP = 500


def _too_deep_at(text: str) -> int:
    """The offset at which arrays and objects in ``text`` first nest deeper than :data:`_DEEP` (0 if they never do)."""
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            try:
                i = scanstring(text, i + 1)[1]
            except ValueError:  # an unterminated string: the rest of the text
                return 0
            continue
        if c in "[{":
            depth += 1
            if depth > _DEEP:
                return i
        elif c in "]}":
            depth -= 1
        i += 1
    return 0


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_CONSTANT = re.compile(r"NaN|-?Infinity")
#: Python refuses to convert longer integer strings (sys.get_int_max_str_digits, 4300 by default).
_MAX_JSON_INT_DIGITS = 4300


def _find_problem(text: str) -> tuple[str, int | None]:
    """The first duplicate key, non-JSON constant or overlong integer in syntactically valid JSON, and its offset.

    Only called after :func:`json.loads` refused the document, so speed does
    not matter and the syntax is known to be sound.
    """
    keys: list[set | None] = []  # per open container: the keys seen so far (None for an array)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            value, end = scanstring(text, i + 1)
            j = end
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] == ":" and keys and keys[-1] is not None:
                if value in keys[-1]:
                    return f"key {shorten(value)!r} appears twice in one object", i
                keys[-1].add(value)
            i = end
            continue
        if c == "{":
            keys.append(set())
        elif c == "[":
            keys.append(None)
        elif c in "}]":
            keys.pop()
        elif c in "-0123456789NI":
            m = _CONSTANT.match(text, i)
            if m:
                return f"{m.group()} is not a number JSON allows", i
            m = _NUMBER.match(text, i)
            if m:
                digits = m.end() - i - (text[i] == "-")
                if not (m.group(1) or m.group(2)) and digits > _MAX_JSON_INT_DIGITS:
                    return f"an integer of {digits} digits is too long", i
                i = m.end()
                continue
        i += 1
    return "a value cannot be read", None


def shorten(value, limit: int = 60) -> str:
    """``value`` as text, cut to ``limit`` characters with an ellipsis (for messages about huge input)."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
