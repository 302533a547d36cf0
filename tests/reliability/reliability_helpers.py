"""Shared machinery of the reliability tests and bench/concurrency_bench.py.

Writer processes open their own Store on a URL, wait at a barrier so they all
start at once, save judgements, and write what the store acknowledged (one
JSON line per returned save) to a log file. :func:`check_store` then compares
the database with the acknowledgements: every acknowledged save present with
the values that were sent, revisions 1..n per key, the current pointer at the
highest revision and carrying that revision's values.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from annotator.model import Caption, Item, Project, Role

ERROR_TYPES = ("object", "attribute", "count", "relation", "scene", "action")
LABELS = ("accurate", "inaccurate")


# ---------------------------------------------------------------- seeding

def seed_project(store, *, n_items: int, users: list[tuple[str, str]], project: str = "load") -> tuple[list[int], dict[str, int]]:
    """Create a project with one caption per item and the given (name, role) users.

    Returns (caption ids in item order, {user name: user id}).
    """
    from annotator.store import projects as P
    from annotator.store import users as U
    items = [Item(key=f"img{i:05d}", captions=[Caption("sysA", f"a caption number {i}")]) for i in range(n_items)]
    with store.transaction() as conn:
        P.write_project(conn, Project(name=project, items=items))
        uids = {name: U.create_user(conn, name, Role(role)) for name, role in users}
    with store.read() as conn:
        pid = P.project_id(conn, project)
        cids = [r.id for r in P.captions_of_system(conn, pid, "sysA")]
    return cids, uids


# ---------------------------------------------------------------- writers

@dataclass(frozen=True)
class Save:
    """One planned save: the key and the values sent."""

    caption_id: int
    user_id: int
    kind: str
    label: str | None
    error_types: tuple[str, ...]

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.caption_id, self.user_id, self.kind)


def random_values(rng: random.Random) -> tuple[str | None, tuple[str, ...]]:
    """A label and matching error types (a skip now and then)."""
    r = rng.random()
    if r < 0.05:
        return None, ()
    if r < 0.5:
        return "accurate", ()
    return "inaccurate", tuple(sorted(rng.sample(ERROR_TYPES, rng.randint(1, 3))))


def random_plans(n_writers: int, n_saves: int, key) -> list[list[Save]]:
    """One plan of ``n_saves`` saves with random values per writer, writer n's drawn from ``random.Random(n)``;
    ``key(rng, n, j)`` gives the (caption id, user id) of writer n's save j (drawn after its values)."""
    plans = []
    for n in range(n_writers):
        rng = random.Random(n)
        plan = []
        for j in range(n_saves):
            label, types = random_values(rng)
            cid, uid = key(rng, n, j)
            plan.append(Save(cid, uid, "annotation", label, types))
        plans.append(plan)
    return plans


def write_plan(url: str, plan: list[Save], log_path: str, barrier=None, *, fsync: bool = False, loop: bool = False,
               seed: int = 0, retry_pause: float = 0.0) -> None:
    """Process target: save every planned judgement, logging each acknowledgement.

    With ``fsync`` every log line is flushed to disk *after* the save returned
    and before the next starts, so a SIGKILL can lose at most the
    acknowledgement of the save in flight, never a logged one. With ``loop``
    the plan repeats forever with fresh values (until the process is killed or
    ``stop_file`` appears next to the log). A save that raises
    StoreUnavailable is logged as failed and, after ``retry_pause`` seconds,
    the writer goes on (as a user would press Save again); any other exception
    ends the process with a non-zero exit code.
    """
    from annotator.errors import StoreUnavailable
    from annotator.store import open_store
    from annotator.store.judgements import save_judgement
    store = open_store(url)
    rng = random.Random(seed)
    stop_file = Path(log_path + ".stop")
    if barrier is not None:
        barrier.wait()
    with open(log_path, "a", encoding="utf-8") as log:
        while True:
            for s in plan:
                label, types = (s.label, s.error_types) if not loop else random_values(rng)
                t0 = time.perf_counter()
                try:
                    rev = save_judgement(store, s.caption_id, s.user_id, label=label, error_types=types, kind=s.kind)
                except StoreUnavailable as exc:
                    log.write(json.dumps({"failed": str(exc), "key": list(s.key)}) + "\n")
                    log.flush()
                    time.sleep(retry_pause)
                    continue
                dt = time.perf_counter() - t0
                log.write(json.dumps({"key": list(s.key), "rev": rev, "label": label, "types": list(types), "s": dt}) + "\n")
                log.flush()
                if fsync:
                    os.fsync(log.fileno())
            if not loop or stop_file.exists():
                break
    store.dispose()


