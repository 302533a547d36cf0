"""The integer type mask stored beside each current judgement's error types, and the revision's working time
(migration 9), on SQLite and PostgreSQL: equal to the text and the revision after every kind of write, and
filled in for judgements stored before them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select, text

from annotator.adjudication import adjudicate
from annotator.io import import_judgements, import_jsonl, import_lines
from annotator.model import Role
from annotator.store import schema
from annotator.store.bulk import bulk_judgements
from annotator.store.codec import mask_types, type_mask, working_hundredths
from annotator.store.judgements import save_judgement
from annotator.store.migrations import MIGRATIONS, applied_versions
from annotator.store.projects import captions_of_system, project_id
from annotator.store.users import user_id
from annotator.taxonomy import taxonomy

FIX = Path(__file__).parent.parent / "fixtures"
LINES = FIX / "lines"


def test_mask_spells_exactly_the_stored_text():
    assert type_mask("") == 0 and type_mask(None) == 0 and mask_types(0) == ""
    assert type_mask("age") == 1 and type_mask("age gender") == 3
    assert type_mask("unrelated") == 1 << 19 and mask_types(1 << 19) == "unrelated"
    for ids in [("clothing_type", "number"), ("object_wrong", "color"), taxonomy().mask_ids]:
        stored = " ".join(ids)
        assert mask_types(type_mask(stored)) == stored
    # Text a mask would not give back is left to be read as text.
    for odd in ("gender age", "age age", "age  gender", " age", "age ", "retired_type", "age retired_type"):
        assert type_mask(odd) is None, odd


def test_bits_cover_the_taxonomy():
    # Every type the taxonomy offers has a bit, so every save from the app is stored with its mask; the study's
    # 20 types keep the bits they had when the masks were first stored (migration 9).
    tax = taxonomy()
    assert set(tax.ids) <= set(tax.mask_ids) and len(tax.mask_ids) <= 62
    assert tax.mask_ids[:20] == ("age", "gender", "clothing_type", "clothing_color", "subject_wrong", "subject_similar",
                                 "subject_nonexistent", "subject_extra", "object_wrong", "object_similar",
                                 "object_nonexistent", "object_extra", "stance", "activity", "position", "number",
                                 "scene", "color", "other", "unrelated")
    with pytest.raises(ValueError, match="bit that no type"):
        mask_types(1 << 40)


def _rows(store) -> list[tuple]:
    cj = schema.current_judgements
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(select(cj.c.caption_id, cj.c.user_id, cj.c.kind, cj.c.error_types,
                                                      cj.c.type_mask).order_by(cj.c.caption_id, cj.c.user_id, cj.c.kind))]


def _assert_masks_match(store) -> list[tuple]:
    rows = _rows(store)
    assert rows
    for *_, stored, mask in rows:
        assert mask == type_mask(stored), (stored, mask)
    cj, j = schema.current_judgements, schema.judgements
    with store.read() as conn:
        times = conn.execute(select(cj.c.hundredths, j.c.seconds).join(j, j.c.id == cj.c.judgement_id)).all()
    assert len(times) == len(rows) and all(mine == working_hundredths(theirs) for mine, theirs in times), times
    return rows


@pytest.fixture
def project(store):
    import_lines(store, "p", "sys-a", LINES / "captions_a.txt", [LINES / "refs1.txt"])
    import_lines(store, "p", "sys-b", LINES / "captions_b.txt", [LINES / "refs1.txt"])
    with store.read() as conn:
        pid = project_id(conn, "p")
        ids = [r.id for r in captions_of_system(conn, pid, "sys-a")]
    return store, ids


def test_saves_corrections_skips_and_adjudications_keep_the_mask(project):
    store, ids = project
    with store.transaction() as conn:
        a = user_id(conn, "ann_a", create_role=Role.ANNOTATOR)
        b = user_id(conn, "ann_b", create_role=Role.ANNOTATOR)
        user_id(conn, "lead", create_role=Role.LEAD)
    save_judgement(store, ids[0], a, label="inaccurate", error_types=("age", "color"), seconds=2.5)
    save_judgement(store, ids[0], b, label="accurate", seconds=0.1 + 0.2)
    save_judgement(store, ids[1], a, label="inaccurate", error_types=("unrelated",))
    # A correction of a judgement (a new revision) moves the mask with the text, including back to none.
    save_judgement(store, ids[1], a, label="inaccurate", error_types=("gender", "number"))
    save_judgement(store, ids[0], a, label="accurate")
    save_judgement(store, ids[2], b, label=None)  # a skip
    adjudicate(store, ids[0], "lead", Role.LEAD, "inaccurate", ["clothing_color", "scene"])
    adjudicate(store, ids[0], "lead", Role.LEAD, "inaccurate", ["scene"])
    rows = _assert_masks_match(store)
    by_key = {(c, u, k): m for c, u, k, _, m in rows}
    assert by_key[(ids[0], a, "annotation")] == 0
    assert by_key[(ids[1], a, "annotation")] == type_mask("gender number") == 0b10 | 1 << 15
    assert by_key[(ids[2], b, "annotation")] == 0
    assert mask_types([m for (c, _, k), m in by_key.items() if k == "adjudication"][0]) == "scene"


def test_imports_and_bulk_writes_keep_the_mask(project, tmp_path):
    store, ids = project
    import_judgements(store, "p", "sys-b", "alice", FIX / "judgements" / "coarse.json", FIX / "judgements" / "fine.json")
    rows_file = tmp_path / "rows.jsonl"
    rows_file.write_text("\n".join(json.dumps(r) for r in [
        {"system": "sys-a", "line": 0, "annotator": "bob", "label": "inaccurate", "error_types": ["number", "age"],
         "seconds": 12.25},
        {"system": "sys-a", "line": 1, "annotator": "bob", "label": "accurate", "error_types": []},
        {"system": "sys-a", "line": 0, "annotator": "lead", "kind": "adjudication", "label": "inaccurate",
         "error_types": ["stance"]},
    ]) + "\n", encoding="utf-8")
    import_jsonl(store, "p", rows_file)
    with store.transaction() as conn:
        carol = user_id(conn, "carol", create_role=Role.ANNOTATOR)
        bulk_judgements(conn, [(ids[0], carol, "inaccurate", ("subject_wrong", "activity")), (ids[1], carol, "accurate", ())])
    rows = _assert_masks_match(store)
    assert {mask_types(m) for *_, m in rows} >= {"clothing_type number", "object_wrong color", "age number", "stance",
                                                   "subject_wrong activity", ""}


def test_migration_fills_in_masks_of_judgements_stored_before(project):
    store, ids = project
    with store.transaction() as conn:
        a = user_id(conn, "ann_a", create_role=Role.ANNOTATOR)
        b = user_id(conn, "ann_b", create_role=Role.ANNOTATOR)
    save_judgement(store, ids[0], a, label="inaccurate", error_types=("age", "color"))
    save_judgement(store, ids[1], a, label="accurate", seconds=7.125)
    save_judgement(store, ids[2], a, label="inaccurate", error_types=("unrelated",))
    save_judgement(store, ids[2], b, label="inaccurate", error_types=("gender",))
    with store.transaction() as conn:
        # Text written by an older program: out of order, and an id the bits do not know.
        conn.execute(text("UPDATE current_judgements SET error_types = 'color age' WHERE user_id = :u AND caption_id = :c"),
                     {"u": a, "c": ids[2]})
        conn.execute(text("UPDATE current_judgements SET error_types = 'retired gender' WHERE user_id = :u"), {"u": b})
        # The database as schema version 8 left it (and as migration 21 found it: a timestamp for the save time).
        stamp = "DATETIME NOT NULL DEFAULT ''" if store.is_sqlite else "TIMESTAMP WITH TIME ZONE"
        conn.execute(text(f"ALTER TABLE current_judgements ADD COLUMN updated_at {stamp}"))
        conn.execute(text("UPDATE current_judgements SET updated_at = "
                          "(SELECT created_at FROM judgements WHERE judgements.id = current_judgements.judgement_id)"))
        for column in ("type_mask", "hundredths", "saved_us"):
            conn.execute(text(f"ALTER TABLE current_judgements DROP COLUMN {column}"))
        conn.execute(schema.schema_migrations.delete().where(schema.schema_migrations.c.version.in_([9, 21])))
    assert store.migrate() == [9, 21]
    with store.read() as conn:
        assert applied_versions(conn) == [v for v, _, _ in MIGRATIONS]
    rows = _assert_masks_match(store)
    assert [m for *_, m in rows] == [type_mask("age color"), 0, None, None]
    # A later save of such a judgement writes its mask again.
    save_judgement(store, ids[2], a, label="inaccurate", error_types=("age", "color"))
    assert _assert_masks_match(store)[2][-1] == type_mask("age color")
