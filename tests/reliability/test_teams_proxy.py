"""The reverse proxy of docs/teams.md, tested as written: its nginx block, taken from the document, runs in front of
a real app server (Debian's nginx, unprivileged paths, a free loopback port that is neither 80 nor 443, a
certificate made for the test) and the page loads in Chromium through it, its websocket open, and a log-in works.

The only changes to the text are the addresses: the upstream's two processes become the test's app server, the two
`listen` lines a free port each, and the certificate paths the test's. The app refuses a websocket whose Origin is
not the Host the proxy passes on (annotator.accounts.access.is_own_origin), so `Host $host`, which drops the
port, leaves the page a grey skeleton on any port but 443: the same check through a proxy whose block says `$host`
is refused, so this test fails on such a document.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotator.accounts.auth import add_user
from tests.browser.conftest import WAIT_MS, app_server, free_port, login  # noqa: F401  (app_server is a fixture)

from reliability_browser import run_with_browser

pytestmark = [pytest.mark.browser, pytest.mark.serial, pytest.mark.timeout(300)]

TEAMS = Path(__file__).resolve().parents[2] / "docs" / "teams.md"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
PW = "through the proxy"


def documented_site() -> str:
    """The nginx block of docs/teams.md, as written."""
    (block,) = re.findall(r"```nginx\n(.*?)```", TEAMS.read_text(encoding="utf-8"), re.S)
    return block


def _replace(text: str, pattern: str, new: str, count: int) -> str:
    """``text`` with ``pattern`` (a regular expression) replaced ``count`` times exactly: a document that no longer
    has what the test changes fails here, by name, rather than testing something else."""
    out, n = re.subn(pattern, new, text)
    assert n == count, f"docs/teams.md's nginx block: expected {count} x {pattern!r}, found {n}"
    return out


def local_site(site: str, *, app_port: int, port: int, redirect_port: int, cert: Path, key: Path) -> str:
    """The documented block with the test's addresses and certificate, and nothing else changed."""
    site = _replace(site, r"server 127\.0\.0\.1:850[12] ", f"server 127.0.0.1:{app_port} ", 2)
    site = _replace(site, r"listen 80;", f"listen 127.0.0.1:{redirect_port};", 1)
    site = _replace(site, r"listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;", 1)
    site = _replace(site, r"ssl_certificate +\S+;", f"ssl_certificate {cert};", 1)
    return _replace(site, r"ssl_certificate_key +\S+;", f"ssl_certificate_key {key};", 1)


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate and key for 127.0.0.1."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


class Nginx:
    """nginx in the foreground with everything it writes under ``folder`` (no root, no system paths)."""

    def __init__(self, folder: Path, site: str, port: int):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.port = folder, port
        temp = "".join(f"    {kind}_temp_path {folder / kind};\n" for kind in ("client_body", "proxy", "fastcgi",
                                                                                  "uwsgi", "scgi"))
        (folder / "nginx.conf").write_text(
            f"worker_processes 1;\npid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'} info;\n"
            f"events {{ worker_connections 256; }}\nhttp {{\n    access_log {folder / 'access.log'};\n{temp}"
            f"{site}\n}}\n", encoding="utf-8")
        check = subprocess.run([NGINX, "-t", "-p", str(folder), "-e", str(folder / "error.log"), "-c",
                                str(folder / "nginx.conf")], capture_output=True, text=True)
        assert check.returncode == 0, f"nginx refuses the documented block:\n{check.stderr}"
        self.proc = subprocess.Popen([NGINX, "-p", str(folder), "-e", str(folder / "error.log"), "-c",
                                      str(folder / "nginx.conf"), "-g", "daemon off;"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while True:
            assert self.proc.poll() is None, f"nginx stopped: {self.proc.stderr.read().decode(errors='replace')}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "nginx did not listen within 20 s"
                time.sleep(0.05)

    def stop(self) -> None:
        """Stop nginx (TERM: a fast shutdown) and wait for it."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def websocket_status(port: int) -> int:
    """The HTTP status nginx gives a browser's websocket handshake for the app's stream on ``port``."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    key = base64.b64encode(os.urandom(16)).decode()
    origin = f"https://127.0.0.1:{port}"
    request = (f"GET /_stcore/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\n"
               f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
               f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: streamlit\r\n\r\n")
    with socket.create_connection(("127.0.0.1", port), timeout=20) as raw, \
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(request.encode())
        head = tls.recv(4096).decode(errors="replace")
    return int(head.split()[1])


@pytest.fixture
def proxied(app_server, tmp_path):
    """(app server, a function starting nginx with a block: its port); every nginx is stopped at the end."""
    server = app_server(f"sqlite:///{tmp_path / 'proxied.db'}")
    cert, key = certificate(tmp_path)
    started: list[Nginx] = []

    def start(site: str) -> int:
        port, redirect = free_port(), free_port()
        assert {port, redirect}.isdisjoint({80, 443})
        local = local_site(site, app_port=server.port, port=port, redirect_port=redirect, cert=cert, key=key)
        started.append(Nginx(tmp_path / f"nginx-{len(started)}", local, port))
        return port

    yield server, start
    for nginx in started:
        nginx.stop()


def test_the_documented_proxy_serves_the_page_and_its_websocket(proxied):
    server, start = proxied
    port = start(documented_site())
    store = server.store()
    try:
        add_user(store, "lea", "lead", PW)
    finally:
        store.dispose()
    assert websocket_status(port) == 101
    base = f"https://127.0.0.1:{port}"

    def through_the_proxy(browser) -> list[str]:
        context = browser.new_context(ignore_https_errors=True, viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(WAIT_MS)
        try:
            page = context.new_page()
            frames: list[str] = []
            page.on("websocket", lambda ws: ws.on("framereceived", lambda _: frames.append(ws.url)))
            login(page, base, "lea", PW)  # the form comes over the websocket; the log-in goes through the cookie route
            expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("lea")
            return frames
        finally:
            context.close()

    frames = run_with_browser(through_the_proxy)
    assert frames and set(frames) == {f"wss://127.0.0.1:{port}/_stcore/stream"}
    assert "refused a websocket" not in server.log()


def test_with_host_the_websocket_is_refused(proxied):
    """The control: the same block with `Host $host` (what docs/teams.md said before) passes the port-less host on,
    and the app refuses the page's websocket, so the test above fails on that document."""
    server, start = proxied
    port = start(_replace(documented_site(), r"proxy_set_header Host \S+;", "proxy_set_header Host $host;", 1))
    assert websocket_status(port) != 101
    deadline = time.monotonic() + 10
    while "refused a websocket from another origin" not in server.log():
        assert time.monotonic() < deadline, server.log()[-2000:]
        time.sleep(0.1)
    assert f"Origin 'https://127.0.0.1:{port}', Host '127.0.0.1'" in server.log()
