"""Modules the pages need that take long to import, imported once when the server starts, in the background,
so that no page's first visit waits for them: the emoji table streamlit reads at a page's first alert (a
regular expression of every emoji, 0.3–1.5 s to compile), altair for the charts, scipy.stats for the
estimates and the Assignment page's next human sample (about a second each on a shared 2-core machine), every
page's module (Lexical diversity's imports take 0.6 s), then the CMU pronouncing dictionary the readability
measures of Lexical diversity count syllables with (2–5 s).
``ANNOTATOR_PRELOAD=0`` turns it off (serve.py)."""

from __future__ import annotations

import importlib
import logging
import os
import threading

log = logging.getLogger(__name__)

#: In the order pages meet them: any page's first message, the dashboards' charts, then the estimators.
SLOW_IMPORTS = ("streamlit.emojis", "altair", "scipy.stats", "annotator.estimate")


def preload(modules=SLOW_IMPORTS, *, dictionary: bool = True) -> None:
    """Import ``modules`` and every page's module (a missing or failing one is logged and skipped), then, with
    ``dictionary``, read the pronouncing dictionary (textstat keeps it for the process)."""
    from ..accounts.access import PAGES
    try:  # behind any page run for the CPU (Linux sets a thread's niceness by its id)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass
    for name in (*modules, *(f"annotator.ui.{spec.page_id}" for spec in PAGES)):  # then every page's own code
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a page that needs it will say what is wrong
            log.warning("preloading %s failed: %s", name, exc)
    if dictionary:
        try:
            from ..diversity.readability import readability
            readability(["A short sentence to read the dictionary."])
        except Exception as exc:  # noqa: BLE001 - as above
            log.warning("reading the pronouncing dictionary failed: %s", exc)


def preload_in_background(modules=SLOW_IMPORTS) -> threading.Thread:
    """:func:`preload` in a daemon thread; returns the thread."""
    thread = threading.Thread(target=preload, args=(modules,), name="preload-imports", daemon=True)
    thread.start()
    return thread
