"""No function in the app grows past 100 lines: a long one is split into named parts a reader can find.

The allow-list holds the long functions that are still being split; it may only shrink. An entry whose function is
gone or now short fails too, so the list is kept to what is really left."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 100

#: "path::qualified name" of the functions over the limit that are yet to be split
STILL_LONG: set[str] = set()


def function_lengths(source: str, where: str = "<sample>") -> dict[str, int]:
    """Every function and method in ``source`` (nested ones too) as ``where::Outer.inner`` → its length in lines,
    decorators left out."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}" if prefix else child.name
                if not isinstance(child, ast.ClassDef):
                    lengths[f"{where}::{name}"] = child.end_lineno - child.lineno + 1
                visit(child, name)
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return lengths


def app_sources() -> list[Path]:
    paths = [ROOT / "app.py", ROOT / "serve.py", *sorted((ROOT / "pages").glob("*.py")),
             *sorted((ROOT / "annotator").rglob("*.py"))]
    return [p for p in paths if p.exists()]


@functools.cache  # both tests read it; it parses every module of the app
def all_lengths() -> dict[str, int]:
    lengths: dict[str, int] = {}
    for path in app_sources():
        lengths |= function_lengths(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    return lengths


def test_no_function_is_over_the_limit():
    long = sorted(f"{name} ({n} lines)" for name, n in all_lengths().items() if n > LIMIT and name not in STILL_LONG)
    assert long == [], f"functions over {LIMIT} lines (split them into named parts):\n" + "\n".join(long)


def test_the_allow_list_holds_only_functions_still_long():
    lengths = all_lengths()
    stale = sorted(name for name in STILL_LONG if lengths.get(name, 0) <= LIMIT)
    assert stale == [], "no longer long or gone (take them off STILL_LONG):\n" + "\n".join(stale)


def test_the_length_check_names_nested_functions_and_methods():
    body = "\n".join(f"        x{i} = {i}" for i in range(LIMIT))
    sample = f"def short():\n    return 1\nclass C:\n    def long(self):\n{body}\n        def inner():\n" \
             f"            return 2\n"
    lengths = function_lengths(sample)
    assert lengths["<sample>::short"] == 2
    assert lengths["<sample>::C.long"] == LIMIT + 3
    assert lengths["<sample>::C.long.inner"] == 2
