"""Readability per system beside ld (the lexical-gap study's Section 3.4), on the CLI and in correlations.

The values are textstat's own functions on the corpus read as one text (each description a sentence); the
correlations with human scores are checked against scipy on the same pairs.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import textstat
from scipy import stats

from annotator.cli import main
from annotator.diversity import diversity_report
from annotator.diversity.correlation import project_correlations
from annotator.diversity.readability import READABILITY, corpus_text, readability
from annotator.io.human_scores import import_human_scores
from annotator.model import Caption, Item, Project, Reference
from annotator.store.projects import write_project

# Three systems of clearly different complexity (plain, middling, long words), four images.
SYSTEMS = {
    "plain": ["a dog runs", "a cat sits on a mat", "a man is on a bus", "two kids play"],
    "middle": ["A brown dog is running across the green grass.", "A small cat sitting quietly on a woven mat",
               "A man waiting patiently inside a crowded city bus", "Two children playing happily together!"],
    "ornate": ["An energetic terrier accelerating enthusiastically across manicured vegetation",
               "A contemplative feline luxuriating upon decorative upholstery",
               "A professional gentleman commuting aboard municipal transportation",
               "Adolescent siblings participating in recreational activities"],
}
REFS = ["A dog running on the grass.", "A cat on a mat.", "A man riding a bus.", "Children playing outside."]
QUALITY = {"plain": [2, 1, 2, 1], "middle": [4, 5, 4, 4], "ornate": [3, 3, 2, 3]}
FUNCTIONS = {"flesch_kincaid": textstat.flesch_kincaid_grade, "coleman_liau": textstat.coleman_liau_index,
             "dale_chall": textstat.dale_chall_readability_score, "ari": textstat.automated_readability_index}


def run(store, capsys, *args):
    rc = main(["--db", store.url, *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def seed(store, name="read"):
    items = [Item(key=f"im{i}.jpg", references=[Reference(REFS[i])],
                  captions=[Caption(s, texts[i]) for s, texts in SYSTEMS.items()]) for i in range(4)]
    with store.transaction() as conn:
        write_project(conn, Project(name, items=items))
    rows = "".join(f"im{i}.jpg,{s},{QUALITY[s][i]}\n" for s in SYSTEMS for i in range(4))
    import_human_scores(store, name, ("item,system,quality\n" + rows).encode())


def test_corpus_text_makes_each_description_a_sentence():
    assert corpus_text(["a dog runs", "  A cat.  ", "", "Why?"]) == "a dog runs. A cat. Why?"
    assert all(math.isnan(v) for v in readability(["", " . "]).values())


def test_readability_is_textstats_own_value_per_system():
    report = diversity_report(REFS, SYSTEMS)
    for name, texts in SYSTEMS.items():
        text = ". ".join(t.rstrip(".!") for t in texts) + "."  # the corpus as textstat is given it, built by hand
        text = text.replace("together.", "together!") if name == "middle" else text
        for key, fn in FUNCTIONS.items():
            assert report.systems[name].readability[key] == pytest.approx(fn(text), abs=1e-12), (name, key)
    for key, fn in FUNCTIONS.items():
        assert report.references.readability[key] == pytest.approx(fn(" ".join(REFS)), abs=1e-12)
    # the plain system reads as simpler than the ornate one on every measure
    assert all(report.systems["plain"].readability[k] < report.systems["ornate"].readability[k] for k in READABILITY)
    gap = report.gap_frame()
    assert list(gap.columns[-4:]) == list(READABILITY)


def test_cli_diversity_shows_readability(store, capsys):
    seed(store)
    rc, out, err = run(store, capsys, "diversity", "--project", "read", "--json")
    assert rc == 0, err
    data = json.loads(out)
    for name, texts in SYSTEMS.items():
        for key, fn in FUNCTIONS.items():
            assert data["systems"][name][key] == pytest.approx(fn(corpus_text(texts)), abs=1e-12)
    assert data["references"]["dale_chall"] == pytest.approx(textstat.dale_chall_readability_score(" ".join(REFS)))
    rc, out, _ = run(store, capsys, "diversity", "--project", "read")
    assert rc == 0 and "Flesch–Kincaid grade" in out and "Dale–Chall" in out and "ARI" in out


def test_correlation_of_readability_with_human_scores_matches_scipy(store, capsys):
    seed(store)
    report = project_correlations(store, "read", compute_metrics=None)
    per_system = {s: readability(t) for s, t in SYSTEMS.items()}
    human = [QUALITY[s][i] for s in SYSTEMS for i in range(4)]
    overall = report.rows[report.rows["scope"] == "overall"].set_index("measure")
    means = report.rows[report.rows["scope"] == "system means"].set_index("measure")
    for key in READABILITY:
        x = [per_system[s][key] for s in SYSTEMS for _ in range(4)]
        assert overall.loc[key, "spearman"] == pytest.approx(stats.spearmanr(x, human).statistic, abs=1e-12)
        assert overall.loc[key, "pearson"] == pytest.approx(stats.pearsonr(x, human).statistic, abs=1e-12)
        assert overall.loc[key, "kendall"] == pytest.approx(stats.kendalltau(x, human).statistic, abs=1e-12)
        assert overall.loc[key, "n"] == 12
        xm = [per_system[s][key] for s in SYSTEMS]
        ym = [np.mean(QUALITY[s]) for s in SYSTEMS]
        assert means.loc[key, "pearson"] == pytest.approx(stats.pearsonr(xm, ym).statistic, abs=1e-12)
    # the table a page shows carries the readability rows below ld and Lg
    assert list(report.table("overall", "quality").index[-4:]) == ["Flesch–Kincaid grade", "Coleman–Liau",
                                                                    "Dale–Chall", "ARI"]
    rc, out, err = run(store, capsys, "correlate", "--project", "read", "--no-metrics", "--json")
    assert rc == 0, err
    data = json.loads(out)
    rows = {r["measure"]: r for r in data["correlations"] if r["scope"] == "overall"}
    for key in READABILITY:
        assert rows[key]["spearman"] == pytest.approx(overall.loc[key, "spearman"], abs=1e-12)
        assert data["systems"]["ornate"][key] == pytest.approx(per_system["ornate"][key])
    rc, out, _ = run(store, capsys, "correlate", "--project", "read", "--no-metrics", "--overall-only")
    assert rc == 0 and "Coleman–Liau" in out
