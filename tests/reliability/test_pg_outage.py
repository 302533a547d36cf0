"""The PostgreSQL server goes away and comes back while the app writes.

These tests stop and restart a private PostgreSQL cluster (same binaries as
the machine's server, its own port and data directory) so that other test runs
using the shared server on 127.0.0.1:5432 are never disturbed. The cluster is
started again in a ``finally`` whatever happens and removed at the end.

What must hold: a save made while the server is down raises StoreUnavailable
with a readable message (no raw driver exception, no password); once the
server is back the *same* Store object saves again (dead pooled connections
are detected by pool_pre_ping and replaced); and every save that returned is
in the database.
"""

from __future__ import annotations

import random
import time
import pytest
from sqlalchemy.exc import OperationalError

import reliability_helpers as H
from tests.browser.conftest import app_server  # noqa: F401  (a fixture)
from annotator.errors import StoreUnavailable
from annotator.store import open_store
from annotator.store.judgements import save_judgement

pytestmark = [pytest.mark.serial, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def cluster():
    try:
        c = H.PrivateCluster()
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.fail(f"could not start a private PostgreSQL cluster: {exc}")
    try:
        yield c
    finally:
        c.destroy()


@pytest.fixture
def pg(cluster):
    """A fresh database on the private cluster; the server is running again after the test, whatever happened."""
    import uuid
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool
    name = f"outage_{uuid.uuid4().hex[:8]}"
    # NullPool: a fresh connection each time, as the server restarts under it.
    admin = create_engine(cluster.url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = cluster.url.rsplit("/", 1)[0] + f"/{name}"
    try:
        yield cluster, url
    finally:
        cluster.ensure_running()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _assert_clear(exc: StoreUnavailable, port: int) -> None:
    msg = str(exc)
    assert "is not available" in msg and "try again" in msg, msg
    assert f":{port}/" in msg, "the message names the database it could not reach"
    assert "Traceback" not in msg and "\n" not in msg, "one readable line, not a driver dump"


def test_saves_during_outage_raise_store_unavailable_then_same_store_recovers(pg):
    cluster, url = pg
    store = open_store(url)
    cids, uids = H.seed_project(store, n_items=10, users=[("ann", "annotator")])
    acks = []

    def save(i):
        label, types = ("inaccurate", ("object",)) if i % 2 else ("accurate", ())
        rev = save_judgement(store, cids[i % 10], uids["ann"], label=label, error_types=types)
        acks.append({"key": [cids[i % 10], uids["ann"], "annotation"], "rev": rev, "label": label, "types": list(types)})

    for i in range(20):
        save(i)
    cluster.stop("fast")  # every pooled connection is now dead
    try:
        for i in range(20, 25):
            with pytest.raises(StoreUnavailable) as err:
                save(i)
            _assert_clear(err.value, cluster.port)
            assert "Connection refused" in str(err.value) or "connection" in str(err.value).lower()
        with pytest.raises(StoreUnavailable):
            with store.read() as conn:
                conn.exec_driver_sql("SELECT 1")
        assert store.ping() is False
    finally:
        cluster.start()
    # The same Store object, no reconnect dance by the caller: the next save just works.
    for i in range(25, 45):
        save(i)
    assert store.ping() is True
    assert H.check_against_acks(store, acks) == {"keys": 10, "revisions": 40, "extra": 0}
    store.dispose()


def test_server_killed_inside_a_transaction_rolls_it_back(pg):
    """A crash ('immediate' stop) between statements of a save: the save raises StoreUnavailable and leaves no trace."""
    cluster, url = pg
    store = open_store(url)
    cids, uids = H.seed_project(store, n_items=2, users=[("ann", "annotator")])
    save_judgement(store, cids[0], uids["ann"], label="accurate")
    from annotator.store.judgements import insert_judgement
    try:
        with pytest.raises(StoreUnavailable) as err:
            with store.transaction() as conn:
                insert_judgement(conn, cids[0], uids["ann"], label="inaccurate", error_types=("object",))
                cluster.stop("immediate")
                insert_judgement(conn, cids[1], uids["ann"], label="accurate")
        _assert_clear(err.value, cluster.port)
        # The driver's error stays chained for the log; the message itself stays one readable line.
        assert isinstance(err.value.__cause__, OperationalError)
    finally:
        cluster.start()
    hist, cur = H.check_consistent(store)
    assert sorted(k for k, _ in hist) == [(cids[0], uids["ann"], "annotation")]
    assert cur[(cids[0], uids["ann"], "annotation")].label == "accurate"
    assert save_judgement(store, cids[0], uids["ann"], label="inaccurate", error_types=("count",)) == 2
    store.dispose()


@pytest.mark.slow
def test_server_restarted_while_a_process_writes_in_a_loop(pg, tmp_path):
    """A writer process saves in a loop; the server goes down twice for a second and comes back.

    The writer keeps one Store throughout. Saves during the outages fail with
    StoreUnavailable only (any other exception would end the process with a
    non-zero exit code); saves after each restart succeed again; every
    acknowledged save is stored. A save whose COMMIT reached the server just
    before the connection dropped may be stored without having been
    acknowledged (the user sees an error and saves again): at most one such row
    per failed save is allowed.
    """
    cluster, url = pg
    store = open_store(url)
    cids, uids = H.seed_project(store, n_items=30, users=[("ann", "annotator"), ("bob", "annotator")])
    rng = random.Random(7)
    plan = [H.Save(c, uids[u], "annotation", *H.random_values(rng)) for c in cids for u in ("ann", "bob")]
    log = tmp_path / "w0.log"
    ctx = H.mp_context()
    proc = ctx.Process(target=H.write_plan, args=(url, plan, str(log)), kwargs={"loop": True, "seed": 3, "retry_pause": 0.05})
    proc.start()
    try:
        marks = []
        for mode in ("fast", "immediate"):
            _wait_for_acks(log, (len(marks) + 1) * 150, proc)
            cluster.stop(mode)
            time.sleep(1.0)
            cluster.start()
            marks.append(len(H.read_log(log)[0]))
        _wait_for_acks(log, marks[-1] + 150, proc)  # writing resumed after the last restart
    finally:
        cluster.ensure_running()
        (tmp_path / "w0.log.stop").touch()
        proc.join(60)
        if proc.is_alive():
            proc.kill()
    assert proc.exitcode == 0, "the writer died on an exception other than StoreUnavailable"
    acks, fails = H.read_log(log)
    assert fails, "the outages were not seen by the writer"
    for f in fails:
        assert "is not available" in f["failed"] and "try again" in f["failed"], f["failed"]
    summary = H.check_against_acks(store, acks, unacked_allowed=len(fails))
    assert summary["revisions"] >= marks[-1] + 150
    store.dispose()


def _wait_for_acks(log, n: int, proc, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while len(H.read_log(log)[0]) < n:
        assert proc.is_alive(), "the writer process ended early"
        assert time.monotonic() < deadline, f"fewer than {n} saves acknowledged after {timeout} s"
        time.sleep(0.05)


@pytest.mark.browser
@pytest.mark.slow
def test_the_app_reports_the_outage_keeps_the_choice_and_saves_once_back(pg, app_server, tmp_path):  # noqa: F811
    """The annotate page in a browser while the database stops: the Save click says plainly that the
    database is down, the caption and the ticked type stay on screen, a new session gets the same
    plain notice, and the same click after the restart stores the judgement once."""
    from playwright.sync_api import expect

    from annotator.assignment import assign
    from annotator.accounts.auth import add_user
    from reliability_browser import PW, current_of, new_page, run_with_browser
    from tests.apptest_helpers import seed_project

    cluster, url = pg
    store = open_store(url)
    caps = seed_project(store, "demo", n_items=4, image_root=str(tmp_path / "img"), with_images=True)
    add_user(store, "alice", "annotator", PW)
    assign(store, "demo", ["alice"], double_fraction=0)
    server = app_server(url)

    def body(browser):
        _, page = new_page(browser, server.url, "alice")
        caption = page.locator('[data-testid="ann-caption"]')
        expect(caption).to_contain_text("number 0")
        page.locator(".st-key-ann_type_gender label").click()
        expect(page.locator('.st-key-ann_label input[type="radio"]').nth(1)).to_be_checked()
        cluster.stop("fast")
        try:
            page.locator(".st-key-ann_save button").click()
            expect(page.get_by_text("is not available").first).to_be_visible()
            assert "redacted" not in page.locator("body").inner_text()
            expect(caption).to_contain_text("number 0")  # the caption and the choice are still there
            expect(page.locator(".st-key-ann_type_gender input")).to_be_checked()
            # A session that starts during the outage gets the same plain notice, not an error page.
            _, fresh = new_page(browser)
            fresh.goto(server.url + "/annotate")
            expect(fresh.get_by_text("is not available").first).to_be_visible()
            assert "redacted" not in fresh.locator("body").inner_text()
        finally:
            cluster.start()
        page.locator(".st-key-ann_save button").click()
        expect(page.get_by_text("Saved item img0.jpg")).to_be_visible()
        expect(caption).to_contain_text("number 1")

    run_with_browser(body)
    j = current_of(store, caps[0])
    assert (j.label.value, j.error_types, j.revision) == ("inaccurate", ("gender",), 1)
    store.dispose()
