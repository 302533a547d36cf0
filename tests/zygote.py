"""Start the browser tests' app servers, and the command-line runs of tests that want a process of their own, by
forking one process that has already imported Streamlit and the heavy libraries, instead of starting a fresh
interpreter for each.

Each server is still Streamlit's own command line, ``streamlit run serve.py …``, in a process of its own with its own
environment, working directory, log file and signals; each command-line run is ``python -m annotator …`` in a process
of its own, with its own environment, working directory, standard streams and exit code. Only the imports of
Streamlit, pandas, NumPy, Altair, SQLAlchemy and Pillow are made once per test process instead of once per process
(about 1.5 s of CPU for a server, about 0.8 s for a command, on a suite that starts hundreds on 2 cores).
annotator's own modules are not imported before the fork: some read their settings from the environment, which
differs from process to process.

Run as a script, this file is the zygote: it reads one JSON request a line on standard input and answers one JSON
line on standard output. ``{"op": "start", "args": [...], "env": {...}, "cwd": "...", "log": "..."}`` forks a
server and answers its pid; ``{"op": "command", "args": [...], "env": {...}, "cwd": "...", "stdin": path,
"stdout": path, "stderr": path}`` forks ``python -m annotator *args`` and answers its pid; ``{"op": "wait", "pid":
N, "timeout": seconds}`` answers its exit code (negative for a signal, as subprocess does) or null while it runs.
Tests use :func:`launch` (a Popen-like handle on a server) and :func:`run_annotator` (what ``subprocess.run``
returns). ``ANNOTATOR_TEST_FORK_SERVERS=0`` starts every server and command as a fresh interpreter instead.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

#: What every server imports before it answers its first page, and does not depend on the server's settings.
PRELOADED = ("streamlit.web.cli", "streamlit.web.bootstrap", "streamlit.runtime.scriptrunner", "streamlit.elements",
             "pandas", "numpy", "altair", "sqlalchemy", "PIL.Image", "pyarrow")


# --- the zygote (this file run as a script) ---------------------------------------------------------------------

def _serve() -> None:
    import importlib
    for name in PRELOADED:
        importlib.import_module(name)
    # A fork copies only the thread that forks: a helper thread started by an import would be missing in every
    # server, holding whatever lock it held.
    assert threading.active_count() == 1, [t.name for t in threading.enumerate()]
    answer = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] in ("start", "command"):
            pid = os.fork()
            if pid == 0:
                (_run_server if request["op"] == "start" else _run_command)(request)  # never returns
            reply = {"pid": pid}
        else:
            reply = {"code": _wait(request["pid"], request["timeout"])}
        answer.write(json.dumps(reply) + "\n")
        answer.flush()


def _status_of(program) -> int:
    """Run ``program()`` as an interpreter runs a program and give its exit status: 0 when it returns; for
    ``sys.exit(x)`` x itself, 0 for None, else 1 with x printed; 1 with the traceback printed when it raises."""
    try:
        program()
        return 0
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException:
        import traceback
        traceback.print_exc()
        return 1


def _run_server(request: dict) -> None:
    code = 1
    try:
        code = _status_of(lambda: _serve_streamlit(request))
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _serve_streamlit(request: dict) -> None:
    """``streamlit run …`` with its log as standard output and error."""
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(null)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["streamlit", *request["args"]]
    from streamlit.web import cli
    cli.main(prog_name="streamlit")


def _run_command(request: dict) -> None:
    """``python -m annotator *args`` in this forked process, with fresh standard streams as a new interpreter
    would make them for files (the zygote's own are pipes to the test process)."""
    code = 1
    try:
        code = _status_of(lambda: _annotator_command(request))
    finally:
        try:  # what an interpreter does on its way out: wait for its threads, run its exit functions
            import atexit
            threading._shutdown()
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _annotator_command(request: dict) -> None:
    """``python -m annotator …`` with the request's files as its standard streams."""
    import io
    import runpy
    for fd, path, flags in ((0, request["stdin"], os.O_RDONLY), (1, request["stdout"], os.O_WRONLY),
                            (2, request["stderr"], os.O_WRONLY)):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    encoding, _, errors = os.environ.get("PYTHONIOENCODING", "utf-8").partition(":")
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=encoding, errors=errors or "strict")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding=encoding, errors=errors or "strict")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding=encoding,
                                  errors=errors or "backslashreplace", line_buffering=True)
    sys.path[0] = request["cwd"]  # as `python -m` puts the working directory first
    sys.argv = ["-m", *request["args"]]
    runpy.run_module("annotator", run_name="__main__", alter_sys=True)


