"""CLI subcommands, one module each, discovered by annotator.cli; the flags they share.

:data:`COMMANDS` names the module that registers each top-level command, so that a command run imports only its
own module (and what that imports): ``annotator projects`` never loads pandas or the metrics.
tests/core/test_cli_startup.py checks the table against what every module registers.
"""

from __future__ import annotations

import argparse

#: Top-level command → the module of annotator/commands/ whose ``register`` adds it.
COMMANDS: dict[str, str] = {
    "adjudicate": "agreement", "agreement": "agreement", "disagreements": "agreement", "practice": "agreement",
    "assign": "assign",
    "backup": "backup", "restore": "backup",
    "content-selection": "content_selection",
    "corrections": "correct",
    "detectors": "detectors",
    "correlate": "diversity", "diversity": "diversity", "human-scores": "diversity", "rich-sparse": "diversity",
    "estimate": "estimate",
    "export": "io", "import": "io",
    "judge": "judge",
    "judgements": "judgements",
    "init": "projects", "projects": "projects",
    "rescore": "rescore",
    "settings": "settings",
    "tables": "tables",
    "team": "team",
    "users": "users",
}

#: Options of the top-level parser that take a value (skipped when looking for the command's name).
_VALUE_OPTIONS = ("--db",)


def modules_for(argv: list[str]) -> tuple[str, ...] | None:
    """The command modules a run of ``argv`` needs: the module of its command, none for ``--version`` alone,
    or ``None`` (every module) when there is no known command, so that help and usage errors list them all."""
    args = iter(argv)
    for arg in args:
        if arg in _VALUE_OPTIONS:
            next(args, None)
        elif arg == "--version":
            return ()
        elif arg == "--" or not arg.startswith("-"):
            name = next(args, None) if arg == "--" else arg
            return (COMMANDS[name],) if name in COMMANDS else None
        elif not arg.startswith(tuple(o + "=" for o in _VALUE_OPTIONS)):
            return None  # -h, --help or an unknown option: the full parser answers
    return None


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Give a subcommand the standard ``--json`` flag."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def json_command(sub, name: str, func, *options, **parser_args) -> argparse.ArgumentParser:
    """Add subcommand ``name`` running ``func``: its parser (``parser_args``: help, description), each of
    ``options(parser)`` in turn, then the ``--json`` flag. Returns the parser."""
    parser = sub.add_parser(name, **parser_args)
    for add_options in options:
        add_options(parser)
    add_json_flag(parser)
    parser.set_defaults(func=func)
    return parser
