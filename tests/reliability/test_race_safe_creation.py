"""First imports racing each other: projects, systems and users are created once, never a database error.

Several processes (each with its own Store on the shared URL, released at
once by a barrier) import into a project that does not exist yet, or with an
annotator nobody has created. On PostgreSQL the losers of the creation race
used to end in a raw ``UniqueViolation``; now every import either succeeds or
— where it really conflicts with what another one stored — is refused with an
InputError, and the store holds each project, system, item and user once.
"""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import pytest
from sqlalchemy import func, select

import reliability_helpers as H
from annotator.store.schema import captions, items, judgements, projects, refs, systems, users

pytestmark = [pytest.mark.serial, pytest.mark.timeout(300)]

N_PROC = 6
N_ITEMS = 12


@pytest.fixture(scope="module")
def ctx():
    ctx = H.mp_context()
    ctx.set_forkserver_preload(["reliability_helpers", "annotator.store.judgements", "annotator.io.importers"])
    return ctx


def _files(tmp_path: Path, n_systems: int) -> dict:
    images = tmp_path / "images.txt"
    images.write_text("".join(f"img{i:03d}.jpg\n" for i in range(N_ITEMS)), encoding="utf-8")
    ref = tmp_path / "refs.txt"
    ref.write_text("".join(f"a reference for image {i}\n" for i in range(N_ITEMS)), encoding="utf-8")
    caps = []
    for s in range(n_systems):
        path = tmp_path / f"caps{s}.txt"
        path.write_text("".join(f"system {s} says picture {i}\n" for i in range(N_ITEMS)), encoding="utf-8")
        caps.append(str(path))
    return {"images": str(images), "refs": str(ref), "captions": caps}


def race_worker(url: str, task: dict, out: str, barrier) -> None:
    """Process target: wait for the others, run one import, write what happened as JSON."""
    from annotator.errors import InputError
    from annotator.io import import_judgements, import_lines
    from annotator.store import open_store
    store = open_store(url)
    barrier.wait(timeout=60)
    try:
        if task["kind"] == "lines":
            r = import_lines(store, task["project"], task["system"], task["captions"], [task["refs"]],
                             images=task["images"])
        else:
            r = import_judgements(store, task["project"], task["system"], task["annotator"], task["coarse"])
        result = {"ok": True, "describe": r.describe()}
    except InputError as exc:
        result = {"ok": False, "input_error": str(exc)}
    except BaseException as exc:  # anything else is what this test is about
        result = {"ok": False, "crash": f"{type(exc).__name__}: {exc}"[:500], "trace": traceback.format_exc()[-2000:]}
    finally:
        store.dispose()
    Path(out).write_text(json.dumps(result), encoding="utf-8")


def _race(ctx, url: str, tasks: list[dict], tmp_path: Path) -> list[dict]:
    barrier = ctx.Barrier(len(tasks))
    procs, outs = [], []
    for n, task in enumerate(tasks):
        out = tmp_path / f"result{n}.json"
        p = ctx.Process(target=race_worker, args=(url, task, str(out), barrier))
        p.start()
        procs.append(p)
        outs.append(out)
    for p in procs:
        p.join(120)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    results = [json.loads(o.read_text(encoding="utf-8")) for o in outs]
    crashes = [r for r in results if "crash" in r]
    assert not crashes, crashes[0]["trace"]
    return results


def _count(store, table, *where) -> int:
    with store.read() as conn:
        return conn.execute(select(func.count()).select_from(table).where(*where)).scalar()


def test_first_imports_of_several_systems_into_a_new_project(store, ctx, tmp_path):
    files = _files(tmp_path, N_PROC)
    tasks = [{"kind": "lines", "project": "fresh", "system": f"sys{n}", "captions": files["captions"][n],
              "refs": files["refs"], "images": files["images"]} for n in range(N_PROC)]

    results = _race(ctx, store.url, tasks, tmp_path)

    assert all(r["ok"] for r in results), results
    assert _count(store, projects) == 1
    assert _count(store, items) == N_ITEMS
    assert _count(store, refs) == N_ITEMS
    assert _count(store, systems) == N_PROC
    assert _count(store, captions) == N_PROC * N_ITEMS


def test_the_same_first_import_twice_at_once_is_stored_once(store, ctx, tmp_path):
    """Racing copies of one import: one stores it, the others are told the captions are there already."""
    files = _files(tmp_path, 1)
    tasks = [{"kind": "lines", "project": "fresh", "system": "sys0", "captions": files["captions"][0],
              "refs": files["refs"], "images": files["images"]} for _ in range(4)]

    results = _race(ctx, store.url, tasks, tmp_path)

    assert sum(r["ok"] for r in results) == 1, results
    for r in results:
        if not r["ok"]:
            assert "already has a caption" in r["input_error"]
    assert (_count(store, projects), _count(store, systems), _count(store, items), _count(store, captions)) == \
        (1, 1, N_ITEMS, N_ITEMS)


def test_judgement_imports_with_a_new_annotator_at_once(store, ctx, tmp_path):
    from annotator.io import import_lines
    files = _files(tmp_path, N_PROC)
    for n in range(N_PROC):
        import_lines(store, "judged", f"sys{n}", files["captions"][n], [files["refs"]], images=files["images"])
    coarse = tmp_path / "coarse.json"
    coarse.write_text(json.dumps({str(i): "congruent" if i % 2 else "incongruent" for i in range(N_ITEMS)}),
                      encoding="utf-8")
    tasks = [{"kind": "judgements", "project": "judged", "system": f"sys{n}", "annotator": "newcomer",
              "coarse": str(coarse)} for n in range(N_PROC)]

    results = _race(ctx, store.url, tasks, tmp_path)

    assert all(r["ok"] for r in results), results
    assert _count(store, users) == 1
    assert _count(store, users, users.c.name == "newcomer") == 1
    assert _count(store, judgements) == N_PROC * N_ITEMS
