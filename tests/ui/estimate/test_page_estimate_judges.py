"""AppTest of the Error estimates and Assignment pages with AI judges: a judge chosen as the predictor gives the
command line's figures, every judge's intervals stand side by side, and an active draw reads a chosen judge."""

from __future__ import annotations

import json

from annotator.cli import main
from tests.apptest_helpers import page_test, texts
from tests.judge_helpers import PROJECT, synthetic


def test_a_judge_as_predictor_and_every_judges_widths(sqlite_store, tmp_path, capsys):
    synthetic(sqlite_store, tmp_path, n=120)
    at = page_test("estimate", sqlite_store.url, user="ana", role="analyst", project=PROJECT).run(timeout=120)
    assert not at.exception
    assert at.selectbox(key="est_judge").options == ["detectors", "good", "poor"]
    at.selectbox(key="est_layer").set_value("annotator:ann")
    at.selectbox(key="est_judge").set_value("good").run(timeout=120)
    assert not at.exception
    assert "Judge good: model stand-in, prompt 1, k 5" in texts(at)  # the signature beside its figures
    assert main(["--db", sqlite_store.url, "estimate", "--project", PROJECT, "--annotator", "ann", "--judge", "good",
                 "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    table = at.dataframe[0].value
    row = table[(table["system"] == "a") & (table["type"] == "Inaccurate (any error)")].iloc[0]
    assert row["estimate"] == f"{100 * cli['systems']['a']['inaccurate']['estimate']:.1f} %"
    widths = next(d.value for d in at.dataframe if "good" in d.value.columns and "poor" in d.value.columns)
    first = widths[(widths["system"] == "a") & (widths["target"] == "Inaccurate (any error)")].iloc[0]
    assert float(first["good"]) < float(first["poor"])  # the better judge, the narrower interval
    lo, hi = cli["systems"]["a"]["inaccurate"]["ci"]
    assert float(first["good"]) == round(100 * (hi - lo), 1)


def test_the_assignment_page_draws_from_a_judges_uncertainty(sqlite_store, tmp_path):
    from sqlalchemy import select

    from annotator.store.schema import sample_draws
    synthetic(sqlite_store, tmp_path, n=120)
    at = page_test("assign", sqlite_store.url, user="lea", role="lead", project=PROJECT).run(timeout=120)
    assert at.selectbox(key="sample_judge").options == ["detectors", "good", "poor"]
    at.multiselect(key="sample_annotators").set_value(["ann"])
    at.multiselect(key="sample_systems").set_value(["a"])
    at.number_input(key="sample_size").set_value(20)
    at.selectbox(key="sample_layer").set_value("annotator:ann")
    at.selectbox(key="sample_judge").set_value("good")
    at.button(key="FormSubmitter:sample_form-Draw and queue").click().run(timeout=120)
    assert not at.exception and not at.error, [e.value for e in at.error]
    with sqlite_store.read() as conn:
        assert conn.execute(select(sample_draws.c.predictor)).scalars().all() == ["good"]
