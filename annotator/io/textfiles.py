"""Small helpers for reading text and JSON input files with errors that name the file and line."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError


def read_lines(path: Path | str) -> list[str]:
    """The lines of a UTF-8 text file, exactly as written.

    Only the line terminator (``\\n``, ``\\r\\n`` or a lone ``\\r`` at the end)
    is removed; no other whitespace is touched. A byte-order mark at the very
    start is dropped. Splitting is on ``\\n`` only (not on the other characters
    ``str.splitlines`` treats as breaks) so line numbers agree with ``wc -l``,
    ``multi-bleu.perl`` and coco-caption. A final line without a terminator
    counts; the empty string after a final terminator does not.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 (byte {exc.start})", str(path), line) from None
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
    """Parse a UTF-8 JSON file; InputError with line and column on a syntax error."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte {exc.start})", str(path)) from None
    return parse_json(text, str(path))


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(text: str, source: str | None = None, location=None):
    """``json.loads`` that refuses NaN/Infinity and turns every failure into an InputError."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})", source,
                         exc.lineno if location is None else location) from None
    except ValueError as exc:
        raise InputError(f"invalid JSON: {exc}", source, location) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", source, location) from None
