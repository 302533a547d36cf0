"""A load client that speaks Streamlit's websocket protocol, as the browser does, without a browser.

One :class:`StreamlitSession` is one browser tab: it opens ``/_stcore/stream`` (subprotocol ``streamlit``, the
page's own ``Origin``, as the app's origin guard wants), asks for script runs with ``BackMsg.rerun_script``
(a ``ClientState`` holding the widget values that changed, as the page sends them) and reads the
``ForwardMsg`` replies until the run's ``script_finished``. The elements of the last complete run are kept by
their delta path, so widgets are found by their keys (a keyed widget's id ends with ``-<key>``) and texts can
be searched.

:func:`annotator_session` logs an annotator in through the log-in form (the app lands an annotator on
Annotate) and :meth:`Annotator.save` ticks the panel the way the page's form does on Save & next: the label
radio (Accurate, or Inaccurate with one error type ticked) and the Save & next trigger in one message. Its
latency is from sending that message to the ``script_finished`` of the run it started: the server's whole
answer, which is what a browser waits for before it can draw the next caption.

:func:`run_load` drives many simulated annotators at once from one asyncio loop: each logs in, then saves every
``period`` seconds (± 50 %, so they do not march in step) until ``duration`` is over. bench/ws_load_bench.py
uses it to find the knee; tests/reliability/test_ws_load.py runs two annotators against a real server
with it.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

#: ForwardMsg.script_finished values that end what the client waits for (a run that stops early for a rerun,
#: st.rerun or a page switch, is followed by the next run).
_DONE = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR}
# The caption element itself: the page's scripts name the same test id in their selectors.
_CAPTION = re.compile(r'<div class="ann-caption" data-testid="ann-caption"[^>]*>([^<]*)<')


class ProtocolError(RuntimeError):
    """The server did not answer as the page expects (no log-in form, no Annotate panel, an exception shown)."""


@dataclass
class RunResult:
    """What one script run sent: its elements by delta path, its exceptions, and how long it took."""

    elements: dict = field(default_factory=dict)
    exceptions: list = field(default_factory=list)
    seconds: float = 0.0
    messages: int = 0


class StreamlitSession:
    """One browser tab's websocket session (see the module docs)."""

    def __init__(self, base_url: str, *, open_timeout: float = 60.0, local_addr: str | None = None):
        self.base_url = base_url.rstrip("/")
        self.local_addr = local_addr
        self.ws = None
        self.last: RunResult | None = None
        self.page_hash = ""
        self.open_timeout = open_timeout

    async def open(self, page: str = "") -> RunResult:
        """Connect and run the page at ``page`` (the app's URL path, "" for its root), as a page load does."""
        import websockets
        url = self.base_url.replace("http", "ws", 1) + "/_stcore/stream"
        self.ws = await websockets.connect(url, subprotocols=["streamlit"], origin=self.base_url,
                                           max_size=None, open_timeout=self.open_timeout, ping_interval=None,
                                           compression=None,
                                           **({"local_addr": (self.local_addr, 0)} if self.local_addr else {}))
        return await self.rerun(page_name=page)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def rerun(self, widgets: list | None = None, *, page_name: str = "", timeout: float = 120.0) -> RunResult:
        """Ask for a run with these widget states (``(id, field, value)`` triples) and wait for it to finish."""
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = ""
        cs.page_script_hash = self.page_hash
        cs.page_name = page_name
        cs.context_info.timezone = "UTC"
        cs.context_info.locale = "en-US"
        cs.context_info.url = self.base_url + "/" + page_name
        for wid, kind, value in widgets or ():
            w = cs.widget_states.widgets.add()
            w.id = wid
            setattr(w, kind, value)
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        result = await asyncio.wait_for(self._read_run(), timeout)
        result.seconds = time.perf_counter() - t0
        self.last = result
        return result

    async def _read_run(self) -> RunResult:
        result = RunResult()
        while True:
            fm = ForwardMsg()
            fm.ParseFromString(await self.ws.recv())
            result.messages += 1
            kind = fm.WhichOneof("type")
            if kind == "new_session":
                result.elements = {}  # a run starts (again, after a rerun or a page switch)
                self.page_hash = fm.new_session.page_script_hash
            elif kind == "delta":
                delta = fm.delta
                if delta.WhichOneof("type") == "new_element":
                    el = delta.new_element
                    result.elements[tuple(fm.metadata.delta_path)] = el
                    if el.WhichOneof("type") == "exception":
                        result.exceptions.append(el.exception.message)
            elif kind == "script_finished" and fm.script_finished in _DONE:
                return result

    # -- what the last run showed --------------------------------------------------------------------------
    def widget(self, key: str, kind: str | None = None):
        """The element proto (radio, checkbox, button, text_input…) of the widget with user key ``key``."""
        for el in (self.last.elements.values() if self.last else ()):
            t = el.WhichOneof("type")
            proto = getattr(el, t)
            wid = getattr(proto, "id", None)
            if isinstance(wid, str) and wid.endswith("-" + key) and (kind is None or t == kind):
                return proto
        return None

    def button(self, label: str, form: str | None = None):
        """A button (or form submit button) by its label."""
        for el in (self.last.elements.values() if self.last else ()):
            if el.WhichOneof("type") == "button" and el.button.label == label and (
                    form is None or el.button.form_id == form):
                return el.button
        return None

    def texts(self) -> str:
        """Every markdown, HTML, alert and text body of the last run, one per line."""
        out = []
        for el in (self.last.elements.values() if self.last else ()):
            t = el.WhichOneof("type")
            if t in ("markdown", "text", "alert", "heading"):
                out.append(getattr(el, t).body)
            elif t == "html":
                out.append(el.html.body)
        return "\n".join(out)


