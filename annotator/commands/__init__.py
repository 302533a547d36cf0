"""CLI subcommands, one module each, discovered by annotator.cli; the flags they share."""

from __future__ import annotations

import argparse


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
