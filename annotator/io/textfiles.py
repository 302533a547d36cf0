"""Small helpers for reading text and JSON input files with errors that name the file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..errors import InputError, shorten
from ..strict_json import parse_json

__all__ = ["decode_utf8", "file_lines", "read_bytes", "read_lines", "read_json", "parse_json", "shorten"]


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


def file_lines(path: Path | str, source: str | None = None) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a UTF-8 text file, read one line at a time (memory holds one line,
    whatever the file's size), split and cut as :func:`read_lines` does; InputError naming the file (``source``,
    default its path) and line of a byte that is not UTF-8 or a NUL character, or the file when it cannot be
    read."""
    source = source or str(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", source) from None
    with fh:
        offset = 0
        for n, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"the file is not UTF-8 text (byte {offset + exc.start}: {exc.reason})", source,
                                 n) from None
            offset += len(raw)
            if "\x00" in text:
                raise InputError("contains a NUL character (is this a text file?)", source, n)
            if text.endswith("\n"):
                text = text[:-1]
            yield n, text[:-1] if text.endswith("\r") else text


def read_json(path: Path | str):
    """Parse a UTF-8 JSON file with :func:`parse_json`; errors name the file and line (a large document is read
    a piece at a time with :class:`annotator.io.json_stream.JsonStream` instead)."""
    return parse_json(decode_utf8(read_bytes(path), str(path)), str(path))