class Annotator:
    """A logged-in annotator on Annotate (see :func:`annotator_session`)."""

    def __init__(self, session: StreamlitSession, name: str, types: list[str]):
        self.session, self.name, self.types = session, name, types
        self.latencies: list[float] = []
        self.saved: list[tuple[str, str, tuple[str, ...]]] = []  # (caption text, label, types), as confirmed

    def caption(self) -> str | None:
        m = _CAPTION.search(self.session.texts())
        return m.group(1) if m else None

    async def save(self, rng: random.Random) -> float:
        """Tick the panel (Accurate, or Inaccurate with one type) and press Save & next; the latency in seconds."""
        s = self.session
        radio, save = s.widget("ann_label", "radio"), s.widget("ann_save", "button")
        if radio is None or save is None:
            raise ProtocolError(f"{self.name}: no Annotate panel on screen: {s.texts()[:600]!r}")
        caption = self.caption()
        widgets = []
        if rng.random() < 0.5 or not self.types:
            label, ticked = "accurate", ()
            widgets.append((radio.id, "string_value", radio.options[0]))
        else:
            t = rng.choice(self.types)
            label, ticked = "inaccurate", (t,)
            widgets.append((radio.id, "string_value", radio.options[1]))
            widgets.append((s.widget(f"ann_type_{t}", "checkbox").id, "bool_value", True))
        widgets.append((save.id, "trigger_value", True))
        result = await s.rerun(widgets)
        if result.exceptions:
            raise ProtocolError(f"{self.name}: the save run raised: {result.exceptions[0][:400]}")
        if "Saved item" not in s.texts():
            raise ProtocolError(f"{self.name}: no confirmation after Save & next: {s.texts()[:600]!r}")
        self.latencies.append(result.seconds)
        self.saved.append((caption, label, ticked))
        return result.seconds


