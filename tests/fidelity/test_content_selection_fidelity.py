"""Content selection as the study defines it: every image scored, held-out priors, M, senses, mention statistics.

Hand-computed cases; the worked example (figure 2 of the study) is in test_content_selection_helpers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.core.test_content_selection_helpers import figure2_item, item

from annotator.content_selection import (
    BASELINES, LEAVE_ONE_OUT, compile_items, evaluate, evaluate_project, explain_image, gold_sets, held_out_priors,
    learn_priors, needs_priors, score_selection,
)
from annotator.content_selection.priors import leave_one_out
from annotator.errors import InputError
from annotator.model import Box, Item, Project


def _f(p, r):
    return 2 * p * r / (p + r) if p + r else 0.0


def _seven(captions=True) -> list[Item]:
    """Seven images, two or three descriptions each; system 'sys' names box 1 of each."""
    out = []
    for i in range(7):
        boxes = [("1", "dog", 0, 0, 10 + i, 10), ("2", "ball", 50, 50, 5, 5), ("3", "tree", 80, 0, 20, 90)]
        refs = ["A [dog|1] with a [ball|2]", "A [dog|1]"] + (["A [tree|3] and a [dog|1]"] if i % 2 else [])
        out.append(item(f"im{i}", boxes, refs, captions=[("sys", "A [dog|1]")] if captions else ()))
    return out


# ---- item 1: every image is scored; only the textual baselines need priors -------------------------------------

def test_systems_and_upper_bound_are_scored_on_every_image_without_a_training_project():
    project = Project("seven", items=_seven())
    report = evaluate_project(project, baselines=(), systems=["sys"])
    assert report.meta["images"] == 7 and report.keys == [f"im{i}" for i in range(7)]
    assert report.upper_bound.n == 7 and report.systems["sys"].n == 7
    # sys selects {dog}: even images G = {dog, ball}, {dog} → P = 1, R = 3/4;
    # odd images add {tree, dog} → P = 1, R = (1/2 + 1 + 1/2)/3 = 2/3.
    f_even, f_odd = _f(1, 3 / 4), _f(1, 2 / 3)
    assert report.systems["sys"].F == pytest.approx((4 * f_even + 3 * f_odd) / 7)
    assert report.meta["priors"] is None          # nothing here needs priors


def test_every_row_is_averaged_over_the_same_images():
    items = _seven()
    report = evaluate(items, baselines=BASELINES, ks=[1, 3], systems=["sys"], per_image=True)
    assert report.meta["priors"]["source"] == LEAVE_ONE_OUT
    counts = {report.upper_bound.n, *(s.n for s in report.systems.values()),
              *(s.n for by_k in report.baselines.values() for s in by_k.values())}
    assert counts == {7}
    assert all(len(a) == 7 for a in report.per_image.values())
    assert [r["key"] for r in report.to_dict()["images"]["scored"]] == report.keys


def test_leave_one_image_out_keeps_an_image_out_of_its_own_priors():
    # A: three descriptions name the cat; B: two name the dog. Both images have a dog (first) and a cat.
    # Held out, A's priors come from B only (dog 2, cat 0): unigram at k = 1 picks the dog, F = 0; B's come from
    # A only (cat 3): it picks the cat, F = 0. Priors that include the image itself (cat 3 > dog 2) would pick
    # the cat for both: A scores F = 1 from its own descriptions.
    boxes = [("d", "dog", 0, 0, 10, 10), ("c", "cat", 20, 0, 10, 10)]
    a = item("A", boxes, ["A [cat|c]", "The [cat|c]", "One [cat|c]"])
    b = item("B", boxes, ["A [dog|d]", "The [dog|d]"])
    held = evaluate([a, b], baselines=["unigram", "bigram"], ks=[1])
    assert held.meta["priors"] == {"source": LEAVE_ONE_OUT, "images": 2, "descriptions": 5}
    assert held.baselines["unigram"][1].F == 0.0
    assert held.baselines["bigram"][1].F == 0.0   # start counts held out the same way
    leaky = evaluate([a, b], [a, b], baselines=["unigram"], ks=[1])
    assert leaky.baselines["unigram"][1].F == pytest.approx(0.5)
    pri = held_out_priors(learn_priors([a, b]), a)
    assert (dict(pri.unigram), dict(pri.start), pri.descriptions, pri.images) == ({"dog": 2}, {"dog": 2}, 2, 1)


def _random_corpus(n_items: int, seed: int) -> list[Item]:
    rng = np.random.default_rng(seed)
    labels = ["dog", "man", "car", "tree", "ball"]
    items = []
    for i in range(n_items):
        n = int(rng.integers(1, 7))
        boxes = [(str(j), labels[int(rng.integers(0, 5))], *map(float, rng.uniform(0, 80, 2)),
                  *map(float, rng.uniform(1, 40, 2))) for j in range(n)]
        marked = []
        for _ in range(int(rng.integers(1, 5))):
            chosen = rng.permutation(n)[: int(rng.integers(0, n + 1))]
            marked.append(" ".join(f"the [{boxes[b][1]}|{b}]" for b in chosen) or "nothing at all")
        if rng.random() < 0.2 and n > 1:        # a mention of two boxes at once
            marked.append(f"two [things|0,{n - 1}]")
        items.append(item(f"img{i:02d}", boxes, marked, width=120, height=90))
    return items


@pytest.mark.parametrize("empty", ["drop", "count"])
def test_leave_one_image_out_equals_priors_learned_without_the_image(empty):
    items = _random_corpus(30, 11)
    report = evaluate(items, ks=[1, 2, 4], per_image=True, runs=1, empty_descriptions=empty)
    assert len(report.keys) > 15
    by_key = {it.key: it for it in items}
    for name in (b for b in BASELINES if needs_priors(b)):
        per = report.per_image[name]
        for j, key in enumerate(report.keys):
            others = learn_priors([it for it in items if it.key != key])
            for c, k in enumerate(report.ks):
                choice = explain_image(by_key[key], name, k, priors=others, empty_descriptions=empty)
                assert per[j, c] == pytest.approx(choice.scores), (name, key, k)
    # The corpus counts of the one pass are those learn_priors makes of every item.
    es = compile_items(items, empty_descriptions=empty, min_descriptions=2)
    pa, _, counted = leave_one_out(es, items)
    corpus = learn_priors(items)
    for got, want in zip((pa.unigram, pa.start, pa.codes, pa.counts), corpus.arrays(es.vocab)):
        assert got.tolist() == want.tolist()
    assert (counted.descriptions, counted.images) == (corpus.descriptions, corpus.images)
    # held_out_priors gives exactly the counts learned without the image.
    for it in items[:5]:
        alone = held_out_priors(corpus, it)
        direct = learn_priors([x for x in items if x is not it])
        assert (alone.unigram, alone.start, alone.follow, alone.descriptions, alone.images) == \
            (direct.unigram, direct.start, direct.follow, direct.descriptions, direct.images)


def test_leave_one_image_out_needs_two_images_and_says_so():
    report = evaluate([figure2_item()], baselines=["size", "unigram", "bigram+size"], ks=[2])
    assert list(report.baselines) == ["size"]
    assert set(report.meta["baselines_skipped"]) == {"unigram", "bigram+size"}
    assert "two images" in report.meta["baselines_skipped"]["unigram"]
    # An explicit training set with nothing in it is still an error.
    with pytest.raises(InputError):
        evaluate([figure2_item()], [], baselines=["unigram"])


def test_images_the_upper_bound_cannot_score_are_left_out_of_every_row():
    one = item("one", [("1", "dog", 0, 0, 10, 10)], ["A [dog|1]", "A dog in a field"])   # one gold description
    report = evaluate([figure2_item(), one], baselines=["size"], ks=[1], systems=[], empty_descriptions="drop",
                      single_descriptions="skip")
    assert report.keys == ["fig2"] and report.skipped == {"one": "fewer than two gold descriptions"}
    assert report.meta["skipped_by_reason"] == {"fewer than two gold descriptions": 1}
    # Without the upper bound the image is scored by every row; counting empty descriptions in M also lets it in.
    assert evaluate([figure2_item(), one], baselines=["size"], ks=[1], upper_bound=False,
                    empty_descriptions="drop").keys == ["fig2", "one"]
    counted = evaluate([figure2_item(), one], baselines=["size"], ks=[1], empty_descriptions="count",
                       single_descriptions="skip")
    assert counted.keys == ["fig2", "one"] and counted.upper_bound.n == 2


def test_a_training_project_is_not_the_evaluated_one():
    project = Project("seven", items=_seven(captions=False))
    with pytest.raises(InputError) as exc:
        evaluate_project(project, train_project=project, baselines=["unigram"])
    assert exc.value.source == "--train-project"
    other = Project("train", items=[figure2_item("t")])
    report = evaluate_project(project, train_project=other, baselines=["unigram"], ks=[1])
    assert report.meta["priors"] == {"source": "training", "images": 1, "descriptions": 7, "project": "train"}
    assert report.meta["images"] == 7


def test_a_training_project_sharing_images_is_refused_with_their_count():
    # A copy of the evaluated images under another name: the priors would hold each image's own descriptions.
    project = Project("seven", items=_seven(captions=False))
    copy = Project("seven-copy", items=_seven(captions=False)[:3] + [figure2_item("t")])
    with pytest.raises(InputError) as exc:
        evaluate_project(project, train_project=copy, baselines=["unigram"])
    assert exc.value.source == "--train-project" and "3 of the 7 evaluated images" in str(exc.value)
    assert "'seven-copy'" in str(exc.value)


# ---- item 9: descriptions without mentions, WordNet senses -----------------------------------------------------

def _with_empty() -> Item:
    # G1 = {a, b}, G2 = {a}, two descriptions that mention no box. Box sizes: a > c > b.
    return item("e", [("a", "dog", 0, 0, 40, 40), ("b", "ball", 50, 50, 5, 5), ("c", "tree", 60, 0, 20, 30)],
                ["A [dog|a] and a [ball|b]", "A [dog|a]", "A sunny day", "Nothing much"])


def test_descriptions_without_mentions_dropped_or_counted_as_equation_1_reads():
    golds = gold_sets(_with_empty())
    # S = {a, c}. Left out (M = 2): P = (1/2 + 1/2)/2 = 1/2, R = (1/2 + 1)/2 = 3/4, F = 3/5.
    assert score_selection({"a", "c"}, golds) == pytest.approx((1 / 2, 3 / 4, 3 / 5))
    # Counted (M = 4): P = (1/2 + 1/2 + 0 + 0)/4 = 1/4, R = (1/2 + 1 + 0 + 0)/4 = 3/8, F = 3/10.
    assert score_selection({"a", "c"}, golds, empty_descriptions="count") == pytest.approx((1 / 4, 3 / 8, 3 / 10))
    # The size baseline at k = 2 selects {a, c} too, and the evaluation agrees with the reference scorer.
    for empty, want in (("drop", 3 / 5), ("count", 3 / 10)):
        report = evaluate([_with_empty()], baselines=["size"], ks=[2], empty_descriptions=empty)
        assert report.baselines["size"][2].F == pytest.approx(want)
        assert report.meta["descriptions_without_mentions"] == 2
        assert report.meta["descriptions"] == (2 if empty == "drop" else 4)
    with pytest.raises(InputError):
        evaluate([_with_empty()], empty_descriptions="literal")


def test_upper_bound_with_descriptions_without_mentions():
    # Left out: G1 vs G2 → P = 1/2, R = 1, F = 2/3; G2 vs G1 → P = 1, R = 1/2, F = 2/3.
    drop = evaluate([_with_empty()], baselines=(), empty_descriptions="drop").upper_bound
    assert (drop.P, drop.R, drop.F) == pytest.approx((3 / 4, 3 / 4, 2 / 3))
    # Counted: G1 against G2, ∅, ∅ → P = (1/2)/3 = 1/6, R = 1/3, F = 2/9; G2 against G1, ∅, ∅ → P = 1/3, R = 1/6,
    # F = 2/9; an empty description held out selects nothing → 0. Means over the four: P = R = 1/8, F = 1/9.
    count = evaluate([_with_empty()], baselines=(), empty_descriptions="count").upper_bound
    assert (count.P, count.R, count.F) == pytest.approx((1 / 8, 1 / 8, 1 / 9))


def test_wordnet_senses_are_distinct_concepts():
    # Training: three descriptions mention the computer mouse (mouse.n.04), none the animal (mouse.n.01).
    train = Item("t", width=100, height=100, boxes=[Box("1", "mouse", 0, 0, 5, 5, "mouse.n.04"),
                                                    Box("2", "desk", 0, 0, 90, 50, "desk.n.01")],
                 references=item("x", [], ["A [mouse|1] on a [desk|2]", "A [mouse|1]", "The [mouse|1]"]).references)
    pri = learn_priors([train])
    assert dict(pri.unigram) == {"mouse.n.04": 3, "desk.n.01": 1}
    # The evaluated image has the animal first, then the device: the unigram baseline picks the device.
    ev = Item("e", width=100, height=100, boxes=[Box("r", "mouse", 0, 0, 9, 9, "mouse.n.01"),
                                                 Box("c", "mouse", 50, 50, 9, 9, "mouse.n.04")],
              references=item("y", [], ["A [mouse|c]", "A computer [mouse|c]"]).references)
    choice = explain_image(ev, "unigram", 1, priors=pri)
    assert choice.selected == ("c",) and choice.scores == (1.0, 1.0, 1.0)
    assert choice.sentence == "[Mouse|c] ."        # the label is still what a sentence says
    assert evaluate([ev], [train], baselines=["unigram"], ks=[1]).baselines["unigram"][1].F == 1.0
    # A label written as a synset keeps its sense too; case and spaces do not make a new concept.
    it = item("l", [("1", "Mouse.n.01", 0, 0, 1, 1), ("2", " mouse.n.04 ", 0, 0, 1, 1)], ["[m|1]", "[m|2]"])
    assert dict(learn_priors([it]).unigram) == {"mouse.n.01": 1, "mouse.n.04": 1}


# ---- item 12: unique instances mentioned per description ---------------------------------------------------------

def test_mention_statistics_per_image_and_corpus():
    two = item("two", [("1", "dog", 0, 0, 50, 50), ("2", "ball", 60, 60, 10, 10)],
               ["A [dog|1] with a [ball|2]", "A [dog|1]", "a view"])
    report = evaluate([figure2_item(), two], baselines=(), empty_descriptions="drop")
    # Figure 2: |G_m| = 4, 2, 3, 2, 2, 3, 4 → 20/7 per description; boxes 0, 2, 3, 5 mentioned.
    rows = {r["key"]: r for r in report.stats.rows()}
    assert rows["fig2"] == {"key": "fig2", "boxes": 6, "descriptions": 7, "descriptions_without_mentions": 0,
                            "instances_per_description": pytest.approx(20 / 7), "boxes_mentioned": 4}
    assert rows["two"]["descriptions"] == 2 and rows["two"]["instances_per_description"] == 1.5
    assert rows["two"]["descriptions_without_mentions"] == 1
    c = report.stats.corpus()
    # Over the 9 descriptions: 23/9; Σ|G|² = 62 + 5 → sd = sqrt(67/9 − (23/9)²) = sqrt(74)/9.
    assert c["descriptions"] == 9 and c["descriptions_without_mentions"] == 1
    assert c["instances_per_description"] == pytest.approx(23 / 9)
    assert c["instances_per_description_sd"] == pytest.approx(math.sqrt(74) / 9)
    assert c["image_mean_instances_per_description"] == pytest.approx((20 / 7 + 1.5) / 2)
    assert c["boxes_per_image"] == 4.0 and c["boxes_mentioned_per_image"] == 3.0
    # Counting the empty description in M: "two" has 3 descriptions and 3 instances → 1 per description.
    counted = evaluate([figure2_item(), two], baselines=(), empty_descriptions="count").stats
    assert counted.rows()[1]["instances_per_description"] == 1.0
    assert counted.corpus()["instances_per_description"] == pytest.approx(23 / 10)
    d = report.to_dict()
    assert d["statistics"] == c and d["images"]["scored"][0]["key"] == "fig2"


def test_compile_counts_are_those_of_the_statistics():
    es = compile_items([figure2_item(), _with_empty()], min_descriptions=2)
    assert es.descriptions.tolist() == [7, 2] and es.without_mentions.tolist() == [0, 2]
    assert es.instances.tolist() == [20, 3] and es.mentioned.tolist() == [4, 2]
