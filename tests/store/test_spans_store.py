"""Error spans in the store (SQLite and PostgreSQL): saved with each revision, history kept, migrated onto an
older database, exported in CSV/XLSX/JSONL and read back exactly by ``import jsonl``."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from sqlalchemy import text

from annotator.annotation import Queue
from annotator.errors import InputError
from annotator.io import export_jsonl, import_jsonl
from annotator.judgement_export import export_judgements
from annotator.spans import Span
from annotator.store import schema
from annotator.store.judgements import current_judgement, history
from annotator.store.migrations import MIGRATIONS, applied_versions
from annotator.store.projects import table_counts
from annotator.store.users import user_id
from tests.test_annotation import demo  # noqa: F401  (six captions assigned to ann1)
from tests.test_judgement_export import fresh  # noqa: F401  (a second, empty store of the same kind)

# "sys-a says: a cat sits on a sofa number 0": cat = token 3, sofa = 7, number 0 = 8..10
CAT = {"start": 3, "end": 4, "type": "subject_wrong", "fix": "dog"}
SOFA = {"start": 7, "end": 8, "type": "scene"}


def test_a_save_stores_its_spans_with_the_revision_and_history_keeps_them(demo):
    store, caps = demo
    q = Queue.open(store, "ann1", "annotator", "demo")
    q.save(q.task(0), "inaccurate", ["subject_wrong", "scene"], spans=[SOFA, CAT])
    q.save(q.task(0), "inaccurate", ["subject_wrong"], spans=[CAT | {"fix": "brown dog"}])
    with store.read() as conn:
        uid = user_id(conn, "ann1")
        now = current_judgement(conn, caps[0], uid)
        revisions = history(conn, caps[0], uid)
    assert now.spans == (Span(3, 4, "subject_wrong", "brown dog"),)
    assert [j.spans for j in revisions] == [(Span(3, 4, "subject_wrong", "dog"), Span(7, 8, "scene")),
                                            (Span(3, 4, "subject_wrong", "brown dog"),)]
    # Refused, nothing stored: a span whose type is not ticked, one beyond the caption.
    with pytest.raises(InputError, match=r"span 2 \(tokens 7-8, type 'scene'\): its type is not among"):
        q.save(q.task(0), "inaccurate", ["subject_wrong"], spans=[CAT, SOFA])
    with pytest.raises(InputError, match="ends beyond the caption, which has 10 tokens"):
        q.save(q.task(0), "inaccurate", ["number"], spans=[{"start": 8, "end": 11, "type": "number"}])
    with pytest.raises(InputError, match="an accurate caption has no error spans"):
        q.save(q.task(1), "accurate", spans=[SOFA])
    with store.read() as conn:
        assert len(history(conn, caps[0], uid)) == 2 and current_judgement(conn, caps[1], uid) is None


def test_migration_12_adds_spans_to_a_database_without_them(demo):
    store, caps = demo
    q = Queue.open(store, "ann1", "annotator", "demo")
    q.save(q.task(0), "inaccurate", ["scene"])
    with store.transaction() as conn:
        conn.execute(text("ALTER TABLE judgements DROP COLUMN spans"))
        conn.execute(schema.schema_migrations.delete().where(schema.schema_migrations.c.version == 12))
    assert store.migrate() == [12]
    with store.read() as conn:
        assert applied_versions(conn) == [v for v, _, _ in MIGRATIONS]
        assert current_judgement(conn, caps[0], user_id(conn, "ann1")).spans == ()
    q.save(q.task(0), "inaccurate", ["scene"], spans=[SOFA])
    assert export_judgements(store, "demo").rows.spans.tolist()[0] == (Span(7, 8, "scene"),)


def test_exports_carry_spans_and_import_jsonl_reads_them_back_exactly(demo, fresh, tmp_path):
    store, caps = demo
    q = Queue.open(store, "ann1", "annotator", "demo")
    q.save(q.task(0), "inaccurate", ["subject_wrong", "scene"], spans=[CAT, SOFA])
    q.save(q.task(0), "inaccurate", ["subject_wrong", "scene"], spans=[CAT])  # scene not localised now
    q.save(q.task(1), "accurate")
    export = export_judgements(store, "demo", history=True)
    lines = [json.loads(x) for x in export.to_bytes("jsonl").decode().splitlines()]
    assert [row["spans"] for row in lines] == [[CAT, SOFA], [CAT], []]
    table = pd.read_csv(io.BytesIO(export.to_bytes("csv")), keep_default_na=False)
    assert json.loads(table.spans[0]) == [CAT, SOFA] and table.spans[2] == ""
    xlsx = pd.read_excel(io.BytesIO(export.to_bytes("xlsx")), keep_default_na=False)
    assert json.loads(xlsx.spans[1]) == [CAT]
    # Into an empty store: the same rows, spans included.
    project_file, rows_file = tmp_path / "project.jsonl", tmp_path / "rows.jsonl"
    with project_file.open("w", encoding="utf-8") as fh:
        export_jsonl(store, "demo", fh)
    rows_file.write_bytes(export.to_bytes("jsonl"))
    import_jsonl(fresh, "demo", project_file)
    assert import_jsonl(fresh, "demo", rows_file).judgements == 3
    again = export_judgements(fresh, "demo", history=True)
    assert again.to_bytes("jsonl") == export.to_bytes("jsonl")
    # A second import of the same file changes nothing; one that says other spans for a stored revision is refused.
    import_jsonl(fresh, "demo", rows_file)
    lines[0]["spans"] = [SOFA]
    rows_file.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="stored already and says something else"):
        import_jsonl(fresh, "demo", rows_file)


@pytest.mark.parametrize("spans, match", [
    ([{"start": 9, "end": 11, "type": "scene"}], "line 1: span 1 .* ends beyond the caption"),
    ([{"start": 1, "end": 2, "type": "age"}], "line 1: span 1 .*its type is not among"),
    ("nope", "line 1: spans must be a JSON list"),
])
def test_import_refuses_bad_spans_with_the_line_and_stores_nothing(demo, tmp_path, spans, match):
    store, _ = demo
    before = table_counts(store)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"system": "sys-a", "item": "img0.jpg", "annotator": "bob", "label": "inaccurate",
                                "error_types": ["scene"], "spans": spans}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=match):
        import_jsonl(store, "demo", rows)
    assert table_counts(store) == before


def test_rows_without_spans_still_import(demo, tmp_path):
    store, caps = demo
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"system": "sys-a", "item": "img0.jpg", "annotator": "bob", "label": "inaccurate",
                                "error_types": ["scene"]}) + "\n", encoding="utf-8")
    import_jsonl(store, "demo", rows)
    with store.read() as conn:
        assert current_judgement(conn, caps[0], user_id(conn, "bob")).spans == ()
