"""A browser's upload through the Data page, without a browser: log in over Streamlit's websocket protocol
(:mod:`ws_load`), open Data & users, pick the native JSONL import, upload a file to the server's upload endpoint
(HTTP PUT, multipart, with the XSRF cookie and header the uploader widget sends) and submit the form with the
uploader's state, reading the app process's memory (/proc) before, at its peak and after. bench/upload_bench.py
prints the figures; tests/reliability/test_upload_memory.py holds the app to its bound.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import ws_load

WORDS = ("a man woman dog cat child group of people two young girl boy in on with the red blue white black shirt "
         "standing sitting running playing street grass water beach front table holding ball bike car").split()


def write_jsonl(path: Path, megabytes: float, *, bad_last_line: bool = False) -> int:
    """A native JSONL file of about ``megabytes`` MB (five references and two systems' captions an item, as an
    export writes them); return its items. ``bad_last_line`` ends it with a line that is not JSON."""
    import random
    rng = random.Random(7)
    target = int(megabytes * 1_000_000)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"format": "annotator-jsonl", "version": 1}) + "\n")
        while fh.tell() < target:
            def text():
                return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 14)))
            fh.write(json.dumps({"key": f"{n:012d}.jpg", "image": f"{n:012d}.jpg",
                                 "references": [text() for _ in range(5)],
                                 "captions": [{"system": s, "text": text()} for s in ("sys-a", "sys-b")]},
                                separators=(",", ":")) + "\n")
            n += 1
        if bad_last_line:
            fh.write("{not json\n")
    return n


def status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(field + ":"))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:13]) / os.sysconf("SC_CLK_TCK")


def put_file(base_url: str, session_id: str, file_id: str, path: Path, xsrf: str | None) -> None:
    """Upload ``path`` to the server's upload endpoint as the uploader widget does (multipart, one file), streamed
    from a spooled body file so this client does not hold it twice."""
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{path.name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    body = tempfile.TemporaryFile()
    body.write(head)
    with path.open("rb") as src:
        while chunk := src.read(1 << 20):
            body.write(chunk)
    body.write(tail)
    size = body.tell()
    body.seek(0)
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Content-Length": str(size),
               "Origin": base_url}
    if xsrf:
        headers.update({"X-Xsrftoken": xsrf, "Cookie": f"_streamlit_xsrf={xsrf}"})
    req = urllib.request.Request(f"{base_url}/_stcore/upload_file/{session_id}/{file_id}", data=body,
                                 headers=headers, method="PUT")
    with urllib.request.urlopen(req, timeout=600) as r:
        assert r.status in (200, 204), r.status
    body.close()


def xsrf_cookie(base_url: str) -> str | None:
    """The XSRF cookie the app's page sets (the websocket and the upload must both present it)."""
    import http.cookiejar
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(base_url + "/", timeout=30):
        pass
    return next((c.value for c in jar if c.name == "_streamlit_xsrf"), None)


def shown(text: str) -> str:
    """The page's texts as a reader sees them: the Markdown escapes the app puts before punctuation removed."""
    return re.sub(r"\\(.)", r"\1", text)


def _uploader(s: "Session", key: str):
    """The file uploader whose key is ``key``, or ``key`` with the page's upload round after it (``key_1``…)."""
    pattern = re.compile(rf"-{re.escape(key)}(_\d+)?$")
    for el in s.last.elements.values():
        if el.WhichOneof("type") == "file_uploader" and pattern.search(el.file_uploader.id):
            return el.file_uploader
    return None


async def _import(s: "Session", base_url: str, path: Path, project: str, xsrf: str | None):
    """Upload ``path`` with the JSONL form's uploader and press Import, as the page's form sends it; the run."""
    fmt = s.widget("data_format", "selectbox")
    jsonl_title = next(o for o in fmt.options if o.startswith("Native JSONL"))
    box, uploader, submit = s.widget("data_jsonl_project", "text_input"), _uploader(s, "data_jsonl_file"), \
        s.button("Import")
    if box is None or uploader is None or submit is None:
        raise ws_load.ProtocolError(f"no JSONL import form on the Data page: {s.texts()[:400]!r}")
    file_id = str(uuid.uuid4())
    put_file(base_url, s.session_id, file_id, path, xsrf)
    from streamlit.proto.Common_pb2 import FileUploaderState
    state = FileUploaderState()
    info = state.uploaded_file_info.add()
    info.file_id, info.name, info.size = file_id, path.name, path.stat().st_size
    info.file_urls.file_id = file_id
    info.file_urls.upload_url = info.file_urls.delete_url = f"/_stcore/upload_file/{s.session_id}/{file_id}"
    # every widget's state goes with the submit, as the page sends it (one left out is back at its default)
    widgets = [(fmt.id, "string_value", jsonl_title), (box.id, "string_value", project),
               (submit.id, "trigger_value", True)]
    return await s.rerun_with(widgets, uploader.id, state, timeout=3600)


