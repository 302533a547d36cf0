"""Store behaviour on SQLite and PostgreSQL: migrations, merge rules, revisions."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from sqlalchemy import select, text

from annotator.errors import InputError, NotFound
from annotator.model import Box, Caption, Item, Label, Mention, Project, Reference, Role
from annotator.store import open_store, schema
from annotator.store import judgements as J
from annotator.store import projects as P
from annotator.store import users as U
from annotator.store.migrations import MIGRATIONS, applied_versions

# An image root in an allowed folder (tests allow the temporary directory); it need not exist.
IMAGES = str(Path(tempfile.gettempdir()).resolve() / "annotator-test-images")


def _project(name="demo", n=3, system="sys-a"):
    items = []
    for i in range(n):
        items.append(Item(
            key=f"img{i}.jpg", image=f"img{i}.jpg", width=640, height=480,
            boxes=[Box("0", "dog", 10, 20, 100, 50, "dog.n.01"), Box("1", "ball", 200, 200, 30, 30)],
            references=[Reference("A [dog] chases a ball", (Mention(1, 2, ("0",)),)), Reference("a dog plays")],
            captions=[Caption(system, f"a cat sits {i}")],
        ))
    return Project(name=name, image_root=IMAGES, items=items)


def test_migrations_are_recorded_in_order(store):
    with store.read() as conn:
        assert applied_versions(conn) == [v for v, _, _ in MIGRATIONS]
    # Re-opening applies nothing new.
    assert store.migrate() == []


def test_write_and_load_round_trip(store):
    with store.transaction() as conn:
        summary = P.write_project(conn, _project())
    assert (summary.items_created, summary.references, summary.boxes, summary.captions) == (3, 6, 6, 3)
    loaded = P.load_project(store, "demo")
    assert [i.key for i in loaded.items] == ["img0.jpg", "img1.jpg", "img2.jpg"]
    first = loaded.items[0]
    assert first.boxes[0] == Box("0", "dog", 10, 20, 100, 50, "dog.n.01")
    assert first.references[0].mentions == (Mention(1, 2, ("0",)),)
    assert first.references[0].box_ids == frozenset({"0"})
    assert first.captions[0].text == "a cat sits 0" and first.captions[0].system == "sys-a"
    assert loaded.image_root == IMAGES


def test_second_system_attaches_to_same_items(store):
    with store.transaction() as conn:
        P.write_project(conn, _project())
    second = Project("demo", items=[Item(key=f"img{i}.jpg", captions=[Caption("sys-b", f"b {i}")]) for i in range(3)])
    with store.transaction() as conn:
        summary = P.write_project(conn, second)
    assert summary.items_created == 0 and summary.captions == 3
    (row,) = P.project_summaries(store)
    assert row["systems"] == ["sys-a", "sys-b"] and row["captions"] == 6 and row["items"] == 3


def test_conflicting_merge_writes_nothing(store):
    with store.transaction() as conn:
        P.write_project(conn, _project())
    before = P.table_counts(store)
    # The new item would be created, but the duplicate caption for img1 must abort the whole import.
    bad = Project("demo", items=[Item(key="new.jpg", captions=[Caption("sys-a", "x")]),
                                 Item(key="img1.jpg", captions=[Caption("sys-a", "again")])])
    with pytest.raises(InputError, match="already has a caption"):
        with store.transaction() as conn:
            P.write_project(conn, bad, source="bad.jsonl")
    assert P.table_counts(store) == before


def test_different_references_are_refused(store):
    with store.transaction() as conn:
        P.write_project(conn, _project())
    bad = Project("demo", items=[Item(key="img0.jpg", references=[Reference("something else")])])
    with pytest.raises(InputError, match="references differ"):
        with store.transaction() as conn:
            P.write_project(conn, bad)


def test_duplicate_item_key_is_refused(store):
    bad = Project("p", items=[Item(key="a"), Item(key="a")])
    with pytest.raises(InputError, match="appears twice"):
        with store.transaction() as conn:
            P.write_project(conn, bad, source="x.jsonl")
    assert P.project_names(store) == []


def test_judgement_revisions_are_append_only(store):
    with store.transaction() as conn:
        P.write_project(conn, _project())
        uid = U.user_id(conn, "ann", create_role=Role.ANNOTATOR)
    cid = P.load_project(store, "demo").items[0].captions[0].caption_id
    assert J.save_judgement(store, cid, uid, label=Label.INACCURATE, error_types=("age",), seconds=3.5) == 1
    assert J.save_judgement(store, cid, uid, label=Label.INACCURATE, error_types=("age", "color"), note="fixed") == 2
    assert J.save_judgement(store, cid, uid, label=Label.ACCURATE) == 3
    with store.read() as conn:
        hist = J.history(conn, cid, uid)
        current = J.current_judgement(conn, cid, uid)
        n_rows = conn.execute(select(schema.judgements.c.id)).all()
    assert [h.revision for h in hist] == [1, 2, 3]
    assert [h.error_types for h in hist] == [("age",), ("age", "color"), ()]
    assert hist[0].seconds == 3.5 and hist[1].note == "fixed"
    assert current.revision == 3 and current.label is Label.ACCURATE
    assert len(n_rows) == 3
    frame = J.current_frame(store, "demo")
    assert len(frame) == 1 and frame.iloc[0]["label"] == "accurate"


def test_annotation_and_adjudication_are_separate_records(store):
    with store.transaction() as conn:
        P.write_project(conn, _project())
        a = U.user_id(conn, "a", create_role=Role.ANNOTATOR)
        lead = U.user_id(conn, "lead", create_role=Role.LEAD)
    cid = P.load_project(store, "demo").items[0].captions[0].caption_id
    J.save_judgement(store, cid, a, label="inaccurate", error_types=("gender",))
    J.save_judgement(store, cid, lead, label="accurate", kind="adjudication")
    assert len(J.current_frame(store, "demo", kind="annotation")) == 1
    adj = J.current_frame(store, "demo", kind="adjudication")
    assert list(adj["user"]) == ["lead"] and list(adj["label"]) == ["accurate"]


def test_caption_line_lookup_out_of_range(store):
    with store.transaction() as conn:
        P.write_project(conn, _project())
    with store.read() as conn:
        pid = P.project_id(conn, "demo")
        assert J.caption_id_for_line(conn, pid, "sys-a", 2) > 0
        with pytest.raises(InputError, match="out of range"):
            J.caption_id_for_line(conn, pid, "sys-a", 3, source="coarse.json")
        with pytest.raises(NotFound):
            P.system_id(conn, pid, "nope")


def test_practice_flag(store):
    with store.transaction() as conn:
        P.write_project(conn, _project())
    assert P.set_practice(store, "demo", ["img1.jpg"]) == 1
    assert [i.is_practice for i in P.load_project(store, "demo").items] == [False, True, False]
    with pytest.raises(NotFound):
        P.set_practice(store, "demo", ["missing.jpg"])


def test_user_names_are_unique(store):
    with store.transaction() as conn:
        U.create_user(conn, "ann", Role.ANNOTATOR)
    with pytest.raises(InputError, match="exists already"):
        with store.transaction() as conn:
            U.create_user(conn, "ann", Role.LEAD)


def test_sqlite_pragmas(sqlite_store):
    with sqlite_store.read() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 5000
    assert sqlite_store.integrity_check() == "ok"


def test_sqlite_file_created_on_first_use(tmp_path):
    target = tmp_path / "nested" / "dir" / "annotator.db"
    store = open_store(f"sqlite:///{target}")
    assert target.exists()
    store.dispose()


def test_practice_items_are_found_through_their_own_index(store):
    """Migration 11: the practice items of a project come from a partial index (the dashboards' version
    checks ask for them on every run); the query the store runs uses it on SQLite, and both databases have it."""
    from sqlalchemy import func, inspect, select

    from annotator.store.frame_versions import data_version
    from annotator.store.projects import set_practice
    from annotator.store.schema import items
    from tests.apptest_helpers import seed_project

    seed_project(store, "demo", n_items=6)
    set_practice(store, "demo", ["img1.jpg", "img4.jpg"])
    with store.read() as conn:
        assert "ix_items_practice" in {ix["name"] for ix in inspect(conn).get_indexes("items")}
        q = select(func.count(), func.sum(items.c.id)).where(items.c.project_id == 1, items.c.is_practice.is_(True))
        if conn.dialect.name == "sqlite":
            sql = str(q.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
            plan = " ".join(str(r[-1]) for r in conn.execute(text("EXPLAIN QUERY PLAN " + sql)))
            assert "ix_items_practice" in plan
        ids = sorted(conn.execute(select(items.c.id).where(items.c.key.in_(["img1.jpg", "img4.jpg"]))).scalars())
    assert data_version(store, "demo")[2:] == (2, sum(ids))
