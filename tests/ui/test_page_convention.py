"""The page convention, read from the source: every file in pages/ is a thin script.

A page is its docstring, ``from annotator import ui``, ``from annotator.ui import <module>``,
``ctx = ui.page_setup("<its id>")`` and ``<module>.render(ctx)``; everything it shows lives in the screen's
package annotator/ui/<module>/ (tests/ui/test_ui_packages.py). So no page imports the store or opens a connection,
none needs ``# noqa: E402`` (nothing runs before its imports), and the page id guarded is the one
annotator.accounts.access.PAGES registers for that file. Page JavaScript lives in .js files beside the Python that
reads them, which the package installs.
"""

from __future__ import annotations

import ast
import fnmatch
import tomllib
from pathlib import Path

import pytest

from annotator.accounts.access import PAGES

ROOT = Path(__file__).resolve().parents[2]
PAGE_FILES = sorted((ROOT / "pages").glob("*.py"))
PAGE_IDS = {spec.path: spec.page_id for spec in PAGES}
#: The log-in page is shown while nobody is logged in, so it cannot be guarded by ui.page_setup.
UNGUARDED = {"pages/login.py": "login"}


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _imported_modules(tree: ast.Module) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names += [base] + [f"{base}.{alias.name}" for alias in node.names]
    return names


def test_every_page_is_checked():
    assert {_rel(p) for p in PAGE_FILES} == set(PAGE_IDS) | set(UNGUARDED)


@pytest.mark.parametrize("path", PAGE_FILES, ids=[p.stem for p in PAGE_FILES])
def test_page_follows_the_convention(path: Path):
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    imported = _imported_modules(tree)
    assert not [m for m in imported if m == "annotator.store" or m.startswith("annotator.store.")], \
        f"{_rel(path)} imports the store"
    assert "noqa: E402" not in source
    assert "streamlit" not in [m.split(".")[0] for m in imported], f"{_rel(path)} draws itself instead of a ui module"

    body = list(tree.body)
    assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str), "a page starts with its docstring"
    body = body[1:]
    imports = [node for node in body if isinstance(node, (ast.Import, ast.ImportFrom))]
    rest = [node for node in body if node not in imports]
    assert body[:len(imports)] == imports, "imports come first"
    render_modules = set()
    for node in imports:
        if ast.unparse(node) == "from annotator import ui":
            continue
        assert isinstance(node, ast.ImportFrom) and node.module == "annotator.ui", ast.unparse(node)
        render_modules |= {alias.asname or alias.name for alias in node.names}
    assert len(render_modules) == 1, "one render module from annotator/ui"
    (module,) = render_modules
    assert (ROOT / "annotator" / "ui" / module / "page.py").is_file()

    code = [ast.unparse(node) for node in rest]
    rel = _rel(path)
    if rel in UNGUARDED:
        assert code == [f"{module}.render_page()"]
    else:
        assert code == [f"ctx = ui.page_setup({PAGE_IDS[rel]!r})", f"{module}.render(ctx)"]


#: What only JavaScript code says (a string holding it is page JavaScript written inline).
JS_MARKERS = ("function (", "function(", "=>", "document.", "window.", "addEventListener")


def test_page_javascript_lives_in_script_files():
    sources = [ROOT / "app.py", *PAGE_FILES, *sorted((ROOT / "annotator" / "ui").rglob("*.py"))]
    inline = []
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and any(marker in node.value for marker in JS_MARKERS):
                inline.append(f"{_rel(path)}:{node.lineno}")
    assert inline == []


def test_ui_data_files_are_installed_with_the_package():
    ui_dir = ROOT / "annotator" / "ui"
    files = sorted(p.relative_to(ui_dir).as_posix() for p in ui_dir.rglob("*")
                   if p.is_file() and p.suffix not in (".py", ".pyc"))
    assert "pages.toml" in files and [f for f in files if f.endswith(".js")] and [f for f in files if "/" in f]
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["annotator.ui"]
    assert [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)] == []


def test_page_texts_belong_to_registered_pages():
    texts = tomllib.loads((ROOT / "annotator" / "ui" / "pages.toml").read_text(encoding="utf-8"))
    assert set(texts) <= set(PAGE_IDS.values())
    for page_id, text in texts.items():
        assert set(text) == {"about", "needs"}, page_id
        assert all(isinstance(v, str) and v.strip() == v and v for v in text.values()), page_id