def read_log(path: str | Path) -> tuple[list[dict], list[dict]]:
    """(acknowledged saves, failed saves) of one writer log; a torn last line is ignored."""
    acks, fails = [], []
    p = Path(path)
    if not p.exists():
        return acks, fails
    for line in p.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # the line being written when the process was killed
        (fails if "failed" in rec else acks).append(rec)
    return acks, fails


def run_writers(ctx, url: str, plans: list[list[Save]], log_dir: Path, *, timeout: float = 300) -> list[dict]:
    """Start one process per plan, all released at once; return every acknowledgement."""
    barrier = ctx.Barrier(len(plans))
    procs = []
    for n, plan in enumerate(plans):
        p = ctx.Process(target=write_plan, args=(url, plan, str(log_dir / f"w{n}.log"), barrier))
        p.start()
        procs.append(p)
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    alive = [p for p in procs if p.is_alive()]
    for p in alive:
        p.kill()
        p.join()
    assert not alive, f"{len(alive)} writer processes did not finish within {timeout} s"
    bad = [p.exitcode for p in procs if p.exitcode != 0]
    assert not bad, f"writer processes failed with exit codes {bad}"
    acks = []
    for n in range(len(plans)):
        a, f = read_log(log_dir / f"w{n}.log")
        assert not f, f"writer {n} had failed saves: {f[:3]}"
        acks.extend(a)
    return acks


# ---------------------------------------------------------------- checking

def db_state(store) -> tuple[dict, dict]:
    """(history rows by (key, revision), current rows by key) straight from the tables."""
    from sqlalchemy import select
    from annotator.store.schema import current_judgements as CJ
    from annotator.store.schema import judgements as J
    with store.read() as conn:
        hist = {}
        for r in conn.execute(select(J.c.id, J.c.caption_id, J.c.user_id, J.c.kind, J.c.revision, J.c.label, J.c.error_types)):
            k = ((r.caption_id, r.user_id, r.kind), r.revision)
            assert k not in hist, f"duplicate revision {k}"
            hist[k] = r
        cur = {(r.caption_id, r.user_id, r.kind): r for r in conn.execute(select(CJ))}
    return hist, cur


def check_consistent(store) -> tuple[dict, dict]:
    """Assert the store is internally consistent; return its :func:`db_state`.

    Per key: revisions are exactly 1..n, exactly one current row, pointing at
    revision n and carrying its label and types. No current row without history.
    """
    hist, cur = db_state(store)
    revs = defaultdict(list)
    for (key, rev), r in hist.items():
        revs[key].append(rev)
    assert set(cur) == set(revs), f"keys with history but no current row (or the reverse): {set(cur) ^ set(revs)}"
    by_id = {r.id: r for r in hist.values()}
    for key, rs in revs.items():
        assert sorted(rs) == list(range(1, len(rs) + 1)), f"revisions of {key} are not 1..n: {sorted(rs)}"
        c = cur[key]
        assert c.revision == len(rs), f"current pointer of {key} at {c.revision}, highest revision is {len(rs)}"
        target = by_id[c.judgement_id]
        assert (target.caption_id, target.user_id, target.kind, target.revision) == (*key, len(rs)), f"current of {key} points at another row"
        assert (c.label, c.error_types) == (target.label, target.error_types), f"current of {key} carries values of another revision"
    return hist, cur


