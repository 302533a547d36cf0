"""Drafts of judgements in the database: put, get, replace, per user, removed by a save or a skip, and the
migration that adds them to a version-9 database (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import inspect, select, text

from annotator.annotation import Queue, check_draft
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.errors import InputError, PermissionDenied
from annotator.spans import Span
from annotator.store import schema
from annotator.store.drafts import get_draft, put_draft
from annotator.store.judgements import save_judgement
from annotator.store.migrations import MIGRATIONS, applied_versions
from tests.apptest_helpers import seed_project


@pytest.fixture
def queues(store):
    caps = seed_project(store, "p", n_items=4)
    add_user(store, "ann1", "annotator")
    add_user(store, "ann2", "annotator")
    assign(store, "p", ["ann1", "ann2"], double_fraction=1.0)
    return store, Queue.open(store, "ann1", "annotator", "p"), Queue.open(store, "ann2", "annotator", "p"), caps


def _task(q: Queue, caption_id: int):
    pos = next(p for p in range(q.size()) if q.task(p).caption_id == caption_id)
    return q.task(pos)


def _draft_rows(store) -> int:
    with store.read() as conn:
        return len(conn.execute(select(schema.drafts.c.user_id)).all())


def test_a_draft_is_stored_replaced_and_given_back(queues):
    store, q1, _, caps = queues
    task = _task(q1, caps[0])
    assert q1.load_draft(task) is None
    first = q1.save_draft(task, "inaccurate", [], "  the dog is a cat ")  # incomplete: no type yet
    got = q1.load_draft(_task(q1, caps[0]))
    assert (got.label, got.error_types, got.note) == ("inaccurate", (), "the dog is a cat")
    assert got.saved_at == first.saved_at and got.saved_at.utcoffset() == timedelta(0)
    q1.save_draft(task, None, ["gender", "age"], "")  # replaced, types in taxonomy order, no choice yet
    got = q1.load_draft(_task(q1, caps[0]))
    assert (got.label, got.error_types, got.note) == (None, ("age", "gender"), "")
    assert _draft_rows(store) == 1
    assert q1.discard_draft(task) and q1.load_draft(task) is None and not q1.discard_draft(task)


def test_drafts_are_kept_per_user(queues):
    store, q1, q2, caps = queues
    q1.save_draft(_task(q1, caps[0]), "accurate", [], "mine")
    assert q2.load_draft(_task(q2, caps[0])) is None
    q2.save_draft(_task(q2, caps[0]), "inaccurate", ["scene"], "theirs")
    assert q1.load_draft(_task(q1, caps[0])).note == "mine"
    assert q2.load_draft(_task(q2, caps[0])).error_types == ("scene",)
    # Saving one user's judgement removes only that user's draft.
    q2.save(_task(q2, caps[0]), "accurate", [], "theirs")
    assert q2.load_draft(_task(q2, caps[0])) is None
    assert q1.load_draft(_task(q1, caps[0])).note == "mine"
    assert _draft_rows(store) == 1


def test_saving_or_skipping_removes_the_draft(queues):
    store, q1, _, caps = queues
    q1.save_draft(_task(q1, caps[0]), "inaccurate", [], "half done")
    q1.save(_task(q1, caps[0]), "inaccurate", ["age"], "done")
    assert q1.load_draft(_task(q1, caps[0])) is None and _draft_rows(store) == 0
    q1.save_draft(_task(q1, caps[1]), None, ["age"], "")
    assert q1.skip(_task(q1, caps[1])) is not None
    assert q1.load_draft(_task(q1, caps[1])) is None and _draft_rows(store) == 0
    # A skip of a caption judged already writes no revision, but the draft goes all the same.
    q1.save_draft(_task(q1, caps[0]), "accurate", [], "second thoughts")
    assert q1.load_draft(_task(q1, caps[0])).note == "second thoughts"  # newer than the judgement: restored
    assert q1.skip(_task(q1, caps[0])) is None
    assert _draft_rows(store) == 0


def test_a_judgement_saved_after_the_draft_supersedes_it(queues):
    store, q1, _, caps = queues
    put_at = q1.save_draft(_task(q1, caps[0]), "inaccurate", [], "old").saved_at
    # A judgement stored after the draft by another path (an import, say) leaves the draft row behind.
    with store.transaction() as conn:
        put_draft(conn, caps[0], q1.user_id, label="inaccurate", error_types=(), note="old", at=put_at)
    save_judgement(store, caps[0], q1.user_id, label="accurate", kind="adjudication")  # another kind: kept
    assert q1.load_draft(_task(q1, caps[0])).note == "old"
    with store.transaction() as conn:
        from annotator.store.judgements import insert_judgement
        insert_judgement(conn, caps[0], q1.user_id, label="accurate", at=put_at + timedelta(seconds=5))
        put_draft(conn, caps[0], q1.user_id, label="inaccurate", error_types=(), note="old", at=put_at)
    assert q1.load_draft(_task(q1, caps[0])) is None


def test_a_draft_keeps_its_spans_and_their_fixes(queues):
    # "sys-a says: a cat sits on a sofa number 0": cat = 3, sofa number = 7-8.
    store, q1, _, caps = queues
    task = _task(q1, caps[0])
    assert task.caption.text.split()[3] == "cat"
    marked = [Span(7, 9, "scene"), Span(3, 4, "subject_wrong", "dog")]
    draft = q1.save_draft(task, None, ["scene", "subject_wrong"], "half done", spans=marked)
    assert draft.spans == (Span(3, 4, "subject_wrong", "dog"), Span(7, 9, "scene"))
    got = q1.load_draft(_task(q1, caps[0]))
    assert (got.label, got.error_types, got.note, got.spans) == (None, ("subject_wrong", "scene"), "half done",
                                                                 draft.spans)
    # The spans sit in the drafts' own column; the type ids stay a plain list.
    with store.read() as conn:
        row = conn.execute(select(schema.drafts.c.error_types, schema.drafts.c.spans)).one()
    assert row.error_types == "subject_wrong scene" and json.loads(row.spans)[0] == {
        "start": 3, "end": 4, "type": "subject_wrong", "fix": "dog"}
    # A draft without spans stores none (NULL) and reads back none.
    q1.save_draft(task, "inaccurate", ["age"], "")
    with store.read() as conn:
        assert tuple(conn.execute(select(schema.drafts.c.error_types, schema.drafts.c.spans)).one()) == ("age", None)
        assert get_draft(conn, caps[0], q1.user_id)[4] == ()
    assert q1.load_draft(task).spans == ()
    # The spans are the ones Save would store: the saved judgement has them.
    q1.save_draft(task, "inaccurate", ["subject_wrong"], "", spans=[Span(3, 4, "subject_wrong", "dog")])
    restored = q1.load_draft(task)
    q1.save(task, restored.label, restored.error_types, restored.note, spans=restored.spans)
    assert _task(q1, caps[0]).current.spans == (Span(3, 4, "subject_wrong", "dog"),)


def test_a_draft_s_spans_follow_the_span_rules(queues):
    store, q1, _, caps = queues
    task = _task(q1, caps[0])
    for label, types, spans, match in [
            (None, ["scene"], [Span(3, 4, "subject_wrong")], r"span 1 \(tokens 3-4, type 'subject_wrong'\): its type is not"),
            ("inaccurate", ["scene"], [Span(7, 12, "scene")], "ends beyond the caption, which has 10 tokens"),
            ("inaccurate", ["scene"], [Span(6, 8, "scene"), Span(7, 9, "scene")], "overlaps span 1"),
            ("accurate", [], [Span(3, 4, "scene")], "an accurate caption has no error spans"),
            ("inaccurate", ["scene"], [{"start": 3, "end": 4, "type": "scene", "colour": "red"}], "unknown field")]:
        with pytest.raises(InputError, match=match):
            q1.save_draft(task, label, types, "", spans=spans)
    assert _draft_rows(store) == 0


def test_draft_checks(queues):
    store, q1, _, caps = queues
    task = _task(q1, caps[0])
    assert check_draft(None, [], "") == (None, (), "")
    assert check_draft("inaccurate", [], "line one\nline two\t.") == ("inaccurate", (), "line one\nline two\t.")
    for label, types, note, match in [("maybe", [], "", "unknown label"), (None, ["teeth"], "", "unknown error type"),
                                      (None, [], "a\x1bb", "control character"), (None, [], "x" * 2001, "at most 2,000"),
                                      (None, [], "a\x7fb", "control character")]:
        with pytest.raises(InputError, match=match):
            q1.save_draft(task, label, types, note)
    assert _draft_rows(store) == 0
    seed_project(store, "other", n_items=1)
    assign(store, "other", ["ann2"], double_fraction=0)
    not_mine = Queue.open(store, "ann2", "annotator", "other").task(0)
    with pytest.raises(PermissionDenied):
        q1.save_draft(not_mine, "accurate")
    assert _draft_rows(store) == 0


def test_migration_adds_drafts_to_a_version_9_database(queues):
    store, q1, _, caps = queues
    with store.transaction() as conn:
        schema.drafts.drop(conn)
        conn.execute(schema.schema_migrations.delete().where(schema.schema_migrations.c.version >= 10))
    with store.read() as conn:
        assert applied_versions(conn)[-1] == 9 and not inspect(conn).has_table("drafts")
    assert store.migrate() == [v for v, _, _ in MIGRATIONS if v >= 10]
    with store.read() as conn:
        assert applied_versions(conn) == [v for v, _, _ in MIGRATIONS]
        assert {c["name"] for c in inspect(conn).get_columns("drafts")} == {
            "user_id", "caption_id", "label", "error_types", "spans", "note", "saved_at"}
    q1.save_draft(_task(q1, caps[0]), "inaccurate", ["age"], "after the upgrade")
    with store.read() as conn:
        assert get_draft(conn, caps[0], q1.user_id)[:3] == ("inaccurate", ("age",), "after the upgrade")
    assert store.migrate() == []


def test_a_saved_note_follows_the_same_text_rule_as_a_draft(queues):
    """A judgement's note may hold line breaks and tabs but no control character, as drafts and importers
    require; the refused save writes nothing."""
    store, q1, _, caps = queues
    task = _task(q1, caps[0])
    for note in ("a\x1b[31mred", "a\x7fb", "a\x00b"):
        with pytest.raises(InputError, match="the note cannot contain the control character"):
            q1.save(task, "inaccurate", ["other"], note, 2.0)
    with store.read() as conn:
        assert len(conn.execute(select(schema.judgements.c.id)).all()) == 0
    q1.save(task, "inaccurate", ["other"], "line one\nline two\t.", 2.0)
    assert q1.task(task.position).current.note == "line one\nline two\t."


def test_migration_15_gives_drafts_a_spans_column(queues):
    store, q1, _, caps = queues
    q1.save_draft(_task(q1, caps[0]), "inaccurate", ["age"], "before the upgrade")
    with store.transaction() as conn:
        conn.execute(text("ALTER TABLE drafts DROP COLUMN spans"))
        conn.execute(schema.schema_migrations.delete().where(schema.schema_migrations.c.version == 15))
    assert store.migrate() == [15]
    with store.read() as conn:
        assert "spans" in {c["name"] for c in inspect(conn).get_columns("drafts")}
        # The draft stored before keeps its values and has no spans.
        assert get_draft(conn, caps[0], q1.user_id)[:3] + get_draft(conn, caps[0], q1.user_id)[4:] == (
            "inaccurate", ("age",), "before the upgrade", ())
    q1.save_draft(_task(q1, caps[0]), "inaccurate", ["scene"], "", spans=[Span(7, 9, "scene")])
    assert q1.load_draft(_task(q1, caps[0])).spans == (Span(7, 9, "scene"),)
    assert store.migrate() == []
