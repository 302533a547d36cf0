"""Several descriptions per image and system (samples n = 0, 1, …) in the store, on SQLite and PostgreSQL:
migration 14 onto a database of the earlier shape (rows, ids and judgement history kept), the unique
(item, system, n), and the one caption per system and image that annotation works on."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, select, text
from sqlalchemy.exc import IntegrityError

from annotator.annotation import Queue
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.errors import InputError
from annotator.model import Caption, Item, Project
from annotator.store import schema
from annotator.rescoring import scoring_data
from annotator.store.human_scores import caption_keys
from annotator.store.judgements import caption_id_for_line, history
from annotator.store.migrations import MIGRATIONS, applied_versions
from annotator.store.projects import load_project, project_id, table_counts, write_project
from annotator.store.users import user_id
from tests.apptest_helpers import seed_project
from tests.core.test_annotation import demo  # noqa: F401  (six captions assigned to ann1)

# The captions table as migrations 1..13 left it: one caption per (item, system).
_V13_SQLITE = ("CREATE TABLE captions_v13 (id INTEGER NOT NULL, item_id INTEGER NOT NULL, system_id INTEGER NOT NULL, "
               "line_no INTEGER NOT NULL, text TEXT NOT NULL, mentions TEXT, PRIMARY KEY (id), "
               "CONSTRAINT uq_captions_item_system UNIQUE (item_id, system_id), "
               "CONSTRAINT uq_captions_system_line UNIQUE (system_id, line_no), "
               "FOREIGN KEY(item_id) REFERENCES items (id) ON DELETE CASCADE, "
               "FOREIGN KEY(system_id) REFERENCES systems (id) ON DELETE CASCADE)")


def _back_to_version_13(store) -> None:
    """Give the store's captions table the shape it had before migration 14 and forget that migration."""
    if store.is_sqlite:
        with store.engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            raw.execute("PRAGMA foreign_keys=OFF")
            try:
                with conn.begin():
                    conn.execute(text(_V13_SQLITE))
                    conn.execute(text("INSERT INTO captions_v13 SELECT id, item_id, system_id, line_no, text, mentions "
                                      "FROM captions"))
                    conn.execute(text("DROP TABLE captions"))
                    conn.execute(text("ALTER TABLE captions_v13 RENAME TO captions"))
                    conn.execute(schema.schema_migrations.delete().where(schema.schema_migrations.c.version == 14))
            finally:
                raw.execute("PRAGMA foreign_keys=ON")
        return
    with store.transaction() as conn:
        conn.execute(text("ALTER TABLE captions DROP CONSTRAINT uq_captions_item_system_n"))
        conn.execute(text("ALTER TABLE captions DROP COLUMN n"))
        conn.execute(text("ALTER TABLE captions ADD CONSTRAINT uq_captions_item_system UNIQUE (item_id, system_id)"))
        conn.execute(schema.schema_migrations.delete().where(schema.schema_migrations.c.version == 14))


def _second_sample(system="sys-a", n=1, keys=("img0.jpg",)):
    return Project("demo", items=[Item(key=k, captions=[Caption(system, f"another description of {k}", n=n)])
                                  for k in keys])


def _item_keys(store):
    return [i.key for i in load_project(store, "demo", with_captions=False).items]


