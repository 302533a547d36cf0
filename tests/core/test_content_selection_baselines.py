"""Each baseline's ranking on small hand-made images, the tie rules and the random baseline."""

from __future__ import annotations

import numpy as np
import pytest
from test_content_selection_helpers import figure2_item, item

from annotator.content_selection import (
    average_ranks, bigram_rest_rank, compile_items, evaluate, explain_image, learn_priors, realise,
)
from annotator.correspondence import parse_markup


def _rank(it, method, priors=None, k=30, **kw):
    return list(explain_image(it, method, k, priors=priors, **kw).ranking)


# Training descriptions for the textual baselines:
#   start: man 3, dog 2, woman 1;  follow: man→dog 3, dog→ball 2, woman→ball 1, ball→dog 1
#   unigram: dog 6, man 3, ball 3, woman 1
_TRAIN = [
    item("t1", [("1", "man", 0, 0, 1, 1), ("2", "dog", 0, 0, 1, 1)],
         ["A [man|1] walks a [dog|2]"] * 3),
    item("t2", [("1", "dog", 0, 0, 1, 1), ("2", "ball", 0, 0, 1, 1)],
         ["A [dog|1] catches a [ball|2]"] * 2),
    item("t3", [("1", "woman", 0, 0, 1, 1), ("2", "ball", 0, 0, 1, 1), ("3", "dog", 0, 0, 1, 1)],
         ["A [woman|1] throws a [ball|2] to a [dog|3]"]),
]


@pytest.fixture(scope="module")
def priors():
    pri = learn_priors(_TRAIN)
    assert dict(pri.start) == {"man": 3, "dog": 2, "woman": 1}
    assert dict(pri.follow) == {("man", "dog"): 3, ("dog", "ball"): 2, ("woman", "ball"): 1, ("ball", "dog"): 1}
    assert dict(pri.unigram) == {"dog": 6, "man": 3, "ball": 3, "woman": 1}
    return pri


def test_size_largest_first_ties_keep_box_order():
    it = item("s", [("a", "x", 0, 0, 10, 1), ("b", "x", 0, 0, 10, 5), ("c", "x", 0, 0, 5, 10), ("d", "x", 0, 0, 1, 5)],
              ["[x|a]"])
    assert _rank(it, "size") == ["b", "c", "a", "d"]
    assert explain_image(it, "size", 2).selected == ("b", "c")
    assert explain_image(it, "size", 15).selected == ("b", "c", "a", "d")   # min(k, number of boxes)


def test_position_closest_centroid_to_image_centre_first():
    boxes = [("big", "x", 0, 0, 60, 60),       # centroid (30, 30): 28.3 from the centre
             ("far", "x", 90, 90, 10, 10),     # (95, 95): 63.6
             ("mid", "x", 60, 40, 20, 20),     # (70, 50): 20
             ("small", "x", 48, 48, 4, 4)]     # (50, 50): 0
    it = item("p", boxes, ["[x|big]"], width=100, height=100)
    assert _rank(it, "position") == ["small", "mid", "big", "far"]
    # Without a recorded size the centre of the boxes' extent from (0, 0) is used: (50, 50) here too.
    it2 = item("p2", boxes, ["[x|big]"], width=None, height=None)
    assert _rank(it2, "position") == ["small", "mid", "big", "far"]
    # A box centred exactly between two others: ties keep box order.
    it3 = item("p3", [("l", "x", 0, 45, 10, 10), ("r", "x", 90, 45, 10, 10)], ["[x|l]"], width=100, height=100)
    assert _rank(it3, "position") == ["l", "r"]


def test_unigram_most_mentioned_concept_first(priors):
    it = item("u", [("0", "ball", 0, 0, 1, 1), ("1", "Dog", 0, 0, 1, 1), ("2", "kite", 0, 0, 1, 1),
                    ("3", "man", 0, 0, 1, 1), ("4", " DOG ", 0, 0, 1, 1)], ["[dog|1]"])
    # dog 6 (boxes 1, 4 in box order), then man 3 and ball 3 (tie: box order puts ball first), unseen kite last.
    assert _rank(it, "unigram", priors) == ["1", "4", "0", "3", "2"]


def test_bigram_greedy_chain_and_stop(priors):
    it = item("b", [("0", "tree", 0, 0, 1, 1), ("1", "ball", 0, 0, 1, 1), ("2", "dog", 0, 0, 1, 1),
                    ("3", "man", 0, 0, 1, 1), ("4", "dog", 0, 0, 1, 1)], ["[dog|2]"])
    # man opens most often; man→dog (two dogs tie: box order); dog→ball; ball→dog; nothing ever follows dog but ball.
    assert _rank(it, "bigram", priors) == ["3", "2", "1", "4"]
    assert explain_image(it, "bigram", 2, priors=priors).selected == ("3", "2")
    # Beyond the chain nothing more is selected, whatever k.
    assert explain_image(it, "bigram", 15, priors=priors).selected == ("3", "2", "1", "4")


