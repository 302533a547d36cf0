"""A real Label Studio server for the tests: Label Studio Community from the package index (the version pinned in
requirements-labelstudio.txt, installed by `make test` in .venv-labelstudio), started on a free loopback port with a
fresh data directory, and a small client of its REST API.

How the admin and the API token come about without a person (Label Studio 1.23): ``label-studio start --username
EMAIL --password PW`` creates the admin on a fresh data directory. Its personal access tokens are JWTs (the legacy
token of ``--user-token`` is switched off by default), so the client logs in through the log-in form once, creates
a personal access token (POST /api/token/) and exchanges it for short-lived access tokens (POST
/api/token/refresh/), sent as ``Authorization: Bearer …``.

Besides the data directory the server gets the local-files recipe of docs/formats.md (serving files under one
document root, for the pictures) and no telemetry (no update check, error reports or analytics); every other
setting is Label Studio's default.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The Python of Label Studio's virtualenv (the SDK's too: ANNOTATOR_LABEL_STUDIO_PYTHON names another).
LS_PYTHON = Path(os.environ.get("ANNOTATOR_LABEL_STUDIO_PYTHON", ROOT / ".venv-labelstudio" / "bin" / "python"))
ADMIN_EMAIL, ADMIN_PASSWORD = "admin@annotator.test", "Admin-pass-4-tests"
#: Label Studio migrates a fresh database before it listens: 66 s on a 2-core machine at load 0.8, 206 s at load 20
#: (2026-11-29).
START_TIMEOUT = 600.0
#: Access tokens live 5 minutes; take a fresh one well before.
ACCESS_TOKEN_AGE = 120.0


def label_studio_command() -> Path:
    """The ``label-studio`` program of the test virtualenv."""
    return LS_PYTHON.parent / "label-studio"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabelStudioError(RuntimeError):
    """Label Studio answered with an error status (its status and body are in the message)."""

    def __init__(self, method: str, path: str, status: int, body: str):
        super().__init__(f"{method} {path}: {status} {body[:2000]}")
        self.status, self.body = status, body


@dataclass
class LabelStudio:
    """A running Label Studio server and an API client logged in as its admin."""

    url: str
    data_dir: Path
    files_root: Path
    proc: subprocess.Popen
    log_path: Path
    _access: str = ""
    _access_at: float = 0.0
    _refresh: str = ""
    _opener: urllib.request.OpenerDirector = field(default=None, repr=False)

    # ---------------------------------------------------------------- the API

    def request(self, method: str, path: str, body=None, *, auth: bool = True, raw: bool = False):
        """Call the API (``path`` from the server's root, e.g. ``/api/users/``); the decoded JSON answer (or the
        bytes with ``raw``). LabelStudioError for an error status."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"} if data is not None else {}
        if auth:
            headers["Authorization"] = f"Bearer {self._token()}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=300) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as exc:
            raise LabelStudioError(method, path, exc.code, exc.read().decode("utf-8", "replace")) from None
        if raw:
            return payload
        return json.loads(payload) if payload.strip() else None

    def get(self, path: str, **kw):
        return self.request("GET", path, **kw)

    def post(self, path: str, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def patch(self, path: str, body=None, **kw):
        return self.request("PATCH", path, body, **kw)

    def delete(self, path: str, **kw):
        return self.request("DELETE", path, **kw)

    def _token(self) -> str:
        if not self._refresh:
            self._refresh = self._personal_access_token()
        if time.monotonic() - self._access_at > ACCESS_TOKEN_AGE:
            self._access = self.post("/api/token/refresh/", {"refresh": self._refresh}, auth=False)["access"]
            self._access_at = time.monotonic()
        return self._access

    def _personal_access_token(self) -> str:
        """Log in through the form (a session cookie) and create the admin's personal access token."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.open(self.url + "/user/login/", timeout=120).read()
        csrf = next(c.value for c in jar if c.name == "csrftoken")
        form = urllib.parse.urlencode({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD,
                                       "csrfmiddlewaretoken": csrf}).encode()
        opener.open(urllib.request.Request(self.url + "/user/login/", data=form,
                                           headers={"Referer": self.url + "/user/login/"}), timeout=120).read()
        csrf = next(c.value for c in jar if c.name == "csrftoken")
        req = urllib.request.Request(self.url + "/api/token/", data=b"", method="POST",
                                     headers={"X-CSRFToken": csrf, "Referer": self.url + "/"})
        with opener.open(req, timeout=120) as resp:  # 409 for a second one: one client per server
            return json.loads(resp.read())["token"]

    # ---------------------------------------------------------------- what the tests do there

    def create_user(self, email: str, first_name: str = "", last_name: str = "") -> dict:
        """A Label Studio user of the admin's organisation (POST /api/users/)."""
        return self.post("/api/users/", {"email": email, "username": email, "first_name": first_name,
                                         "last_name": last_name})

    def users(self) -> list[dict]:
        """GET /api/users/: the list ``import label-studio --label-studio-users`` reads."""
        return self.get("/api/users/")

    def create_project(self, title: str, label_config: str) -> dict:
        return self.post("/api/projects/", {"title": title, "label_config": label_config})

    def import_tasks(self, project_id: int, tasks: list[dict]) -> dict:
        """POST /api/projects/ID/import with the task list (annotations and predictions included)."""
        return self.post(f"/api/projects/{project_id}/import", tasks)

    def tasks(self, project_id: int) -> list[dict]:
        """Every task of a project with its annotations (the plain JSON export)."""
        return self.get(f"/api/projects/{project_id}/export?exportType=JSON&download_all_tasks=true")

    def snapshot_export(self, project_id: int, *, expand_completed_by: bool = True) -> list[dict]:
        """A snapshot export (POST /api/projects/ID/exports/, then its JSON download), with ``completed_by``
        expanded to the user's id, e-mail and names when asked."""
        options = {"annotations__completed_by": {"only_id": not expand_completed_by}, "drafts": {"only_id": False}}
        snap = self.post(f"/api/projects/{project_id}/exports/", {"title": "annotator test",
                                                                  "serialization_options": options})
        for _ in range(600):
            state = self.get(f"/api/projects/{project_id}/exports/{snap['id']}")
            if state["status"] == "completed":
                break
            if state["status"] == "failed":
                raise RuntimeError(f"Label Studio's snapshot export failed: {state}")
            time.sleep(0.5)
        return json.loads(self.get(f"/api/projects/{project_id}/exports/{snap['id']}/download?exportType=JSON",
                                   raw=True))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)


