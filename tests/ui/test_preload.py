"""The modules that are slow to import are imported when the server starts, so no page's first visit waits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_server_imports_the_slow_modules_at_start():
    # serve.py starts the preload thread; streamlit's emoji table (read at a page's first alert) is among them
    code = ("import sys, threading; from annotator.ui.preload import SLOW_IMPORTS, preload_in_background; "
            "before = [m in sys.modules for m in SLOW_IMPORTS]; preload_in_background().join(120); "
            "print(before.count(True), all(m in sys.modules for m in SLOW_IMPORTS))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=180,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split() == ["0", "True"], out.stderr
    assert "streamlit.emojis" in __import__("annotator.ui.preload", fromlist=["x"]).SLOW_IMPORTS
    serve = (ROOT / "serve.py").read_text(encoding="utf-8")
    assert "preload_in_background()" in serve
