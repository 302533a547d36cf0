"""Agreement on where (annotator.span_agreement, ``annotator agreement --spans``) against a hand computation."""

from __future__ import annotations

import json

import pytest

from annotator.errors import InputError, NotFound
from annotator.model import Caption, Item, Project, Role
from annotator.span_agreement import span_agreement
from annotator.spans import Span
from annotator.store.judgements import insert_judgement
from annotator.store.projects import set_practice, write_project
from annotator.store.users import create_user
from tests.cli_helpers import run_cli

TEXTS = ["a man in a red shirt rides two horses",   # c0: 9 tokens
         "three dogs run on the beach",             # c1: 6 tokens
         "a woman holds an umbrella",               # c2: 5 tokens
         "a cat on a mat",                          # c3: a practice item, left out
         "two birds fly"]                           # c4: B skipped it, left out
I = "inaccurate"
#: caption → annotator → (label, types, spans)
MARKS = {
    0: {"A": (I, ["clothing_color", "number"], [Span(4, 5, "clothing_color"), Span(7, 9, "number", "one horse")]),
        "B": (I, ["clothing_color", "number", "activity"], [Span(4, 6, "clothing_color"), Span(7, 8, "number")])},
    1: {"A": (I, ["number", "scene"], [Span(0, 1, "number"), Span(4, 6, "scene")]),
        "B": (I, ["number"], [Span(0, 1, "number", "two")])},
    2: {"A": ("accurate", [], []), "B": (I, ["gender"], [Span(1, 2, "gender")])},
    3: {"A": (I, ["subject_wrong"], [Span(1, 2, "subject_wrong")]), "B": (I, ["subject_wrong"], [Span(1, 2, "subject_wrong")])},
    4: {"A": (I, ["number"], [Span(0, 1, "number")]), "B": (None, [], [])},
}


def build(store) -> None:
    items = [Item(key=f"img{i}", image=f"img{i}.jpg", captions=[Caption("sys", t)]) for i, t in enumerate(TEXTS)]
    with store.transaction() as conn:
        write_project(conn, Project("where", items=items))
        uids = {n: create_user(conn, n, Role.ANNOTATOR) for n in ("A", "B", "C")}
    set_practice(store, "where", ["img3"], True)
    from annotator.store.projects import load_project
    ids = [it.captions[0].caption_id for it in load_project(store, "where").items]
    with store.transaction() as conn:
        for c, marks in MARKS.items():
            for who, (label, types, spans) in marks.items():
                insert_judgement(conn, ids[c], uids[who], label=label, error_types=types, spans=spans)
        insert_judgement(conn, ids[0], uids["C"], label=I, error_types=["number"], spans=[Span(7, 9, "number")])


def test_span_agreement_equals_the_hand_computation(store):
    build(store)
    (pair,) = span_agreement(store, "where", ["A", "B"]).summary()["spans"]["pairs"]
    # clothing_color: A {4}, B {4, 5}; number: c0 A {7, 8}, B {7}, c1 both {0}; scene: A {4, 5}; gender: B {1}.
    # activity: ticked by B but marked by nobody, so left out.
    assert pair == {
        "annotators": ["A", "B"], "captions": 3, "tokens": 9 + 6 + 5,
        "micro_f1": pytest.approx(2 * 3 / 11), "exact_f1": pytest.approx(2 * 1 / (4 + 4)),
        "per_type": {"clothing_color": {"a": 1, "b": 2, "both": 1, "f1": pytest.approx(2 / 3)},
                     "number": {"a": 3, "b": 2, "both": 2, "f1": pytest.approx(0.8)},
                     "scene": {"a": 2, "b": 0, "both": 0, "f1": 0.0},
                     "gender": {"a": 0, "b": 1, "both": 0, "f1": 0.0}},
        "not_localised": {"A": 0, "B": 1}}
    # Types in taxonomy order.
    assert list(pair["per_type"]) == ["gender", "clothing_color", "number", "scene"]


def test_agreement_spans_cli_json_text_and_pairs(store, capsys):
    build(store)
    code, out, _ = run_cli(capsys, "--db", store.url, "agreement", "--project", "where", "--spans", "--annotators",
                           "A", "B", "--json")
    assert code == 0
    d = json.loads(out)
    assert list(d) == ["spans"] and list(d["spans"]) == ["pairs"]
    assert d["spans"]["pairs"][0]["micro_f1"] == pytest.approx(6 / 11)
    # Everyone: three pairs; A and C share c0 only, where number is {7, 8} for both: exact match.
    code, out, _ = run_cli(capsys, "--db", store.url, "agreement", "--project", "where", "--spans", "--json")
    pairs = {tuple(p["annotators"]): p for p in json.loads(out)["spans"]["pairs"]}
    assert list(pairs) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert pairs[("A", "C")]["exact_f1"] == pytest.approx(2 / 3) and pairs[("A", "C")]["captions"] == 1
    assert pairs[("A", "C")]["per_type"] == {"clothing_color": {"a": 1, "b": 0, "both": 0, "f1": 0.0},
                                             "number": {"a": 2, "b": 2, "both": 2, "f1": 1.0}}
    code, out, _ = run_cli(capsys, "--db", store.url, "agreement", "--project", "where", "--spans", "--annotators",
                           "A", "B")
    assert "A vs B: 3 shared captions, 20 tokens, token micro F1 0.545, exact span F1 0.250" in out
    assert "number: A 3, B 2, both 2, F1 0.800" in out


def test_refusals(store):
    build(store)
    with pytest.raises(NotFound, match="'Z' has no judgements"):
        span_agreement(store, "where", ["A", "Z"])
    with pytest.raises(InputError, match="at least two annotators"):
        span_agreement(store, "where", ["A"])
