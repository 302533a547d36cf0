"""``annotator judge run``: ask a vision-language model about every caption, k times, and keep its answers.

Any server that speaks the OpenAI chat-completions protocol and accepts images will do (vLLM, Ollama, llama.cpp's
server, LM Studio, hosted APIs): the runner POSTs to ``{endpoint}/chat/completions`` the prompt of
:mod:`annotator.judges.prompt` with the picture, asks for a JSON object (``response_format``), and takes sample
``s`` of a caption with ``seed = s`` at the chosen temperature. The API key, when the server needs one, comes
from an environment variable (``ANNOTATOR_JUDGE_API_KEY`` unless told otherwise) and is never printed or stored.

Each answer is stored as it arrives (:func:`annotator.store.judges.put_answer`), keyed by caption, model,
prompt version, settings and sample, with a hash of what the model was shown: a run stopped at any point, even
by ``kill -9``, asks again only for what it does not have. A request answered 429 or 5xx, or that fails to
connect, is retried after a wait that doubles each time (a server's ``Retry-After`` is honoured, up to a
minute); an answer that does not parse is asked again; each is counted. Once every caption is done, the
judge's outputs are the vote fractions of the stored answers (:func:`annotator.judges.prompt.aggregate`) of
every caption of the project that has them under these settings, and replace the judge's earlier outputs.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field

from ..errors import InputError
from .prompt import Answer, Unparsable, aggregate, load_prompt, messages, parse_answer, shown_hash

#: The environment variable the API key is read from unless ``--api-key-env`` names another.
API_KEY_ENV = "ANNOTATOR_JUDGE_API_KEY"
#: The longest wait between two tries of a request (seconds), whatever the server's Retry-After says.
MAX_WAIT = 60.0


@dataclass(frozen=True)
class RunSettings:
    """How to ask: where, which model, how many samples, how many at once, how patiently."""

    endpoint: str
    model: str
    k: int = 5
    concurrency: int = 8
    temperature: float = 1.0
    max_tokens: int = 512
    timeout: float = 120.0
    attempts: int = 6  # tries per sample (429, 5xx, connection failures and unparsable answers each use one)
    backoff: float = 1.0  # the first wait, doubled at each further try
    api_key_env: str = API_KEY_ENV
    image_side: int = 1024  # the picture's longer side as sent

    def __post_init__(self):
        for name, low in (("k", 1), ("concurrency", 1), ("attempts", 1), ("max_tokens", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InputError(f"must be a whole number from {low}, got {value!r}", f"--{name.replace('_', '-')}")
        if not 0.0 <= self.temperature <= 2.0:
            raise InputError(f"must be between 0 and 2, got {self.temperature}", "--temperature")
        parts = urllib.parse.urlsplit(self.endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InputError(f"an http(s) URL of an OpenAI-compatible server is needed, got {shown_url(self.endpoint)!r}",
                             "--endpoint")
        if parts.username is not None or parts.password is not None:
            raise InputError(f"leave credentials out of the URL ({shown_url(self.endpoint)!r}): give the key in the "
                             f"environment variable {self.api_key_env}", "--endpoint")
        if not self.model.strip():
            raise InputError("name the model the server should use", "--model")

    @property
    def url(self) -> str:
        """Where requests go: the endpoint's ``/chat/completions``."""
        base = self.endpoint.rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"

    @property
    def cache_settings(self) -> str:
        """The settings besides model and prompt that change the answers (part of the answers' key)."""
        return f"temperature={self.temperature:g};max_tokens={self.max_tokens};image_side={self.image_side}"

    def signature(self, prompt_version: str) -> dict:
        """The judge's signature: model, prompt version, k and the other settings (no key, no credentials)."""
        return {"model": self.model, "prompt": prompt_version, "k": self.k, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "endpoint": shown_url(self.endpoint)}


