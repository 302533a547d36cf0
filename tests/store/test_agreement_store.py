"""Agreement and adjudication through the store (SQLite and PostgreSQL) on a hand-made project.

``build_project`` is reused by the analysis, CLI and page tests.

The project: items img0…img9 (img9 is a practice item), systems sysA and sysB,
one caption each → captions c0…c9 (sysA) and c10…c19 (sysB). Annotators ann1
and ann2 judged all 20, ann3 judged c0…c5 and c9. Figures worked out by hand
are in the tests.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

from annotator.adjudication import adjudicate, adjudication_queue, caption_case
from annotator.agreement import agreement_report
from annotator.errors import InputError, NotFound, PermissionDenied
from annotator.layers import build_layer
from annotator.model import Caption, Item, Project, Role
from annotator.store.analysis_queries import judgement_frame
from annotator.store.caption_queries import caption_details, practice_items
from annotator.store.frame_versions import data_version
from annotator.store.judgements import insert_judgement
from annotator.store.projects import load_project, set_practice, write_project
from annotator.store.users import create_user

PROJECT = "study"
I, A = "inaccurate", "accurate"

#: caption index → {user: (label, types)}
JUDGEMENTS = {
    0: {"ann1": (I, ["gender"]), "ann2": (I, ["gender"]), "ann3": (I, ["gender"])},
    1: {"ann1": (I, ["gender", "activity"]), "ann2": (I, ["gender"]), "ann3": (I, ["gender"])},
    2: {"ann1": (I, ["clothing_color"]), "ann2": (I, ["clothing_type", "clothing_color"]), "ann3": (A, [])},
    3: {"ann1": (I, ["unrelated"]), "ann2": (I, ["scene", "number"]), "ann3": (I, ["unrelated"])},
    4: {"ann1": (I, ["color"]), "ann2": (A, []), "ann3": (I, ["color"])},
    5: {"ann1": (A, []), "ann2": (I, ["age"]), "ann3": (A, [])},
    6: {"ann1": (A, []), "ann2": (A, [])},
    7: {"ann1": (A, []), "ann2": (A, [])},
    8: {"ann1": (I, ["activity"]), "ann2": (I, ["activity"])},
    9: {"ann1": (I, ["age"]), "ann2": (A, []), "ann3": (A, [])},           # practice item
    10: {"ann1": (I, ["number"]), "ann2": (I, ["number"])},
    11: {"ann1": (A, []), "ann2": (A, [])},
    12: {"ann1": (I, ["scene"]), "ann2": (A, [])},
    13: {"ann1": (I, ["stance", "position"]), "ann2": (I, ["stance"])},
    14: {"ann1": (A, []), "ann2": (A, [])},
    15: {"ann1": (I, ["gender"]), "ann2": (I, ["gender"])},
    16: {"ann1": (I, ["activity"]), "ann2": (I, ["activity"])},
    17: {"ann1": (A, []), "ann2": (A, [])},
    18: {"ann1": (I, ["unrelated"]), "ann2": (I, ["unrelated", "scene"])},
    19: {"ann1": (A, []), "ann2": (I, ["other"])},                          # practice item
}
NOTES = {(19, "ann2"): "a dog <b>with</b> *wings*", (4, "ann2"): "looks fine to me"}


def build_project(store, *, adjudications: bool = True, image_root: str | None = None) -> list[int]:
    """Write the hand-made project; return caption ids by index c0…c19."""
    items = [Item(key=f"img{i}", image=f"img{i}.jpg", width=64, height=48, is_practice=(i == 9),
                  captions=[Caption("sysA", f"caption A{i}: a man in a *red* shirt | {i}"),
                            Caption("sysB", f"caption B{i}: two dogs on grass {i}")]) for i in range(10)]
    with store.transaction() as conn:
        write_project(conn, Project(PROJECT, image_root=image_root, items=items))
        uids = {name: create_user(conn, name, role) for name, role in
                (("ann1", Role.ANNOTATOR), ("ann2", Role.ANNOTATOR), ("ann3", Role.ANNOTATOR), ("lea", Role.LEAD),
                 ("boss", Role.ADMIN), ("ana", Role.ANALYST))}
    project = load_project(store, PROJECT)
    by_key = {(c.system, it.key): c.caption_id for it in project.items for c in it.captions}
    ids = [by_key[("sysA", f"img{i}")] for i in range(10)] + [by_key[("sysB", f"img{i}")] for i in range(10)]
    with store.transaction() as conn:
        for idx, judged in JUDGEMENTS.items():
            for user, (label, types) in judged.items():
                insert_judgement(conn, ids[idx], uids[user], label=label, error_types=types,
                                 note=NOTES.get((idx, user), ""))
        # A first, superseded revision: only the current one may count.
        insert_judgement(conn, ids[6], uids["ann1"], label=I, error_types=["other"], note="first thought")
        insert_judgement(conn, ids[6], uids["ann1"], label=A)
    if adjudications:
        adjudicate(store, ids[4], "boss", Role.ADMIN, A)            # older; lea's later decision wins
        adjudicate(store, ids[4], "lea", Role.LEAD, I, ["color"])
        adjudicate(store, ids[1], "lea", Role.LEAD, I, ["gender", "activity"])
    return ids


def test_judgement_frame_reads_current_judgements(store):
    ids = build_project(store)
    f = judgement_frame(store, PROJECT, kinds=("annotation", "adjudication"))
    assert len(f) == sum(len(j) for j in JUDGEMENTS.values()) + 3
    assert set(f["kind"].astype(str)) == {"annotation", "adjudication"}
    row = f[(f.caption_id == ids[6]) & (f.user == "ann1")]
    assert row["label"].item() == "accurate" and row["error_types"].item() == ""  # the newest revision
    assert f[f.is_practice]["caption_id"].nunique() == 2
    assert set(f[f.caption_id == ids[13]]["system"].astype(str)) == {"sysB"}
    only = judgement_frame(store, PROJECT, system="sysA", users_=["ann3"])
    assert sorted(only["caption_id"]) == sorted(ids[i] for i in (0, 1, 2, 3, 4, 5, 9))
    assert judgement_frame(store, PROJECT, system="nope").empty
    with pytest.raises(NotFound):
        judgement_frame(store, "no such project")


def test_agreement_from_the_store_matches_hand_computation(store):
    build_project(store)
    frame = judgement_frame(store, PROJECT)
    r = agreement_report(frame, ["ann1", "ann2"])
    p = r.first
    # Practice item img9 leaves out c9 and c19: 18 shared captions.
    assert (r.practice_items_excluded, r.practice_captions_excluded) == (1, 2)
    assert p.n == 18
    assert p.inaccurate == {"ann1": 12, "ann2": 11} and p.both_inaccurate == 10
    assert p.confusion == ((5, 1), (2, 10))
    # p_o = 15/18; p_e = (12·11 + 6·7)/18² = 174/324; kappa = (270 − 174)/(324 − 174) = 96/150.
    assert p.agreement == pytest.approx(15 / 18)
    assert p.kappa == pytest.approx(0.64)
    a = [JUDGEMENTS[i]["ann1"][0] for i in range(20) if i not in (9, 19)]
    b = [JUDGEMENTS[i]["ann2"][0] for i in range(20) if i not in (9, 19)]
    assert p.kappa == pytest.approx(cohen_kappa_score(a, b))
    # Types over the 10 both-inaccurate captions: TP 9, ann2 ticked 13, ann1 ticked 12.
    assert (p.fine.tp, p.fine.fp, p.fine.fn) == (9, 4, 3)
    assert p.fine.precision == pytest.approx(9 / 13) and p.fine.recall == pytest.approx(0.75)
    assert p.fine.f1 == pytest.approx(0.72)
    per = {t.type_id: t for t in p.fine.per_type}
    assert per["gender"].kappa == pytest.approx(1.0)
    # activity: ann1 on c1, c8, c16; ann2 on c8, c16 → po .9, pe .3·.2 + .7·.8 = .62.
    assert per["activity"].kappa == pytest.approx((0.9 - 0.62) / 0.38)
    assert per["activity"].precision == 1.0 and per["activity"].recall == pytest.approx(2 / 3)


def test_three_annotators_alpha_and_fleiss(store):
    build_project(store)
    r = agreement_report(judgement_frame(store, PROJECT), ["ann1", "ann2", "ann3"])
    assert len(r.pairs) == 3
    # Fleiss over c0…c5 (judged by all three; c9 is practice): by hand 1/28.
    table = np.array([[0, 3], [0, 3], [1, 2], [0, 3], [1, 2], [2, 1]])
    assert r.fleiss_items == 6 and r.fleiss_m == 3
    assert r.fleiss_kappa == pytest.approx(fleiss_kappa(table)) and r.fleiss_kappa == pytest.approx(1 / 28)
    import krippendorff
    data = np.full((3, 18), np.nan)
    keep = [i for i in range(20) if i not in (9, 19)]
    for u, user in enumerate(("ann1", "ann2", "ann3")):
        for col, i in enumerate(keep):
            if user in JUDGEMENTS[i]:
                data[u, col] = 1.0 if JUDGEMENTS[i][user][0] == I else 0.0
    assert r.alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    assert r.alpha_units == 18


def test_practice_marks_change_the_figures(store):
    build_project(store)
    v0 = data_version(store, PROJECT)
    set_practice(store, PROJECT, ["img9"], False)
    assert data_version(store, PROJECT) != v0
    assert practice_items(store, PROJECT) == []
    p = agreement_report(judgement_frame(store, PROJECT), ["ann1", "ann2"]).first
    assert p.n == 20 and p.inaccurate == {"ann1": 13, "ann2": 12}
    set_practice(store, PROJECT, ["img0", "img9"], True)
    r = agreement_report(judgement_frame(store, PROJECT), ["ann1", "ann2"])
    assert r.first.n == 16 and r.practice_items_excluded == 2 and practice_items(store, PROJECT) == ["img0", "img9"]


def test_adjudication_rules_and_permissions(store):
    ids = build_project(store, adjudications=False)
    with pytest.raises(PermissionDenied):
        adjudicate(store, ids[4], "ann1", Role.ANNOTATOR, I, ["color"])
    with pytest.raises(PermissionDenied):
        adjudicate(store, ids[4], "ana", Role.ANALYST, I, ["color"])
    with pytest.raises(InputError, match="at least one error type"):
        adjudicate(store, ids[4], "lea", Role.LEAD, I, [])
    with pytest.raises(InputError, match="no error types"):
        adjudicate(store, ids[4], "lea", Role.LEAD, A, ["color"])
    with pytest.raises(InputError, match="unknown error type"):
        adjudicate(store, ids[4], "lea", Role.LEAD, I, ["purple"])
    with pytest.raises(NotFound):
        adjudicate(store, 10 ** 9, "lea", Role.LEAD, A)
    with pytest.raises(NotFound):
        adjudicate(store, ids[4], "ghost", Role.LEAD, A)
    assert adjudicate(store, ids[4], "lea", Role.LEAD, I, ["color"]) == 1
    assert adjudicate(store, ids[4], "lea", Role.LEAD, A, note="on second look") == 2
    assert adjudicate(store, ids[4], "local", Role.ADMIN, A, create_user=True) == 1
    f = judgement_frame(store, PROJECT, kinds=("adjudication",))
    assert len(f) == 2 and set(f["user"].astype(str)) == {"lea", "local"}


def test_adjudication_queue_and_case(store):
    ids = build_project(store)
    frame = judgement_frame(store, PROJECT, kinds=("annotation", "adjudication"))
    q = adjudication_queue(frame, annotators=["ann1", "ann2"])
    label_dis = {ids[i] for i in (4, 5, 9, 12, 19)}
    type_dis = {ids[i] for i in (1, 2, 3, 13, 18)}
    assert set(q["caption_id"]) == label_dis | type_dis
    assert set(q[q.disagreement == "label"]["caption_id"]) == label_dis
    done = q[q.adjudicated]
    assert set(done["caption_id"]) == {ids[1], ids[4]}
    row = q[q.caption_id == ids[4]].iloc[0]
    assert (row["adjudicated_label"], row["adjudicated_types"], row["adjudicated_by"]) == (I, "color", "lea")
    assert row["label_ann2"] == A and row["types_ann1"] == "color"
    assert set(adjudication_queue(frame, annotators=["ann1", "ann2"], include_done=False)["caption_id"]) == \
        (label_dis | type_dis) - {ids[1], ids[4]}
    assert set(adjudication_queue(frame, annotators=["ann1", "ann2"], include_types=False)["caption_id"]) == label_dis

    case = caption_case(store, PROJECT, ids[19])
    assert case.is_practice and case.system == "sysB" and case.item_key == "img9"
    assert case.text == "caption B9: two dogs on grass 9"
    assert {j.user: j.note for j in case.annotations}["ann2"] == "a dog <b>with</b> *wings*"
    c4 = caption_case(store, PROJECT, ids[4])
    assert c4.adjudication.user == "lea" and c4.adjudication.error_types == ("color",)
    assert len(c4.adjudications) == 2
    with pytest.raises(NotFound):
        caption_case(store, PROJECT, 10 ** 9)
    d = caption_details(store, PROJECT, [ids[3], ids[0]])
    assert d["caption_id"].tolist() == [ids[3], ids[0]]


def test_adjudicated_layer_from_the_store(store):
    ids = build_project(store)
    layer = build_layer(judgement_frame(store, PROJECT, kinds=("annotation", "adjudication")), "adjudicated")
    status = dict(zip(layer.caption_ids.tolist(), np.asarray(layer.status, dtype=object)))
    assert status[ids[4]] == "adjudicated" and status[ids[1]] == "adjudicated"
    assert status[ids[3]] == "types open" and status[ids[0]] == "agreed"
    assert set(layer.unresolved_ids.tolist()) == {ids[i] for i in (2, 5, 9, 12, 19)}
    assert len(layer) == 15
