"""Docs that cannot drift: every command, every environment variable and every import format is documented.

The lists are discovered, never copied: commands from the CLI's parser (subcommands
included), environment variables from the source (every ``ANNOTATOR_*`` name the
code, the scripts and the test suite read), import formats from the importer
catalog; docs/formats.md must quote each format's example file, which
tests/io/test_io_catalog.py imports.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
from pathlib import Path

import pytest

from annotator.cli import build_parser
from annotator.exchange.catalog import formats
from annotator.metrics import REGISTRY
from annotator.startup import TASKS

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOCS = "\n".join(p.read_text(encoding="utf-8") for p in DOC_FILES)
FORMATS_DOC = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
METRICS_DOC = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")

_NAME = r"[a-z][a-z0-9-]*(?:\|[a-z][a-z0-9-]*)*"  # a command, or alternatives such as add|list|passwd


def command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command of the CLI as a path of names: ('import',), ('import', 'lines'), ('users', 'add'), …"""
    paths = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths.append((*prefix, name))
                paths += command_paths(sub, (*prefix, name))
    return paths


def documented_paths(text: str) -> set[tuple[str, ...]]:
    """Command paths the text shows after ``annotator`` (or ``annotator --db URL``).

    ``annotator users add|list …`` documents ``users add`` and ``users list``;
    ``annotator init | projects`` documents ``init`` and ``projects``.
    """
    found: set[tuple[str, ...]] = set()
    for match in re.finditer(r"\bannotator (?:--db URL )?([^\n`]*)", text):
        tokens = match.group(1).split()
        i = 0
        while i < len(tokens) and re.fullmatch(_NAME, tokens[i]):
            names = tokens[i].split("|")
            found.update((n,) for n in names)
            if i + 1 < len(tokens) and re.fullmatch(_NAME, tokens[i + 1]):
                found.update((n, s) for n in names for s in tokens[i + 1].split("|"))
            # `a … | b …`: an alternative command follows the next lone bar
            bars = [j for j in range(i + 1, len(tokens)) if tokens[j] == "|"]
            if not bars:
                break
            i = bars[0] + 1
    return found


def _env_reads(tree: ast.AST) -> set[str]:
    """ANNOTATOR_* names a Python file reads from an environment: ``environ.get("X")``, ``getenv("X")``,
    ``environ["X"]``, ``"X" in environ`` (also through a variable holding the environment, and ``setenv`` in tests)."""
    def name(node) -> str | None:
        ok = isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"ANNOTATOR_[A-Z0-9_]+",
                                                                                              node.value)
        return node.value if ok else None

    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.func, (ast.Attribute, ast.Name)):
            func = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            if func in ("get", "getenv", "setenv", "delenv", "pop", "setdefault"):
                found.add(name(node.args[0]))
        elif isinstance(node, ast.Subscript):
            found.add(name(node.slice))
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            found.add(name(node.left))
    return found - {None}


def environment_variables() -> set[str]:
    """Every ANNOTATOR_* variable the code, the scripts, the Makefile and the tests read."""
    files = [ROOT / "app.py", ROOT / "Makefile", *ROOT.glob("pages/*.py"), *ROOT.glob("annotator/**/*.py"),
             *ROOT.glob("scripts/*"), *ROOT.glob("bench/*.py"), *ROOT.glob(".ci/*"), *ROOT.glob("tests/**/*.py")]
    names = set()
    for path in files:
        if not path.is_file() or path.name == Path(__file__).name:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "ANNOTATOR_" not in text:
            continue  # parsing every file took seconds of each test process's collection
        if path.suffix == ".py":
            names |= _env_reads(ast.parse(text))
        else:  # shell and make: $ANNOTATOR_X, ${ANNOTATOR_X}, ANNOTATOR_X=…
            names |= set(re.findall(r"\bANNOTATOR_[A-Z0-9_]*[A-Z0-9]\b", text))
    return names | {task.switch for task in TASKS}  # the start-up tasks' switches, read through their declaration


