"""The command line: ``annotator`` / ``python -m annotator``.

Subcommands live in ``annotator/commands/<name>.py``; each module defines
``register(subparsers)`` and is discovered here, so features add commands
without touching this file. Handlers take ``(args, ctx)`` and return an exit
code; errors derived from AnnotatorError become a one-line message on stderr
and their exit code (2 for bad input).

Everything the CLI prints goes through :class:`CommandContext` (or the error
handler of :func:`main`): text for people has every character a terminal could
act on shown as an escape (:func:`printable`), and ``--json`` output is strict
JSON (:func:`json_text`). Commands that only read open the store as it is;
only those registered with ``creates_store=True`` create or migrate it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import pkgutil
import re
import sys
import unicodedata
from dataclasses import asdict, is_dataclass

from . import __version__, commands
from .errors import AnnotatorError


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


class CommandContext:
    """What a handler needs: the store (opened lazily) and output helpers."""

    def __init__(self, args: argparse.Namespace, out=None, err=None):
        self.args = args
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._store = None

    def url(self) -> str:
        """The database URL named by ``--db`` or the environment; InputError (naming which) unless annotator
        can open a store there."""
        from .store import checked_url
        if self.args.db:
            from .config import database_url
            return checked_url(database_url(self.args.db), "--db")
        from .config import load_settings
        return checked_url(load_settings().database_url, "ANNOTATOR_DATABASE_URL")

    def store(self):
        """The store named by ``--db`` or the environment. Commands registered with ``creates_store=True``
        create and migrate it as needed; every other command opens it as it is, and is told plainly when
        there is none (no file, folder or table is created)."""
        if self._store is None:
            from .store import open_existing_store, open_store
            opener = open_store if getattr(self.args, "creates_store", False) else open_existing_store
            self._store = opener(self.url())
        return self._store

    def emit(self, obj, text: str | None = None) -> None:
        """Print ``obj`` as strict JSON with ``--json``, else ``text`` (or a readable dump), made printable."""
        if getattr(self.args, "json", False) or text is None:
            print(json_text(obj), file=self.out)
        else:
            print(printable(text), file=self.out)

    def note(self, text: str) -> None:
        """A line for people on standard error (a warning, where a file went), made printable."""
        print(printable(text), file=self.err)

    def data_out(self, *, json_lines: bool = False):
        """Standard output for data a command writes itself (an export, a table as CSV/Markdown/LaTeX).
        JSON lines get :func:`json_safe` escapes (the same JSON values, safe on a terminal); other text is
        made printable when standard output is a terminal, and stays exact for a file or a pipe."""
        if json_lines:
            return _EscapingWriter(self.out, json_safe)
        if hasattr(self.out, "isatty") and self.out.isatty():
            return _EscapingWriter(self.out, printable)
        return self.out

    def close(self) -> None:
        if self._store is not None:
            self._store.dispose()


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


class _EscapingWriter:
    """A text stream that passes everything written through ``escape`` (one character never spans writes)."""

    def __init__(self, stream, escape):
        self._stream, self._escape = stream, escape

    def write(self, text: str) -> int:
        self._stream.write(self._escape(text))
        return len(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors and help made printable (they repeat what was typed)."""

    def _print_message(self, message, file=None):
        if message:
            super()._print_message(printable(message), file)


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every discovered subcommand."""
    parser = _Parser(prog="annotator", description="Find out what image-captioning models get wrong.")
    parser.add_argument("--db", metavar="URL", default=None,
                        help="database URL, or a plain path for a SQLite file there (overrides ANNOTATOR_DATABASE_URL; "
                             "default: the SQLite file data/annotator.db of the installation)")
    parser.add_argument("--version", action="version", version=f"annotator {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{mod.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Give a subcommand the standard ``--json`` flag."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    ctx = CommandContext(args)
    try:
        return int(args.func(args, ctx) or 0)
    except AnnotatorError as exc:
        ctx.note(f"annotator: error: {exc}")
        return exc.exit_code
    finally:
        ctx.close()