def test_migration_14_adds_n_keeps_every_row_and_the_history(demo):
    store, caps = demo
    q = Queue.open(store, "ann1", "annotator", "demo")
    q.save(q.task(0), "inaccurate", ["scene"])
    q.save(q.task(0), "inaccurate", ["scene", "age"])
    keys = _item_keys(store)
    _back_to_version_13(store)
    with store.read() as conn:
        assert "n" not in {c["name"] for c in inspect(conn).get_columns("captions")}
    counts = table_counts(store)
    # The old shape refuses a second caption of a system for one item.
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        conn.execute(schema.captions.insert().values(item_id=1, system_id=1, line_no=99, text="x"))
    assert store.migrate() == [14]
    with store.read() as conn:
        assert applied_versions(conn) == [v for v, _, _ in MIGRATIONS]
        rows = conn.execute(select(schema.captions.c.id, schema.captions.c.n).order_by(schema.captions.c.id)).all()
        assert [r.id for r in rows] == caps and {r.n for r in rows} == {0}
        uniques = {u["name"]: u["column_names"] for u in inspect(conn).get_unique_constraints("captions")}
        assert uniques == {"uq_captions_item_system_n": ["item_id", "system_id", "n"],
                           "uq_captions_system_sample_line": ["system_id", "n", "line_no"]}
        # Judgements (both revisions) and assignments still point at their captions.
        assert [j.error_types for j in history(conn, caps[0], user_id(conn, "ann1"))] == [("scene",), ("age", "scene")]
    assert table_counts(store) == counts | {"schema_migrations": counts["schema_migrations"] + 1}
    # Now a second sample of sys-a for an item is accepted; sample 1 counts its own lines from 0.
    with store.transaction() as conn:
        write_project(conn, _second_sample(keys=keys[:2]))
    loaded = load_project(store, "demo", all_samples=True)
    first = loaded.items[0].captions
    assert [(c.system, c.n) for c in first] == [("sys-a", 0), ("sys-a", 1)] and [c.line for c in first] == [0, 0]
    assert store.migrate() == []


def test_the_database_refuses_a_second_caption_with_the_same_sample_index(demo):
    store, caps = demo
    with store.transaction() as conn:
        write_project(conn, _second_sample(n=2))
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        conn.execute(schema.captions.insert().values(item_id=1, system_id=1, line_no=99, text="x", n=2))
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        conn.execute(schema.captions.insert().values(item_id=1, system_id=1, line_no=98, text="x", n=-1))


@pytest.mark.parametrize("project, match", [
    (_second_sample(n=0), "already has a caption for this item"),
    (Project("demo", items=[Item(key="img0.jpg", captions=[Caption("sys-a", "a", n=3), Caption("sys-a", "b", n=3)])]),
     "item 'img0.jpg': system 'sys-a' has two captions with n = 3 for this item"),
    (_second_sample(n=-1), "sample index n of system 'sys-a' must be a non-negative integer, got -1"),
])
def test_duplicate_or_negative_samples_are_refused_and_nothing_is_stored(demo, project, match):
    store, _ = demo
    with store.transaction() as conn:
        write_project(conn, _second_sample(n=1))
    counts = table_counts(store)
    project.items[0].key = _item_keys(store)[0]
    with pytest.raises(InputError, match=match), store.transaction() as conn:
        write_project(conn, project, source="more.jsonl")
    assert table_counts(store) == counts


def test_annotators_see_only_the_first_sample(store):
    caps = seed_project(store, "demo", n_items=3)
    keys = _item_keys(store)
    with store.transaction() as conn:
        for n in (1, 2):
            write_project(conn, _second_sample(n=n, keys=keys))
    add_user(store, "ann1", "annotator")
    assign(store, "demo", ["ann1"], double_fraction=0)
    q = Queue.open(store, "ann1", "annotator", "demo")
    assert q.progress().assigned == 3
    seen = [q.task(k) for k in range(3)]
    assert [t.caption_id for t in seen] == caps
    assert all("another description" not in t.caption.text for t in seen)
    # The other samples are stored, and the rest of the project reads one caption per system and image:
    # rescoring and correction sets, caption lines of judgement files and --line, human-score keys.
    assert len(load_project(store, "demo", all_samples=True).items[0].captions) == 3
    assert [len(i.captions) for i in load_project(store, "demo").items] == [1, 1, 1]
    assert scoring_data(store, "demo", "sys-a").lines == [0, 1, 2]
    with store.read() as conn:
        pid = project_id(conn, "demo")
        assert [caption_id_for_line(conn, pid, "sys-a", k) for k in range(3)] == caps
        with pytest.raises(InputError, match="system 'sys-a' has 3 captions"):
            caption_id_for_line(conn, pid, "sys-a", 3)
        keys = caption_keys(conn, pid)
        assert sorted(keys.by_item_system.values()) == caps and keys.lines == {"sys-a": 3}
