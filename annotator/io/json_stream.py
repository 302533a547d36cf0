"""One JSON document read a piece at a time: the members of its top-level object and the elements of the arrays
inside it, each decoded as the reader reaches it, so memory holds a piece of the file and the element being read
(a COCO file's ``{"images": […], "annotations": […]}``, a Label Studio export's list of tasks, a judgement file's
object of captions), whatever the file's size.

Every value is decoded by the strict JSON reader's rules (:func:`annotator.strict_json.decode_at`: a key given
twice, NaN or Infinity, overlong integers and nesting too deep are refused), and each failure is an InputError
naming the file and the line (with the column for a syntax error), as :func:`annotator.io.textfiles.read_json`
names them for a whole file. The top-level object's keys are checked for repeats too.

Use::

    doc = JsonStream(path)
    if doc.opens() == "{":
        for key, line in doc.members():
            if key == "images":
                for value, line in doc.elements():   # the array at the member's value, one element at a time
                    ...
            else:
                doc.skip()                           # or doc.value(): the member's value, decoded whole
    doc.close()                                      # only white space may follow the document
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Iterator

from ..errors import InputError, shorten
from ..strict_json import decode_at, refusal_at, too_deep_at

#: Characters read from the file at a time (a read grows to the element being decoded when that is larger).
CHUNK = 1 << 20

_NOT_WHITE = re.compile(r"[^ \t\r\n]")
#: A decoding failure this close to the end of what has been read may be the end of the piece, not of the value.
_NEAR_END = 64


class JsonStream:
    """A UTF-8 JSON file read a piece at a time (see the module docstring); ``source`` names it in messages
    (default: the path)."""

    def __init__(self, path: Path | str, source: str | None = None, *, chunk: int = CHUNK):
        self.src = source or str(path)
        try:
            self._fh = open(path, "rb")
        except OSError as exc:
            raise InputError(f"cannot read file ({exc.strerror or exc})", self.src) from None
        self._chunk = chunk
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self._buf, self._pos, self._eof = "", 0, False
        self._line, self._counted = 1, 0  # the line at offset _counted of the buffer
        self._column = 0  # characters of the buffer's first line dropped with earlier pieces
        self._bytes, self._lines_read = 0, 0  # bytes and line breaks read so far (for a byte that is not UTF-8)
        self._values = 0  # values read (a member's value read by its caller, or not)

    # ------------------------------------------------------------------ reading

    def _fill(self, at_least: int = 0) -> bool:
        """Read another piece (at least ``at_least`` characters' worth) after what the buffer holds; False at the
        end of the file. The part before the read position is dropped first."""
        if self._eof:
            return False
        pos = self._pos
        self._line += self._buf.count("\n", self._counted, pos)
        dropped_line = self._buf.rfind("\n", 0, pos)
        self._column = pos - dropped_line - 1 if dropped_line >= 0 else self._column + pos
        self._buf, self._pos, self._counted = self._buf[pos:], 0, 0
        raw = self._fh.read(max(self._chunk, at_least))
        try:
            text = self._decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            pending = len(exc.object) - len(raw)  # bytes of a character begun in the previous piece
            line = self._lines_read + raw[:max(0, exc.start - pending)].count(b"\n") + 1
            raise InputError(f"the file is not UTF-8 text (byte {self._bytes - pending + exc.start}: {exc.reason})",
                             self.src, line) from None
        self._bytes += len(raw)
        self._lines_read += raw.count(b"\n")
        if not raw:
            self._eof = True
            self._fh.close()
        self._buf += text
        return bool(raw)

    def _peek(self) -> str:
        """The next character that is not white space ('' at the end of the file), the position left on it."""
        while True:
            found = _NOT_WHITE.search(self._buf, self._pos)
            if found is not None:
                self._pos = found.start()
                return found.group()
            self._pos = len(self._buf)
            if not self._fill():
                return ""

    def line_at(self, pos: int | None = None) -> int:
        """The line of offset ``pos`` of the buffer (default: the read position)."""
        pos = self._pos if pos is None else pos
        if pos >= self._counted:
            return self._line + self._buf.count("\n", self._counted, pos)
        return self._line - self._buf.count("\n", pos, self._counted)

    def _mark(self) -> int:
        """Move the line count to the read position and return its line (counting only what is new)."""
        self._line = self.line_at()
        self._counted = self._pos
        return self._line

    def _syntax(self, message: str, pos: int) -> InputError:
        line_start = self._buf.rfind("\n", 0, pos)
        column = pos - line_start if line_start >= 0 else self._column + pos + 1
        return InputError(f"invalid JSON: {message} (column {column})", self.src, self.line_at(pos))

    def _expect(self, what: str) -> InputError:
        self._peek()
        return self._syntax(f"Expecting {what}", self._pos)

    # ------------------------------------------------------------------ values

    def opens(self) -> str:
        """The first character of the document: ``{`` (an object), ``[`` (an array) or another (a plain value);
        InputError for an empty file."""
        c = self._peek()
        if not c:
            raise InputError("invalid JSON: Expecting value (the file is empty)", self.src, self.line_at())
        return c

    def peek(self) -> str:
        """The next character that is not white space ('' at the end of the file): what the value there is."""
        return self._peek()

    def value(self):
        """The value at the read position, decoded whole (strictly); the position moves past it."""
        if not self._peek():
            raise self._expect("value")
        while True:
            start = self._pos
            try:
                value, end = decode_at(self._buf, start)
            except json.JSONDecodeError as exc:
                if not self._eof and (exc.msg.startswith("Unterminated string") or
                                      len(self._buf) - exc.pos < _NEAR_END):
                    self._fill(len(self._buf) - start)  # the value may go on in the next piece
                    continue
                raise self._syntax(exc.msg, exc.pos) from None
            except RecursionError:
                raise InputError("invalid JSON: nested too deeply", self.src,
                                 self.line_at(too_deep_at(self._buf, start))) from None
            except ValueError:
                problem, at = refusal_at(self._buf, start)
                raise InputError(f"invalid JSON: {problem}", self.src, self.line_at(start if at is None else at)) \
                    from None
            if len(self._buf) - end < _NEAR_END and not self._eof:
                self._fill(len(self._buf) - start)  # a number may go on in the next piece ("3" of "3.5e-7")
                continue
            self._pos = end
            self._values += 1
            return value

    def skip(self) -> None:
        """Read past the value at the read position (decoded element by element when it is an array, so a long
        array costs no more memory than its largest element)."""
        if self._peek() == "[":
            for _ in self.elements():
                pass
        else:
            self.value()

    def elements(self) -> Iterator[tuple[object, int]]:
        """The elements of the array at the read position, each decoded as it is reached, with the line it starts
        on; InputError when the value there is not an array (the caller names what it expected first)."""
        if self._peek() != "[":
            raise self._expect("'['")
        self._pos += 1
        if self._peek() == "]":
            self._pos += 1
            self._values += 1
            return
        while True:
            line = self._mark()
            yield self.value(), line
            c = self._peek()
            self._pos += 1
            if c == "]":
                self._values += 1
                return
            if c != ",":
                self._pos -= 1
                raise self._expect("',' delimiter")
            if self._peek() == "]":
                raise self._syntax("Expecting value", self._pos)

    def members(self) -> Iterator[tuple[str, int]]:
        """The keys of the object at the read position with the line each starts on; after each, the caller reads
        its value (:meth:`value`, :meth:`elements` or :meth:`skip`) before asking for the next. A key given twice
        is refused, as the strict reader refuses it."""
        if self._peek() != "{":
            raise self._expect("'{'")
        self._pos += 1
        seen: set[str] = set()
        if self._peek() == "}":
            self._pos += 1
            return
        while True:
            if self._peek() != '"':
                raise self._expect("property name enclosed in double quotes")
            line = self._mark()
            key = self.value()
            if key in seen:
                raise InputError(f"invalid JSON: key {shorten(key)!r} appears twice in one object", self.src, line)
            seen.add(key)
            if self._peek() != ":":
                raise self._expect("':' delimiter")
            self._pos += 1
            before = self._values
            yield key, line
            if self._values == before:
                self.skip()  # the caller did not read the value
            c = self._peek()
            self._pos += 1
            if c == "}":
                return
            if c != ",":
                self._pos -= 1
                raise self._expect("',' delimiter")

    def close(self) -> None:
        """Check that nothing but white space follows the document, and close the file."""
        if self._peek():
            raise self._syntax("Extra data", self._pos)
        self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()
        return False
