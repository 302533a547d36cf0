"""Judgement layers: parsing every spelling, the frame algebra, and the annotator / adjudicated / consensus
layers on hand-made frames; the consensus layer through the store, the correction queue and the CLI."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.analysis import error_tables
from annotator.cli import main
from annotator.correction import correct_caption, correction_set, layer_types, queue
from annotator.errors import InputError
from annotator.layers import (
    ADJUDICATED, CONSENSUS, Layer, available_layers, build_layer, factorize_sorted, first_of_runs, last_of_runs,
    layer_name, masks_to_ids, newest_per_caption, optional_layer, parse_layer, recode, select_rows, type_bitmasks,
    type_counts,
)
from annotator.taxonomy import ERROR_TYPE_IDS
from tests.property_helpers import examples
from tests.store.test_correction_store import build_demo

I, A = "inaccurate", "accurate"
BIT = {t: 1 << n for n, t in enumerate(ERROR_TYPE_IDS)}


# ------------------------------------------------------------------ parsing

@pytest.mark.parametrize("text, expected", [
    ("adjudicated", ("adjudicated", None)),
    ("Adjudicated", ("adjudicated", None)),
    ("  ADJUDICATION ", ("adjudicated", None)),
    ("consensus", ("consensus", None)),
    (" Consensus", ("consensus", None)),
    ("annotator:alice", ("annotator", "alice")),
    ("Annotator: alice ", ("annotator", "alice")),
    ("annotator:ann 1", ("annotator", "ann 1")),
    ("annotator:a:b", ("annotator", "a:b")),
    ("annotator:adjudicated", ("annotator", "adjudicated")),
    ("annotator:consensus", ("annotator", "consensus")),
    ("bob", ("annotator", "bob")),
    (" Bob ", ("annotator", "Bob")),
])
def test_parse_layer_spellings(text, expected):
    layer = parse_layer(text)
    assert isinstance(layer, Layer) and (layer.kind, layer.user) == expected
    assert parse_layer(layer) is layer
    assert parse_layer(str(layer)) == layer and layer_name(text) == layer.label


@pytest.mark.parametrize("text, quoted", [
    ("", "''"), ("   ", "'   '"), (None, "None"), ("annotator:", "'annotator:'"), ("annotator:   ", "'annotator:   '"),
])
def test_parse_layer_refuses_and_names_the_text(text, quoted):
    with pytest.raises(InputError) as err:
        parse_layer(text)
    assert quoted in str(err.value)


def test_optional_layer_reads_blank_as_no_layer():
    assert optional_layer(None) is None and optional_layer("") is None and optional_layer(" \t") is None
    assert optional_layer("annotator:bob") == Layer.annotator("bob") and optional_layer(ADJUDICATED) is ADJUDICATED
    with pytest.raises(InputError, match="annotator:"):
        optional_layer("annotator:")


def test_layer_values_labels_and_titles():
    assert ADJUDICATED == ("adjudicated", None) and CONSENSUS == ("consensus", None)
    assert Layer("adjudication") == ADJUDICATED and Layer("annotation", "alice") == Layer.annotator("alice")
    assert [str(x) for x in (ADJUDICATED, CONSENSUS, Layer.annotator("alice"))] == [
        "adjudicated", "consensus", "annotator:alice"]
    assert [x.title for x in (ADJUDICATED, CONSENSUS, Layer.annotator("alice"))] == [
        "Adjudicated", "Consensus", "alice's annotations"]
    assert repr(Layer.annotator("alice")) == "Layer('annotator', 'alice')" and repr(CONSENSUS) == "Layer('consensus')"
    assert pickle.loads(pickle.dumps(Layer.annotator("alice"))) == Layer.annotator("alice")
    assert len({Layer.annotator("a"), parse_layer("annotator:a"), parse_layer("a")}) == 1
    with pytest.raises(InputError, match="'reviewer'"):
        Layer("reviewer")
    with pytest.raises(InputError, match="'lead'"):
        Layer("adjudicated", "lead")
    with pytest.raises(InputError):
        Layer.annotator("  ")


@settings(max_examples=examples(200), deadline=None)
@given(st.text(min_size=1, max_size=20).filter(lambda s: s.strip()))
def test_every_annotator_name_survives_the_written_form(name):
    layer = Layer.annotator(name)
    assert layer.user == name.strip()
    assert parse_layer(layer.label) == layer


def test_available_layers():
    assert available_layers(["amy", "bo"]) == [ADJUDICATED, Layer.annotator("amy"), Layer.annotator("bo")]
    assert available_layers(["amy"], adjudicated=False) == [Layer.annotator("amy")]
    assert [x.label for x in available_layers([], consensus=True)] == ["adjudicated", "consensus"]


# ------------------------------------------------------------------ frame algebra

def frame(rows, *, categorical: bool = False) -> pd.DataFrame:
    """rows: (caption_id, user, label, types[, kind[, system[, judgement_id]]]); item = caption."""
    out = []
    for n, r in enumerate(rows):
        cid, user, label, types = r[:4]
        out.append({"caption_id": cid, "item_id": cid, "is_practice": cid == 99, "system": r[5] if len(r) > 5 else "s1",
                    "user": user, "kind": r[4] if len(r) > 4 else "annotation", "label": label,
                    "error_types": " ".join(types), "judgement_id": r[6] if len(r) > 6 else n + 1})
    df = pd.DataFrame(out)
    if categorical:  # the shape analysis_queries.judgement_frame returns
        for c in ("system", "user", "kind", "label", "error_types"):
            df[c] = df[c].astype("category")
    return df


def test_type_masks_and_counts():
    masks, unknown = type_bitmasks(pd.Series(["gender activity", "", None, "activity nonsense"]))
    assert masks.tolist() == [BIT["gender"] | BIT["activity"], 0, 0, BIT["activity"]] and unknown == {"nonsense"}
    assert masks_to_ids(masks[0]) == ("gender", "activity")  # taxonomy order, whatever the written order
    rng = np.random.default_rng(3)
    for n_types in (5, 20, 30):  # the bincount path (≤ 22 types) and the direct one
        m = rng.integers(0, 1 << n_types, 500, dtype=np.int64)
        expected = [int(((m >> t) & 1).sum()) for t in range(n_types)]
        assert type_counts(m, n_types).tolist() == expected
    assert type_counts(np.array([], np.int64), 4).tolist() == [0, 0, 0, 0]


def test_codes_and_runs():
    values = np.array([7, 3, 7, 9, 3, 3], np.int64)
    uniq, inv = factorize_sorted(values)
    ref_u, ref_i = np.unique(values, return_inverse=True)
    assert uniq.tolist() == ref_u.tolist() and inv.tolist() == ref_i.tolist()
    assert recode(pd.Categorical(["b", "a", "c", "b"]), ["b", "c"]).tolist() == [0, -1, 1, 0]
    s = np.array([1, 1, 2, 3, 3, 3])
    assert first_of_runs(s).tolist() == [True, False, True, True, False, False]
    assert last_of_runs(s).tolist() == [False, True, True, False, False, True]


def test_select_rows_reads_string_and_categorical_frames_alike():
    rows = [(1, "x", I, ("gender",)), (1, "y", A, ()), (2, "x", None, ()), (2, "lead", I, ("age",), "adjudication"),
            (3, "y", I, ("color", "bogus"), "annotation", "s2")]
    for categorical in (False, True):
        df = frame(rows, categorical=categorical)
        ann = select_rows(df, "annotation")
        assert ann.caption_id.tolist() == [1, 1, 3]  # no label: left out
        assert ann.types.tolist() == [BIT["gender"], 0, BIT["color"]] and ann.unknown_types == {"bogus"}
        assert select_rows(df, "annotation", user="y", system="s2").caption_id.tolist() == [3]
        assert len(select_rows(df, "annotation", user="nobody")) == 0
        assert select_rows(df, "adjudication").user.tolist() == ["lead"]
    with pytest.raises(InputError, match="error_types"):
        select_rows(frame(rows).drop(columns="error_types"), "annotation")


def test_newest_per_caption_takes_the_highest_judgement_id():
    df = frame([(5, "l1", I, ("age",), "adjudication", "s1", 40), (2, "l2", A, (), "adjudication", "s1", 10),
                (5, "l2", A, (), "adjudication", "s1", 70), (2, "l1", I, ("number",), "adjudication", "s1", 30)])
    adj = select_rows(df, "adjudication")
    newest = adj.take(newest_per_caption(adj))
    assert newest.caption_id.tolist() == [2, 5] and newest.judgement_id.tolist() == [30, 70]


# ------------------------------------------------------------------ layers on a hand-made frame

CASES = [
    (1, "x", I, ("gender",)),                                          # single
    (2, "x", I, ("activity", "gender")), (2, "y", I, ("gender", "activity")),  # agreed, same types
    (3, "x", A, ()), (3, "y", A, ()),                                  # agreed accurate
    (4, "x", I, ("color",)), (4, "y", I, ("clothing_color",)),         # types open
    (5, "x", I, ("age",)), (5, "y", A, ()),                            # labels differ ...
    (5, "lead", I, ("age",), "adjudication"),                          # ... adjudicated
    (6, "x", I, ("other",)), (6, "y", I, ("other",)),                  # agreed ...
    (6, "lead", A, (), "adjudication"),                                # ... overruled
    (7, "lead", I, ("position",), "adjudication", "s2"),               # adjudication only
    (8, "x", A, (), "annotation", "s2"), (8, "y", I, ("number",), "annotation", "s2"),  # unresolved
]


def _by_caption(layer):
    return {int(c): (bool(i), int(m), bool(k), s) for c, i, m, k, s in
            zip(layer.caption_ids, layer.inaccurate, layer.types, layer.types_known, np.asarray(layer.status, dtype=object))}


@pytest.mark.parametrize("categorical", [False, True])
def test_annotator_adjudicated_and_consensus_layers(categorical):
    df = frame(CASES, categorical=categorical)
    y = build_layer(df, Layer.annotator("y"))
    assert y.name == "annotator:y" and y.caption_ids.tolist() == [2, 3, 4, 5, 6, 8]
    assert set(np.asarray(y.status, dtype=object)) == {"annotator"} and y.unresolved == 0

    adj = _by_caption(build_layer(df, ADJUDICATED))
    assert adj == {1: (True, BIT["gender"], True, "single"),
                   2: (True, BIT["gender"] | BIT["activity"], True, "agreed"),
                   3: (False, 0, True, "agreed"), 4: (True, 0, False, "types open"),
                   5: (True, BIT["age"], True, "adjudicated"), 6: (False, 0, True, "adjudicated"),
                   7: (True, BIT["position"], True, "adjudicated")}

    cons_layer = build_layer(df, "consensus")
    cons = _by_caption(cons_layer)
    # The annotators alone: 5 and 8 unresolved, 6 stays as they agreed, 7 (only a lead judged it) is absent.
    assert cons == {1: adj[1], 2: adj[2], 3: adj[3], 4: adj[4], 6: (True, BIT["other"], True, "agreed")}
    assert cons_layer.name == "consensus" and cons_layer.unresolved_ids.tolist() == [5, 8]
    assert cons_layer.unresolved_in("s2") == 1 and cons_layer.caption_types() == {
        1: ("gender",), 2: ("gender", "activity"), 6: ("other",)}
    t = error_tables(cons_layer)
    assert (t.layer, t.total, t.inaccurate, t.untyped, t.unresolved) == ("consensus", 5, 4, 1, 2)
    assert t.status_counts == {"agreed": 3, "single": 1, "types open": 1}


def test_consensus_is_the_adjudicated_layer_of_the_annotations_alone():
    rng = np.random.default_rng(11)
    rows = []
    for cid in range(300):
        for user in ("a", "b", "c")[:rng.integers(1, 4)]:
            label = I if rng.random() < 0.6 else A
            types = tuple(rng.choice(ERROR_TYPE_IDS[:4], rng.integers(1, 3), replace=False)) if label == I else ()
            rows.append((cid, user, label, types, "annotation", "s1" if cid % 3 else "s2"))
        if rng.random() < 0.3:
            rows.append((cid, "lead", A, (), "adjudication", "s1" if cid % 3 else "s2"))
    df = frame(rows, categorical=True)
    cons = build_layer(df, CONSENSUS, system="s1")
    plain = build_layer(df[df["kind"] == "annotation"], ADJUDICATED, system="s1")
    for field in ("caption_ids", "inaccurate", "types", "types_known", "unresolved_ids"):
        assert np.array_equal(getattr(cons, field), getattr(plain, field)), field
    assert list(cons.status) == list(plain.status) and len(cons) > 100
    assert error_tables(cons).summary() | {"layer": None} == error_tables(plain).summary() | {"layer": None}


# ------------------------------------------------------------------ the consensus layer through the store

def test_consensus_layer_in_correction_queue_sets_and_cli(store, capsys):
    ids = build_demo(store)  # alice and bob annotate, a lead adjudicates every line
    # Only line 1 (both: gender) is agreed with types; 0 and 3 have open types, 4 and 5 differ on the label.
    assert layer_types(store, "demo", "sys", "consensus") == {ids[1]: ("gender",)}
    assert [e["line_no"] for e in queue(store, "demo", "sys", "gender", CONSENSUS)] == [1]
    assert queue(store, "demo", "sys", "clothing_color", "consensus") == []
    correct_caption(store, ids[0], "clothing_color", "alice", "A man in an orange shirt is climbing a rock.")
    assert correction_set(store, "demo", "sys", layer="consensus").dropped == 1
    assert correction_set(store, "demo", "sys", layer=ADJUDICATED).by_type == {
        "clothing_color": {0: "A man in an orange shirt is climbing a rock."}}
    assert main(["--db", store.url, "tables", "--project", "demo", "--layer", "consensus", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["layer"] == "consensus" and (data["total"], data["unresolved"], data["untyped"]) == (4, 2, 2)
    assert data["status_counts"] == {"agreed": 2, "types open": 2}
    assert main(["--db", store.url, "tables", "--project", "demo", "--layer", "annotator:", "--json"]) != 0
    assert "'annotator:'" in capsys.readouterr().err
