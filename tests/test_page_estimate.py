"""AppTest of the error-estimates page on a stored project with a random human sample."""

from __future__ import annotations

import json
import re

import pytest

from annotator.cli import main
from tests.apptest_helpers import page_test, texts
from tests.test_estimate_cli import PROJECT, build_street


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
    assert poor["interval"] == f"{100 * lo:.1f}–{100 * hi:.1f}%"
    assert not any(v is None or str(v) in ("None", "nan") for col in table.columns for v in table[col])
    diff = at.dataframe[1].value
    assert diff.iloc[0]["target"] == "Inaccurate (any error)"
    for col in ("A minus B", "low", "high", "classical low", "classical high"):
        assert all(v == "—" or re.fullmatch(r"-?\d+\.\d %", v) for v in diff[col]), diff[col].tolist()
    # ann labelled the same images of both systems: the difference is paired on them
    assert diff.iloc[0]["interval"] == f"paired, {cli['n_human']} images"
    assert len(at.get("download_button")) == 5
    at.toggle(key="est_top5").set_value(True).run(timeout=120)
    assert not at.exception
    assert len(at.dataframe[0].value) == 2 * 6  # inaccurate and five types per system


def test_one_system_and_a_layer_without_labels_for_it(street):
    at = page_test("estimate", street.url, user="lea", role="lead", project=PROJECT).run(timeout=120)
    at.multiselect(key="est_systems").set_value(["good"]).run(timeout=120)
    assert not at.exception
    assert len(at.dataframe) == 1  # no difference table for a single system
    assert "1 captions of practice items left out" in [t.value for t in at.text]


def test_project_without_judgements(sqlite_store):
    from annotator.model import Caption, Item, Project, Reference
    from annotator.store.projects import write_project
    with sqlite_store.transaction() as conn:
        write_project(conn, Project("empty", items=[Item("a", references=[Reference("A dog")],
                                                         captions=[Caption("s", "A cat")])]))
    at = page_test("estimate", sqlite_store.url, user="ana", role="analyst", project="empty").run()
    assert not at.exception
    assert "Nobody has judged a caption" in texts(at)
