"""An error type is data only: a 21st type appended to a copy of guidelines/taxonomy.toml goes through import,
annotation, the error tables, agreement and the judgements export, and the store keeps it in the integer type
mask (the dashboards' fast path), not as text to be parsed."""

from __future__ import annotations

import json
import shutil

import pytest
from sqlalchemy import select

import annotator.taxonomy as taxonomy_module
from annotator.agreement import agreement_report
from annotator.analysis import error_tables
from annotator.annotation import Queue, keyboard_map
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.errors import InputError
from annotator.io import import_jsonl
from annotator.judgement_export import export_judgements
from annotator.layers import build_layer
from annotator.store import schema
from annotator.store.analysis_queries import judgement_frame
from annotator.store.codec import mask_types, type_mask
from annotator.taxonomy import load_taxonomy, taxonomy
from tests.apptest_helpers import seed_project

NEW_TYPE = '''
[[type]]
id = "headwear"
bit = 20
name = "Headwear"
group = "People"
key = "p"
definition = "A person's hat, cap or helmet is named wrongly, or one is given to a bare head."
example = { caption = "A man in a red cap rides a bike", note = "he wears a helmet" }
aliases = ["hat"]
'''


def _taxonomy_with(tmp_path, extra: str):
    path = tmp_path / "taxonomy.toml"
    shutil.copy(taxonomy_module.TAXONOMY_FILE, path)
    with path.open("a", encoding="utf-8") as f:
        f.write(extra)
    return path


@pytest.fixture
def new_type(tmp_path, monkeypatch):
    """The process reads a taxonomy with a 21st type, as a project that appended one to its guidelines would."""
    monkeypatch.setattr(taxonomy_module, "TAXONOMY_FILE", _taxonomy_with(tmp_path, NEW_TYPE))
    taxonomy.cache_clear()
    yield taxonomy()
    taxonomy.cache_clear()


def test_a_21st_type_goes_all_the_way_on_the_fast_path(new_type, store, tmp_path):
    assert len(new_type.ids) == 21 and new_type.ids[-1] == "headwear"
    assert type_mask("age headwear") == 1 | 1 << 20 and mask_types(1 << 20) == "headwear"
    assert keyboard_map()["p"] == "type:headwear"
    # import: a judgements file that names the new type by an alias
    caps = seed_project(store, "demo", n_items=4)
    for name in ("ann1", "ann2"):
        add_user(store, name, "annotator")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"system": "sys-a", "line": 3, "annotator": "bob", "label": "inaccurate",
                                "error_types": ["headwear", "gender"]}) + "\n", encoding="utf-8")
    import_jsonl(store, "demo", rows)
    # annotate (core): two annotators on every caption
    assign(store, "demo", ["ann1", "ann2"], double_fraction=1.0, second_pass="full")
    marks = {"ann1": [["headwear"], ["age", "headwear"], None, ["headwear"]],
             "ann2": [["headwear"], ["headwear"], ["headwear"], None]}
    for user, labels in marks.items():
        q = Queue.open(store, user, "annotator", "demo")
        for pos in range(q.size()):
            task = q.task(pos)
            types = labels[caps.index(task.caption_id)]
            q.save(task, "inaccurate" if types else "accurate", types or ())
    # the fast path: every stored row has its mask, so no reader falls back to parsing the text
    cj = schema.current_judgements
    with store.read() as conn:
        stored = conn.execute(select(cj.c.error_types, cj.c.type_mask)).all()
    assert len(stored) == 9 and all(mask is not None and mask == type_mask(text) for text, mask in stored)
    assert {text for text, _ in stored} == {"headwear", "age headwear", "gender headwear", ""}
    # tables
    frame = judgement_frame(store, "demo")
    tables = error_tables(build_layer(frame, "annotator:ann1"))
    assert tables.type_counts["headwear"] == 3 and tables.type_counts["age"] == 1 and tables.inaccurate == 3
    # agreement: the pair agrees on headwear on the two captions both called inaccurate
    report = agreement_report(frame, ["ann1", "ann2"], n_resamples=10)
    assert "headwear" in report.type_ids
    per_type = {t.type_id: t for t in report.pairs[0].fine.per_type}
    assert (per_type["headwear"].reference, per_type["headwear"].retrieved, per_type["headwear"].both) == (2, 2, 2)
    # export
    export = export_judgements(store, "demo")
    assert sorted(";".join(t) for t in export.rows["error_types"] if "headwear" in t) == [
        "age;headwear", "gender;headwear", "headwear", "headwear", "headwear", "headwear", "headwear"]
    assert b"age;headwear" in export.to_bytes("csv")


@pytest.mark.parametrize("bit,message", [(3, "bit 3 of 'headwear' is already 'clothing_color'"),
                                         (62, "from 0 to 61"), ('"20"', "from 0 to 61")])
def test_a_type_bit_is_checked(tmp_path, bit, message):
    with pytest.raises(InputError, match=message):
        load_taxonomy(_taxonomy_with(tmp_path, NEW_TYPE.replace("bit = 20", f"bit = {bit}")))
    with pytest.raises(InputError, match="missing field 'bit'"):
        load_taxonomy(_taxonomy_with(tmp_path, NEW_TYPE.replace("bit = 20\n", "")))
