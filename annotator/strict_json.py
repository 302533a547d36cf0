"""The strict JSON reader every input goes through: ``json.loads`` that refuses what JSON does not allow or
Python would take silently (a key given twice, NaN/Infinity, integers too long to convert, nesting deep enough to
exhaust the interpreter), each as an InputError naming the line.

It stands on the ground floor (it needs only :mod:`annotator.errors`) so that any layer can read JSON text
strictly, the span lists inside a row as much as a whole file (annotator.io.textfiles reads files with it).
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring

from .errors import InputError, shorten


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


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_reject_constant)


def decode_at(text: str, pos: int):
    """(value, end) of the JSON value that starts at offset ``pos`` of ``text``, by :func:`parse_json`'s rules —
    for readers that take a document a piece at a time (:mod:`annotator.io.json_stream`). Failures are json's
    own (JSONDecodeError, RecursionError) or a ValueError for a refused key or value, which
    :func:`refusal_at` names."""
    return _DECODER.raw_decode(text, pos)


def refusal_at(text: str, pos: int) -> tuple[str, int | None]:
    """What :func:`decode_at` refused (its ValueError) in the value at ``pos`` of ``text`` — a key twice, NaN or
    Infinity, an overlong integer — and its offset in ``text`` (None when it cannot be found); for its
    RecursionError the offset at which the value nests too deeply."""
    try:
        problem, at = _find_problem(text[pos:])
    except IndexError:  # ran past the value's end without finding it
        return "a value cannot be read", None
    return problem, None if at is None else pos + at


def too_deep_at(text: str, pos: int) -> int:
    """The offset at which the value at ``pos`` of ``text`` nests deeper than the reader allows (``pos`` when
    it cannot be found)."""
    return pos + _too_deep_at(text[pos:])


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