async def upload_through_the_page(base_url: str, pid: int, path: Path, user: str, password: str, *,
                                  warm_up: Path | None = None) -> dict:
    """Log in, open the Data page, upload ``path`` as a native JSONL import into project "uploaded" and submit;
    memory figures. ``warm_up``, a small file, is imported first (into "warm-up"), so that "before" is read once
    the import's code has been loaded and run ("first" is then read before the warm-up)."""
    import websockets
    xsrf = xsrf_cookie(base_url)
    s = Session(base_url)
    url = base_url.replace("http", "ws", 1) + "/_stcore/stream"
    protocols = ["streamlit", xsrf] if xsrf else ["streamlit"]
    s.ws = await websockets.connect(url, subprotocols=protocols, origin=base_url, max_size=None, ping_interval=None,
                                    compression=None, additional_headers={"Cookie": f"_streamlit_xsrf={xsrf}"}
                                    if xsrf else None)
    first = await s.rerun()
    user_box, pw_box = s.widget("login_name", "text_input"), s.widget("login_password", "text_input")
    if user_box is None:
        raise ws_load.ProtocolError(f"no log-in form: {s.texts()[:400]!r} {first.exceptions}")
    await s.rerun([(user_box.id, "string_value", user), (pw_box.id, "string_value", password),
                   (s.button("Log in").id, "trigger_value", True)])
    s.page_hash = ""  # a page named by its path, as a typed URL is
    await s.rerun(page_name="data")
    fmt = s.widget("data_format", "selectbox")
    jsonl_title = next(o for o in fmt.options if o.startswith("Native JSONL"))
    s.page_hash = ""
    await s.rerun([(fmt.id, "string_value", jsonl_title)], page_name="data")
    time.sleep(1.0)
    before = first_rss = status_kib(pid, "VmRSS")
    warm = None
    if warm_up is not None:
        result = await _import(s, base_url, warm_up, "warm-up", xsrf)
        warm = shown(s.texts())
        if result.exceptions:
            raise ws_load.ProtocolError(f"the warm-up import raised: {result.exceptions[0][:400]}")
        time.sleep(1.0)
        before = status_kib(pid, "VmRSS")
    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
    result = await _import(s, base_url, path, "uploaded", xsrf)
    wall, cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
    outcome = shown(s.texts())
    time.sleep(1.0)
    after = status_kib(pid, "VmRSS")
    peak = status_kib(pid, "VmHWM")
    await s.close()
    return {"first": first_rss / 1024, "before": before / 1024, "after": after / 1024, "peak": peak / 1024,
            "wall": wall, "cpu": cpu, "outcome": outcome, "warm_up": warm, "exceptions": result.exceptions}


class Session(ws_load.StreamlitSession):
    """A websocket session that also keeps its session id (the upload endpoint's path names it) and can send a
    file uploader's state."""

    session_id = None

    async def _read_run(self):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        result = ws_load.RunResult()
        while True:
            fm = ForwardMsg()
            fm.ParseFromString(await self.ws.recv())
            kind = fm.WhichOneof("type")
            if kind == "new_session":
                result.elements = {}
                self.page_hash = fm.new_session.page_script_hash
                self.session_id = fm.new_session.initialize.session_id or self.session_id
            elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                el = fm.delta.new_element
                result.elements[tuple(fm.metadata.delta_path)] = el
                if el.WhichOneof("type") == "exception":
                    result.exceptions.append(el.exception.message)
            elif kind == "script_finished" and fm.script_finished in ws_load._DONE:
                return result

    async def rerun_with(self, widgets, uploader_id: str, state, *, timeout: float):
        from streamlit.proto.BackMsg_pb2 import BackMsg
        msg = BackMsg()
        cs = msg.rerun_script
        cs.page_name = "data"  # the run stays on the page by its path (its hash alone reran the app's default page)
        cs.context_info.timezone = "UTC"
        cs.context_info.url = self.base_url + "/data"
        for wid, kind, value in widgets:
            w = cs.widget_states.widgets.add()
            w.id = wid
            setattr(w, kind, value)
        w = cs.widget_states.widgets.add()
        w.id = uploader_id
        w.file_uploader_state_value.CopyFrom(state)
        await self.ws.send(msg.SerializeToString())
        self.last = await asyncio.wait_for(self._read_run(), timeout)
        return self.last
