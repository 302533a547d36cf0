"""AppTest of the error-estimates page on a stored project with a random human sample."""

from __future__ import annotations

import json
import re

import pytest

from annotator.cli import main
from tests.apptest_helpers import page_test, texts
from tests.core.test_estimate_cli import PROJECT, build_street


@pytest.fixture
def street(sqlite_store):
    build_street(sqlite_store, n=80)
    return sqlite_store


def test_estimates_chart_table_and_difference(street, capsys):
    at = page_test("estimate", street.url, user="ana", role="analyst", project=PROJECT).run(timeout=120)
    assert not at.exception
    metrics = {(m.label, m.value) for m in at.metric}
    # the figures are the command line's
    assert main(["--db", street.url, "estimate", "--project", PROJECT, "--annotator", "ann", "--system", "poor",
                 "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert ("Inaccurate (estimate)", f"{cli['inaccurate']['estimate']:.1%}") in metrics
    assert ("Human labels", f"{cli['n_human']} of {cli['n_total']}") in metrics
    table = at.dataframe[0].value
    assert set(table["system"]) == {"good", "poor"} and "Gender" in set(table["type"])
    poor = table[(table["system"] == "poor") & (table["type"] == "Inaccurate (any error)")].iloc[0]
    lo, hi = cli["inaccurate"]["ci"]
    # One format per column: shares with one decimal, as the cards (issue 24 item 14); "—" for a missing figure.
    assert poor["estimate"] == f"{100 * cli['inaccurate']['estimate']:.1f} %"
    assert poor["interval"] == f"{100 * lo:.1f}–{100 * hi:.1f}%" + ("*" if cli["inaccurate"]["sparse"] else "")
    assert not any(v is None or str(v) in ("None", "nan") for col in table.columns for v in table[col])
    diff = at.dataframe[1].value
    assert diff.iloc[0]["target"] == "Inaccurate (any error)"
    for col in ("A minus B", "low", "high", "classical low", "classical high"):
        assert all(v == "—" or re.fullmatch(r"-?\d+\.\d %", v) for v in diff[col]), diff[col].tolist()
    # ann labelled the same images of both systems: the difference is paired on them
    assert diff.iloc[0]["interval"] == f"paired, {cli['n_human']} images"
    assert len(at.get("download_button")) == 5 + 2  # the tables in five formats, the detector scores in two
    at.toggle(key="est_top5").set_value(True).run(timeout=120)
    assert not at.exception
    assert len(at.dataframe[0].value) == 2 * 6  # inaccurate and five types per system


def test_one_system_and_a_layer_without_labels_for_it(street):
    at = page_test("estimate", street.url, user="lea", role="lead", project=PROJECT).run(timeout=120)
    at.multiselect(key="est_systems").set_value(["good"]).run(timeout=120)
    assert not at.exception
    assert len(at.dataframe) == 2  # the estimates and the detectors' word-level table; no difference table
    assert "1 captions of practice items left out" in [t.value for t in at.text]


def test_detectors_word_by_word_is_the_command_line_table(street, capsys):
    from annotator.estimate.span_eval import evaluate_detectors
    from annotator.ui.estimate.page import detector_table_text
    at = page_test("estimate", street.url, user="ana", role="analyst", project=PROJECT).run(timeout=120)
    assert not at.exception
    shown = at.dataframe[-1].value
    report = evaluate_detectors(street, PROJECT, "annotator:ann")
    expected = detector_table_text(report)
    assert list(shown.columns) == list(expected.columns)
    assert shown.astype(str).values.tolist() == expected.astype(str).values.tolist()
    assert main(["--db", street.url, "detectors", "evaluate", "--project", PROJECT, "--annotator", "ann",
                 "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["detectors"]
    assert cli["captions"] == report.captions > 0
    assert set(cli["per_type"]) == set(report.per_type)


def test_project_without_judgements(sqlite_store):
    from annotator.model import Caption, Item, Project, Reference
    from annotator.store.projects import write_project
    with sqlite_store.transaction() as conn:
        write_project(conn, Project("empty", items=[Item("a", references=[Reference("A dog")],
                                                         captions=[Caption("s", "A cat")])]))
    at = page_test("estimate", sqlite_store.url, user="ana", role="analyst", project="empty").run()
    assert not at.exception
    assert "Nobody has judged a caption" in texts(at)


def test_level_text_sparse_flags_and_scores_download(street):
    """The level the page states is the one chosen; sparse intervals are flagged; the detector scores download
    like --scores."""
    at = page_test("estimate", street.url, user="ana", role="analyst", project=PROJECT).run(timeout=120)
    at.selectbox(key="est_level").set_value(0.90).run(timeout=120)
    assert not at.exception
    shown = texts(at) + " ".join(c.value for c in at.caption)
    assert "90 of 100" in shown and "95 of 100" not in shown
    # nearly exact detectors on few labels: flagged, as in the command's JSON
    assert any("widened to the exact interval" in w.value for w in at.warning)
    table = at.dataframe[0].value
    assert table["sparse"].any() and all(i.endswith("*") for i in table.loc[table["sparse"], "interval"])
    labels = [b for b in at.get("download_button") if "detector scores" in b.proto.label]
    assert len(labels) == 2


def test_captions_added_to_existing_systems_are_scored_without_a_restart(street):
    """The detector-score cache is keyed on the project's items, references and captions, not its system names."""
    from annotator.model import Caption, Item, Project, Reference
    from annotator.store.projects import write_project
    at = page_test("estimate", street.url, user="ana", role="analyst", project=PROJECT).run(timeout=120)
    assert dict((m.label, m.value) for m in at.metric)["Human labels"].endswith("of 79")
    with street.transaction() as conn:  # one more image captioned by both systems
        write_project(conn, Project(PROJECT, items=[Item("extra", references=[Reference("A man in the park")],
                                                         captions=[Caption("good", "A man in the park"),
                                                                   Caption("poor", "A woman in the park")])]))
    at.run(timeout=120)
    assert not at.exception
    assert dict((m.label, m.value) for m in at.metric)["Human labels"].endswith("of 80")


def test_a_system_without_labels_is_listed_not_fatal(street):
    from annotator.model import Caption, Item, Project, Reference
    from annotator.store.projects import write_project
    with street.transaction() as conn:  # a third system, nobody has labelled its captions
        write_project(conn, Project(PROJECT, items=[Item("img0", references=[], captions=[Caption("new", "A dog")])]))
    at = page_test("estimate", street.url, user="ana", role="analyst", project=PROJECT).run(timeout=120)
    assert not at.exception
    assert any("System new is not estimated" in i.value and "at least two" in i.value for i in at.info)
    assert set(at.dataframe[0].value["system"]) == {"good", "poor"}
