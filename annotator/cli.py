"""The command line: ``annotator`` / ``python -m annotator``.

Subcommands live in ``annotator/commands/<name>.py``; each module defines
``register(subparsers)`` and is discovered here, so features add commands
without touching this file. A run imports only the module of its command
(``commands.COMMANDS``); help and usage errors build the parser of every command. Handlers take ``(args, ctx)`` and return an exit
code; errors derived from AnnotatorError become a one-line message on stderr
and their exit code (2 for bad input).

Everything the CLI prints goes through :class:`CommandContext` (or the error
handler of :func:`main`): text for people has every character a terminal could
act on shown as an escape (:func:`printable`), and ``--json`` output is strict
JSON (:func:`json_text`; both from :mod:`annotator.report`, which the pages use too). Commands that only
read open the store as it is;
only those registered with ``creates_store=True`` create or migrate it.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import pkgutil
import sys

from . import __version__, commands
from .config import database_url, load_settings
from .errors import AnnotatorError
from .report import EscapingWriter, json_safe, json_text, printable


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
            return checked_url(database_url(self.args.db), "--db")
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
            return EscapingWriter(self.out, json_safe)
        if hasattr(self.out, "isatty") and self.out.isatty():
            return EscapingWriter(self.out, printable)
        return self.out

    def close(self) -> None:
        if self._store is not None:
            self._store.dispose()


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors and help made printable (they repeat what was typed)."""

    def _print_message(self, message, file=None):
        if message:
            super()._print_message(printable(message), file)


def command_modules() -> tuple[str, ...]:
    """The names of the modules in annotator/commands/."""
    return tuple(sorted(m.name for m in pkgutil.iter_modules(commands.__path__)))


def build_parser(modules: tuple[str, ...] | None = None) -> argparse.ArgumentParser:
    """The parser with the subcommands of ``modules`` (default: every discovered one)."""
    parser = _Parser(prog="annotator", description="Find out what image-captioning models get wrong.")
    parser.add_argument("--db", metavar="URL", default=None,
                        help="database URL, or a plain path for a SQLite file there (overrides ANNOTATOR_DATABASE_URL; "
                             "default: the SQLite file data/annotator.db of the installation)")
    parser.add_argument("--version", action="version", version=f"annotator {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in command_modules() if modules is None else modules:
        module = importlib.import_module(f"{commands.__name__}.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def _parser_inputs(modules: tuple[str, ...] | None) -> tuple:
    """What the parser is built from besides the code: the command modules, the import catalog and the metrics
    (a plug-in registered while the process runs changes it, and with it the parser). The catalog and the
    metrics count once imported: before that no plug-in can be in them (and a start-up stays without them)."""
    catalog, registry = sys.modules.get("annotator.exchange.catalog"), sys.modules.get("annotator.metrics.registry")
    return (command_modules() if modules is None else modules,
            catalog and tuple(map(id, catalog.formats())), registry and registry.REGISTRY.names())


@functools.lru_cache(maxsize=16)
def _parser(inputs: tuple) -> argparse.ArgumentParser:
    # Building the parser (over 170 subcommands) takes tens of milliseconds; parsing leaves it unchanged, so a
    # process that runs many commands (the app's command runs, a test session) builds it once per set of inputs.
    return build_parser(inputs[0])


#: The exit code of a command whose output pipe closed early (``annotator … | head``): 128 + SIGPIPE, as a
#: shell reports a program that the signal ended.
PIPE_CLOSED_EXIT = 141


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code.

    When the reader of standard output goes away (``annotator users changes | head -4``) the command stops
    quietly with :data:`PIPE_CLOSED_EXIT`, without a traceback."""
    try:
        code = _run(argv)
        sys.stdout.flush()  # inside the guard: a closed pipe is often found only when the buffer is written
        return code
    except BrokenPipeError:
        # Python flushes standard output again at exit; point it at /dev/null so that flush cannot fail too.
        import os
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
        return PIPE_CLOSED_EXIT


def _run(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = _parser(_parser_inputs(commands.modules_for(argv)))
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
