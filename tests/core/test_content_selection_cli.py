"""``annotator content-selection`` against a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

import pytest
from test_content_selection_helpers import figure2_item, item, marked_caption

from annotator.cli import main
from annotator.errors import InputError
from annotator.model import Caption, Project
from annotator.store.projects import write_project


def _setup(store):
    evalp = Project("eval", items=[
        figure2_item("fig", captions=[marked_caption("sysA", "A [woman|2] by a [car|3] .")]),
        item("two", [("1", "dog", 0, 0, 50, 50), ("2", "ball", 60, 60, 10, 10)], ["A [dog|1] with a [ball|2]", "A [dog|1]"],
             captions=[("sysA", "A [ball|2]")]),
    ])
    train = Project("train", items=[figure2_item("t1"), item("t2", [("1", "dog", 0, 0, 1, 1)], ["A [dog|1] ."])])
    with store.transaction() as conn:
        write_project(conn, evalp)
        write_project(conn, train)


def _run(store, capsys, *args):
    rc = main(["--db", store.url, "content-selection", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_json_with_training_project(store, capsys):
    _setup(store)
    rc, out, _ = _run(store, capsys, "--project", "eval", "--train-project", "train", "--k", "1-2",
                      "--system", "sysA", "--json")
    assert rc == 0
    data = json.loads(out)
    assert set(data) == {"upper_bound", "baselines", "systems", "images", "statistics", "meta"}
    assert set(data["upper_bound"]) == {"P", "R", "F", "P_sd", "R_sd", "F_sd"}
    assert list(data["baselines"]) == ["random", "size", "position", "unigram", "bigram", "bigram+size",
                                       "bigram+position", "unigram+size", "unigram+position"]
    assert list(data["baselines"]["size"]) == ["1", "2"]
    assert data["meta"]["images"] == 2 and data["meta"]["priors"]["project"] == "train"
    # unigram (woman 7, car 7, …, dog 1) at k = 2: fig → {woman, car}: F = 32/37; two → {dog, ball}:
    # P = (1 + 1/2)/2 = 3/4, R = 1, F = 6/7.
    uni = data["baselines"]["unigram"]["2"]
    assert uni["F"] == pytest.approx((32 / 37 + 6 / 7) / 2)
    assert uni["F_sd"] == pytest.approx(abs(32 / 37 - 6 / 7) / 2)
    # sysA: fig {woman, car} → 32/37; two {ball}: P = (1 + 0)/2, R = (1/2 + 0)/2 → F = 2·0.5·0.25/0.75 = 1/3.
    assert data["systems"]["sysA"]["F"] == pytest.approx((32 / 37 + 1 / 3) / 2)


def test_readable_output(store, capsys):
    _setup(store)
    rc, out, _ = _run(store, capsys, "--project", "eval", "--baselines", "size,bigram", "--k", "3")
    assert rc == 0
    assert "leave-one-image-out" in out and "upper bound" in out and "bigram" in out and "size" in out
    assert "unigram" not in out


def test_errors_exit_with_code_2(store, capsys):
    _setup(store)
    rc, _, err = _run(store, capsys, "--project", "nope")
    assert rc == 2 and "nope" in err
    rc, _, err = _run(store, capsys, "--project", "eval", "--k", "0-3")
    assert rc == 2 and "--k" in err
    rc, _, err = _run(store, capsys, "--project", "eval", "--baselines", "tallest")
    assert rc == 2 and "tallest" in err
    rc, _, err = _run(store, capsys, "--project", "eval", "--system", "ghost")
    assert rc == 2 and "ghost" in err
    # A caption mentioning a box the item does not have is refused when the boxes are known.
    with pytest.raises(InputError) as exc, store.transaction() as conn:
        write_project(conn, Project("badcap", items=[figure2_item("f", captions=[marked_caption("s", "A [woman|77]")])]))
    assert "'77'" in str(exc.value) and "'s'" in str(exc.value) and "'f'" in str(exc.value)


def test_example_sentences_from_the_command_line(store, capsys):
    """The paper's Section 4.3 sentences: chosen concepts joined by a random function word and an optional "the"."""
    import random

    from annotator.content_selection.realise import FUNCTION_WORDS
    _setup(store)
    rc, out, err = _run(store, capsys, "--project", "eval", "--train-project", "train", "--baselines", "size",
                        "--k", "2", "--system", "sysA", "--example-image", "two", "--example-k", "2", "--json")
    assert rc == 0, err
    ex = json.loads(out)["examples"]
    assert ex["k"] == 2
    by_method = {e["method"]: e for e in ex["sentences"]}
    assert set(by_method) == {"size", "system:sysA"} and all(e["image"] == "two" for e in ex["sentences"])
    # size at k = 2 picks the dog (area 2500) then the ball (100); the joining words drawn as realise draws them
    rng = random.Random(0)
    word = rng.choice(FUNCTION_WORDS)
    joint = f"{word} the" if rng.random() < 0.5 else word
    size = by_method["size"]
    assert size["selected"] == ["1", "2"]
    assert size["sentence"] == f"Dog {joint} ball ."
    assert size["markup"] == f"[Dog|1] {joint} [ball|2] ."
    assert size["F"] == pytest.approx(6 / 7)  # P = (1 + 1/2)/2, R = 1
    assert by_method["system:sysA"]["sentence"] == "A ball" and by_method["system:sysA"]["F"] == pytest.approx(1 / 3)
    # the text form, and the first N images by default (item order: fig, then two)
    rc, out, _ = _run(store, capsys, "--project", "eval", "--baselines", "size,bigram", "--k", "3", "--examples", "1")
    assert rc == 0 and "example sentences (baselines at k = 3" in out and "image fig" in out and "image two" not in out
    rc, _, err = _run(store, capsys, "--project", "eval", "--example-image", "ghost.jpg")
    assert rc == 2 and "ghost.jpg" in err and "--example-image" in err
