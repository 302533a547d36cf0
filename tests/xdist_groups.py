"""The xdist groups of the suite: two lanes of tests that run one at a time each, every one on a worker of its own
(browser tests; ``serial`` tests), and the tests that score through Java on one worker too.

``make test`` runs pytest-xdist with ``--dist loadgroup``; tests/conftest.py calls :func:`group_serial_tests` from
its collection hook. Kept apart from the conftest (no store, no app imports) so a test can load it alone.
"""

from __future__ import annotations

import os

#: The pytest-xdist group of the tests marked ``serial``: they kill processes or start many at once (writer
#: processes, app servers, browser sessions), and run one at a time (``make test`` runs with ``--dist loadgroup``).
SERIAL_GROUP = "serial"
#: The group of the other browser tests: a second lane, one test at a time beside the serial one.
BROWSER_GROUP = "browser"
#: The groups that run at the run's own priority: the lanes of the critical path (:func:`yield_to_the_lanes`).
LANES = (SERIAL_GROUP, BROWSER_GROUP)
#: The group of the tests that score through Java (METEOR, PTB tokenisation): one worker runs them all, so METEOR's
#: processes (ours and pycocoevalcap's, several seconds to start each) start once instead of once per worker.
JAVA_GROUP = "java"


def group_serial_tests(config, items) -> None:
    """Tests marked ``serial`` (they kill processes or start many at once, a browser test among them or not) share
    one xdist group; the other browser tests (a server and Chromium each) share a second: two workers run one lane
    each, one test after another, while the third runs everything else. Tests marked ``java`` share a third group.

    One lane for every browser and serial test kept a core idle for most of a run (measured 2026-11-28 on a quiet
    2-core machine: 95 tests, 420 s one after another, about 1.3 cores busy, the whole of a 8 min 34 s run): two
    lanes keep both cores at work."""
    if not getattr(config.option, "loadgroup", False):  # set in pytest-xdist workers under --dist loadgroup
        return
    for item in items:
        if item.get_closest_marker("serial"):
            _join_xdist_group(item, SERIAL_GROUP)
        elif item.get_closest_marker("browser"):
            _join_xdist_group(item, BROWSER_GROUP)
        elif item.get_closest_marker("java"):
            _join_xdist_group(item, JAVA_GROUP)


def _join_xdist_group(item, group: str) -> None:
    """What pytest-xdist does for an ``xdist_group`` mark: its scheduler groups tests by an "@group" suffix of the
    node id. Its own hook sets ``item._nodeid``, which pytest 9 no longer reads (it keeps a structured ``_id``):
    with pytest 9.2 and xdist 3.8.0, tests marked xdist_group were spread over the workers."""
    nodeid = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):
        from _pytest.nodeid import coerce_node_id
        item._id = coerce_node_id(nodeid)
    else:
        item._nodeid = nodeid


def cold_java_first(items) -> None:
    """Tests marked ``cold_java`` check how METEOR's processes start: put them first, so they find the test
    process's processes not started yet instead of stopping warm ones to start them again (several seconds of
    CPU each)."""
    items.sort(key=lambda item: item.get_closest_marker("cold_java") is None)  # stable: the rest keep their order


#: How much lower a worker's priority is while it runs tests outside the two lanes (os.nice; niceness 10 gets a
#: tenth of the CPU share of niceness 0 on Linux when both want it).
OTHER_TESTS_NICENESS = 10


def yield_to_the_lanes(item) -> None:
    """Under ``--dist loadgroup``, a worker lowers its priority (and that of the processes it starts from then on)
    before its first test outside the two lanes (:data:`LANES`).

    Each lane runs one test after another on one worker, and they are the run's critical path: in a run of
    ``make test`` on 2026-11-28, when browser and serial tests were one lane, it ended at 626 s while the workers
    with everything else, sharing the 2 cores with it, ended at 445 s and left a core idle after. Given the cores
    first, the lanes end sooner and the others fill what they leave. A worker that has a lane runs it before
    anything else (with 3 workers the two lanes and the Java group are the three largest groups, which xdist hands
    out first, one to each worker), so it stays at its priority until the lane is done. Lowering a priority needs
    no privileges; nothing raises it again."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not getattr(item.config.option, "loadgroup", False):
        return
    if any(item.nodeid.endswith("@" + lane) for lane in LANES):
        return
    global _lowered
    if not _lowered:
        os.nice(OTHER_TESTS_NICENESS)
        _lowered = True


_lowered = False  # whether this process has lowered its priority (yield_to_the_lanes)
