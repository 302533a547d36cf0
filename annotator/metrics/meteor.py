"""METEOR 1.5 through the jar coco-caption ships, kept warm in long-running processes.

Each process is started as pycocoevalcap starts it (``java -jar -Xmx2G
meteor-1.5.jar - - -stdio -l en -norm``, plus a fixed JVM locale so numbers
always print and parse with a decimal point) and speaks METEOR's stdio
protocol:

* ``SCORE ||| ref1 ||| … ||| refN ||| hypothesis`` answers with the segment's
  23 sufficient statistics (lengths, function-word counts, per-stage content
  and function matches, chunks, word matches) for its best reference;
* ``EVAL ||| stats1 ||| … ||| statsK`` answers with one score per stats
  block and then the score of their sum.

coco-caption's ``Meteor.compute_score`` sends one SCORE per caption and one
EVAL with all of them; its corpus score is the last EVAL line. We keep the
statistics rows, so the corpus score can also be had from *one* summed row:
``EVAL ||| sum`` gives the same number, because METEOR adds statistics the
same way (all fields summed, except that a segment that matches its reference
perfectly — all words matched in one chunk — contributes no chunks; we apply
that rule when summing). Bootstrap resamples can use the same trick in batch:
one EVAL line carrying one summed row per resample returns all resample
scores at once, computed by METEOR itself (``Meteor.resample``); by default the
bootstrap uses the numpy port :func:`scores_from_stats` instead.

Large batches of SCORE lines are pipelined and split over a small pool of
processes (:class:`_Pool`); single captions and EVAL lines go to the first
one. Statistics rows are cached per SCORE line (caption + references), so
rescoring unchanged captions costs nothing.

Captions are cleaned as coco-caption cleans them (``|||`` removed, double
spaces halved once). Line breaks inside a caption or reference, which would
desynchronise coco-caption's protocol, become spaces.

A fresh process scores several times slower than a warm one, so
:func:`warm_up` starts the processes and lets them warm up, once per Python
process, in the background if asked; the app calls it early and a page can
ask :func:`warm_state` whether METEOR is ready yet.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from .base import Metric, Prepared, Score, Setting
from ..errors import MetricUnavailable
from ..java import JavaProcess, java_available, java_executable, meteor_jar
from ..lru import BatchCache

WIDTH = 23
_CHUNKS = 20
_TEST_LEN, _REF_LEN = 0, 1
_TEST_STAGES = (4, 6, 8, 10, 12, 14, 16, 18)   # test content/function matches, stages 1-4
_REF_STAGES = (5, 7, 9, 11, 13, 15, 17, 19)


def _cmd() -> list[str]:
    jar = meteor_jar()
    return [java_executable(), "-Duser.language=en", "-Duser.country=US", "-jar", "-Xmx2G", jar.name,
            "-", "-", "-stdio", "-l", "en", "-norm"]


def _cwd() -> str:
    try:
        return str(meteor_jar().parent)
    except MetricUnavailable:
        return "."


class _MeteorProcess(JavaProcess):
    def __init__(self):
        super().__init__("METEOR 1.5", _cmd, None)

    def _start(self) -> None:
        self._cwd = _cwd()
        super()._start()


def _pool_size() -> int:
    try:
        return max(1, int(os.environ.get("ANNOTATOR_METEOR_PROCESSES", "0")))
    except ValueError:
        return 1


class _Pool:
    """One or more warm METEOR processes; batches of SCORE lines are split across them.

    The size comes from ``ANNOTATOR_METEOR_PROCESSES`` or, by default, one per
    CPU core up to two (each process holds about 1.2 GB). Single requests and
    EVAL lines always go to the first process.
    """

    def __init__(self, factory=None):
        self._factory = factory or _MeteorProcess
        self._procs: list[JavaProcess] = []
        self._lock = threading.Lock()

    def size(self) -> int:
        if os.environ.get("ANNOTATOR_METEOR_PROCESSES"):
            return _pool_size()
        return min(2, os.cpu_count() or 1)

    def procs(self, k: int | None = None) -> list[JavaProcess]:
        want = self.size() if k is None else k
        with self._lock:
            while len(self._procs) < want:
                self._procs.append(self._factory())
            return self._procs[:want]

    def first(self) -> JavaProcess:
        return self.procs(1)[0]

    def score_lines(self, lines: list[str]) -> list[str]:
        procs = self.procs()
        if len(procs) == 1 or len(lines) < 64:
            return procs[0].request(lines, len(lines))
        parts = len(procs)
        step = -(-len(lines) // parts)
        chunks = [lines[i:i + step] for i in range(0, len(lines), step)]
        results: list = [None] * len(chunks)
        errors: list[BaseException] = []

        def run(j):
            try:
                results[j] = procs[j].request(chunks[j], len(chunks[j]))
            except BaseException as exc:
                errors.append(exc)
        threads = [threading.Thread(target=run, args=(j,), daemon=True) for j in range(1, len(chunks))]
        for t in threads:
            t.start()
        run(0)
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return [x for part in results for x in part]

    def close(self) -> None:
        with self._lock:
            procs = list(self._procs)
        for p in procs:
            p.close()


POOL = _Pool()


def unavailable_reason() -> str | None:
    """Why METEOR cannot run here (no Java, no jar), or None when it can (its processes may still be cold)."""
    if not java_available():
        return "METEOR needs Java, which is not available here"
    try:
        meteor_jar()
    except MetricUnavailable as exc:
        return f"METEOR cannot run: {exc}"
    return None


def meteor_available() -> bool:
    """True if Java and the METEOR jar are present (the process may still be cold)."""
    return unavailable_reason() is None


def _warm_rounds(rounds: int) -> None:
    """Start the processes, load their tables and let the JVM compile its hot paths.

    A fresh JVM scores several times slower than a warm one until its JIT
    compiler has seen a few thousand segments, so this scores ``rounds``
    batches of synthetic captions (300 per process) that are not cached.
    """
    from .synthetic import synthetic_corpus
    procs = POOL.procs()
    for r in range(rounds):
        hyps, refs = synthetic_corpus(300 * len(procs), 5, seed=12345 + r)
        POOL.score_lines([score_line(h, rs) for h, rs in zip(hyps, refs)])
    eval_rows(np.ones((2, WIDTH)))


class _Warming:
    """One warm-up of the pool, run in a daemon thread."""

    def __init__(self, rounds: int):
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(rounds,), name="meteor-warm-up", daemon=True)

    def _run(self, rounds: int) -> None:
        try:
            _warm_rounds(rounds)
        except MetricUnavailable:
            pass  # a process that cannot start shows up as a note when METEOR is used
        finally:
            self.done.set()


_warming: _Warming | None = None
_warming_lock = threading.Lock()


def warm_up(*, wait: bool = True, rounds: int = 3) -> str:
    """Start and warm the METEOR processes once per Python process; return :func:`warm_state`.

    The first call starts the work in a background thread; every later call
    (from any thread) finds it started and does not start it again. With
    ``wait`` the call returns when the processes are warm (at once if they
    are); without it, at once. Returns ``"unavailable"`` without starting
    anything when Java or the jar is missing. After :func:`shutdown` the next
    call warms new processes.
    """
    global _warming
    if not meteor_available():
        return "unavailable"
    with _warming_lock:
        if _warming is None:
            _warming = _Warming(rounds)
            _warming.thread.start()
        current = _warming
    if wait:
        current.thread.join()
    return warm_state()


def warm_state() -> str:
    """``"unavailable"`` (no Java or jar), ``"cold"`` (not started), ``"warming"`` or ``"ready"``; starts nothing."""
    if not meteor_available():
        return "unavailable"
    current = _warming
    if current is None:
        return "cold"
    return "ready" if current.done.is_set() else "warming"


def shutdown() -> None:
    """Stop the METEOR processes (they restart on next use; the next :func:`warm_up` warms them again)."""
    global _warming
    with _warming_lock:
        _warming = None
    POOL.close()


def _line_safe(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


def score_line(hyp: str, refs) -> str:
    """The SCORE request coco-caption's Meteor._stat builds for a caption."""
    hyp = _line_safe(hyp).replace("|||", "").replace("  ", " ")
    return " ||| ".join(("SCORE", " ||| ".join(_line_safe(r) for r in refs), hyp))


