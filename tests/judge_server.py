"""A local HTTP server that speaks the OpenAI chat-completions protocol: a stand-in for a vision-language model.

It is not a model. ``annotator judge run`` tests and ``bench/judge_bench.py`` start it on a loopback port and
point the runner at it. It reads the caption out of the prompt (the line ``Caption: …``) and the sample number
out of ``seed``, and answers what its ``answer(caption, seed)`` function says (by default: the error types
``truth`` gives the caption, as the prompt's JSON object). It can also answer the first requests with given
HTTP statuses (``statuses``: 429, 500, …), reply with text that is not the JSON object for chosen requests
(``garbage(caption, seed, attempt)``) and wait before each answer (``delay``); a 429 carries ``Retry-After``. Every request it receives is
logged in ``requests`` as (caption, seed, status sent) with its headers in ``headers``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def answer_json(types, spans=()) -> str:
    """The reply a careful model gives for a caption with ``types`` (empty: accurate)."""
    return json.dumps({"inaccurate": bool(types), "types": list(types), "spans": list(spans)})


def caption_of(body: dict) -> str:
    """The caption a chat-completions request asks about (the prompt's ``Caption:`` line)."""
    for message in body.get("messages", ()):
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        for part in parts:
            for line in (part.get("text") or "").splitlines():
                if line.startswith("Caption: "):
                    return line[len("Caption: "):]
    return ""


class StandIn:
    """The server and its settings (see the module); use as a context manager, or ``start()`` / ``stop()``."""

    def __init__(self, truth=None, *, answer=None, statuses=(), garbage=None, delay: float = 0.0,
                 retry_after: str = "0"):
        self.truth = dict(truth or {})
        self.answer = answer or (lambda caption, seed: answer_json(self.truth.get(caption, ())))
        self.statuses = list(statuses)
        self.garbage = garbage
        self.delay = delay
        self.retry_after = retry_after
        self.requests: list[tuple[str, int, int]] = []
        self.headers: list[dict] = []
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        self.attempts: dict[tuple[str, int], int] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = None

    @property
    def url(self) -> str:
        """The base URL to give ``--endpoint``."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> "StandIn":
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _reply(self, body: dict) -> tuple[int, dict, str]:
        caption, seed = caption_of(body), int(body.get("seed", 0))
        with self.lock:
            status = self.statuses.pop(0) if self.statuses else 200
            attempt = self.attempts.get((caption, seed), 0)
            self.attempts[(caption, seed)] = attempt + 1
            self.requests.append((caption, seed, status))
        if status != 200:
            return status, {"Retry-After": self.retry_after} if status == 429 else {}, json.dumps(
                {"error": {"message": "busy" if status in (429, 500, 502, 503) else "refused"}})
        text = self.answer(caption, seed)
        if self.garbage is not None and self.garbage(caption, seed, attempt):
            text = "I think the caption is mostly fine, but hard to say."
        return 200, {}, json.dumps({"id": "stand-in", "object": "chat.completion", "model": body.get("model"),
                                    "choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": text}}]})

    def _handler(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server name
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer.lock:
                    outer.headers.append(dict(self.headers))
                    outer.bodies.append(body)
                if outer.delay:
                    time.sleep(outer.delay)
                if not self.path.endswith("/chat/completions"):
                    status, extra, text = 404, {}, json.dumps({"error": "no such route"})
                else:
                    status, extra, text = outer._reply(body)
                data = text.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        return Handler
