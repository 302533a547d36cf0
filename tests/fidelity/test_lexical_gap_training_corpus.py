"""The lexical gap's cr from a project's training corpus (as the lexical-gap study takes it), named once.

Hand-made case with the TTR as the ratio's measure: the training project's references hold 4 tokens of
2 types (TTR 1/2), the project's own references 4 tokens of 4 types (TTR 1), and system S's captions 4 tokens of 2
types (TTR 1/2). So ld = 1 against the training corpus and 1/2 against the own references.
"""

from __future__ import annotations

import json

import pytest
from apptest_helpers import page_test, texts

from annotator import diversity as D
from annotator.cli import main
from annotator.diversity.correlation import project_correlations
from annotator.diversity.sources import STUDY_CR_NOTE, reference_corpus, set_training_corpus, training_corpus
from annotator.errors import InputError, NotFound, PermissionDenied
from annotator.io.human_scores import import_human_scores
from annotator.model import Caption, Item, Project, Reference
from annotator.store.projects import write_project


def run(store, capsys, *args):
    rc = main(["--db", store.url, *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def seed(store):
    with store.transaction() as conn:
        write_project(conn, Project("test", items=[
            Item(key="a.jpg", references=[Reference("red car")], captions=[Caption("S", "dog dog")]),
            Item(key="b.jpg", references=[Reference("blue bus")], captions=[Caption("S", "cat cat")]),
            Item(key="c.jpg", references=[Reference("x")], captions=[Caption("T", "cat dog")])]))
        write_project(conn, Project("train", items=[
            Item(key="t1.jpg", references=[Reference("dog cat")], captions=[Caption("M", "a a a")]),
            Item(key="t2.jpg", references=[Reference("cat dog")])]))


def ttr_ld(store, system="S"):
    return D.project_diversity(store, "test", gap=D.GapSettings(measure="ttr")).systems[system].ld


def test_every_lg_divides_by_the_named_training_corpus(store, capsys):
    seed(store)
    own = ttr_ld(store)
    assert reference_corpus(store, "test").note == STUDY_CR_NOTE
    rc, out, err = run(store, capsys, "diversity", "--project", "test", "--measure", "ttr")
    assert rc == 0, err
    assert out.splitlines()[1] == f"note: {STUDY_CR_NOTE}"

    rc, out, err = run(store, capsys, "settings", "--project", "test", "--training-corpus", "train", "--json")
    assert rc == 0, err
    assert json.loads(out)["training_corpus"] == {"project": "train", "system": None}
    assert training_corpus(store, "test").project == "train"

    # references: "red car blue bus x" → TTR 5/5; against them S (4 tokens, 2 types) has ld 1/2 ...
    assert own == pytest.approx(0.5)
    # ... against the training references "dog cat cat dog" (TTR 1/2) ld is 1
    assert ttr_ld(store) == pytest.approx(1.0)
    rc, out, err = run(store, capsys, "diversity", "--project", "test", "--measure", "ttr", "--json")
    assert rc == 0, err
    data = json.loads(out)
    cr = data["settings"]["reference_corpus"]
    assert (cr["kind"], cr["project"], cr["training"]) == ("references", "train", True) and "note" not in cr
    assert cr["description"] == "references of project 'train' (2 texts), the project's training corpus"
    assert data["systems"]["S"]["ld"] == pytest.approx(1.0)
    rc, out, _ = run(store, capsys, "diversity", "--project", "test", "--measure", "ttr")
    assert "note:" not in out.splitlines()[1]
    # one run may still choose another cr
    rc, out, _ = run(store, capsys, "diversity", "--project", "test", "--measure", "ttr", "--reference-project", "test",
                     "--json")
    assert json.loads(out)["systems"]["S"]["ld"] == pytest.approx(0.5)

    # correlate reads the same cr
    import_human_scores(store, "test", b"item,system,q\na.jpg,S,1\nb.jpg,S,2\nc.jpg,T,3\n")
    corr = project_correlations(store, "test", compute_metrics=None, gap=D.GapSettings(measure="ttr"))
    assert corr.systems["S"][0] == pytest.approx(1.0)
    assert "training corpus" in corr.reference and STUDY_CR_NOTE not in corr.notes

    # a system's captions of the training project, then forgetting it
    rc, out, err = run(store, capsys, "settings", "--project", "test", "--training-corpus", "train",
                       "--training-system", "M")
    assert rc == 0 and "captions of system 'M' in project 'train'" in out
    assert reference_corpus(store, "test").texts == ("a a a",)
    rc, out, err = run(store, capsys, "settings", "--project", "test", "--no-training-corpus")
    assert rc == 0 and "training corpus (cr of ld and Lg): none" in out
    assert training_corpus(store, "test") is None and ttr_ld(store) == pytest.approx(0.5)


def test_bad_training_corpus_is_refused_and_changes_nothing(store, capsys):
    seed(store)
    rc, _, err = run(store, capsys, "settings", "--project", "test", "--training-corpus", "nope")
    assert rc != 0 and "nope" in err
    rc, _, err = run(store, capsys, "settings", "--project", "test", "--training-corpus", "test")
    assert rc == 2 and "own references" in err
    rc, _, err = run(store, capsys, "settings", "--project", "test", "--training-corpus", "train",
                     "--training-system", "Z")
    assert rc == 2 and "'Z'" in err
    rc, _, err = run(store, capsys, "settings", "--project", "test", "--training-system", "M")
    assert rc == 2 and "--training-corpus" in err
    assert training_corpus(store, "test") is None
    with pytest.raises(PermissionDenied):
        set_training_corpus(store, "test", "train", actor_role="annotator")
    with pytest.raises(InputError):
        set_training_corpus(store, "test", None, "M")
    # a stored name that no longer resolves (here written directly) gives a clear message
    from annotator.store.project_settings import set_setting
    from annotator.store.projects import project_id
    with store.transaction() as conn:
        set_setting(conn, project_id(conn, "test"), "lexical_gap_training_corpus", '{"project": "gone", "system": null}')
    with pytest.raises(NotFound, match="training corpus named in project 'test'"):
        reference_corpus(store, "test")


def test_page_uses_the_training_corpus(sqlite_store):
    seed(sqlite_store)
    at = page_test("diversity", sqlite_store.url, user="ana", role="analyst", project="test").run()
    assert not at.exception
    assert STUDY_CR_NOTE in texts(at).replace("\\", "")
    set_training_corpus(sqlite_store, "test", "train")
    at = page_test("diversity", sqlite_store.url, user="ana2", role="analyst", project="test").run()
    assert not at.exception
    shown = texts(at).replace("\\", "")
    assert "references of project 'train' (2 texts), the project's training corpus" in shown
    assert STUDY_CR_NOTE not in shown
    measures = next(df.value for df in at.dataframe if df.value.columns[0] == "Corpus").set_index("Corpus")
    assert list(measures.index)[0] == "references of train"
    assert measures.loc["references of train", "TTR"] == "0.500"  # "dog cat cat dog", as the page writes it
