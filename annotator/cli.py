"""The command line: ``annotator`` / ``python -m annotator``.

Subcommands live in ``annotator/commands/<name>.py``; each module defines
``register(subparsers)`` and is discovered here, so features add commands
without touching this file. Handlers take ``(args, ctx)`` and return an exit
code; errors derived from AnnotatorError become a one-line message on stderr
and their exit code (2 for bad input).
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from dataclasses import asdict, is_dataclass

from . import __version__, commands
from .errors import AnnotatorError


class CommandContext:
    """What a handler needs: the store (opened lazily) and output helpers."""

    def __init__(self, args: argparse.Namespace, out=None):
        self.args = args
        self.out = out or sys.stdout
        self._store = None

    def store(self):
        """The migrated store named by ``--db`` or the environment."""
        if self._store is None:
            from .store import open_store
            self._store = open_store(self.args.db)
        return self._store

    def emit(self, obj, text: str | None = None) -> None:
        """Print ``obj`` as JSON with ``--json``, else ``text`` (or a readable dump)."""
        if getattr(self.args, "json", False) or text is None:
            print(json.dumps(to_jsonable(obj), indent=2, ensure_ascii=False, default=str), file=self.out)
        else:
            print(text, file=self.out)

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
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return obj.item()
    if hasattr(obj, "value") and obj.__class__.__module__ != "builtins" and not isinstance(obj, (int, float, str)):
        return obj.value
    return obj


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every discovered subcommand."""
    parser = argparse.ArgumentParser(prog="annotator", description="Find out what image-captioning models get wrong.")
    parser.add_argument("--db", metavar="URL", default=None,
                        help="database URL (overrides ANNOTATOR_DATABASE_URL; default: SQLite file data/annotator.db)")
    parser.add_argument("--version", action="version", version=f"annotator {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
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
        print(f"annotator: error: {exc}", file=sys.stderr)
        return exc.exit_code
    finally:
        ctx.close()
