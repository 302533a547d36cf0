"""Online backup and restore of the SQLite store, through the core and the CLI."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import reliability_helpers as H
from annotator import backup as B
from annotator.cli import main
from annotator.errors import AnnotatorError, InputError
from annotator.store import open_store
from annotator.store.judgements import save_judgement

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.serial, pytest.mark.timeout(300)]


def _start_writers(ctx, url, uids, cids, log_dir, names, tag):
    procs = []
    for n, name in enumerate(names):
        rng = random.Random(n)
        plan = [H.Save(c, uids[name], "annotation", *H.random_values(rng)) for c in cids]
        log = log_dir / f"{tag}{n}.log"
        p = ctx.Process(target=H.write_plan, args=(url, plan, str(log)), kwargs={"loop": True, "seed": n})
        p.start()
        procs.append((p, log))
    return procs


def _stop_writers(procs):
    for _, log in procs:
        Path(str(log) + ".stop").touch()
    for p, _ in procs:
        p.join(60)
        assert p.exitcode == 0
    acks = []
    for _, log in procs:
        a, f = H.read_log(log)
        assert not f, f[:2]
        acks += a
    return acks


def _wait_until(pred, timeout=60):
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline
        time.sleep(0.02)


def _open_copy(path: Path, tmp_path: Path):
    """A Store on a copy of a backup, so inspecting it never changes the backup itself."""
    copy = tmp_path / f"inspect-{path.name}"
    shutil.copyfile(path, copy)
    return open_store(f"sqlite:///{copy}")


@pytest.mark.slow
def test_backups_taken_while_four_processes_write_are_consistent_snapshots(tmp_path):
    ctx = H.mp_context()
    url = f"sqlite:///{tmp_path / 'live.db'}"
    store = open_store(url)
    names = ["ann", "bob", "cy", "dee"]
    cids, uids = H.seed_project(store, n_items=30, users=[(n, "annotator") for n in names])
    procs = _start_writers(ctx, url, uids, cids, tmp_path, names, "w")
    backups = []
    try:
        for k in range(4):
            _wait_until(lambda: sum(len(H.read_log(log)[0]) for _, log in procs) >= 100 * (k + 1))
            backups.append(B.backup(url, tmp_path / f"b{k}.db"))
    finally:
        acks = _stop_writers(procs)
    H.check_against_acks(store, acks)
    final_hist, _ = H.db_state(store)

    previous = 0
    for r in backups:
        assert r.integrity == "ok" and B.check_backup_file(r.path).integrity == "ok"
        assert not Path(r.path + "-wal").exists() and not Path(r.path + ".partial").exists()
        snap = _open_copy(Path(r.path), tmp_path)
        hist, cur = H.check_consistent(snap)  # one instant: no key with a gap or a stale pointer
        assert len(hist) == r.judgements and len(cur) == r.current_judgements
        assert len(hist) >= previous and len(hist) >= 100
        previous = len(hist)
        for k, row in hist.items():  # a snapshot of the past: every row it holds is in the live database
            assert (final_hist[k].label, final_hist[k].error_types) == (row.label, row.error_types)
        snap.dispose()

    # Restore into a new place: a working store with exactly the snapshot's contents.
    url2 = f"sqlite:///{tmp_path / 'restored.db'}"
    r = B.restore(backups[-1].path, url2)
    assert r.safety_copy is None and r.judgements == backups[-1].judgements
    restored = open_store(url2)
    assert restored.integrity_check() == "ok"
    hist, cur = H.check_consistent(restored)
    key = next(iter(cur))
    assert save_judgement(restored, key[0], key[1], label="accurate") == cur[key].revision + 1
    restored.dispose()
    store.dispose()


def test_restore_into_the_live_database_while_writers_run(tmp_path):
    """Restoring under running writers: they carry on against the restored data, numbering stays contiguous."""
    ctx = H.mp_context()
    url = f"sqlite:///{tmp_path / 'live.db'}"
    store = open_store(url)
    cids, uids = H.seed_project(store, n_items=10, users=[("ann", "annotator"), ("bob", "annotator")])
    for c in cids:
        save_judgement(store, c, uids["ann"], label="accurate")
    snapshot = B.backup(url, tmp_path / "snap.db")
    for c in cids:
        save_judgement(store, c, uids["ann"], label="inaccurate", error_types=("object",))
    procs = _start_writers(ctx, url, uids, cids, tmp_path, ["ann", "bob"], "w")
    try:
        _wait_until(lambda: all(len(H.read_log(log)[0]) >= 20 for _, log in procs))
        r = B.restore(snapshot.path, url)
        restored_at = [len(H.read_log(log)[0]) for _, log in procs]
        _wait_until(lambda: all(len(H.read_log(log)[0]) >= n + 20 for n, (_, log) in zip(restored_at, procs)))
    finally:
        acks = _stop_writers(procs)
    assert len(acks) >= 80
    assert store.integrity_check() == "ok"
    hist, _ = H.check_consistent(store)
    # Every save acknowledged after the restore returned is in the restored database.
    for n, (_, log) in zip(restored_at, procs):
        for a in H.read_log(log)[0][n:]:
            row = hist[(tuple(a["key"]), a["rev"])]
            assert (row.label, row.error_types) == (a["label"], " ".join(a["types"]))
    kept = _open_copy(Path(r.safety_copy), tmp_path)
    assert len(H.check_consistent(kept)[0]) >= 2 * len(cids) + 40  # the pre-restore database, writers' saves included
    kept.dispose()
    store.dispose()


def test_backup_of_missing_or_postgres_database_explains(tmp_path):
    with pytest.raises(AnnotatorError, match="no database file"):
        B.backup(f"sqlite:///{tmp_path / 'nothing.db'}")
    assert not (tmp_path / "nothing.db").exists(), "backup must not create the database it was asked to copy"
    with pytest.raises(AnnotatorError) as err:
        B.backup("postgresql+psycopg://annot:Sup3rSecret@db.example:5432/annot")
    msg = str(err.value)
    assert "pg_dump" in msg and "pg_restore" in msg and "Sup3rSecret" not in msg
    assert "postgresql://annot:***@db.example:5432/annot" in msg  # a libpq URL pg_dump accepts


@pytest.mark.parametrize("content", [b"", b"not a database at all\n" * 10, b"SQLite format 3\x00" + b"\x00" * 200])
def test_restore_refuses_a_bad_file_and_leaves_the_database_alone(sqlite_store, tmp_path, content):
    cids, uids = H.seed_project(sqlite_store, n_items=3, users=[("ann", "annotator")])
    save_judgement(sqlite_store, cids[0], uids["ann"], label="accurate")
    bad = tmp_path / "bad.db"
    bad.write_bytes(content)
    with pytest.raises(InputError) as err:
        B.restore(bad, sqlite_store.url)
    assert str(bad) in str(err.value)
    assert len(H.check_consistent(sqlite_store)[0]) == 1
    assert not (Path(sqlite_store.url.removeprefix("sqlite:///")).parent / "backups").exists()


def test_restore_refuses_a_truncated_backup(sqlite_store, tmp_path):
    cids, uids = H.seed_project(sqlite_store, n_items=50, users=[("ann", "annotator")])
    for c in cids:
        save_judgement(sqlite_store, c, uids["ann"], label="accurate")
    good = B.backup(sqlite_store.url, tmp_path / "good.db")
    cut = tmp_path / "cut.db"
    cut.write_bytes(Path(good.path).read_bytes()[: good.bytes // 2])
    with pytest.raises(InputError):
        B.restore(cut, sqlite_store.url)
    assert len(H.check_consistent(sqlite_store)[0]) == 50


def test_cli_backup_and_restore(sqlite_store, tmp_path, capsys):
    url = sqlite_store.url
    cids, uids = H.seed_project(sqlite_store, n_items=4, users=[("ann", "annotator")])
    for c in cids:
        save_judgement(sqlite_store, c, uids["ann"], label="accurate")
    out = tmp_path / "cli.db"
    assert main(["--db", url, "backup", "--output", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["path"] == str(out) and report["integrity"] == "ok" and report["current_judgements"] == 4
    for c in cids:
        save_judgement(sqlite_store, c, uids["ann"], label="inaccurate", error_types=("count",))
    assert main(["--db", url, "restore", str(out)]) == 0
    text = capsys.readouterr().out
    assert "restored" in text and "kept as" in text
    hist, cur = H.check_consistent(sqlite_store)
    assert len(hist) == 4 and {r.label for r in cur.values()} == {"accurate"}
    # Bad input: exit code 2 and a one-line message naming the file.
    assert main(["--db", url, "restore", str(tmp_path / "missing.db")]) == 2
    assert "missing.db" in capsys.readouterr().err
    # PostgreSQL: exit 1 with the pg_dump command, password hidden.
    assert main(["--db", "postgresql+psycopg://u:pw123secret@127.0.0.1:5432/test", "backup"]) == 1
    err = capsys.readouterr().err
    assert "pg_dump" in err and "pw123secret" not in err


def test_cli_backup_default_location_as_a_real_process(sqlite_store):
    db = Path(sqlite_store.url.removeprefix("sqlite:///"))
    proc = subprocess.run([sys.executable, "-m", "annotator", "--db", sqlite_store.url, "backup"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    made = list((db.parent / "backups").glob(f"{db.stem}-*.db"))
    assert len(made) == 1 and str(made[0]) in proc.stdout
    assert B.check_backup_file(made[0]).integrity == "ok"
