"""AppTest of the Judges page: the command line's figures on the sample project (which ships a judge), the
suggestions setting, and a disagreement opened on Adjudication."""

from __future__ import annotations

import json

import pytest

from annotator.cli import main
from annotator.judges.suggestions import suggestion_judge
from annotator.sample import load_sample
from tests.apptest_helpers import app_test, page_test, texts


@pytest.fixture
def sample(sqlite_store):
    load_sample(sqlite_store)
    return sqlite_store


def test_the_sample_judge_shows_the_command_lines_figures(sample, capsys):
    at = page_test("judges", sample.url, user="ana", role="analyst", project="sample").run(timeout=120)
    assert not at.exception
    assert main(["--db", sample.url, "judge", "report", "--project", "sample", "--layer", "adjudicated",
                 "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    overview = at.dataframe[0].value
    assert list(overview["judge"]) == ["detectors", "sample-vlm"]
    vlm = next(j for j in cli["judges"] if j["judge"] == "sample-vlm")
    row = overview[overview["judge"] == "sample-vlm"].iloc[0]
    assert row["kappa"] == f"{vlm['kappa']:.3f}" and row["ECE"] == f"{vlm['ece']:.3f}"
    assert (row["kappa low"], row["kappa high"]) == tuple(f"{x:.3f}" for x in vlm["kappa_ci"])
    assert "model hand-written example (no model was run), prompt 1, k 5" in [t.value for t in at.text]
    metrics = {(m.label, m.value) for m in at.metric}
    assert ("Cohen's kappa", f"{vlm['kappa']:.3f}") in metrics and ("Accuracy", f"{vlm['accuracy']:.3f}") in metrics
    kappas = at.dataframe[1].value
    assert {"judge", "annotators", "judges"} == set(kappas["kind"])  # beside the human-human kappa
    vlm_rows = kappas[kappas["rater"] == "sample-vlm"]
    assert list(vlm_rows["against"]) == ["adjudicated", "sample-ann", "sample-ben"]
    assert vlm_rows.iloc[0]["kappa"] == f"{vlm['kappa']:.3f}"
    titles = [json.loads(c.proto.spec).get("title") for c in at.get("vega_lite_chart")]
    assert titles == ["Confusion", "Reliability"] * 2  # per judge
    # an analyst reads the disagreements but neither opens them on Adjudication nor changes suggestions
    assert not [b for b in at.button if b.label == "Open on Adjudication"]
    assert "Only leads and admins change this." in texts(at)


def test_a_lead_turns_suggestions_on_and_opens_a_disagreement(sample):
    at = app_test(sample.url, user="lea", role="lead", project="sample")
    at.switch_page("pages/judges.py").run(timeout=120)
    at.selectbox(key="jdg_suggest_choice").set_value("sample-vlm")
    at.button(key="jdg_suggest_save").click().run(timeout=120)
    assert not at.exception
    assert suggestion_judge(sample, "sample") == "sample-vlm"
    at.multiselect(key="jdg_judges").set_value(["sample-vlm"]).run(timeout=120)
    first = at.selectbox(key="jdg_open_sample-vlm").value
    at.button(key="jdg_go_sample-vlm").click().run(timeout=120)
    assert not at.exception
    # the app went on to Adjudication, which opened that caption (though its annotators agree on it)
    assert at.selectbox(key="adj_caption").value == first and at.session_state["adj_opened"] == first


def test_the_adjudication_page_opens_the_caption_asked_for(sample):
    from annotator.store.projects import load_project
    cid = next(c.caption_id for it in load_project(sample, "sample").items for c in it.captions
               if c.text.startswith("An orange flower made of paper"))  # both annotators agree: not in the queue
    at = page_test("adjudicate", sample.url, user="lea", role="lead", project="sample")
    at.session_state["adj_open_caption"] = cid
    at.run(timeout=120)
    assert not at.exception
    assert at.selectbox(key="adj_caption").value == cid
    assert "An orange flower made of paper in front of green leaves" in texts(at) + "".join(
        str(h.proto.body) for h in at.get("html"))