def shown_url(url: str) -> str:
    """A URL as messages and signatures show it: without user, password, query or fragment."""
    parts = urllib.parse.urlsplit(str(url))
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass
class RunStats:
    """What a run did (printed with its result; the progress bar shows it as it goes)."""

    captions: int = 0  # captions asked about in this run
    samples: int = 0  # samples they need (captions x k)
    cached: int = 0  # of those, answers already stored
    requests: int = 0  # HTTP requests sent
    answered: int = 0  # samples answered and stored now
    retried_429: int = 0
    retried_5xx: int = 0
    retried_network: int = 0
    unparsable: int = 0  # answers that did not parse (each asked again while tries were left)
    failed: int = 0  # samples given up after every try
    without_picture: int = 0  # captions asked about without a picture (none recorded, or not readable)
    seconds: float = 0.0

    @property
    def done(self) -> int:
        """Samples settled: stored before, stored now or given up."""
        return self.cached + self.answered + self.failed


class RunRefused(InputError):
    """The server refused a request in a way retrying cannot mend (a 4xx other than 429): bad model, bad key."""


@dataclass(frozen=True)
class _Job:
    caption_id: int
    sample: int
    caption: str
    references: tuple[str, ...]
    image: tuple | None  # (root, path, trusted root) of the item's picture
    text_hash: str


@dataclass
class RunResult:
    """A finished run: its statistics and how the judge's outputs changed."""

    project: str
    judge: str
    signature: dict
    stats: RunStats
    outputs: int = 0
    incomplete: int = 0  # captions with fewer than k answers (samples given up)
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0

    def describe(self) -> str:
        """The result in words."""
        from .outputs import signature_text
        s = self.stats
        lines = [f"judge {self.judge!r} ({signature_text(self.signature)}) in {self.project!r}: {self.outputs} captions "
                 f"with outputs ({self.added} new, {self.changed} changed, {self.removed} removed, "
                 f"{self.unchanged} unchanged)",
                 f"this run: {s.captions} captions, {s.samples} samples: {s.cached} stored before, {s.answered} asked "
                 f"now in {s.requests} requests, {s.failed} given up; tried again after {s.retried_429} x 429, "
                 f"{s.retried_5xx} x 5xx, {s.retried_network} x no connection and {s.unparsable} "
                 f"answer{'' if s.unparsable == 1 else 's'} that did not parse; {s.seconds:.1f} s"]
        if self.incomplete:
            lines.append(f"{self.incomplete} captions have fewer than k answers (samples given up): their "
                         "probabilities are the shares of the answers they have; run again to ask for the rest")
        if s.without_picture:
            lines.append(f"{s.without_picture} captions were asked about without a picture (none recorded for their "
                         "item, or not readable)")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON form."""
        out = asdict(self)
        out["stats"] = asdict(self.stats)
        return out


class _Pictures:
    """Each item's picture as a JPEG data URL, made once per run (threads share it)."""

    def __init__(self, side: int):
        self.side, self.made, self.lock = side, {}, threading.Lock()

    def url(self, image: tuple | None) -> str | None:
        if image is None:
            return None
        with self.lock:
            if image in self.made:
                return self.made[image]
        url = self._encode(*image)
        with self.lock:
            self.made[image] = url
        return url

    def _encode(self, root, path, trusted) -> str | None:
        from ..images import check_image_root, render_boxes_bytes, resolve_image_path
        try:
            check_image_root(root, trusted=trusted)
            if not resolve_image_path(root, path).is_file():
                return None
            data = render_boxes_bytes(root, path, (), image_format="JPEG", max_side=self.side, trusted_root=trusted)
        except (InputError, OSError, ValueError):
            return None
        return "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")