def start_label_studio(folder: Path) -> LabelStudio:
    """Start Label Studio with a fresh data directory under ``folder`` on a free loopback port; wait until it
    answers and its admin can use the API."""
    program = label_studio_command()
    if not program.exists():
        raise FileNotFoundError(f"no Label Studio at {program} (`make test` installs it from "
                                "requirements-labelstudio.txt)")
    data_dir, files_root = folder / "label-studio-data", folder / "files"
    data_dir.mkdir(parents=True)
    files_root.mkdir(parents=True)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LABEL_STUDIO_", "DJANGO_"))}
    env.update({
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        # the local-files recipe of docs/formats.md: the pictures are served from under one folder
        "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true", "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(files_root),
        # no telemetry from a test machine: no update check against the package index, no error reports, analytics
        "LATEST_VERSION_CHECK": "false", "SENTRY_DSN": "", "FRONTEND_SENTRY_DSN": "", "COLLECT_ANALYTICS": "false",
    })
    log_path = folder / "label-studio.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([str(program), "start", "--no-browser", "--data-dir", str(data_dir),
                                 "--internal-host", "127.0.0.1", "--port", str(port), "--username", ADMIN_EMAIL,
                                 "--password", ADMIN_PASSWORD], stdout=log, stderr=subprocess.STDOUT, env=env,
                                cwd=folder, start_new_session=True)
    server = LabelStudio(f"http://127.0.0.1:{port}", data_dir, files_root, proc, log_path)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"Label Studio stopped while starting (exit {proc.returncode}):\n"
                               + log_path.read_text(errors="replace")[-4000:])
        try:
            if server.get("/health", auth=False).get("status") == "UP":
                break
        except (OSError, LabelStudioError, ValueError):
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise TimeoutError(f"Label Studio did not answer within {START_TIMEOUT:.0f} s:\n"
                               + log_path.read_text(errors="replace")[-4000:])
        time.sleep(1.0)
    server.get("/api/current-user/whoami")  # the admin logs in and gets a token
    return server