def test_the_discovery_finds_what_it_should():
    # The walk and the parser of the docs, on what they must find (a check that fails if either goes blind).
    paths = command_paths(build_parser())
    assert {("import",), ("import", "lines"), ("users", "add"), ("human-scores", "import"), ("export",)} <= set(paths)
    assert documented_paths("annotator users add|list … and `annotator init | projects --json`") == {
        ("users",), ("users", "add"), ("users", "list"), ("init",), ("projects",)}
    assert documented_paths("annotator --db URL import lines --project P") >= {("import", "lines")}
    names = environment_variables()
    assert {"ANNOTATOR_DATABASE_URL", "ANNOTATOR_IMAGE_ROOTS", "ANNOTATOR_TEST_PG_URL", "ANNOTATOR_WARM_DASHBOARDS"} <= names
    assert "ANNOTATOR_COLUMNS" not in names  # a constant in annotator/team.py, not a variable of the environment


@pytest.mark.parametrize("path", command_paths(build_parser()), ids=" ".join)
def test_every_command_is_documented(path):
    assert path in documented_paths(DOCS), (
        f"`annotator {' '.join(path)}` is not shown in README.md or docs/*.md (write it as `annotator {' '.join(path)} …`)")


@pytest.mark.parametrize("name", sorted(environment_variables()))
def test_every_environment_variable_is_documented(name):
    assert re.search(rf"`{name}`", DOCS), f"{name} is read by the code but README.md and docs/*.md do not explain it"


def _section(doc: str, fmt_name: str) -> str:
    """The docs/formats.md section whose heading is about `import <format>` (``Title (`import name`…)``)."""
    parts = re.split(r"^## ", doc, flags=re.M)
    hits = [p for p in parts if re.search(rf"\(`import {re.escape(fmt_name)}`", p.splitlines()[0])]
    assert len(hits) == 1, f"docs/formats.md needs one section headed with `import {fmt_name}`"
    return hits[0]