@dataclass
class _Asker:
    """Sends one sample's request with retries (in a worker thread); counts into the shared stats."""

    settings: RunSettings
    template: object
    pictures: _Pictures
    stats: RunStats
    sleep: object = time.sleep
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, name: str) -> None:
        with self.lock:
            setattr(self.stats, name, getattr(self.stats, name) + 1)

    def ask(self, job: _Job) -> tuple[_Job, str, Answer] | tuple[_Job, None, None]:
        """The reply and its answer, or (job, None, None) once every try failed."""
        picture = self.pictures.url(job.image)
        body = {"model": self.settings.model, "messages": messages(self.template, job.caption, job.references, picture),
                "temperature": self.settings.temperature, "max_tokens": self.settings.max_tokens,
                "seed": job.sample, "response_format": {"type": "json_object"}}
        data = json.dumps(body, ensure_ascii=True).encode("ascii")
        for attempt in range(self.settings.attempts):
            wait = self.settings.backoff * 2 ** attempt
            self.count("requests")
            status, text, retry_after = self._post(data)
            if status == 429 or status >= 500 or status == 0:
                self.count({429: "retried_429", 0: "retried_network"}.get(status, "retried_5xx"))
                if attempt + 1 < self.settings.attempts:
                    self.sleep(min(MAX_WAIT, max(wait, retry_after or 0.0)))
                continue
            if status != 200:
                raise RunRefused(f"the server at {shown_url(self.settings.url)} refused the request: HTTP {status} "
                                 f"{text[:300]}", "--endpoint")
            try:
                reply = _reply_text(text)
                return job, reply, parse_answer(reply, job.caption)
            except Unparsable:
                self.count("unparsable")
        self.count("failed")
        return job, None, None

    def _post(self, data: bytes) -> tuple[int, str, float | None]:
        """(HTTP status, body text, Retry-After seconds); status 0 when the server could not be reached."""
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.settings.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.settings.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.settings.timeout) as resp:
                return resp.status, resp.read().decode("utf-8", "replace"), None
        except urllib.error.HTTPError as exc:
            body = exc.read().decode("utf-8", "replace") if exc.fp is not None else ""
            return exc.code, body, _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
        except (urllib.error.URLError, OSError, TimeoutError):
            return 0, "", None


def _retry_after(value) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _reply_text(body: str) -> str:
    """The message text of a chat-completions response (Unparsable when the body is not one)."""
    from ..io.textfiles import parse_json
    try:
        obj = parse_json(body, "response")
        content = obj["choices"][0]["message"]["content"]
    except (InputError, KeyError, IndexError, TypeError):
        raise Unparsable("the response is not a chat completion") from None
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise Unparsable("the response's message has no text")
    return content


def run_judge(store, project: str, judge: str, settings: RunSettings, *, systems=None, limit: int | None = None,
              progress=None, sleep=time.sleep) -> RunResult:
    """Ask the model about the project's captions (``systems``: only theirs; ``limit``: the first N, in project
    order; practice items never), keep every answer as it arrives, then replace judge ``judge``'s outputs with
    the vote fractions of every stored answer under these settings. ``progress(stats)`` is called as samples
    settle. See the module for retries and resuming."""
    from .outputs import check_judge_name
    judge = check_judge_name(judge, "--judge")
    template = load_prompt()
    started = time.monotonic()
    captions, allowed = _captions(store, project, systems, limit, template)
    stats = RunStats(captions=len(captions), samples=len(captions) * settings.k)
    jobs = _missing(store, captions, settings, template.version, stats)
    pictures = _Pictures(settings.image_side)
    asker = _Asker(settings, template, pictures, stats, sleep)
    if progress:
        progress(stats)
    with ThreadPoolExecutor(max_workers=settings.concurrency) as pool:
        futures = [pool.submit(asker.ask, job) for job in jobs]
        try:
            for future in as_completed(futures):
                job, reply, answer = future.result()
                if reply is not None:
                    _keep(store, job, reply, answer, settings, template.version)
                    stats.answered += 1
                if progress:
                    progress(stats)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    stats.seconds = time.monotonic() - started
    unreadable = {image for image, url in pictures.made.items() if url is None}
    asked = {job.caption_id for job in jobs}
    stats.without_picture = sum(1 for c in captions if c[0] in asked and (c[4] is None or c[4] in unreadable))
    return _publish(store, project, judge, settings, template, allowed, stats)


