"""The command and the page: every image scored, held-out priors stated, M choice, mention statistics."""

from __future__ import annotations

import json

import pytest
from test_content_selection_fidelity import _f, _seven, _with_empty
from tests.core.test_content_selection_helpers import figure2_item, item

from annotator.cli import main
from annotator.model import Project
from annotator.store.projects import write_project
from tests.apptest_helpers import page_test, texts
from tests.ui.content_selection.test_page_content_selection import image_scores


def _seed(store):
    boxes = [("d", "dog", 0, 0, 10, 10), ("c", "cat", 20, 0, 10, 10)]
    with store.transaction() as conn:
        write_project(conn, Project("seven", items=_seven()))
        write_project(conn, Project("pets", items=[item("A", boxes, ["A [cat|c]", "The [cat|c]", "One [cat|c]"]),
                                                   item("B", boxes, ["A [dog|d]", "The [dog|d]"])]))
        write_project(conn, Project("empty", items=[_with_empty(), figure2_item("fig"),
                                                    item("one", [("1", "dog", 0, 0, 9, 9)], ["A [dog|1]", "A dog"])]))


def _run(store, capsys, *args):
    rc = main(["--db", store.url, "content-selection", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _plain(at) -> str:
    """The page's text without the backslashes that keep Markdown from reading it."""
    return texts(at).replace("\\", "")


def test_cli_scores_every_image_without_a_training_project(store, capsys):
    _seed(store)
    rc, out, _ = _run(store, capsys, "--project", "seven", "--baselines", "none", "--system", "sys", "--json")
    assert rc == 0
    data = json.loads(out)
    assert [r["key"] for r in data["images"]["scored"]] == [f"im{i}" for i in range(7)]
    assert data["images"]["skipped"] == {} and data["meta"]["images"] == 7 and data["meta"]["priors"] is None
    assert data["systems"]["sys"]["F"] == pytest.approx((4 * _f(1, 3 / 4) + 3 * _f(1, 2 / 3)) / 7)
    rc, out, _ = _run(store, capsys, "--project", "seven", "--k", "1")
    assert rc == 0
    assert "7 images scored: the upper bound, every baseline and every system averaged over these same 7 images" in out
    assert "leave-one-image-out" in out


def test_cli_leave_one_image_out_values(store, capsys):
    _seed(store)
    rc, out, _ = _run(store, capsys, "--project", "pets", "--baselines", "unigram", "--k", "1", "--json")
    assert rc == 0
    data = json.loads(out)
    # Each image ranked with the other's counts only: both pick the box the other image's descriptions name.
    assert data["baselines"]["unigram"]["1"]["F"] == 0.0
    assert data["meta"]["priors"] == {"source": "leave-one-image-out", "images": 2, "descriptions": 5}
    rc, _, err = _run(store, capsys, "--project", "pets", "--train-project", "pets")
    assert rc == 2 and "--train-project" in err


def test_cli_descriptions_without_mentions_upper_bound_and_statistics(store, capsys):
    _seed(store)
    old = ("--empty-descriptions", "drop", "--single-descriptions", "skip")  # the conventions before equation 1's
    rc, out, _ = _run(store, capsys, "--project", "empty", "--baselines", "size", "--k", "2", "--json", *old)
    data = json.loads(out)
    assert rc == 0 and data["images"]["skipped"] == {"one": "fewer than two gold descriptions"}
    assert data["meta"]["descriptions_without_mentions"] == 2 and data["meta"]["empty_descriptions"] == "drop"
    rc, out, _ = _run(store, capsys, "--project", "empty", "--baselines", "size", "--k", "2", "--json",
                      "--empty-descriptions", "count", "--single-descriptions", "skip")
    counted = json.loads(out)
    assert counted["meta"]["empty_descriptions"] == "count" and counted["meta"]["descriptions_without_mentions"] == 3
    assert [r["key"] for r in counted["images"]["scored"]] == ["e", "fig", "one"]
    rc, out, _ = _run(store, capsys, "--project", "empty", "--baselines", "none", "--no-upper-bound", "--json",
                      "--empty-descriptions", "drop")
    loose = json.loads(out)
    assert loose["upper_bound"] is None and len(loose["images"]["scored"]) == 3
    # Statistics over e (2 descriptions, 3 instances) and fig (7, 20): 23/9 per description.
    assert data["statistics"]["instances_per_description"] == pytest.approx(23 / 9)
    rc, out, _ = _run(store, capsys, "--project", "empty", "--baselines", "none", "--per-image", *old)
    assert rc == 0
    assert "unique instances mentioned per description 2.56" in out
    assert "Descriptions that mention no box: 2, left out of M" in out
    assert "fewer than two gold descriptions: 1" in out
    lines = {ln.split()[0]: ln.split()[1:] for ln in out.splitlines() if ln.startswith(("e ", "fig "))}
    assert lines == {"e": ["3", "2", "2", "1.50", "2"], "fig": ["6", "7", "0", "2.86", "4"]}
    with pytest.raises(SystemExit) as exc:
        _run(store, capsys, "--project", "empty", "--empty-descriptions", "literal")
    assert exc.value.code == 2 and "literal" in capsys.readouterr().err


def test_page_scores_every_image_and_says_how(sqlite_store):
    _seed(sqlite_store)
    at = page_test("content_selection", sqlite_store.url, user="ana", role="analyst", project="pets").run()
    assert not at.exception
    shown = _plain(at)
    assert "2 images scored: the upper bound, every baseline and every system averaged over these same 2" in shown
    assert "leave-one-image-out" in shown
    table = at.dataframe[0].value
    assert set(table["images"]) == {2}
    assert table.set_index(["method", "k"]).loc[("unigram", "1"), "F"] == "0.00 ± 0.00"
    # One image, held out like the table: image A is ranked with B's counts, so the dog comes first.
    assert image_scores(at, "unigram", 1, "A") == ["0.00", "0.00", "0.00"]
    assert "d (dog)" in _plain(at)


def test_page_descriptions_without_mentions_and_upper_bound(sqlite_store):
    _seed(sqlite_store)
    at = page_test("content_selection", sqlite_store.url, user="ana", role="analyst", project="empty").run()
    assert not at.exception
    at.radio(key="cs_empty").set_value("drop").run()   # the conventions before equation 1's defaults
    at.radio(key="cs_single").set_value("skip").run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Unique instances per description"] == "2.56 ± 0.96"
    assert metrics["Descriptions without a box mention"] == "2" and metrics["Gold descriptions (M)"] == "9"
    images = at.dataframe[1].value.set_index("key")
    assert images.loc["one", "scored"] == "no: fewer than two gold descriptions"
    assert images.loc["fig", "instances_per_description"] == f"{20 / 7:.2f}"  # 20 instances over 7 descriptions, as the page writes it
    assert "left out of M" in _plain(at)

    at.radio(key="cs_empty").set_value("count").run()
    assert not at.exception
    assert "counted in M with no instance" in _plain(at)
    assert {m.label: m.value for m in at.metric}["Gold descriptions (M)"] == "13"

    at.radio(key="cs_empty").set_value("drop").run()
    at.checkbox(key="cs_upper").uncheck().run()
    assert not at.exception
    table = at.dataframe[0].value
    assert "upper bound" not in set(table["method"]) and set(table["images"]) == {3}
