"""The reference corpus cr of ld and Lg: the project's references by default, or another corpus, recorded."""

from __future__ import annotations

import json

import pytest
from apptest_helpers import page_test, texts
from test_diversity_helpers import HUMAN_CAPTIONS, SPARSE_A, SPARSE_B, run_cli as run

from annotator import diversity as D
from annotator.diversity.sources import ReferenceCorpus, reference_corpus
from annotator.errors import InputError, NotFound
from annotator.model import Caption, Item, Project, Reference
from annotator.store.projects import write_project

TTR_GAP = D.GapSettings(measure="ttr")


def write(store, name, items):
    with store.transaction() as conn:
        write_project(conn, Project(name, items=items))


def test_ld_and_lg_follow_the_chosen_reference_corpus(tmp_path):
    """Hand-computed with TTR as L: the system "a a b b" has TTR 1/2.

    Against the varied references "a b c d" (TTR 1) ld = 0.5 and
    Lg = 1 / (1 + e^{5 · 0.31}) = 0.175087; against its own source corpus
    "a a a b" (TTR 1/2) ld = 1 and Lg = 1 / (1 + e^{-5 · 0.19}) = 0.721116:
    a system that keeps the diversity of the corpus it learnt from scores 1.
    """
    system = {"S": ["a a", "b b"]}
    varied = D.diversity_report(ReferenceCorpus("references", ("a b", "c d"), project="p", own=True), system,
                                gap=TTR_GAP)
    assert varied.systems["S"].ld == 0.5
    assert varied.systems["S"].lexical_gap == pytest.approx(0.175087, abs=1e-6)
    source = tmp_path / "train.txt"
    source.write_text("a a\n\n a b \n")
    cr = reference_corpus(None, "p", file=source)
    assert (cr.kind, cr.texts, cr.file, cr.label) == ("file", ("a a", " a b "), "train.txt", "train.txt")
    own = D.diversity_report(cr, system, gap=TTR_GAP)
    assert own.systems["S"].ld == 1.0
    assert own.systems["S"].lexical_gap == pytest.approx(0.721116, abs=1e-6)
    assert own.references.name == "train.txt" and own.references.texts == 2
    assert own.to_dict()["settings"]["reference_corpus"] == {
        "kind": "file", "project": None, "system": None, "file": "train.txt", "texts": 2,
        "description": "text file 'train.txt' (2 texts)"}
    settings = own.settings_frame().set_index("setting")["value"]
    assert settings["reference corpus (cr)"] == "text file 'train.txt' (2 texts)"


def seed(store):
    write(store, "div", [Item(key=f"im{i:02d}.jpg", references=[Reference(HUMAN_CAPTIONS[i])],
                              captions=[Caption("A", SPARSE_A[i]), Caption("B", SPARSE_B[i])]) for i in range(20)])
    write(store, "other", [Item(key=f"o{i}.jpg", references=[Reference(SPARSE_B[i]), Reference(SPARSE_A[i])],
                                captions=[Caption("C", HUMAN_CAPTIONS[i])]) for i in range(20)])


def test_stored_choices(store):
    seed(store)
    default = D.project_diversity(store, "div")
    assert default.reference.own and default.references.name == "references"
    assert default.describe_reference() == "references of project 'div' (20 texts)"
    other = D.project_diversity(store, "div", reference=reference_corpus(store, "div", reference_project="other"))
    want = D.diversity_report([t for i in range(20) for t in (SPARSE_B[i], SPARSE_A[i])],
                              {"A": SPARSE_A, "B": SPARSE_B})
    assert other.references.measures == want.references.measures
    assert other.systems["A"].ld == want.systems["A"].ld
    assert other.references.name == "references of other"
    captions = reference_corpus(store, "div", reference_project="other", system="C")
    assert captions.texts == tuple(HUMAN_CAPTIONS[:20]) and captions.describe() == (
        "captions of system 'C' in project 'other' (20 texts)")
    same_project = reference_corpus(store, "div", system="B")
    assert same_project.project == "div" and same_project.label == "B (div)"
    with pytest.raises(NotFound):
        reference_corpus(store, "div", reference_project="nope")
    with pytest.raises(NotFound):
        reference_corpus(store, "div", system="Z")


def test_bad_reference_files(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\xfe broken\n")
    with pytest.raises(InputError, match="UTF-8") as err:
        reference_corpus(None, "p", file=bad)
    assert err.value.location == 2 and "bad.txt" in str(err.value)
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n")
    with pytest.raises(InputError, match="holds no text"):
        reference_corpus(None, "p", file=blank)
    with pytest.raises(InputError, match="not both"):
        reference_corpus(None, "p", file=blank, reference_project="q")
    with pytest.raises(InputError, match="cannot read"):
        reference_corpus(None, "p", file=tmp_path / "missing.txt")


def test_cli_records_the_reference_corpus(store, capsys, tmp_path):
    seed(store)
    rc, out, err = run(store, capsys, "diversity", "--project", "div", "--json")
    assert rc == 0, err
    assert json.loads(out)["settings"]["reference_corpus"]["description"] == "references of project 'div' (20 texts)"
    train = tmp_path / "train.txt"
    train.write_text("\n".join(SPARSE_A) + "\n")
    table = tmp_path / "out.csv"
    rc, out, err = run(store, capsys, "diversity", "--project", "div", "--reference-corpus", str(train),
                       "--output", str(table), "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["settings"]["reference_corpus"]["kind"] == "file"
    assert data["systems"]["A"]["ld"] == 1.0  # A's own captions as cr
    assert "# Settings" in table.read_text() and "text file 'train.txt' (20 texts)" in table.read_text()
    rc, out, err = run(store, capsys, "diversity", "--project", "div", "--reference-project", "other",
                       "--reference-system", "C")
    assert rc == 0, err
    assert out.splitlines()[0] == "reference corpus cr: captions of system 'C' in project 'other' (20 texts)"
    assert "C (other)" in out and "/ hdd(cr)" in out
    rc, _, err = run(store, capsys, "diversity", "--project", "div", "--reference-corpus", str(train),
                     "--reference-project", "other")
    assert rc == 2 and "not both" in err
    rc, _, err = run(store, capsys, "diversity", "--project", "div", "--reference-project", "nope")
    assert rc != 0 and "nope" in err
    rc, out, err = run(store, capsys, "correlate", "--project", "div", "--no-metrics", "--reference-corpus", str(train))
    assert rc == 2 and "no human scores" in err


def test_page_chooses_another_projects_references(sqlite_store):
    seed(sqlite_store)
    at = page_test("diversity", sqlite_store.url, user="ana", role="analyst", project="div").run()
    assert not at.exception
    assert "Reference corpus cr: references of project 'div' (20 texts)" in texts(at).replace("\\", "")
    at.radio(key="div_ref_kind").set_value("project").run()
    assert not at.exception
    at.selectbox(key="div_ref_project").set_value("other").run()
    assert not at.exception
    want = D.project_diversity(sqlite_store, "div", reference=reference_corpus(sqlite_store, "div",
                                                                               reference_project="other"))
    measures = next(df.value for df in at.dataframe if "LDR (ld)" in df.value.columns).set_index("Corpus")
    assert list(measures.index) == ["references of other", "A", "B"]
    assert measures.loc["A", "LDR (ld)"] == f"{want.systems['A'].ld:.3f}"  # as the page writes it
    assert "references of project 'other' (40 texts)" in texts(at).replace("\\", "")
