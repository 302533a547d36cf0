"""CLI subcommands, one module each, discovered by annotator.cli."""
