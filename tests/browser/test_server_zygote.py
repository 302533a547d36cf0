"""The browser tests' servers, forked from one process per test worker (tests/zygote.py), behave
as the processes they stand for: their own environment, and one exit code however many threads ask for it."""

from __future__ import annotations

import signal
import threading
import time
import urllib.request

import pytest

from tests import zygote as server_zygote
from tests.browser.conftest import start_server

pytestmark = pytest.mark.browser


@pytest.mark.skipif(not server_zygote.forking(), reason="servers are started as fresh processes")
def test_a_killed_server_answers_its_exit_code_to_every_thread_and_the_next_server_starts(tmp_path):
    server = start_server(f"sqlite:///{tmp_path / 'one.db'}", tmp_path)
    assert isinstance(server.proc, server_zygote.ForkedServer)
    with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=10) as r:
        assert r.status == 200
    codes = []

    def poll_until_gone():
        deadline = time.monotonic() + 20
        while (code := server.proc.poll()) is None and time.monotonic() < deadline:
            time.sleep(0.005)
        codes.append(code)

    # Threads poll while another kills (a test's timer kills its server while the test thread polls it).
    pollers = [threading.Thread(target=poll_until_gone) for _ in range(4)]
    for t in pollers:
        t.start()
    killer = threading.Thread(target=server.kill)
    killer.start()
    for t in [killer, *pollers]:
        t.join(30)
    # As subprocess says it: killed by signal 9 is -9, to each thread that asked, and again afterwards.
    assert codes == [-signal.SIGKILL] * 4 and server.proc.poll() == -signal.SIGKILL
    # The zygote is still there for the next server.
    other = start_server(f"sqlite:///{tmp_path / 'two.db'}", tmp_path)
    try:
        assert other.proc.pid != server.proc.pid
        with urllib.request.urlopen(f"{other.url}/_stcore/health", timeout=10) as r:
            assert r.status == 200
    finally:
        other.stop()
    assert other.proc.poll() is not None
