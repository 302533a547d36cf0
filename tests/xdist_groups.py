"""The xdist groups of the suite: browser tests and ``serial`` tests run one at a time, on one worker; tests
that score through Java run on one worker too.

``make test`` runs pytest-xdist with ``--dist loadgroup``; tests/conftest.py calls :func:`group_serial_tests` from
its collection hook. Kept apart from the conftest (no store, no app imports) so a test can load it alone.
"""

from __future__ import annotations

import os

#: The pytest-xdist group of the tests that run one at a time (``make test`` runs with ``--dist loadgroup``).
SERIAL_GROUP = "serial"
#: The group of the tests that score through Java (METEOR, PTB tokenisation): one worker runs them all, so METEOR's
#: processes (ours and pycocoevalcap's, several seconds to start each) start once instead of once per worker.
JAVA_GROUP = "java"


def group_serial_tests(config, items) -> None:
    """Browser tests (a server and Chromium each) and ``serial`` tests (they kill processes or start many at once)
    share one xdist group: one worker runs them one after another while the others run everything else. Tests
    marked ``java`` share another group."""
    if not getattr(config.option, "loadgroup", False):  # set in pytest-xdist workers under --dist loadgroup
        return
    for item in items:
        if item.get_closest_marker("browser") or item.get_closest_marker("serial"):
            _join_xdist_group(item, SERIAL_GROUP)
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


#: How much lower a worker's priority is while it runs tests outside the serial group (os.nice; niceness 10 gets a
#: tenth of the CPU share of niceness 0 on Linux when both want it).
OTHER_TESTS_NICENESS = 10


def yield_to_the_serial_group(item) -> None:
    """Under ``--dist loadgroup``, a worker lowers its priority (and that of the processes it starts from then on)
    before its first test outside the serial group.

    The serial group runs one test after another on one worker, and is the run's critical path: in a run of
    ``make test`` on 2026-11-28 it ended at 626 s while the workers with everything else, sharing the 2 cores with
    it, ended at 445 s and left a core idle after. Given the cores first, it ends sooner and the others fill what it
    leaves. The worker that has the serial group runs it before anything else (it is the largest group, which
    xdist hands out first), so it stays at its priority until the group is done. Lowering a priority needs no
    privileges; nothing raises it again."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not getattr(item.config.option, "loadgroup", False):
        return
    if item.nodeid.endswith("@" + SERIAL_GROUP):
        return
    global _lowered
    if not _lowered:
        os.nice(OTHER_TESTS_NICENESS)
        _lowered = True


_lowered = False  # whether this process has lowered its priority (yield_to_the_serial_group)