def test_bigram_stops_after_first_when_nothing_follows(priors):
    it = item("b2", [("0", "woman", 0, 0, 1, 1), ("1", "man", 0, 0, 1, 1)], ["[man|1]"])
    assert _rank(it, "bigram", priors) == ["1"]                 # man opens; man→woman never seen
    unseen = item("b3", [("0", "tree", 0, 0, 1, 1), ("1", "kite", 0, 0, 1, 1)], ["[tree|0]"])
    assert _rank(unseen, "bigram", priors) == ["0"]             # no opener known: first box by unigram, then stop


def test_bigram_ties_go_to_the_more_frequent_concept():
    train = [item("c1", [("1", "cat", 0, 0, 1, 1), ("2", "hat", 0, 0, 1, 1)], ["[cat|1] and [hat|2]"]),
             item("c2", [("1", "cat", 0, 0, 1, 1), ("2", "bat", 0, 0, 1, 1)], ["[cat|1] and [bat|2]"]),
             item("c3", [("1", "dog", 0, 0, 1, 1), ("2", "bat", 0, 0, 1, 1)], ["[dog|1] and [bat|2]"] * 3)]
    pri = learn_priors(train)
    it = item("c", [("0", "hat", 0, 0, 1, 1), ("1", "bat", 0, 0, 1, 1), ("2", "cat", 0, 0, 1, 1)], ["[cat|2]"])
    # cat→hat and cat→bat are both seen once; bat (4 mentions) beats hat (1) although hat comes first.
    assert _rank(it, "bigram", pri) == ["2", "1"]


def test_bigram_can_repeat_a_concept_that_follows_itself():
    pri = learn_priors([item("d", [("1", "dog", 0, 0, 1, 1), ("2", "dog", 0, 0, 1, 1), ("3", "dog", 0, 0, 1, 1)],
                             ["A [dog|1] , a [dog|2] and a [dog|3]"])])
    it = item("dd", [("0", "tree", 0, 0, 1, 1), ("1", "dog", 0, 0, 1, 1), ("2", "dog", 0, 0, 1, 1), ("3", "dog", 0, 0, 1, 1)],
              ["[dog|1]"])
    assert _rank(it, "bigram", pri) == ["1", "2", "3"]


def test_tie_rank_rule():
    assert bigram_rest_rank(9, 3) == 6.5          # the documented example: ranks 1, 2, 3 then 6.5 × 6
    assert bigram_rest_rank(5, 1) == 3.5          # the mean of positions 2..5
    assert bigram_rest_rank(4, 4) == 4.5
    np.testing.assert_array_equal(average_ranks(np.array([[3.0, 1.0, 3.0, 2.0]])), [[3.5, 1.0, 3.5, 2.0]])


def test_bigram_plus_size_by_average_rank(priors):
    areas = {"tree": 100, "ball": 400, "dog": 50, "man": 10, "car": 900, "sky": 2000, "grass": 1500, "bench": 300,
             "sign": 20}
    it = item("cs", [(str(j), lab, 0, 0, a, 1) for j, (lab, a) in enumerate(areas.items())], ["[man|3]"])
    # Chain man(3) → dog(2) → ball(1), then stop: ranks 1, 2, 3 and 6.5 for the other six.
    assert _rank(it, "bigram", priors) == ["3", "2", "1"]
    # Size ranks: sky 1, grass 2, car 3, ball 4, bench 5, tree 6, dog 7, sign 8, man 9. Means:
    # ball 3.5, sky 3.75, grass 4.25, dog 4.5, car 4.75, man 5, bench 5.75, tree 6.25, sign 7.25.
    assert _rank(it, "bigram+size", priors) == ["1", "5", "6", "2", "4", "3", "7", "0", "8"]
    assert explain_image(it, "bigram+size", 3, priors=priors).selected == ("1", "5", "6")


def test_combined_ties_prefer_the_textual_rank(priors):
    # Chain: man only (man→tree unseen). Text ranks man 1, tree 2; size ranks tree 1, man 2: both average 1.5.
    it = item("tie", [("0", "tree", 0, 0, 50, 50), ("1", "man", 0, 0, 5, 5)], ["[man|1]"])
    assert _rank(it, "bigram+size", priors) == ["1", "0"]
    assert _rank(it, "size") == ["0", "1"]


