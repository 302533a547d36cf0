"""CLI subcommands, one module each, discovered by annotator.cli; the flags they share."""

from __future__ import annotations

import argparse


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Give a subcommand the standard ``--json`` flag."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
