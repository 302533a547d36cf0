"""Running the command line inside a test."""

from __future__ import annotations

from annotator.cli import main


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """Run ``annotator *argv``; return its exit code and what it printed on standard output and standard error."""
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err
