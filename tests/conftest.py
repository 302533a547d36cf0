"""Shared fixtures.

``store``: a fresh, migrated store, once on SQLite (a copy of a migrated file)
and once on PostgreSQL (a schema of database ``test`` on 127.0.0.1:5432,
emptied for the next test or dropped afterwards): tests/fresh_stores.py.
Set ANNOTATOR_TEST_PG_URL to point elsewhere; if the server is not reachable
the PostgreSQL variants fail loudly (CI must exercise both) unless
ANNOTATOR_TEST_SKIP_PG=1.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# "tests" names this folder (tests.apptest_helpers, ...). Some packages install a top-level "tests" package of their
# own (ppi-python does), which would win over this folder, a namespace package: bind the name to this folder first.
_tests_package = types.ModuleType("tests")
_tests_package.__path__ = [str(ROOT / "tests")]
sys.modules["tests"] = _tests_package

from hypothesis import settings as hypothesis_settings  # noqa: E402

from annotator.store import Store, open_store  # noqa: E402
from tests.fresh_stores import SchemaPool, SqliteTemplate  # noqa: E402
from tests.property_helpers import BASE_EXAMPLES  # noqa: E402
from tests.xdist_groups import cold_java_first, group_serial_tests, yield_to_the_lanes  # noqa: E402

# Hypothesis profiles (tests/property_helpers.py): the default runs each property's stated count; `deep`, for a
# nightly run (`pytest --hypothesis-profile deep`), ten times as many.
hypothesis_settings.register_profile("deep", max_examples=10 * BASE_EXAMPLES)

# The test run plays the administrator: the temporary folders tests keep their images in are allowed image roots
# (annotator.images.check_image_root) for this process and the servers it starts. Tests of that policy set
# ANNOTATOR_IMAGE_ROOTS themselves.
# The first visit of Rescoring or Correction starts METEOR's processes in the background (one pool per server
# process, annotator.startup); the suite's many app servers and AppTests leave that off, and
# tests/core/test_metric_warm_up_at_start.py checks it with it on.
os.environ.setdefault("ANNOTATOR_WARM_METRICS", "0")
# Likewise the imports a server makes in the background at start (tests/core/test_startup.py checks them).
os.environ.setdefault("ANNOTATOR_PRELOAD", "0")
# One METEOR process per test process (each start loads its tables for several seconds, and two per worker would
# hold 2.4 GB): started on first use and kept warm for the whole run. Tests of the pool's split set their own size.
os.environ.setdefault("ANNOTATOR_METEOR_PROCESSES", "1")
# Passwords are hashed with Argon2id's smallest parameters (annotator.accounts.auth.FAST_HASHING_VARIABLE): the
# suite creates and checks thousands of them, at 0.2 s of CPU each with the real ones. tests/core/test_auth.py checks
# the real parameters.
os.environ.setdefault("ANNOTATOR_PASSWORD_HASHING", "fast")
os.environ.setdefault("ANNOTATOR_IMAGE_ROOTS", os.pathsep.join([tempfile.gettempdir(), str(ROOT / "data")]))

PG_URL = os.environ.get("ANNOTATOR_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
SKIP_PG = os.environ.get("ANNOTATOR_TEST_SKIP_PG") == "1"


_PG_SCHEMAS = SchemaPool(PG_URL)
_SQLITE_TEMPLATE = SqliteTemplate()


def _pg_schema_store():
    """A store on a brand-new PostgreSQL schema of its own (not one a test gave back); returns (store, schema name,
    its URL). :func:`_drop_pg_schema` drops it."""
    store, schema = _PG_SCHEMAS.create(open_store)
    return store, schema, store.url


def _drop_pg_schema(schema: str) -> None:
    _PG_SCHEMAS.drop(schema)


@contextlib.contextmanager
def _fresh_sqlite_store(folder: Path):
    store = _SQLITE_TEMPLATE.copy_to(folder / "annotator.db", open_store)
    yield store
    store.dispose()


@contextlib.contextmanager
def _fresh_pg_store():
    if SKIP_PG:
        pytest.skip("ANNOTATOR_TEST_SKIP_PG=1")
    store, schema = _PG_SCHEMAS.take(open_store)
    yield store
    join_background_readers()
    store.dispose()
    _PG_SCHEMAS.give_back(schema)


def join_background_readers(timeout: float = 30.0) -> None:
    """Wait for the dashboards' background work a test may have started on the store (snapshot writers,
    parallel reads): dropping the schema under them would deadlock on PostgreSQL."""
    import threading
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and thread.name.startswith(("frame-snapshot", "frame-read", "dashboard-warm-up")):
            thread.join(timeout)


@pytest.fixture
def sqlite_store(tmp_path) -> Store:
    """A fresh SQLite store in a temporary file."""
    with _fresh_sqlite_store(tmp_path) as store:
        yield store


@pytest.fixture
def pg_store() -> Store:
    """A fresh PostgreSQL store (own schema)."""
    with _fresh_pg_store() as store:
        yield store


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql)])
def store(request, tmp_path) -> Store:
    """A fresh store, on SQLite and on PostgreSQL (that variant marked ``postgresql``: ``make check`` leaves it out)."""
    with _fresh_sqlite_store(tmp_path) if request.param == "sqlite" else _fresh_pg_store() as s:
        yield s


@pytest.fixture
def store_url(store) -> str:
    """The URL of the ``store`` fixture (for CLI and app tests)."""
    return store.url


_MAIN_MODULE = sys.modules["__main__"]


@pytest.fixture(autouse=True)
def _own_frame_snapshots(tmp_path, monkeypatch):
    """The dashboards keep judgement snapshots on disk (annotator.frames.snapshots): each test keeps its
    own (also for the app servers it starts), so none starts from another test's files."""
    monkeypatch.setenv("ANNOTATOR_FRAME_CACHE", str(tmp_path / "frame-snapshots"))


@pytest.fixture(autouse=True)
def _keep_the_main_module():
    """Streamlit's AppTest leaves the app script installed as ``__main__``; a child process started later with
    spawn or forkserver (the concurrency and race tests) would run that script again and die. Put pytest's
    own ``__main__`` back after every test."""
    yield
    if sys.modules.get("__main__") is not _MAIN_MODULE:
        sys.modules["__main__"] = _MAIN_MODULE


def pytest_collection_modifyitems(config, items):
    cold_java_first(items)
    group_serial_tests(config, items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    yield_to_the_lanes(item)  # before the test's fixtures start any process


#: user_properties key of the lines of measured figures tests report (the reliability_report fixture of
#: tests/reliability/conftest.py): collected here, where the xdist controller sees every test's report.
FIGURES_PROPERTY = "reliability figure"
_FIGURES: list[str] = []


def pytest_runtest_logreport(report):
    if report.when == "call":
        _FIGURES.extend(value for key, value in report.user_properties if key == FIGURES_PROPERTY)


def pytest_terminal_summary(terminalreporter):
    if _FIGURES:
        terminalreporter.section("reliability figures")
        for line in _FIGURES:
            terminalreporter.write_line(line)
