"""Content selection defaults to equation 1 as the content-selection paper writes it.

M is every gold description of an image (one that mentions no box is in M with no instance, its 0/0 recall
term taken as 0), and every image is scored, also one with a single gold description; the upper bound (one
description against the others) is the mean over the images that have two or more. The earlier conventions stay
as options (--empty-descriptions drop, --single-descriptions skip) and the output says which was used.

Hand-made case: boxes a (10×10) and b (5×5); the size baseline at k = 1 selects {a}.
  X: G = {a, b}, {a}, ∅.   Y: a single G = {b}.
"""

from __future__ import annotations

import json

import pytest

from annotator.cli import main
from annotator.content_selection import evaluate
from annotator.correspondence import parse_markup
from annotator.model import Box, Item, Project, Reference
from annotator.store.projects import write_project


def _item(key, refs):
    boxes = [Box("a", "dog", 0, 0, 10, 10), Box("b", "cat", 20, 0, 5, 5)]
    references = []
    for marked in refs:
        text, mentions = parse_markup(marked)
        references.append(Reference(text, mentions))
    return Item(key, width=40, height=20, boxes=boxes, references=references)


X = _item("X", ["A [dog|a] and a [cat|b] .", "A [dog|a] .", "A view ."])
Y = _item("Y", ["A [cat|b] ."])


def test_default_is_equation_1_as_written():
    r = evaluate([X, Y], baselines=["size"], ks=[1])
    assert r.keys == ["X", "Y"] and r.meta["empty_descriptions"] == "count"
    assert r.meta["single_descriptions"] == "score" and r.meta["single_description_images"] == 1
    # X: P = (1 + 1 + 0)/3 = 2/3, R = (1/2 + 1 + 0)/3 = 1/2, F = 4/7.  Y: {a} against {b}: 0, 0, 0.
    s = r.baselines["size"][1]
    assert (s.P, s.R, s.F) == pytest.approx((1 / 3, 1 / 4, 2 / 7))
    # Upper bound on X only: {a,b} vs {a}, ∅ → P 1/4, R 1/2, F 1/3; {a} vs {a,b}, ∅ → P 1/2, R 1/4, F 1/3;
    # ∅ held out selects nothing → 0. Means: P = R = 1/4, F = 2/9.
    ub = r.upper_bound
    assert (ub.P, ub.R, ub.F, ub.n) == pytest.approx((1 / 4, 1 / 4, 2 / 9, 1))
    assert r.meta["upper_bound_images"] == 1


def test_earlier_conventions_stay_as_options():
    r = evaluate([X, Y], baselines=["size"], ks=[1], empty_descriptions="drop", single_descriptions="skip")
    assert r.keys == ["X"] and r.skipped == {"Y": "fewer than two gold descriptions"}
    # X with M = {a,b}, {a}: P = 1, R = (1/2 + 1)/2 = 3/4, F = 6/7; upper bound: {a,b} vs {a} → P 1/2, R 1, F 2/3 and
    # {a} vs {a,b} → P 1, R 1/2, F 2/3.
    s = r.baselines["size"][1]
    assert (s.P, s.R, s.F) == pytest.approx((1, 3 / 4, 6 / 7))
    assert (r.upper_bound.P, r.upper_bound.F) == pytest.approx((3 / 4, 2 / 3))


def test_cli_says_which_convention_and_how_many_were_excluded(store, capsys):
    with store.transaction() as conn:
        write_project(conn, Project("eq1", items=[X, Y]))
    rc = main(["--db", store.url, "content-selection", "--project", "eq1", "--baselines", "size", "--k", "1", "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    data = json.loads(out)
    assert data["baselines"]["size"]["1"]["F"] == pytest.approx(2 / 7)
    assert data["meta"]["upper_bound_images"] == 1 and data["meta"]["single_description_images"] == 1
    assert data["upper_bound"]["F"] == pytest.approx(2 / 9)
    main(["--db", store.url, "content-selection", "--project", "eq1", "--baselines", "size", "--k", "1"])
    text = capsys.readouterr().out
    assert "Descriptions that mention no box: 1, counted in M with no instance, as equations 1 and 2 are written" in text
    assert "averaged over the 1 of them with two or more gold descriptions; 1 has a single one" in text
    main(["--db", store.url, "content-selection", "--project", "eq1", "--baselines", "size", "--k", "1",
          "--empty-descriptions", "drop", "--single-descriptions", "skip"])
    text = capsys.readouterr().out
    assert "1 images skipped (fewer than two gold descriptions: 1)" in text and "left out of M" in text
