"""annotator/ui/ is grouped by screen, read from the source: one package per page of annotator.accounts.access.PAGES
(its Python, HTML builders and scripts side by side), what several screens share in shell/, session/ and widgets/, no
module over 400 lines, no screen importing another, and tests/ui/ mirroring the packages (tests/ui/<package>/)."""

from __future__ import annotations

import ast
from pathlib import Path

from annotator.accounts.access import PAGES

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "annotator" / "ui"
LIMIT = 400
#: The packages no page is named after: the frame around every page, the session, and the pieces screens share.
SHARED = {"shell", "session", "widgets"}
#: The log-in page is shown while nobody is logged in, so access.PAGES does not register it.
SCREENS = {spec.page_id for spec in PAGES} | {"login"}


def _packages() -> set[str]:
    return {p.name for p in UI.iterdir() if (p / "__init__.py").is_file()}


def test_every_screen_is_a_package_with_its_page():
    missing = sorted(s for s in SCREENS if not (UI / s / "page.py").is_file())
    assert missing == [], f"screens without annotator/ui/<screen>/page.py: {missing}"
    assert _packages() == SCREENS | SHARED


def test_the_ui_folder_holds_only_its_face_the_page_texts_and_packages():
    loose = sorted(p.name for p in UI.iterdir() if p.name != "__pycache__"
                   and p.name not in ("__init__.py", "pages.toml") and not (p / "__init__.py").is_file())
    assert loose == [], f"annotator/ui/ holds what belongs in a package (a screen's, or shell, session, widgets): {loose}"


def test_no_ui_module_is_over_400_lines():
    sizes = {p.relative_to(UI).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in UI.rglob("*.py")}
    long = sorted(f"{name} ({n} lines)" for name, n in sizes.items() if n > LIMIT)
    assert long == [], f"ui modules over {LIMIT} lines (split them along what they draw: page, forms, tables):\n" \
        + "\n".join(long)


def other_packages_imported(source: str, package: str) -> list[str]:
    """What a module of annotator/ui/<package>/ imports from annotator.ui outside its own package, inside a function
    or not, relative or absolute, as ``line: annotator.ui.<name>`` (a name of the face, a package or a module)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["annotator", "ui", package][:4 - node.level]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for t in targets:
            parts = t.split(".")
            if parts[:2] == ["annotator", "ui"] and len(parts) > 2 and parts[2] != package:
                found.append(f"{node.lineno}: {'.'.join(parts[:3])}")
    return found


def test_the_import_check_finds_a_screen_reaching_into_another():
    planted = ("from ... import ui\nfrom ..widgets.text import md_escape\nfrom .charts import chart\n"
               "def f():\n    from ..estimate.page import scored\n    import annotator.ui.team.page\n"
               "    from annotator.ui import agreement, md_escape\n")
    assert other_packages_imported(planted, "judges") == [
        "2: annotator.ui.widgets", "5: annotator.ui.estimate", "6: annotator.ui.team", "7: annotator.ui.agreement",
        "7: annotator.ui.md_escape"]


def test_a_screen_imports_no_other_screen_and_shared_packages_no_screen():
    screens = _packages() - SHARED
    wrong = []
    for package in sorted(_packages()):
        for path in sorted((UI / package).rglob("*.py")):
            for hit in other_packages_imported(path.read_text(encoding="utf-8"), package):
                if hit.rsplit(".", 1)[1] in screens:
                    wrong.append(f"{path.relative_to(ROOT)}:{hit}")
    assert wrong == [], "a ui package imports a screen's package (move what both use into widgets/):\n" + "\n".join(wrong)


def test_the_ui_tests_mirror_the_ui_packages():
    tests = ROOT / "tests" / "ui"
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders - _packages() == set(), "tests/ui/<folder>/ without its package in annotator/ui/"
    assert _packages() - folders == set(), "ui packages without their tests in tests/ui/<package>/"
    assert [f for f in sorted(folders) if not list((tests / f).glob("test_*.py"))] == []