def _captions(store, project: str, systems, limit, template) -> tuple[list[tuple], list[tuple]]:
    """(the captions to ask about, every caption the judge may have outputs for): each as (caption id, text,
    references, hash, picture)."""
    from ..errors import NotFound
    from ..store.projects import load_project, project_id, trusted_image_root
    proj = load_project(store, project)
    with store.read() as conn:
        trusted = trusted_image_root(conn, project_id(conn, project))
    for s in systems or ():
        if s not in proj.systems:
            raise NotFound(f"project {project!r} has no system {s!r}; systems: {', '.join(proj.systems) or 'none'}")
    every = []
    for item in proj.items:
        if item.is_practice:
            continue
        refs = tuple(r.text for r in item.references)
        image = (proj.image_root, item.image, trusted) if item.image and proj.image_root else None
        for c in item.captions:
            every.append((c.caption_id, c.text, refs, shown_hash(template, c.text, refs, item.image), image, c.system))
    chosen = [c for c in every if not systems or c[5] in systems]
    if limit is not None:
        if limit < 1:
            raise InputError(f"must be a whole number from 1, got {limit}", "--limit")
        chosen = chosen[:limit]
    return chosen, every


def _missing(store, captions, settings: RunSettings, version: str, stats: RunStats) -> list[_Job]:
    """The samples no stored answer has (a stored one whose caption or references changed since does not count)."""
    from ..store.judges import cached_answers
    with store.read() as conn:
        have = cached_answers(conn, [c[0] for c in captions], model=settings.model, prompt_version=version,
                              settings=settings.cache_settings)
    jobs = []
    for cid, text, refs, digest, image, _system in captions:
        for s in range(settings.k):
            found = have.get((cid, s))
            if found is not None and found[0] == digest:
                stats.cached += 1
            else:
                jobs.append(_Job(cid, s, text, refs, image, digest))
    return jobs


def _keep(store, job: _Job, reply: str, answer: Answer, settings: RunSettings, version: str) -> None:
    from ..store.judges import put_answer
    with store.transaction() as conn:
        put_answer(conn, job.caption_id, job.sample, model=settings.model, prompt_version=version,
                   settings=settings.cache_settings, text_hash=job.text_hash,
                   answer=reply.encode("utf-8", "replace").decode("utf-8"),
                   parsed=json.dumps(answer.to_json(), ensure_ascii=True))


def _publish(store, project: str, judge: str, settings: RunSettings, template, allowed, stats: RunStats) -> RunResult:
    """Aggregate the stored answers of every caption of the project and make them the judge's outputs."""
    from ..store.judges import cached_answers, replace_judge
    from ..store.projects import project_id
    signature = settings.signature(template.version)
    with store.transaction() as conn:
        have = cached_answers(conn, [c[0] for c in allowed], model=settings.model, prompt_version=template.version,
                              settings=settings.cache_settings)
        outputs, incomplete = [], 0
        for cid, text, _refs, digest, _image, _system in allowed:
            got = [have[(cid, s)] for s in range(settings.k) if (cid, s) in have and have[(cid, s)][0] == digest]
            if not got:
                continue
            incomplete += len(got) < settings.k
            answers = [Answer.from_json(json.loads(g[2])) for g in got]
            outputs.append(aggregate(cid, text, answers, [g[1] for g in got]))
        if not outputs:
            raise RunRefused(f"no caption has an answer: {stats.failed} samples were given up after "
                             f"{stats.requests} requests to {shown_url(settings.url)} ({stats.retried_network} could "
                             f"not connect, {stats.unparsable} answers did not parse); judge {judge!r} is unchanged",
                             "--endpoint")
        diff = replace_judge(conn, project_id(conn, project), judge, signature, "judge run",
                             [o.row() for o in outputs])
    return RunResult(project, judge, signature, stats, len(outputs), incomplete, diff.added, diff.changed,
                     diff.removed, diff.unchanged)
