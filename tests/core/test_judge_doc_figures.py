"""The sample project's judge figures that docs/judges.md states, read from the doc and checked against the report
the command line prints (a doc that drifts fails here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotator.judges.report import judge_report
from annotator.sample import load_sample

DOC = " ".join((Path(__file__).resolve().parents[2] / "docs" / "judges.md").read_text(encoding="utf-8").split())


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    from annotator.store import open_store
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('doc') / 'sample.db'}")
    load_sample(store)
    yield store
    store.dispose()


def test_the_overview_table_is_the_reports(sample):
    report = judge_report(sample, "sample", "adjudicated")
    for j in report.judges:
        row = re.search(rf"\| {re.escape(j.judge)} \| [^|]+ \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) – ([\d.]+) \| "
                        r"([\d.]+) \|", DOC)
        assert row is not None, j.judge
        n, acc, kappa, lo, hi, ece = row.groups()
        assert int(n) == j.n == report.captions == 14
        a = j.vs_layer
        assert (acc, kappa, lo, hi, ece) == tuple(f"{x:.3f}" for x in (a.accuracy, a.kappa, *a.kappa_ci, j.ece))
    (human,) = report.human
    assert f"kappa with each other is {human.kappa:.3f} ({human.kappa_ci[0]:.3f} – {human.kappa_ci[1]:.3f})" \
        .replace("-", "−") in DOC
    (between,) = report.between
    assert f"with a kappa of {between.kappa:.3f}" in DOC
    vlm = report.judge("sample-vlm")
    assert [(d.item, f"{d.p_inaccurate:.2f}") for d in vlm.disagreements] == [("flower.jpg", "0.20"),
                                                                              ("flower.jpg", "0.40")]


def test_the_figures_against_one_annotator(sample):
    vlm = judge_report(sample, "sample", "annotator:sample-ann", ["sample-vlm"]).judge("sample-vlm").vs_layer
    assert f"`sample-vlm` has accuracy {vlm.accuracy:.3f} and kappa {vlm.kappa:.3f}" in DOC
