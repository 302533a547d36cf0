"""Import paths the benchmarks share (imported as ``import _paths`` by a bench run as ``python bench/NAME.py``).

Importing it puts the repository root first on ``sys.path`` (so ``annotator`` is this checkout's) and makes
this checkout's ``tests/`` folder the ``tests`` package: the suite's helpers import each other as ``tests.…``,
and some installed distributions bring a top-level ``tests`` package of their own into site-packages, which
would win over the folder (a namespace package) outside pytest. :func:`on_path` adds a folder of the suite
whose modules a bench imports by their own name (``tests/browser``'s conftest, ``tests/reliability``'s helpers).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

#: The repository's root folder.
ROOT = Path(__file__).resolve().parent.parent


def use_repo_tests() -> None:
    """Make this checkout's ``tests/`` folder the ``tests`` package (idempotent)."""
    mod = sys.modules.get("tests")
    if mod is None or str(ROOT / "tests") not in list(getattr(mod, "__path__", [])):
        pkg = types.ModuleType("tests")
        pkg.__path__ = [str(ROOT / "tests")]
        sys.modules["tests"] = pkg


def on_path(*folders: str) -> None:
    """Put these folders of the repository (``"tests/browser"``) first on ``sys.path``, once each."""
    for folder in reversed(folders):
        path = str(ROOT / folder)
        if path not in sys.path:
            sys.path.insert(0, path)


if sys.path[:1] != [str(ROOT)]:
    sys.path.insert(0, str(ROOT))
use_repo_tests()