#: Statistics rows by SCORE line.
_cache = BatchCache(200_000)


def score_many(lines: list[str]) -> list[list[float]]:
    """Statistics rows for SCORE lines, from the cache or one batched request.

    The cache is keyed by the full SCORE line (caption and references), so a
    hit is exactly what METEOR would answer.
    """
    missing = _cache.missing(lines)
    got = {x: _parse_stats(out) for x, out in zip(missing, POOL.score_lines(missing))} if missing else {}
    return [list(row) for row in _cache.answers(lines, got)]


def clear_cache() -> None:
    """Forget cached segment statistics (benchmarks use this to time real work)."""
    _cache.clear()


def _parse_stats(line: str) -> list[float]:
    try:
        vals = [float(x) for x in line.split()]
    except ValueError:
        vals = []
    if len(vals) != WIDTH:
        raise MetricUnavailable(f"unexpected answer from METEOR: {line[:200]!r}")
    return vals


def _fmt(row) -> str:
    return " ".join(repr(float(x)) for x in row)


def summable(stats: np.ndarray) -> np.ndarray:
    """Rows as METEOR adds them: chunks of perfectly matching segments count as 0."""
    arr = np.array(stats, dtype=np.float64, copy=True)
    if len(arr):
        t_tot = arr[:, _TEST_STAGES].sum(axis=1)
        r_tot = arr[:, _REF_STAGES].sum(axis=1)
        perfect = (t_tot == arr[:, _TEST_LEN]) & (r_tot == arr[:, _REF_LEN]) & (arr[:, _CHUNKS] == 1)
        arr[perfect, _CHUNKS] = 0.0
    return arr


