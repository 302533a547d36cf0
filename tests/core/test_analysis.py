"""Error-frequency tables and judgement layers: hand-made cases and the study's Tables 1–2."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from annotator.analysis import BUCKETS, compare_systems, error_tables, examples
from annotator.errors import InputError
from annotator.io.tables import write_table
from annotator.layers import build_layer, layer_name, parse_layer
from annotator.taxonomy import ERROR_TYPE_IDS, taxonomy

I, A = "inaccurate", "accurate"

# The study's Table 2 (labels as its tool wrote them) and Table 1.
TABLE2 = {"generally unrelated": 264, "color of clothing": 195, "activity": 168, "type of clothing": 104, "gender": 98,
          "scene/event/location": 91, "number": 61, "non-existent object": 47, "age": 40, "stance": 38, "position": 37,
          "extra subject": 34, "similar-object": 31, "other": 20, "color": 14, "non-existent subject": 11,
          "wrong-object": 7, "similar-subject": 3, "extra object": 1, "wrong-subject": 1}
TABLE1 = {"1": 486, "2": 221, "3": 83, "4+": 22}


def study_captions() -> list[tuple[str, tuple[str, ...]]]:
    """1,014 judgements whose counts are exactly the study's: 812 inaccurate with the Table 1
    distribution of errors per description and the Table 2 type counts (1,265 errors)."""
    tax = taxonomy()
    labels = [tax.resolve(name) for name, n in TABLE2.items() for _ in range(n)]
    sizes = sorted([1] * 486 + [2] * 221 + [3] * 83 + [4] * 22, reverse=True)
    caps: list[list[str]] = [[] for _ in sizes]
    pos = 0
    for slot in range(4):  # far-apart positions of the sorted label list never repeat a type in a caption
        for c, size in enumerate(sizes):
            if size > slot:
                caps[c].append(labels[pos])
                pos += 1
    assert pos == 1265 and all(len(set(c)) == len(c) for c in caps)
    return [(I, tuple(c)) for c in caps] + [(A, ())] * (1014 - 812)


def frame(rows) -> pd.DataFrame:
    """rows: (caption_id, user, label, types[, kind[, system[, practice[, judgement_id]]]])."""
    out = []
    for n, r in enumerate(rows):
        cid, user, label, types = r[:4]
        kind = r[4] if len(r) > 4 else "annotation"
        system = r[5] if len(r) > 5 else "s1"
        practice = r[6] if len(r) > 6 else False
        jid = r[7] if len(r) > 7 else n + 1
        out.append({"caption_id": cid, "item_id": cid, "is_practice": practice, "system": system, "user": user,
                    "kind": kind, "label": label, "error_types": " ".join(types), "judgement_id": jid})
    return pd.DataFrame(out)


def test_study_tables_reproduced():
    rows = [(cid, "ann", label, types) for cid, (label, types) in enumerate(study_captions())]
    t = error_tables(build_layer(frame(rows), "ann"))
    assert (t.total, t.inaccurate, t.accurate) == (1014, 812, 202)
    assert round(100 * t.share_inaccurate) == 80
    assert t.errors_per_description == TABLE1
    assert t.total_errors == 1265 and round(t.errors_per_inaccurate, 2) == 1.56
    tax = taxonomy()
    assert t.type_counts == {tax.resolve(k): v for k, v in TABLE2.items()}
    assert list(t.type_counts) == list(ERROR_TYPE_IDS)
    # Groups: General and People dominate, Subject is the rarest.
    g = t.group_counts()
    assert g == {"People": 40 + 98 + 104 + 195, "Subject": 1 + 3 + 11 + 34, "Object": 7 + 31 + 47 + 1,
                 "General": 38 + 168 + 37 + 61 + 91 + 14 + 20 + 264}
    types = t.types_frame()
    assert types["group"].tolist()[:8] == ["General"] * 8 and types["type"].iloc[0] == "unrelated"
    assert types["group"].tolist()[-4:] == ["Subject"] * 4 and types["type"].iloc[-1] == "subject_wrong"
    by_count = t.types_frame("count")
    assert by_count["count"].tolist() == sorted(TABLE2.values(), reverse=True)
    assert t.errors_frame()["descriptions"].tolist() == [486, 221, 83, 22]


# ------------------------------------------------------------------ layers

CASES = [
    # 1: single annotator
    (1, "x", I, ("gender",)),
    # 2: agreed inaccurate, same types
    (2, "x", I, ("activity", "gender")), (2, "y", I, ("gender", "activity")),
    # 3: agreed accurate
    (3, "x", A, ()), (3, "y", A, ()),
    # 4: both inaccurate, types differ → types open
    (4, "x", I, ("color",)), (4, "y", I, ("clothing_color",)),
    # 5: labels differ, no adjudication → unresolved
    (5, "x", I, ("age",)), (5, "y", A, ()),
    # 6: labels differ, adjudicated twice: the newest (higher judgement id) wins
    (6, "x", I, ("age",)), (6, "y", A, ()),
    (6, "lead2", I, ("number",), "adjudication", "s1", False, 100),
    (6, "lead1", I, ("scene", "stance"), "adjudication", "s1", False, 50),
    # 7: agreed inaccurate but the adjudication says accurate
    (7, "x", I, ("other",)), (7, "y", I, ("other",)), (7, "lead1", A, (), "adjudication"),
    # 8: only an adjudication
    (8, "lead1", I, ("position",), "adjudication", "s2"),
    # 9: three annotators, two agree → still a label disagreement
    (9, "x", A, (), "annotation", "s2"), (9, "y", A, (), "annotation", "s2"), (9, "z", I, ("age",), "annotation", "s2"),
    # 10: skipped by y (no label) → single
    (10, "x", A, (), "annotation", "s2"), (10, "y", None, (), "annotation", "s2"),
]


def test_adjudicated_layer_rules():
    layer = build_layer(frame(CASES), "adjudicated")
    got = {int(c): (bool(i), int(m), bool(k), s) for c, i, m, k, s in
           zip(layer.caption_ids, layer.inaccurate, layer.types, layer.types_known, np.asarray(layer.status, dtype=object))}
    bit = {t: 1 << n for n, t in enumerate(ERROR_TYPE_IDS)}
    assert got[1] == (True, bit["gender"], True, "single")
    assert got[2] == (True, bit["gender"] | bit["activity"], True, "agreed")
    assert got[3] == (False, 0, True, "agreed")
    assert got[4] == (True, 0, False, "types open")
    assert 5 not in got and 9 not in got
    assert got[6] == (True, bit["number"], True, "adjudicated")
    assert got[7] == (False, 0, True, "adjudicated")
    assert got[8] == (True, bit["position"], True, "adjudicated")
    assert got[10] == (False, 0, True, "single")
    assert sorted(layer.unresolved_ids.tolist()) == [5, 9]
    assert layer.unresolved_in("s1") == 1 and layer.unresolved_in("s2") == 1
    assert layer.status_counts() == {"agreed": 2, "adjudicated": 3, "single": 2, "types open": 1}
    t = error_tables(layer)
    assert (t.total, t.accurate, t.inaccurate, t.untyped, t.unresolved) == (8, 3, 5, 1, 2)
    assert t.errors_per_description == {"1": 3, "2": 1, "3": 0, "4+": 0}
    assert t.type_counts["gender"] == 2 and t.type_counts["number"] == 1 and t.type_counts["scene"] == 0
    s2 = error_tables(layer, system="s2")
    assert (s2.total, s2.inaccurate, s2.unresolved) == (2, 1, 1)


def test_annotator_layer_takes_their_judgements_as_they_are():
    layer = build_layer(frame(CASES), "annotator:y")
    assert sorted(layer.caption_ids.tolist()) == [2, 3, 4, 5, 6, 7, 9]  # skip on 10 ignored
    t = error_tables(layer)
    assert (t.total, t.inaccurate) == (7, 3)
    # y: c2 gender+activity, c4 clothing colour, c7 other.
    assert t.errors_per_description == {"1": 2, "2": 1, "3": 0, "4+": 0}
    assert len(build_layer(frame(CASES), "nobody")) == 0
    assert error_tables(build_layer(frame(CASES), "nobody")).share_accurate is None


def test_layer_names():
    assert parse_layer("adjudicated") == ("adjudicated", None)
    assert parse_layer("annotator:ann 1") == ("annotator", "ann 1")
    assert parse_layer("bob") == ("annotator", "bob")
    assert layer_name("bob") == "annotator:bob"
    with pytest.raises(InputError):
        parse_layer("annotator:")
    with pytest.raises(InputError):
        parse_layer("  ")


def test_four_plus_bucket_and_practice_exclusion():
    rows = [(1, "x", I, ERROR_TYPE_IDS[:6]), (2, "x", I, ERROR_TYPE_IDS[:4]), (3, "x", I, ERROR_TYPE_IDS[:3]),
            (4, "x", A, (), "annotation", "s1", True), (5, "x", I, ("age",), "annotation", "s1", True)]
    layer = build_layer(frame(rows), "x")
    t = error_tables(layer)
    assert t.errors_per_description == {"1": 1, "2": 0, "3": 1, "4+": 2}
    assert t.type_counts["age"] == 4
    tx = error_tables(layer, exclude_practice=True)
    assert (tx.total, tx.practice_excluded, tx.errors_per_description["1"]) == (3, 2, 0)


def test_examples_click_through():
    layer = build_layer(frame(CASES), "adjudicated")
    assert examples(layer, type_id="gender")["caption_id"].tolist() == [1, 2]
    assert examples(layer, errors="2")["caption_id"].tolist() == [2]
    assert examples(layer, errors="untyped")["caption_id"].tolist() == [4]
    assert examples(layer, label="accurate")["caption_id"].tolist() == [3, 7, 10]
    assert examples(layer, system="s2")["caption_id"].tolist() == [8, 10]
    assert examples(layer, status="adjudicated", limit=2)["caption_id"].tolist() == [6, 7]
    ex = examples(layer, type_id="gender")
    assert ex.loc[ex.caption_id == 2, "types"].item() == "gender activity"
    assert ex["errors"].tolist() == [1.0, 2.0]
    assert np.isnan(examples(layer, errors="untyped")["errors"].item())
    with pytest.raises(InputError):
        examples(layer, type_id="purple")
    with pytest.raises(InputError):
        examples(layer, errors="5")


def test_compare_systems_side_by_side():
    rows = [(c, "x", I if c % 2 else A, ("gender",) if c < 6 else ("activity", "age"), "annotation", "s1" if c < 6 else "s2")
            for c in range(12)]
    cmp = compare_systems(build_layer(frame(rows), "x"))
    assert list(cmp.tables) == ["s1", "s2"]
    share = cmp.share_frame()
    assert share.loc[share.judgement == "inaccurate", ["s1", "s2"]].values.tolist() == [[3, 3]]
    errs = cmp.errors_frame()
    assert errs.set_index("errors").loc["1", "s1"] == 3 and errs.set_index("errors").loc["2", "s2"] == 3
    types = cmp.types_frame().set_index("type")
    assert types.loc["gender", "s1"] == 3 and types.loc["activity", "s2"] == 3 and types.loc["gender", "s2"] == 0
    assert types.loc["age", "s2 share of errors"] == pytest.approx(0.5)
    summary = cmp.summary()
    assert summary["systems"]["s1"]["type_counts"]["gender"] == 3
    data = json.loads(write_table(cmp, "json"))
    assert list(data) == ["Accuracy", "Errors per description", "Error types", "Error groups"]


def test_tables_export_in_every_format():
    rows = [(cid, "ann", label, types) for cid, (label, types) in enumerate(study_captions())]
    t = error_tables(build_layer(frame(rows), "ann"))
    csv = write_table({"Error types": t.types_frame("count")}, "csv").decode()
    back = pd.read_csv(io.StringIO(csv))  # one table: no section line
    assert back["count"].tolist()[:3] == [264, 195, 168] and back["name"].iloc[0] == "Generally unrelated"
    tex = write_table(t, "latex").decode()
    assert tex.count("\\toprule") == 4 and "Scene / event / location & 91" in tex
    md = write_table(t.errors_frame(), "md").decode()
    assert "| 4+ | 22 | 0.027 |" in md
    summary = t.summary()
    assert set(summary["errors_per_description"]) == set(BUCKETS)
