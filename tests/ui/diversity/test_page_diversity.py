"""The lexical-diversity page (AppTest): tables equal the core's numbers; roles; empty states."""

from __future__ import annotations

import pytest
from apptest_helpers import page_test, refused_showing_nothing, says_no_project, texts
from tests.core.test_diversity_helpers import HUMAN_CAPTIONS, SPARSE_A, SPARSE_B

from annotator import diversity as D
from annotator.io.human_scores import import_human_scores
from annotator.model import Caption, Item, Project, Reference
from annotator.store.projects import write_project


def seed(store, *, human=True):
    items = [Item(key=f"im{i:02d}.jpg", references=[Reference(HUMAN_CAPTIONS[i])],
                  captions=[Caption("A", SPARSE_A[i]), Caption("B", SPARSE_B[i])]) for i in range(20)]
    with store.transaction() as conn:
        write_project(conn, Project("div", items=items))
    if human:
        rows = "".join(f"{s},{i},{(i * 3 + len(s)) % 5}\n" for s in ("A", "B") for i in range(20))
        import_human_scores(store, "div", ("system,line,quality\n" + rows).encode())


def frame_by_title(at, first_col):
    """The tables starting with ``first_col`` side by side (the measures come in two tables that fit the page)."""
    import pandas as pd
    found = [df.value for df in at.dataframe if df.value.columns[0] == first_col]
    if not found:
        raise AssertionError(f"no table starting with {first_col!r}")
    return pd.concat([found[0]] + [f.drop(columns=[first_col]) for f in found[1:]
                                   if list(f[first_col]) == list(found[0][first_col])], axis=1)


def test_analyst_sees_measures_gap_and_correlations(sqlite_store):
    seed(sqlite_store)
    at = page_test("diversity", sqlite_store.url, user="ana", role="analyst", project="div").run()
    assert not at.exception
    assert not at.error
    want = D.project_diversity(sqlite_store, "div")
    measures = frame_by_title(at, "Corpus").set_index("Corpus")
    assert list(measures.index) == ["references", "A", "B"]
    assert measures.loc["A", "HD-D"] == f"{want.systems['A'].measures['hdd']:.3f}"
    assert measures.loc["references", "MTLD"] == f"{want.references.measures['mtld']:.3f}"
    assert measures.loc["B", "LDR (ld)"] == f"{want.systems['B'].ld:.3f}"
    gap = frame_by_title(at, "System").set_index("System")
    assert gap.loc["A", "Lg"] == f"{want.systems['A'].lexical_gap:.3f}"
    page_text = texts(at)
    assert "Correlation with human judgements" in page_text
    corr = [df.value for df in at.dataframe if "Spearman · Standard" in df.value.columns]
    assert corr, "the correlation table is missing"
    table = corr[0]
    assert "ld" in table.index and "Lg" in table.index and "BLEU-4" in table.index
    assert table.loc["ld", "Spearman · Standard"] == table.loc["Lg", "Spearman · Standard"]
    assert len(at.get("download_button")) == 2
    # Issue 24 item 15: every categorical colour of the charts is the shared palette's (readable on white).
    import json

    from annotator.ui.widgets.palette import PALETTE
    specs = [json.dumps(json.loads(c.proto.spec)) for c in at.get("vega_lite_chart")]
    assert specs and all('"range"' in sp for sp in specs if '"nominal"' in sp and '"color"' in sp)
    for sp in specs:
        for colour in ("#83c9ff", "#ffabab", "#7defa1", "#ffd16a"):  # Streamlit's light tints
            assert colour not in sp
    assert any(PALETTE[0] in sp for sp in specs)
    # analysts cannot import
    assert not [e for e in at.expander if e.label == "Import human scores"]


def test_changing_the_ratio_measure(sqlite_store):
    seed(sqlite_store, human=False)
    at = page_test("diversity", sqlite_store.url, user="lea", role="lead", project="div").run()
    at.selectbox(key="div_measure").set_value("mtld").run()
    assert not at.exception
    gap = frame_by_title(at, "System").set_index("System")
    want = D.project_diversity(sqlite_store, "div", gap=D.GapSettings(measure="mtld"))
    assert "MTLD" in gap.columns
    assert gap.loc["A", "ld"] == f"{want.systems['A'].ld:.3f}"
    # leads get the import form; without human scores there is an explanation instead of a table
    assert [e for e in at.expander if e.label == "Import human scores"]
    assert "No human scores are stored" in texts(at)


def test_annotators_are_refused(sqlite_store):
    seed(sqlite_store, human=False)
    refused_showing_nothing("diversity", sqlite_store.url, user="ann", role="annotator", project="div")


def test_no_project(sqlite_store):
    says_no_project("diversity", sqlite_store.url)


def test_the_gap_preset_sets_mu_and_alpha(sqlite_store):
    # The study's text (µ 0.81, α 5) by default; the fit to its Table 3 (µ 0.82, α 20.4) on choice.
    seed(sqlite_store)
    at = page_test("diversity", sqlite_store.url, user="ana", role="analyst", project="div").run()
    assert (at.number_input(key="div_mu").value, at.number_input(key="div_alpha").value) == (0.81, 5.0)
    at.selectbox(key="div_gap_preset").set_value("table3").run()
    assert not at.exception, at.exception
    assert (at.number_input(key="div_mu").value, at.number_input(key="div_alpha").value) == (0.82, 20.4)