def eval_rows(rows: np.ndarray) -> tuple[list[float], float]:
    """METEOR's EVAL on statistics rows: (score of each row, score of their METEOR sum)."""
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, WIDTH)
    line = "EVAL ||| " + " ||| ".join(_fmt(r) for r in rows.tolist())
    out = POOL.first().request([line], len(rows) + 1)
    try:
        vals = [float(x) for x in out]
    except ValueError as exc:
        raise MetricUnavailable(f"unexpected answer from METEOR: {out[-1][:200]!r}") from exc
    return vals[:-1], vals[-1]


class Meteor(Metric):
    """METEOR 1.5 (English, normalised), coco-caption's setting. Needs Java."""

    key = "meteor"
    label = "METEOR"
    settings = (Setting("version", "1.5", "METEOR release (the jar coco-caption ships)"),
                Setting("lang", "en", "language of the word lists and paraphrase table"),
                Setting("norm", "yes", "METEOR's own tokenisation and normalisation (-norm)"))
    reference = "pycocoevalcap.meteor.meteor:Meteor"
    description = "Unigram alignment (exact, stem, synonym, paraphrase): a recall-weighted F-mean, fragmentation penalty."
    citation = ("Denkowski and Lavie. Meteor Universal: Language Specific Translation Evaluation for Any Target "
                "Language. WMT 2014.")
    link = "https://aclanthology.org/W14-3348/"
    in_process = False
    score_keys = ("METEOR",)
    width = WIDTH

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why METEOR cannot run here (no Java, no jar), or None."""
        return unavailable_reason()

    @classmethod
    def warm_up(cls, *, wait: bool = True) -> str:
        """Start and warm the METEOR processes once per Python process (see :func:`warm_up`)."""
        return warm_up(wait=wait)

    def _prepare(self, tok_refs: list[list[str]], samples=None):
        return [tuple(rs) for rs in tok_refs]

    def _stats(self, hyps: list[str], prep: Prepared):
        if not hyps:
            return np.zeros((0, WIDTH))
        return score_many([score_line(h, prep.data[i]) for i, h in enumerate(hyps)])

    def _segment(self, hyp: str, prep: Prepared, index: int):
        return score_many([score_line(hyp, prep.data[index])])[0]

    def _segments(self, toks: list[str], prep: Prepared, indices: list[int]):
        # one batched request instead of one round trip per caption
        return score_many([score_line(h, prep.data[i]) for h, i in zip(toks, indices)])

    def _aggregate(self, stats: np.ndarray, per_segment: bool) -> Score:
        if per_segment:
            # exactly coco-caption: one EVAL with every caption's statistics
            segs, value = eval_rows(stats)
        else:
            segs = None
            _, value = eval_rows(summable(stats).sum(axis=0, keepdims=True))
        return Score(self.label, value, {"METEOR": value}, self.signature, len(stats), segs,
                     segments={"METEOR": segs} if per_segment else None)

    def _resample(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
        # every resample's summed row scored by the jar, in one EVAL request
        sums = weights @ summable(stats)
        per_row, _ = eval_rows(sums)
        return np.asarray(per_row, dtype=np.float64)[:, None]

    def _resample_quick(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
        # the jar's formula ported to numpy: no round trip to Java (may differ in the last bit)
        return scores_from_stats(weights @ summable(stats))[:, None]


# METEOR 1.5's parameters for English in coco-caption's setting (task "default"):
# alpha, beta, gamma, delta and the weights of the exact, stem, synonym and paraphrase stages.
ALPHA, BETA, GAMMA, DELTA = 0.85, 0.2, 0.6, 0.75
STAGE_WEIGHTS = (1.0, 0.6, 0.8, 0.6)


def scores_from_stats(rows: np.ndarray) -> np.ndarray:
    """METEOR's ``computeMetrics`` on statistics rows, vectorised in numpy.

    The same operations in the same order as the jar; only the power function
    may round differently from Java's in the last bit. Used where thousands of
    summed rows need scores (bootstrap) without a round trip to Java; corpus
    scores proper always come from the jar.
    """
    s = np.asarray(rows, dtype=np.float64).reshape(-1, WIDTH)
    tl, rl, tfw, rfw = s[:, 0], s[:, 1], s[:, 2], s[:, 3]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        twl = (DELTA * (tl - tfw)) + ((1.0 - DELTA) * tfw)
        rwl = (DELTA * (rl - rfw)) + ((1.0 - DELTA) * rfw)
        twm = np.zeros(len(s))
        rwm = np.zeros(len(s))
        for i, w in enumerate(STAGE_WEIGHTS):
            twm = twm + s[:, 4 + 4 * i] * w * DELTA
        for i, w in enumerate(STAGE_WEIGHTS):
            rwm = rwm + s[:, 5 + 4 * i] * w * DELTA
        for i, w in enumerate(STAGE_WEIGHTS):
            twm = twm + s[:, 6 + 4 * i] * w * (1.0 - DELTA)
        for i, w in enumerate(STAGE_WEIGHTS):
            rwm = rwm + s[:, 7 + 4 * i] * w * (1.0 - DELTA)
        p = twm / twl
        r = rwm / rwl
        fmean = 1.0 / (((1.0 - ALPHA) / p) + (ALPHA / r))
        t_tot = np.zeros(len(s))
        r_tot = np.zeros(len(s))
        for i in range(4):
            t_tot = t_tot + s[:, 4 + 4 * i]
            t_tot = t_tot + s[:, 6 + 4 * i]
            r_tot = r_tot + s[:, 5 + 4 * i]
            r_tot = r_tot + s[:, 7 + 4 * i]
        chunks = s[:, _CHUNKS]
        perfect = (t_tot == tl) & (r_tot == rl) & (chunks == 1)
        frag = np.where(perfect, 0.0, chunks / ((s[:, 21] + s[:, 22]) / 2))
        penalty = GAMMA * np.power(frag, BETA)
        score = fmean * (1.0 - penalty)
    return np.where(np.isnan(score), 0.0, np.maximum(score, 0.0))
