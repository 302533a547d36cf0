"""One palette for the whole app (annotator.ui.widgets.palette, issue 38 item 10): its colours differ and read on white,
a series has one colour on every chart of a page, and the legends show every series whole and as it is drawn."""

from __future__ import annotations

import itertools
import json

from annotator.ui.widgets.palette import DASHED, MIN_DIFFERENCE, PALETTE, SOLID, contrast_on_white, difference, series_colours
from tests.apptest_helpers import page_test
from tests.ui.content_selection.test_page_content_selection import _seed as seed_content_selection
from tests.ui.diversity.test_page_diversity import seed as seed_diversity


def test_the_palette_keeps_every_colour_distinct_and_legible():
    assert len(PALETTE) == len(set(PALETTE)) >= 11  # content selection draws eleven series at once
    for a, b in itertools.combinations(PALETTE, 2):
        assert difference(a, b) >= MIN_DIFFERENCE, (a, b, difference(a, b))
    assert all(contrast_on_white(c) >= 3.0 for c in PALETTE)
    # Neighbours in the palette's order (the first series of a chart) differ most.
    assert all(difference(a, b) >= 45 for a, b in zip(PALETTE, PALETTE[1:4]))
    # The old palette put two blues and two browns among eleven series.
    assert difference("#1f5fa8", "#3f51b5") < MIN_DIFFERENCE and difference("#a6761d", "#6b4f2a") < MIN_DIFFERENCE


def _colours(encoding: dict) -> dict[str, str]:
    scale = encoding["scale"]
    return dict(zip(scale["domain"], scale["range"]))


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer", [spec])


def test_content_selection_series_keep_their_colour_and_legends_show_dashes(sqlite_store, tmp_path):
    seed_content_selection(sqlite_store, tmp_path / "images")
    at = page_test("content_selection", sqlite_store.url, user="ana", role="analyst", project="eval").run()
    assert not at.exception
    f_spec, pr_spec = (json.loads(c.proto.spec) for c in at.get("vega_lite_chart"))
    f_colours = {}
    for layer in _layers(f_spec):
        f_colours.update(_colours(layer["encoding"]["color"]))
    assert len(f_colours) == 11 and {"random", "upper bound", "sysA"} <= set(f_colours)
    # Eleven series, eleven colours that differ as the palette's do (random and the system were both blue).
    assert len(set(f_colours.values())) == 11
    assert min(difference(a, b) for a, b in itertools.combinations(f_colours.values(), 2)) >= MIN_DIFFERENCE
    # A baseline has the same colour on the P/R chart as on the F chart.
    pr_colours = _colours(pr_spec["encoding"]["color"])
    assert pr_colours and all(f_colours[m] == c for m, c in pr_colours.items())
    # The dashed series are dashed in the legend too (strokes, not dots); the baselines solid.
    for layer in _layers(f_spec):
        dash = layer["encoding"]["strokeDash"]
        assert dash["field"] == "method" and dash["legend"]["symbolType"] == "stroke"
        dashes = dict(zip(dash["scale"]["domain"], dash["scale"]["range"]))
        assert dashes["upper bound"] == DASHED and dashes["sysA"] == DASHED and dashes["random"] == SOLID
    # Every legend under its chart with its labels whole: P/R's measure legend was cut after "P".
    legends = [enc["legend"] for spec in (f_spec, pr_spec) for layer in _layers(spec)
               for ch, enc in layer["encoding"].items() if ch in ("color", "strokeDash")]
    assert legends and all(lg["orient"] == "bottom" and lg["labelLimit"] == 0 for lg in legends)
    measure = pr_spec["encoding"]["strokeDash"]
    assert measure["field"] == "measure" and measure["legend"]["symbolType"] == "stroke"
    assert dict(zip(measure["scale"]["domain"], measure["scale"]["range"])) == {"P": SOLID, "R": DASHED}


def test_diversity_ttr_curves_keep_their_colours_on_both_charts(sqlite_store):
    seed_diversity(sqlite_store)
    at = page_test("diversity", sqlite_store.url, user="ana", role="analyst", project="div").run()
    assert not at.exception
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    corpora = next(s for s in specs if any(lay.get("encoding", {}).get("color", {}).get("field") == "corpus"
                                           for lay in _layers(s)))
    image = next(s for s in specs if s.get("encoding", {}).get("color", {}).get("field") == "descriptions")
    whole = {}
    for layer in _layers(corpora):
        whole.update(_colours(layer["encoding"]["color"]))
    assert whole == series_colours(["A", "B", "references"])  # the systems' colours of every page first
    one = _colours(image["encoding"]["color"])
    # The references are the same colour on both charts (they swapped with the captions before).
    assert one["references (human)"] == whole["references"]
    assert one["captions (machine)"] == whole["A"] != whole["references"]


def test_a_system_has_one_colour_on_every_page(sqlite_store):
    """Error analysis, Error estimates and Lexical diversity colour a system alike: the project's systems in order."""
    from annotator.ui.widgets.palette import PALETTE
    seed_diversity(sqlite_store)
    at = page_test("diversity", sqlite_store.url, user="ana", role="analyst", project="div").run()
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    seen = {}
    for spec in specs:
        for layer in _layers(spec):
            colour = layer.get("encoding", {}).get("color", {})
            if colour.get("scale", {}).get("domain"):
                seen.update({k: v for k, v in _colours(colour).items() if k in ("A", "B")})
    assert seen == {"A": PALETTE[0], "B": PALETTE[1]}


def test_diversity_systems_keep_their_colours_on_the_gap_chart(sqlite_store):
    """The systems' points on the lexical-gap curve have their TTR curves' colours."""
    seed_diversity(sqlite_store)
    at = page_test("diversity", sqlite_store.url, user="ana", role="analyst", project="div").run()
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    gap = next(s for s in specs for lay in _layers(s) if lay.get("encoding", {}).get("color", {}).get("field") == "System")
    points = next(lay for lay in _layers(gap) if lay.get("encoding", {}).get("color"))
    whole = series_colours(["A", "B", "references"])
    assert _colours(points["encoding"]["color"]) == {"A": whole["A"], "B": whole["B"]}
