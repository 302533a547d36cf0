"""The default correction plan: the five most frequent error types, Generally unrelated left out, from the
error tables — the choice behind the error-analysis study's Table 3."""

from __future__ import annotations

import json

from annotator.cli import main
from annotator.correction import correction_plan, plan_from_counts
from annotator.model import Role
from annotator.store import projects as P
from annotator.store import users as U
from annotator.store.judgements import save_judgement
from annotator.taxonomy import taxonomy
from tests.store.test_correction_store import build_demo

# The study's Table 2 (counts of each error type in its fine-grained annotation), by the tool's type ids.
TABLE_2 = {"unrelated": 264, "clothing_color": 195, "activity": 168, "clothing_type": 104, "gender": 98, "scene": 91,
           "number": 61, "object_nonexistent": 47, "age": 40, "stance": 38, "position": 37, "subject_extra": 34,
           "object_similar": 31, "other": 20, "color": 14, "subject_nonexistent": 11, "object_wrong": 7,
           "subject_similar": 3, "object_extra": 1, "subject_wrong": 1}


def test_the_study_s_table_2_gives_its_table_3_types():
    plan = plan_from_counts(TABLE_2, layer="adjudicated")
    # Table 3's rows: colour of clothing, activity, type of clothing, gender, scene/event/location.
    assert plan.types == ("clothing_color", "activity", "clothing_type", "gender", "scene")
    assert plan.counts == {"clothing_color": 195, "activity": 168, "clothing_type": 104, "gender": 98, "scene": 91}
    assert plan.left_out == ("unrelated",)
    assert plan.describe().startswith("Correction plan (adjudicated): Color of clothing (195), Activity (168)")


def test_ties_follow_the_taxonomy_and_unticked_types_are_left_out():
    counts = {t: 0 for t in taxonomy().ids} | {"scene": 2, "gender": 2, "age": 5, "unrelated": 9}
    plan = plan_from_counts(counts, layer="annotator:amy")
    order = taxonomy().ids
    assert plan.types == ("age",) + tuple(sorted(("scene", "gender"), key=order.index))
    assert plan_from_counts({t: 0 for t in order}, layer="x").types == ()


def test_plan_of_a_project_from_its_judgements(store, capsys):
    ids = build_demo(store)
    # The demo's adjudicated layer: line 0 colour of clothing and age, line 1 gender, line 3 activity. The lead
    # adds colour of clothing to lines 3 and 4, and number and Generally unrelated to line 4: colour of clothing
    # 3, then age, gender, activity and number once each (ties in taxonomy order), unrelated never.
    with store.transaction() as conn:
        lead = U.user_id(conn, "lead")
    save_judgement(store, ids[3], lead, label="inaccurate", error_types=["clothing_color", "activity"], kind="adjudication")
    save_judgement(store, ids[4], lead, label="inaccurate", error_types=["clothing_color", "number", "unrelated"],
                   kind="adjudication")
    plan = correction_plan(store, "demo", system="sys")
    assert plan.layer == "adjudicated"
    assert plan.types == ("clothing_color", "age", "gender", "activity", "number")
    assert plan.counts["clothing_color"] == 3 and plan.counts["activity"] == 1
    assert main(["--db", store.url, "corrections", "plan", "--project", "demo", "--system", "sys", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["types"] == list(plan.types) and out["layer"] == "adjudicated"
    assert main(["--db", store.url, "corrections", "plan", "--project", "demo", "--size", "2"]) == 0
    assert "Color of clothing (3), Age (1)" in capsys.readouterr().out


def test_no_judgements_no_plan(store):
    from annotator.model import Caption, Item, Project, Reference
    with store.transaction() as conn:
        P.write_project(conn, Project("p", items=[Item(key="k", references=[Reference("a dog")],
                                                        captions=[Caption("s", "a cat")])]))
        U.create_user(conn, "lead", Role.LEAD)
    plan = correction_plan(store, "p", system="s")
    assert plan.types == () and "nothing to plan" in plan.describe()