def check_against_acks(store, acks: list[dict], *, unacked_allowed: int = 0) -> dict:
    """Assert every acknowledged save is stored with its values, and nothing else beyond ``unacked_allowed`` rows.

    Returns a summary dict (keys, revisions, extra rows).
    """
    hist, cur = check_consistent(store)
    seen = set()
    for a in acks:
        k = (tuple(a["key"]), a["rev"])
        assert k not in seen, f"revision {k} acknowledged twice"
        seen.add(k)
        row = hist.get(k)
        assert row is not None, f"acknowledged save {k} is missing from the store"
        assert row.label == a["label"] and row.error_types == " ".join(a["types"]), f"stored values of {k} differ from the ones saved"
    extra = set(hist) - seen
    assert len(extra) <= unacked_allowed, f"{len(extra)} stored revisions were never acknowledged: {sorted(extra)[:5]}"
    return {"keys": len(cur), "revisions": len(hist), "extra": len(extra)}


def latency_summary(acks: list[dict], wall: float) -> dict:
    """Saves per second over ``wall`` seconds; median / p95 / p99 / max save latency in ms; saves slower than 1 s."""
    lat = sorted(a["s"] for a in acks)
    if not lat:
        return {"saves": 0}

    def q(p):
        return lat[min(len(lat) - 1, int(round(p * (len(lat) - 1))))] * 1000
    return {"saves": len(lat), "wall_s": round(wall, 2), "saves_per_s": round(len(lat) / wall, 1),
            "p50_ms": round(q(0.5), 1), "p95_ms": round(q(0.95), 1), "p99_ms": round(q(0.99), 1),
            "max_ms": round(lat[-1] * 1000, 1), "over_1s": sum(x > 1.0 for x in lat)}


def mp_context():
    """A forkserver multiprocessing context whose server has the store code imported already.

    Children start in milliseconds (no fresh import of SQLAlchemy and pandas
    each) yet never inherit a database connection from the test process.
    """
    import multiprocessing as mp
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["reliability_helpers", "annotator.store.judgements"])
    return ctx


# ---------------------------------------------------------------- a PostgreSQL server of our own

class PrivateCluster:
    """A throw-away PostgreSQL cluster on its own port, to stop and restart at will.

    Outage tests stop *this* server, not the machine's shared one, so other
    test runs against 127.0.0.1:5432 never see a dropped connection. Same
    binaries, same protocol, same failure modes as the machine's server.
    """

    def __init__(self):
        import shutil
        import socket
        import subprocess
        import tempfile
        self._sp = subprocess
        bindir = os.environ.get("ANNOTATOR_TEST_PG_BINDIR") or _pg_bindir()
        self.pg_ctl = str(Path(bindir) / "pg_ctl")
        self.dir = Path(tempfile.mkdtemp(prefix="annotator-pg-"))
        self.data = self.dir / "data"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._as = []
        if os.geteuid() == 0:  # initdb refuses to run as root
            shutil.chown(self.dir, "postgres", "postgres")
            self._as = ["runuser", "-u", "postgres", "--"]
        self._run(str(Path(bindir) / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        self.start()

    def _run(self, *cmd, check: bool = True):
        return self._sp.run([*self._as, *cmd], check=check, capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        self._run(self.pg_ctl, "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60", "-o",
                  f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=50", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server ('fast' ends sessions and rolls back; 'immediate' is a crash)."""
        self._run(self.pg_ctl, "-D", str(self.data), "-w", "-m", mode, "stop")

    def running(self) -> bool:
        """True while the server process is up."""
        return self._run(self.pg_ctl, "-D", str(self.data), "status", check=False).returncode == 0

    def ensure_running(self) -> None:
        """Start the server again if a test left it down."""
        if not self.running():
            self.start()

    def destroy(self) -> None:
        """Stop the server and delete its files."""
        import shutil
        if self.running():
            self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


def _pg_bindir() -> str:
    import shutil
    import subprocess
    pg_config = shutil.which("pg_config")
    if pg_config:
        return subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not found:
        raise RuntimeError("no PostgreSQL server binaries (pg_ctl) found; set ANNOTATOR_TEST_PG_BINDIR")
    return str(found[-1].parent)