async def annotator_session(base_url: str, name: str, password: str, *, local_addr: str | None = None) -> Annotator:
    """Open the app, log in through the form and return the annotator on Annotate."""
    s = StreamlitSession(base_url, local_addr=local_addr)
    await s.open()
    user, pw = s.widget("login_name", "text_input"), s.widget("login_password", "text_input")
    submit = s.button("Log in")
    if user is None or pw is None or submit is None:
        raise ProtocolError(f"{name}: no log-in form: {s.texts()[:600]!r}")
    result = await s.rerun([(user.id, "string_value", name), (pw.id, "string_value", password),
                            (submit.id, "trigger_value", True)])
    if result.exceptions:
        raise ProtocolError(f"{name}: the log-in run raised: {result.exceptions[0][:400]}")
    if s.widget("ann_save", "button") is None:
        raise ProtocolError(f"{name}: not on Annotate after logging in: {s.texts()[:600]!r}")
    # "other" wants a note: the simulated annotators tick the types that do not
    types = [el.checkbox.id.rsplit("-ann_type_", 1)[1] for el in s.last.elements.values()
             if el.WhichOneof("type") == "checkbox" and "-ann_type_" in el.checkbox.id]
    types = [t for t in types if t != "other"]
    return Annotator(s, name, types)


@dataclass
class LoadResult:
    """Latencies of every save of a run, per annotator, and what each annotator saved."""

    annotators: list
    wall: float
    errors: list

    @property
    def latencies(self) -> list[float]:
        return [x for a in self.annotators for x in a.latencies]

    def quantile(self, q: float) -> float | None:
        xs = sorted(self.latencies)
        if not xs:
            return None
        return xs[min(len(xs) - 1, int(q * len(xs)))]


async def _annotate(a: Annotator, period: float, until: float, rng: random.Random) -> None:
    while True:
        wait = period * rng.uniform(0.5, 1.5)
        if time.monotonic() + wait > until:
            return
        await asyncio.sleep(wait)
        await a.save(rng)


async def run_load(base_urls: list[str], users: list[str], password: str, *, period: float = 5.0,
                   duration: float = 30.0, seed: int = 0, local_hosts: bool = False, on_start=None) -> LoadResult:
    """Log ``users`` in (spread over the URLs in turn), then let each save every ``period`` s for ``duration``.

    ``local_hosts`` connects annotator k from its own loopback address 127.0.k.1 (a proxy's ``ip_hash`` looks
    at the first three bytes of an address, so each gets its own hash). ``on_start()`` is called once all are
    logged in, as the saving starts."""
    rng = random.Random(seed)
    errors: list[str] = []

    async def login(k: int, user: str):
        local = f"127.{k // 250}.{k % 250 + 1}.1" if local_hosts else None
        return await annotator_session(base_urls[k % len(base_urls)], user, password, local_addr=local)
    annotators = list(await asyncio.gather(*(login(k, u) for k, u in enumerate(users))))
    if on_start is not None:
        on_start()
    t0 = time.monotonic()
    until = t0 + duration
    runs = await asyncio.gather(*(_annotate(a, period, until, random.Random(rng.random()))
                                  for a in annotators), return_exceptions=True)
    wall = time.monotonic() - t0
    errors += [repr(r) for r in runs if isinstance(r, BaseException)]
    for a in annotators:
        await a.session.close()
    return LoadResult(annotators, wall, errors)


def lost_saves(store, project: str, annotators: list[Annotator]) -> list[tuple[str, str]]:
    """The confirmed saves whose judgement is not the annotator's current one in the store, as (name, caption).

    Captions are those of the suite's ``seed_project`` ("… number i" on item ``img{i}.jpg``)."""
    from annotator.store.judgements import current_frame
    df = current_frame(store, project, include_skipped=True)
    got = {(u, k): (lab, tuple(sorted((t or "").split())))
           for u, k, lab, t in zip(df["user"], df["item_key"], df["label"], df["error_types"])}
    lost = []
    for a in annotators:
        for caption, label, ticked in a.saved:
            key = (a.name, f"img{caption.rsplit('number ', 1)[1]}.jpg")
            if got.get(key) != (label, tuple(sorted(ticked))):
                lost.append((a.name, caption))
    return lost