def test_unigram_ties_share_a_rank_so_the_visual_cue_decides(priors):
    boxes = [("0", "dog", 0, 0, 10, 10),        # far from the centre (50, 50)
             ("1", "dog", 45, 45, 10, 10),      # at the centre
             ("2", "man", 30, 40, 20, 20)]      # 10 from the centre
    it = item("ud", boxes, ["[dog|0]"], width=100, height=100)
    assert _rank(it, "unigram", priors) == ["0", "1", "2"]
    # unigram ranks 1.5, 1.5, 3; position ranks 3, 1, 2 → means 2.25, 1.25, 2.5.
    assert _rank(it, "unigram+position", priors) == ["1", "0", "2"]


def test_random_is_a_seeded_per_image_permutation():
    it = figure2_item("r")
    a = _rank(it, "random", seed=1)
    assert sorted(a) == ["0", "1", "2", "3", "4", "5"]
    assert _rank(it, "random", seed=1) == a
    assert len({tuple(_rank(it, "random", seed=s)) for s in range(6)}) > 1
    assert len({tuple(_rank(it, "random", seed=1, run=r)) for r in range(6)}) > 1
    # The same image gets the same order alone or among others (per-image draws).
    others = [figure2_item(f"o{i}") for i in range(5)]
    report = evaluate(others + [it], baselines=["random"], ks=[2], per_image=True, runs=1, seed=1)
    j = report.keys.index("r")
    from annotator.content_selection import gold_sets, score_selection
    assert report.per_image["random"][j, 0, 2] == pytest.approx(score_selection(a[:2], gold_sets(it))[2])


def test_random_baseline_precision_matches_its_expectation():
    # 4 boxes, gold sets {a} and {a, b}: a random single box has expected P = (1/4 + 2/4)/2 = 0.375.
    boxes = [("a", "x", 0, 0, 1, 1), ("b", "x", 0, 0, 1, 1), ("c", "x", 0, 0, 1, 1), ("d", "x", 0, 0, 1, 1)]
    items = [item(f"e{i}", boxes, ["[x|a]", "[x|a] [x|b]"]) for i in range(20)]
    report = evaluate(items, baselines=["random"], ks=[1, 4], runs=100)
    assert report.baselines["random"][1].n == 20       # images (each contributes 100 pooled runs)
    assert report.baselines["random"][1].P == pytest.approx(0.375, abs=0.04)
    # Runs are pooled, so the sd is that of single draws: P is 1, 1/2, 0, 0 with probability 1/4 each,
    # sd = sqrt(5/16 - 0.375²) ≈ 0.415 (averaging runs per image first would give about 0.04).
    assert report.baselines["random"][1].P_sd == pytest.approx((5 / 16 - 0.375 ** 2) ** 0.5, abs=0.03)
    assert report.baselines["random"][4].P == pytest.approx(0.375)      # everything selected
    assert report.baselines["random"][4].R == pytest.approx(1.0)


def test_realised_sentence_names_the_selection_in_order(priors):
    it = item("rs", [("0", "tree", 0, 0, 1, 1), ("1", "ball", 0, 0, 1, 1), ("2", "dog", 0, 0, 1, 1),
                     ("3", "man", 0, 0, 1, 1)], ["[dog|2]"])
    choice = explain_image(it, "bigram", 3, priors=priors, sentence_seed=5)
    text, mentions = parse_markup(choice.sentence, box_ids=["0", "1", "2", "3"])
    assert [m.box_ids[0] for m in mentions] == ["3", "2", "1"]
    assert text.split()[0] == "Man" and text.endswith(" .")
    assert explain_image(it, "bigram", 3, priors=priors, sentence_seed=5).sentence == choice.sentence
    assert len({realise([it.box("3"), it.box("2"), it.box("1")], seed=s) for s in range(10)}) > 1


def test_every_image_group_is_handled_together():
    # Images with different numbers of boxes land in different groups; results stay aligned with keys.
    items = [item(f"g{n}", [(str(j), "x", 0, 0, j + 1, 1) for j in range(n)], [f"[x|{n - 1}]"]) for n in (3, 1, 2, 3)]
    es = compile_items(items)
    assert sorted(g.n for g in es.groups) == [1, 2, 3]
    report = evaluate(items, baselines=["size"], ks=[1], per_image=True, upper_bound=False)
    # size picks the largest = last box = the mentioned one everywhere.
    assert report.per_image["size"][:, 0, 2].tolist() == [1.0, 1.0, 1.0, 1.0]
