"""Content-selection metric, upper bound, priors and evaluation: golden values computed by hand."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from test_content_selection_helpers import figure2_item, item, marked_caption

from annotator.content_selection import (
    BASELINES, compile_items, concept, concept_sequence, evaluate, explain_image, gold_sets, learn_priors, mention_counts,
    parse_baselines, parse_ks, score_selection, summarise,
)
from annotator.errors import InputError
from annotator.model import Caption, Mention


def _f(p, r):
    return 2 * p * r / (p + r)


# ---- the worked example ---------------------------------------------------------------------------------------

def test_figure2_gold_sets_and_mention_counts():
    it = figure2_item()
    golds = gold_sets(it)
    assert len(golds) == 7
    assert sum("2" in g for g in golds) == 7 and sum("3" in g for g in golds) == 7
    assert sum("5" in g for g in golds) == 4 and sum("0" in g for g in golds) == 2
    assert mention_counts(it) == {"0": 2, "1": 0, "2": 7, "3": 7, "4": 0, "5": 4}


def test_figure2_woman_and_car():
    # Every description mentions both: P = 1; R = mean(2/4, 2/2, 2/3, 2/2, 2/2, 2/3, 2/4) = 16/21.
    p, r, f = score_selection({"2", "3"}, gold_sets(figure2_item()))
    assert p == pytest.approx(1.0)
    assert r == pytest.approx(float(Fraction(16, 21)))
    assert f == pytest.approx(float(Fraction(32, 37)))


def test_figure2_woman_and_dress_scores_lower():
    # |G ∩ S| = 2, 1, 1, 1, 1, 1, 2 → P = (1 + 5/2 + 1)/7 = 9/14; R = (2/4 + 1/2 + 1/3 + 1/2 + 1/2 + 1/3 + 2/4)/7 = 19/42.
    p, r, f = score_selection({"2", "0"}, gold_sets(figure2_item()))
    assert p == pytest.approx(9 / 14)
    assert r == pytest.approx(19 / 42)
    assert f == pytest.approx(171 / 322)
    assert f < score_selection({"2", "3"}, gold_sets(figure2_item()))[2]


def test_figure2_other_selections():
    golds = gold_sets(figure2_item())
    # Woman alone: P = 1, R = (1/4 + 1/2 + 1/3 + 1/2 + 1/2 + 1/3 + 1/4)/7 = 8/21.
    p, r, f = score_selection({"2"}, golds)
    assert (p, r) == (pytest.approx(1.0), pytest.approx(8 / 21))
    # Never-mentioned boxes score nothing; the selection is a set (duplicates do not count).
    assert score_selection({"1", "4"}, golds) == (0.0, 0.0, 0.0)
    assert score_selection(["2", "2", "3"], golds) == score_selection({"2", "3"}, golds)
    # Everything mentioned: R = 1, P = (4 + 2 + 3 + 2 + 2 + 3 + 4)/(4·7) = 20/28.
    p, r, _ = score_selection({"0", "2", "3", "5"}, golds)
    assert (p, r) == (pytest.approx(20 / 28), pytest.approx(1.0))


# ---- edge cases -----------------------------------------------------------------------------------------------

def test_empty_selection_scores_zero_and_images_without_gold_are_not_scored():
    assert score_selection(set(), [{"a"}, {"a", "b"}]) == (0.0, 0.0, 0.0)
    assert score_selection({"a"}, [set(), set()]) is None
    assert score_selection({"a"}, []) is None


def test_descriptions_without_boxes_are_left_out_of_both_averages():
    # Only the non-empty description counts: P = R = 1 (not 1/2).
    assert score_selection({"a"}, [{"a"}, set()]) == (1.0, 1.0, 1.0)


def test_compile_skips_images_without_boxes_or_mentions_and_ignores_unknown_ids():
    ok = item("ok", [("1", "dog", 0, 0, 10, 10)], ["A [dog|1] and a [cat|9] ."])
    no_boxes = item("nobox", [], ["A dog ."])
    no_mentions = item("nomention", [("1", "dog", 0, 0, 10, 10)], ["A dog .", "A [cat|9] ."])
    es = compile_items([no_boxes, ok, no_mentions])
    assert [it.key for it in es.items] == ["ok"]
    assert es.skipped == ["nobox", "nomention"]
    assert es.unknown_gold_ids == 2
    assert gold_sets(ok) == [frozenset({"1"})]


def test_summarise_uses_population_sd():
    s = summarise([0.0, 1.0], [0.5, 0.5], [0.2, 0.6])
    assert (s.P, s.P_sd, s.R_sd, s.F, s.F_sd, s.n) == (0.5, 0.5, 0.0, pytest.approx(0.4), pytest.approx(0.2), 2)
    assert math.isnan(summarise([], [], []).P)


# ---- upper bound ----------------------------------------------------------------------------------------------

def test_upper_bound_on_hand_made_images():
    # Image A: G1 = {a,b}, G2 = {a}, G3 = {a,b,c}.
    #   held out 1: P = (1/2 + 2/2)/2 = 3/4, R = (1/1 + 2/3)/2 = 5/6, F = 15/19
    #   held out 2: P = (1 + 1)/2 = 1,       R = (1/2 + 1/3)/2 = 5/12, F = 10/17
    #   held out 3: P = (2/3 + 1/3)/2 = 1/2, R = (2/2 + 1/1)/2 = 1,    F = 2/3
    #   image: P = R = 3/4, F = (15/19 + 10/17 + 2/3)/3
    # Image B: two identical descriptions → 1, 1, 1.  Image C: one description only → not scored.
    boxes = [("a", "dog", 0, 0, 10, 10), ("b", "cat", 20, 0, 10, 10), ("c", "ball", 40, 0, 5, 5)]
    a = item("A", boxes, ["[dog|a] [cat|b]", "[dog|a]", "[dog|a] [cat|b] [ball|c]"])
    b = item("B", boxes, ["[dog|a] and [cat|b]", "[cat|b] and [dog|a]", "a view ."])
    c = item("C", boxes, ["[dog|a]"])
    # Descriptions without a mention left out of M (B's "a view ."): the convention these figures were worked with.
    report = evaluate([a, b, c], baselines=(), empty_descriptions="drop")
    fa = (15 / 19 + 10 / 17 + 2 / 3) / 3
    assert report.meta["upper_bound_images"] == 2
    ub = report.upper_bound
    assert ub.P == pytest.approx((0.75 + 1) / 2) and ub.R == pytest.approx((0.75 + 1) / 2)
    assert ub.F == pytest.approx((fa + 1) / 2)
    assert ub.F_sd == pytest.approx(abs(1 - fa) / 2)
    assert ub.P_sd == pytest.approx(0.125)


def test_upper_bound_of_figure2_matches_a_direct_computation():
    it = figure2_item()
    golds = gold_sets(it)
    per = [score_selection(g, golds[:m] + golds[m + 1:]) for m, g in enumerate(golds)]
    report = evaluate([it], baselines=())
    assert report.upper_bound.P == pytest.approx(np.mean([x[0] for x in per]))
    assert report.upper_bound.R == pytest.approx(report.upper_bound.P)
    assert report.upper_bound.F == pytest.approx(np.mean([x[2] for x in per]))
    assert report.upper_bound.F < report.upper_bound.P


# ---- priors ---------------------------------------------------------------------------------------------------

def test_concept_keys():
    assert concept("Dog") == concept(" dog ") == "dog"
    # WordNet senses are distinct concepts (the animal and the device are not one "mouse").
    assert concept("mouse.n.01") == "mouse.n.01" != concept("mouse.n.04")
    assert concept("Police_Car.n.01") == "police_car.n.01"


def test_priors_of_figure2_count_immediate_followers_only():
    pri = learn_priors([figure2_item()])
    assert pri.descriptions == 7 and pri.images == 1
    assert dict(pri.unigram) == {"woman": 7, "car": 7, "boot": 4, "dress": 2}
    assert dict(pri.start) == {"woman": 7}
    # First description: woman→dress, dress→boot, boot→car (not woman→car, not woman→boot).
    assert dict(pri.follow) == {("woman", "dress"): 1, ("dress", "boot"): 1, ("boot", "car"): 3, ("woman", "car"): 3,
                                ("woman", "boot"): 3, ("boot", "dress"): 1, ("dress", "car"): 1}


def test_concept_sequence_of_multi_box_mentions():
    it = item("x", [("1", "dog", 0, 0, 1, 1), ("2", "dog", 0, 0, 1, 1), ("3", "man", 0, 0, 1, 1)],
              ["Two [dogs|1,2] chase a [man|3] who has a [dog|2]"])
    assert concept_sequence(it, it.references[0].mentions) == ["dog", "man", "dog"]
    pri = learn_priors([it])
    assert pri.unigram == {"dog": 2, "man": 1}     # boxes 1 and 2, each once
    assert pri.follow == {("dog", "man"): 1, ("man", "dog"): 1}


# ---- evaluation -----------------------------------------------------------------------------------------------

def test_evaluate_agrees_with_the_reference_scorer_for_every_baseline_and_k():
    rng = np.random.default_rng(7)
    labels = ["dog", "man", "car", "tree", "ball"]
    items = []
    for i in range(40):
        n = int(rng.integers(1, 8))
        boxes = [(str(j), labels[int(rng.integers(0, 5))], *map(float, rng.uniform(0, 80, 2)), *map(float, rng.uniform(1, 40, 2)))
                 for j in range(n)]
        marked = []
        for _ in range(int(rng.integers(1, 5))):
            chosen = rng.permutation(n)[: int(rng.integers(0, n + 1))]
            marked.append(" ".join(f"the [{boxes[b][1]}|{b}]" for b in chosen) or "nothing at all")
        items.append(item(f"img{i}", boxes, marked, width=120, height=90))
    train, test = items[:20], items[20:]
    pri = learn_priors(train)
    report = evaluate(test, priors=pri, ks=[1, 2, 3, 5, 15], per_image=True, runs=2, empty_descriptions="drop",
                      single_descriptions="skip")  # the conventions the reference scorer below follows
    keys = report.keys
    assert len(keys) == len(compile_items(test, min_descriptions=2))
    for name in BASELINES:
        per = report.per_image[name]
        for j, key in enumerate(keys):
            it = next(t for t in test if t.key == key)
            for c, k in enumerate(report.ks):
                choice = explain_image(it, name, k, priors=pri)
                assert per[j, c] == pytest.approx(score_selection(choice.selected, gold_sets(it))), (name, key, k)
        # Summary = mean of per-image scores (random: pooled over its runs, so only the other baselines).
        if name != "random":
            assert report.baselines[name][3].F == pytest.approx(per[:, 2, 2].mean())


def test_systems_are_scored_like_baselines_and_missing_captions_count_as_empty():
    fig = figure2_item("a", captions=[marked_caption("good", "A [woman|2] near a [car|3] ."),
                                      Caption("plain", "A woman near a car .")])
    other = figure2_item("b", captions=[Caption("good", "A woman", (Mention(1, 2, ("2",)),))])
    report = evaluate([fig, other], baselines=(), systems=["good", "plain"])
    good = report.systems["good"]
    # Image a: {woman, car} → F = 32/37; image b: {woman} → P = 1, R = 8/21.
    assert good.P == pytest.approx(1.0)
    assert good.R == pytest.approx((16 / 21 + 8 / 21) / 2)
    assert good.F == pytest.approx((32 / 37 + _f(1, 8 / 21)) / 2)
    assert report.systems["plain"].F == 0.0          # no correspondences, missing caption on b
    assert report.meta["system_captions_missing"] == {"good": 0, "plain": 1}


def test_a_system_mentioning_an_unknown_box_is_skipped_and_named_the_others_scored():
    fig = figure2_item("a", captions=[marked_caption("bad", "A [woman|2] near a [car|33] ."),
                                      marked_caption("good", "A [woman|2] near a [car|3] .")])
    report = evaluate([fig], baselines=(), systems=["bad", "good"])
    assert list(report.systems) == ["good"] and report.systems["good"].F == pytest.approx(32 / 37)
    reason = report.meta["systems_skipped"]["bad"]
    assert "'33'" in reason and "'bad'" in reason and "'a'" in reason


def test_textual_baselines_need_training_descriptions():
    with pytest.raises(InputError):
        evaluate([figure2_item()], [], baselines=["unigram"])
    # Visual ones do not.
    assert evaluate([figure2_item()], baselines=["size"], ks=[1]).baselines["size"][1].n == 1


def test_to_dict_has_the_cli_shape():
    d = evaluate([figure2_item()], [figure2_item("t")], ks=[1, 2]).to_dict()
    assert set(d) >= {"upper_bound", "baselines", "systems"}
    assert set(d["upper_bound"]) == {"P", "R", "F", "P_sd", "R_sd", "F_sd"}
    assert list(d["baselines"]) == list(BASELINES)
    assert list(d["baselines"]["bigram"]) == ["1", "2"]
    # unigram at k = 2 picks woman and car (7 mentions each).
    assert d["baselines"]["unigram"]["2"]["F"] == pytest.approx(32 / 37)


def test_parse_ks_and_baselines():
    assert parse_ks("1-15") == tuple(range(1, 16))
    assert parse_ks("3") == (3,)
    assert parse_ks("5,1,3-4") == (1, 3, 4, 5)
    for bad in ("0", "x", "4-2", ""):
        with pytest.raises(InputError):
            parse_ks(bad)
    assert parse_baselines("all") == BASELINES
    assert parse_baselines("none") == ()
    assert parse_baselines("bigram+size,size") == ("size", "bigram+size")
    with pytest.raises(InputError):
        parse_baselines("size,biggest")


def test_nothing_to_score_gives_null_scores_not_nan():
    import json
    empty = item("e", [("1", "dog", 0, 0, 1, 1)], ["A dog ."])
    d = evaluate([empty], baselines=["size"], ks=[1]).to_dict()
    assert d["meta"]["images"] == 0 and d["meta"]["skipped_images"] == 1
    assert d["upper_bound"]["F"] is None and d["baselines"]["size"]["1"]["P"] is None
    json.loads(json.dumps(d, allow_nan=False))
