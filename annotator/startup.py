"""What the app does in the background so that no page waits for it: one list of start-up tasks, one switch each.

Each :class:`StartupTask` in :data:`TASKS` says when it starts — as the server starts (``serve.py`` calls
:func:`start` with :data:`SERVER_START`), or at the first visit of one of its pages (``ui.page_setup`` calls
:func:`start` with the page's id) — the environment variable that switches it off (``0``, ``false`` or ``no``),
and what it does. Each task starts at most once per process and runs in a daemon thread at low priority; none of
them is needed for correctness: a page that finds one not done does the work itself.

METEOR's Java processes (about 0.8 GB each once warm) start only when a page that scores opens, never at log-in or
on another page: the local admin of a first start may open every page, and a plain visit to Annotate started two
of them.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .config import Settings, load_settings

log = logging.getLogger(__name__)

#: The trigger of the tasks that start with the server (serve.py).
SERVER_START = "server start"

#: In the order pages meet them: any page's first message (streamlit's emoji table, a regular expression of every
#: emoji, 0.3–1.5 s to compile), the dashboards' charts, then the estimators (scipy.stats, about a second each on a
#: shared 2-core machine); every page's own module follows.
SLOW_IMPORTS = ("streamlit.emojis", "altair", "scipy.stats", "annotator.estimate")


@dataclass(frozen=True)
class StartupTask:
    """One piece of background work: its name, its switch, when it starts and what it does."""

    name: str
    switch: str  # the environment variable; 0 (false, no) switches the task off
    starts: str | frozenset[str]  # SERVER_START, or the ids of the pages whose first visit starts it
    does: str  # one line for the docs (docs/architecture.md lists every task)
    run: Callable[[Settings], object]  # starts the work in the background; returns its thread or state

    def enabled(self, environ: Mapping[str, str] | None = None) -> bool:
        """False when the task's switch is set to 0, false or no."""
        env = os.environ if environ is None else environ
        return env.get(self.switch, "1").strip().lower() not in ("0", "false", "no")

    def started_by(self, trigger: str) -> bool:
        """True when ``trigger`` (SERVER_START or a page id) starts this task."""
        return trigger == self.starts if isinstance(self.starts, str) else trigger in self.starts


def _low_priority() -> None:
    """Put the calling thread behind any page run for the CPU (Linux sets a thread's niceness by its id)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass


def preload(modules=SLOW_IMPORTS, *, dictionary: bool = True) -> None:
    """Import ``modules`` and every page's module (a missing or failing one is logged and skipped), then, with
    ``dictionary``, read the CMU pronouncing dictionary the readability measures count syllables with (2–5 s;
    textstat keeps it for the process)."""
    from .accounts.access import PAGES
    _low_priority()
    for name in (*modules, *(f"annotator.ui.{spec.page_id}" for spec in PAGES)):  # then every page's own code
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a page that needs it will say what is wrong
            log.warning("preloading %s failed: %s", name, exc)
    if dictionary:
        try:
            from .diversity.readability import readability
            readability(["A short sentence to read the dictionary."])
        except Exception as exc:  # noqa: BLE001 - as above
            log.warning("reading the pronouncing dictionary failed: %s", exc)


def preload_in_background(modules=SLOW_IMPORTS) -> threading.Thread:
    """:func:`preload` in a daemon thread; returns the thread."""
    thread = threading.Thread(target=preload, args=(modules,), name="preload-imports", daemon=True)
    thread.start()
    return thread


def _imports(settings: Settings) -> threading.Thread:
    return preload_in_background()


def _dashboards(settings: Settings) -> threading.Thread:
    from .frames.warm import warm_up_in_background
    return warm_up_in_background(settings.database_url, snapshot_base=settings.frame_cache)


def _metrics(settings: Settings) -> dict[str, str]:
    from .metrics.registry import REGISTRY  # every metric module, only once a page that scores opens
    return REGISTRY.warm_up(wait=False)


#: The pages that score captions with the metrics, and so use METEOR's warm processes.
SCORING_PAGES = frozenset({"rescore", "correct"})

#: Every start-up task, in the order they start.
TASKS: tuple[StartupTask, ...] = (
    StartupTask("imports", "ANNOTATOR_PRELOAD", SERVER_START,
                "import the modules that are slow to import (streamlit's emoji table, altair, scipy.stats, every "
                "page's module), then read the pronouncing dictionary of the readability measures", _imports),
    StartupTask("dashboards", "ANNOTATOR_WARM_DASHBOARDS", SERVER_START,
                "read the judgement frames and assignments of the 3 projects with the newest judgements (from their "
                "snapshots when they have them), once the store holds 20,000 judgements", _dashboards),
    StartupTask("metrics", "ANNOTATOR_WARM_METRICS", SCORING_PAGES,
                "start METEOR's Java processes and warm them, at the first visit of Rescoring or Correction (both "
                "pages then share that one pool)", _metrics),
)

_started: dict[str, object] = {}
_lock = threading.Lock()


def start(trigger: str, *, environ: Mapping[str, str] | None = None,
          settings: Settings | None = None) -> dict[str, object]:
    """Start the tasks ``trigger`` starts (SERVER_START, or a page id) that are switched on and have not started
    in this process; return what each started task's run returned, by name. Cheap when there is none."""
    due = [task for task in TASKS if task.started_by(trigger) and task.name not in _started]
    if not due:
        return {}
    launched = {}
    for task in due:
        if not task.enabled(environ):
            continue
        with _lock:
            if task.name in _started:
                continue
            settings = settings or load_settings(environ)
            _started[task.name] = launched[task.name] = task.run(settings)
    return launched


def started() -> dict[str, object]:
    """The tasks started in this process so far, by name (what their run returned)."""
    return dict(_started)


def forget(*names: str) -> None:
    """Forget that the tasks ``names`` (default: all) started, so their trigger starts them again (tests)."""
    for name in names or list(_started):
        _started.pop(name, None)