#: Exit codes of the servers already reaped: a second question about one gets the same answer.
_EXITED: dict[int, int] = {}


def _wait(pid: int, timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    while True:
        if pid in _EXITED:
            return _EXITED[pid]
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            _EXITED[pid] = os.waitstatus_to_exitcode(status)
            return _EXITED[pid]
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


# --- the test process's side -------------------------------------------------------------------------------------

class _Zygote:
    """The zygote of this test process, started on first use."""

    def __init__(self, env: dict):
        self.proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, text=True, bufsize=1)
        self.lock = threading.Lock()

    def ask(self, request: dict) -> dict:
        with self.lock:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the server zygote exited with {self.proc.wait()}")
        return json.loads(line)


_zygote: _Zygote | None = None


class ForkedServer:
    """The part of :class:`subprocess.Popen` the browser tests use, for a server forked by the zygote."""

    def __init__(self, zygote: _Zygote, pid: int, args: list[str]):
        self._zygote, self.pid, self.args, self.returncode = zygote, pid, args, None
        self._lock = threading.Lock()  # tests kill a server from a timer thread while the test thread polls it

    def poll(self) -> int | None:
        return self._wait_for(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._wait_for(3600 if timeout is None else timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return code

    def _wait_for(self, timeout: float) -> int | None:
        with self._lock:
            if self.returncode is None:
                self.returncode = self._zygote.ask({"op": "wait", "pid": self.pid, "timeout": timeout})["code"]
            return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def forking() -> bool:
    """Whether servers are forked from the zygote (``ANNOTATOR_TEST_FORK_SERVERS``, on unless ``0``)."""
    return os.environ.get("ANNOTATOR_TEST_FORK_SERVERS", "1") != "0" and hasattr(os, "fork")


_ROOT = Path(__file__).resolve().parent.parent


def _the_zygote(zygote_env: dict | None = None) -> _Zygote:
    global _zygote
    if _zygote is None or _zygote.proc.poll() is not None:
        if zygote_env is None:
            zygote_env = {**os.environ, "PYTHONPATH": str(_ROOT)}
        _zygote = _Zygote(zygote_env)
    return _zygote


def launch(args: list[str], *, env: dict, cwd: str, log_path: str, zygote_env: dict):
    """Start ``streamlit *args`` with ``env`` in ``cwd``, writing to ``log_path``: forked from this test process's
    zygote (started with ``zygote_env`` on first use), or as a fresh process when forking is off."""
    if not forking():
        out = open(log_path, "w")
        return subprocess.Popen([sys.executable, "-m", "streamlit", *args], cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    zygote = _the_zygote(zygote_env)
    pid = zygote.ask({"op": "start", "args": args, "env": env, "cwd": cwd, "log": log_path})["pid"]
    return ForkedServer(zygote, pid, args)


def run_annotator(args: list[str], *, cwd: str | Path, env: dict | None = None, input: str | None = None,
                  timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m annotator *args`` in ``cwd`` with ``env`` (default: this process's), as ``subprocess.run`` with
    ``capture_output=True, text=True`` would run it: forked from the zygote, or a fresh interpreter when forking is
    off. Standard output and error are files, not pipes; tests of what a pipe does start their own process."""
    env = dict(os.environ if env is None else env)
    if not forking():
        return subprocess.run([sys.executable, "-m", "annotator", *args], cwd=cwd, env=env, input=input,
                              capture_output=True, text=True, encoding="utf-8", timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="annotator-command-") as folder:
        streams = {name: Path(folder) / name for name in ("stdin", "stdout", "stderr")}
        streams["stdin"].write_text(input or "", encoding="utf-8")
        streams["stdout"].touch()
        streams["stderr"].touch()
        zygote = _the_zygote()
        request = {"op": "command", "args": list(args), "env": env, "cwd": str(cwd),
                   **{name: str(path) for name, path in streams.items()}}
        child = ForkedServer(zygote, zygote.ask(request)["pid"], ["annotator", *args])
        try:
            code = child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(10)
            raise
        return subprocess.CompletedProcess([sys.executable, "-m", "annotator", *args], code,
                                           streams["stdout"].read_text(encoding="utf-8"),
                                           streams["stderr"].read_text(encoding="utf-8"))


if __name__ == "__main__":
    _serve()
