"""Long-running Java helper processes (METEOR 1.5 and the PTB tokeniser).

Starting the METEOR jar costs several seconds (it loads its paraphrase table),
so one process per command line is started on first use and kept warm. Each
:class:`JavaProcess` is thread-safe (one request at a time under a lock),
restarts itself once if the process died, and is shut down at interpreter exit.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from .errors import MetricUnavailable

_INLINE_BYTES = 32 * 1024  # requests larger than this are written from a thread (no pipe deadlock)


def java_executable() -> str:
    """Path of ``java``, or raise MetricUnavailable saying Java is needed."""
    exe = shutil.which("java")
    if exe is None:
        raise MetricUnavailable("METEOR and PTB tokenisation need Java: no `java` executable on PATH "
                                "(install a Java runtime, e.g. `apt-get install default-jre-headless`)")
    return exe


def java_available() -> bool:
    """True if a ``java`` executable is on PATH."""
    return shutil.which("java") is not None


def cocoeval_dir() -> Path:
    """Directory of the installed pycocoevalcap package (it ships the jars)."""
    spec = importlib.util.find_spec("pycocoevalcap")
    if spec is None or not spec.submodule_search_locations:
        raise MetricUnavailable("the pycocoevalcap package (which ships meteor-1.5.jar and the Stanford "
                                "tokenizer jar) is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def meteor_jar() -> Path:
    """meteor-1.5.jar as shipped by pycocoevalcap."""
    jar = cocoeval_dir() / "meteor" / "meteor-1.5.jar"
    if not jar.exists():
        raise MetricUnavailable(f"{jar} is missing")
    return jar


def corenlp_jar() -> Path:
    """stanford-corenlp-3.4.1.jar as shipped by pycocoevalcap."""
    jar = cocoeval_dir() / "tokenizer" / "stanford-corenlp-3.4.1.jar"
    if not jar.exists():
        raise MetricUnavailable(f"{jar} is missing")
    return jar


class JavaProcess:
    """One warm Java process speaking a line protocol on stdin/stdout.

    ``request(lines, n_out)`` writes ``lines`` (each must be free of line
    breaks) and returns the next ``n_out`` output lines. If the process has
    died it is restarted and the request tried once more.
    """

    def __init__(self, name: str, cmd_factory, cwd: str | None = None):
        self.name = name
        self._cmd_factory = cmd_factory
        self._cwd = cwd
        self._proc: subprocess.Popen | None = None
        self._stderr = None
        self._lock = threading.Lock()
        self.starts = 0
        _REGISTRY.append(self)

    @property
    def running(self) -> bool:
        """True while the process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def _start(self) -> None:
        java_executable()
        cmd = self._cmd_factory()
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(cmd, cwd=self._cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._stderr)
        except OSError as exc:
            raise MetricUnavailable(f"cannot start {self.name}: {exc}") from exc
        self.starts += 1

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            return self._stderr.read()[-800:].decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def ensure_started(self) -> None:
        """Start the process now (e.g. to warm it up in the background)."""
        with self._lock:
            if not self.running:
                self._start()

    def request(self, lines: list[str], n_out: int) -> list[str]:
        """Send ``lines``, return ``n_out`` reply lines (decoded, without line ends)."""
        payload = "".join(line + "\n" for line in lines).encode("utf-8")
        with self._lock:
            for attempt in (1, 2):
                if not self.running:
                    self._start()
                try:
                    return self._exchange(payload, n_out)
                except (BrokenPipeError, OSError, EOFError) as exc:
                    tail = self._stderr_tail()
                    self._kill()
                    if attempt == 2:
                        raise MetricUnavailable(f"{self.name} stopped answering ({exc}); "
                                                f"its last error output: {tail or '(none)'}") from exc
        raise AssertionError("unreachable")

    def _exchange(self, payload: bytes, n_out: int) -> list[str]:
        proc = self._proc
        writer = None
        error: list[BaseException] = []
        if len(payload) <= _INLINE_BYTES:
            proc.stdin.write(payload)
            proc.stdin.flush()
        else:
            def write():
                try:
                    proc.stdin.write(payload)
                    proc.stdin.flush()
                except BaseException as exc:  # reported after the reads
                    error.append(exc)
            writer = threading.Thread(target=write, daemon=True)
            writer.start()
        out = []
        readline = proc.stdout.readline
        for _ in range(n_out):
            raw = readline()
            if not raw:
                raise EOFError("end of output")
            out.append(raw.decode("utf-8").rstrip("\r\n"))
        if writer is not None:
            writer.join()
            if error:
                raise error[0]
        return out

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout,):
            try:
                stream.close()
            except OSError:
                pass
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def close(self) -> None:
        """Stop the process (it restarts on the next request)."""
        with self._lock:
            self._kill()


_REGISTRY: list[JavaProcess] = []


@atexit.register
def _shutdown_all() -> None:
    for p in _REGISTRY:
        try:
            p.close()
        except Exception:  # interpreter is exiting; nothing useful to do
            pass