def _fenced_blocks(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^```[a-z]*\n(.*?)^```", text, flags=re.M | re.S)]


@pytest.mark.parametrize("fmt", formats(), ids=lambda f: f.name)
def test_every_format_has_its_example_in_formats_md(fmt):
    section = _section(FORMATS_DOC, fmt.name)
    folder = f"annotator/io/examples/{fmt.name}/"
    assert folder in section, f"the section of {fmt.name} should name its example folder {folder}"
    blocks = _fenced_blocks(section)
    # The example's first file is quoted exactly as it is (the catalog test imports that very file).
    first = next(iter(fmt.example.paths(fmt.name).values()))
    first = first[0] if isinstance(first, list) else first
    if first.is_dir():
        first = sorted(p for p in first.rglob("*.txt") if p.parent != first)[0]
    assert first.read_text(encoding="utf-8") in blocks, f"docs/formats.md should quote {first.relative_to(ROOT)}"
    # And the command that imports it, with the format's required flags.
    command = next((b for b in blocks if f"import {fmt.name} " in b), "")
    for option in fmt.options:
        if option.required and option.flag:
            assert option.flag in command, f"the {fmt.name} section's command lacks {option.flag}"


@pytest.mark.parametrize("card", REGISTRY.cards(), ids=lambda c: c.key)
def test_every_metric_card_is_in_the_help_and_the_docs(card, capsys):
    # Each metric declares what it measures, its paper and a link (annotator.metrics.base.Metric); `rescore --help`
    # shows the card and docs/metrics.md's table cites the same paper at the same link.
    assert card.description and card.citation and card.link.startswith("https://")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["rescore", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert card.description in help_text and card.link in help_text and card.citation in help_text
    row = next((line for line in METRICS_DOC.splitlines() if card.link in line), None)
    assert row is not None and card.label in row, f"{card.label}: no line of docs/metrics.md gives its paper's link"


# ------------------------------------------------------------------ the README: one screen, and every command it shows works

README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_commands(text: str) -> list[list[str]]:
    """The ``annotator`` command lines the text shows in code spans (``.venv/bin/annotator …`` or ``annotator …``),
    as argument lists; a span may run over a line break, and a bare ``annotator …`` is left out."""
    found = []
    for match in re.finditer(r"`(?:\.venv/bin/)?annotator ([^`]+)`", text):
        args = match.group(1).split()
        if args and args != ["…"]:
            found.append(args)
    return found


def test_the_readme_is_one_screen_and_maps_every_doc():
    assert len(README.splitlines()) <= 150, "the README is what a newcomer reads first: keep it to about a screen"
    links = set(re.findall(r"\]\(([^)#\s]+)", README))
    assert [link for link in links if not link.startswith("http") and not (ROOT / link).exists()] == []
    assert {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} <= links, "the README's map of docs/ lacks one"
    for said in ("make run PORT=", "Ctrl+C", "make clean-db", "data/annotator.db", "Local mode"):
        assert said in README


def test_every_command_the_readme_shows_exists():
    commands = readme_commands(README)
    paths = {tuple(a for a in args[:2] if re.fullmatch(_NAME, a)) for args in commands}
    assert {("import", "lines"), ("users", "add"), ("backup",), ("restore",)} <= paths  # the finder sees them
    for args in commands:
        if len(args) == len([a for a in args[:2] if re.fullmatch(_NAME, a)]):
            continue  # a command named in passing (`annotator rescore`): its --help is checked below
        try:
            build_parser().parse_args(args)  # a whole line as shown, placeholders and all
        except SystemExit as stop:
            assert stop.code == 0, f"`annotator {' '.join(args)}` (README) does not parse"
    for path in paths:
        with pytest.raises(SystemExit) as stop:
            build_parser().parse_args([*path, "--help"])
        assert stop.value.code == 0, path
    # The command as a newcomer types it: the script make run installs in the virtualenv.
    import subprocess
    import sys
    script = Path(sys.executable).parent / "annotator"
    assert "`.venv/bin/annotator --help`" in README and script.is_file()
    assert subprocess.run([str(script), "--help"], capture_output=True, timeout=120).returncode == 0


def test_every_make_command_the_readme_shows_exists():
    import subprocess
    shown = sorted(set(re.findall(r"`make ([a-z-]+(?: [A-Z_]+=\S+)*)`", README)))
    assert {"run", "test", "clean-db", "run PORT=8600"} <= set(shown)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}  # under make check
    for command in shown:
        plan = subprocess.run(["make", "--no-print-directory", "-n", *command.split()], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        assert plan.returncode == 0, f"`make {command}` (README): {plan.stderr}"
        if command == "run PORT=8600":
            assert "--server.port 8600" in plan.stdout
        if command == "clean-db":  # what the README says it deletes, and nothing else
            assert plan.stdout.split() == ["rm", "-f", "data/annotator.db", "data/annotator.db-wal",
                                           "data/annotator.db-shm"]


def _readme_figures() -> tuple[str, list[list[str]]]:
    """The README's table of latest figures: the paragraph above it and its rows (cells stripped)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Latest figures", 1)[1].split("\n## ", 1)[0]
    intro, _, table = section.partition("\n| ")
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in ("| " + table).splitlines()
            if line.startswith("|")]
    return intro, rows[2:]  # past the header and its rule


def test_the_readme_figures_name_their_machine_date_and_a_real_benchmark():
    intro, rows = _readme_figures()
    assert re.search(r"\d+ cores?", intro) and re.search(r"\d{4}-\d{2}-\d{2}", intro), intro
    assert len(rows) >= 5
    for what, bench, figure, target in rows:
        script = re.match(r"`([a-z_]+\.py)", bench)
        assert script and (ROOT / "bench" / script.group(1)).is_file(), f"{what}: no bench/ script in {bench!r}"
        assert figure and target, what
