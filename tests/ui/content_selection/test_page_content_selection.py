"""The content-selection page, run with Streamlit's AppTest."""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from tests.core.test_content_selection_helpers import figure2_item, item, marked_caption

from annotator.model import Caption, Project
from annotator.store.projects import write_project
from tests.apptest_helpers import page_test, refused_showing_nothing, says_no_project, texts


def _seed(store, image_root: Path | None = None):
    eval_items = [figure2_item("fig", captions=[marked_caption("sysA", "A [woman|2] by a [car|3] .")])]
    eval_items[0].image = "fig.png"
    eval_items.append(item("two", [("1", "dog", 0, 0, 50, 50), ("2", "ball", 60, 60, 10, 10)],
                           ["A [dog|1] with a [ball|2]", "A [dog|1]"], captions=[("sysA", "A [ball|2]")]))
    if image_root is not None:
        image_root.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (400, 300), (90, 120, 150)).save(image_root / "fig.png")
    with store.transaction() as conn:
        write_project(conn, Project("eval", image_root=str(image_root) if image_root else None, items=eval_items))
        write_project(conn, Project("train", items=[figure2_item("t1"), item("t2", [("1", "dog", 0, 0, 1, 1)], ["[dog|1]"])]))


def image_scores(at, method: str, k: int, image: str) -> list[str]:
    """Open one image on the content-selection page, ranked by ``method`` and cut at ``k``: the P, R and F shown."""
    at.selectbox(key="cs_method").set_value(method).run()
    at.number_input(key="cs_k_image").set_value(k).run()
    at.selectbox(key="cs_image").set_value(image).run()
    assert not at.exception
    return [m.value for m in at.metric][-3:]


def test_page_shows_table_charts_and_one_image(sqlite_store, tmp_path):
    _seed(sqlite_store, tmp_path / "images")
    at = page_test("content_selection", sqlite_store.url, user="ana", role="analyst", project="eval").run()
    assert not at.exception
    # Both images are scored by default (priors: leave one image out); also with a training project.
    assert "2 images scored" in texts(at)
    at.radio(key="cs_source").set_value("another project").run()
    at.selectbox(key="cs_train").set_value("train").run()
    assert not at.exception
    assert "2 images scored" in texts(at)
    table = at.dataframe[0].value
    assert table.iloc[0]["method"] == "upper bound"
    assert {"random", "size", "position", "unigram", "bigram", "bigram+size", "bigram+position", "unigram+size",
            "unigram+position", "sysA"} <= set(table["method"])
    assert len(table[table["method"] == "size"]) == 15
    # Two Altair charts: F against k, P and R against k.
    assert len(at.get("vega_lite_chart")) == 2
    # Issue 24 item 15: the dashed upper bound and system lines are in the legend (coloured by method, one scale
    # with the baselines), and every colour is the shared palette's (none of Streamlit's near-white tints).
    import json

    from annotator.ui.widgets.palette import PALETTE
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    rules = [layer for layer in spec["layer"] if (layer.get("mark") or {}).get("type") == "rule"]
    (rule,) = rules
    assert rule["encoding"]["color"]["field"] == "method"
    domain = rule["encoding"]["color"]["scale"]["domain"]
    assert {"upper bound", "sysA"} <= set(domain) and "random" in domain
    assert set(rule["encoding"]["color"]["scale"]["range"]) <= set(PALETTE)

    # One image: unigram at k = 2 picks woman and car → P = 1.00, R = 16/21 = 0.76, F = 32/37 = 0.86.
    assert image_scores(at, "unigram", 2, "fig") == ["1.00", "0.76", "0.86"]
    assert "2 (woman), 3 (car)" in texts(at).replace("\\", "")
    assert len(at.get("image")) == 1
    boxes = at.dataframe[2].value
    assert boxes.set_index("box")["mentioned by"].to_dict() == {"0": "2 of 7", "1": "0 of 7", "2": "7 of 7", "3": "7 of 7",
                                                               "4": "0 of 7", "5": "4 of 7"}
    assert boxes.set_index("box")["selected"].to_dict() == {"0": False, "1": False, "2": True, "3": True, "4": False,
                                                           "5": False}
    assert "A [woman|2] in a white [dress|0] and gold [boots|5] leaning on a [car|3] ." in texts(at)

    # A system: its caption and its score.
    at.selectbox(key="cs_method").set_value("system:sysA").run()
    assert not at.exception
    assert [m.value for m in at.metric][-3:] == ["1.00", "0.76", "0.86"]
    assert "A [woman|2] by a [car|3] ." in texts(at)


def test_annotators_are_refused(sqlite_store):
    _seed(sqlite_store)
    refused_showing_nothing("content_selection", sqlite_store.url, user="ann", role="annotator", project="eval")


def test_page_without_projects_explains(sqlite_store):
    says_no_project("content_selection", sqlite_store.url, "no project yet")
