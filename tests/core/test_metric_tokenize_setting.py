"""The project's metric tokenisation (SQLite and PostgreSQL): raw text by default, exactly as before; coco-caption's
PTB tokenizer when the project says so, equal to pycocoevalcap's scorers on PTBTokenizer output; the mode is printed
above every table and carried in every signature."""

from __future__ import annotations

import json
import shutil

import pytest
from metric_helpers import coco

from annotator.cli import main
from annotator.errors import InputError, PermissionDenied
from annotator.metric_settings import project_tokenize, set_project_tokenize, tokenize_header
from annotator.metrics.synthetic import synthetic_corpus
from annotator.model import Caption, Item, Project, Reference
from annotator.rescoring import by_type_table, format_by_type, rescore_lines
from annotator.store.projects import write_project

pytest.importorskip("pycocoevalcap")
needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="PTB tokenisation needs Java")

METRICS = "bleu,rouge,cider"
N = 40


@pytest.fixture
def project(store):
    hyps, refs = synthetic_corpus(N, 4, seed=5, odd_rate=0.2)
    # Case and punctuation that the two modes treat differently.
    hyps[0], refs[0][0] = "A Dog, running!", "a dog running ."
    hyps[1] = "Two MEN (in red) ride bikes..."
    with store.transaction() as conn:
        write_project(conn, Project(name="tok", items=[
            Item(key=f"i{k:02d}", references=[Reference(r) for r in refs[k]], captions=[Caption("sys", hyps[k])])
            for k in range(N)]))
    return store, hyps, refs


def ptb_coco(hyps, refs):
    """pycocoevalcap's own pipeline: PTBTokenizer on captions and references, then its scorers."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
    tok = PTBTokenizer()
    gts = tok.tokenize({i: [{"caption": r} for r in rs] for i, rs in enumerate(refs)})
    res = tok.tokenize({i: [{"caption": h}] for i, h in enumerate(hyps)})
    return coco([res[i][0] for i in range(len(hyps))], [gts[i] for i in range(len(hyps))])


def cli(store, capsys, *argv):
    code = main(["--db", store.url, *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_setting_defaults_to_raw_text_and_only_a_lead_changes_it(project, capsys):
    store, _, _ = project
    assert project_tokenize(store, "tok") == "none"
    with pytest.raises(PermissionDenied):
        set_project_tokenize(store, "tok", "ptb", actor_role="annotator")
    with pytest.raises(InputError, match="unknown metric tokenisation 'moses'; choose one of none, ptb"):
        set_project_tokenize(store, "tok", "moses")
    assert project_tokenize(store, "tok") == "none"
    code, out, _ = cli(store, capsys, "settings", "--project", "tok", "--metric-tokenize", "ptb", "--json")
    assert code == 0 and json.loads(out)["metric_tokenize"] == "ptb"
    assert project_tokenize(store, "tok") == "ptb"
    code, out, _ = cli(store, capsys, "settings", "--project", "tok")
    assert "metric tokenisation: ptb (coco-caption's PTB tokenizer" in out


def test_raw_mode_is_what_it_was(project, capsys):
    store, hyps, refs = project
    want = coco(hyps, refs)
    code, out, _ = cli(store, capsys, "rescore", "--project", "tok", "--system", "sys", "--metrics", METRICS, "--json")
    got = json.loads(out)
    assert code == 0 and {k: got[k] for k in want} == want and got["tokenize"] == "none"
    assert all("|tok=none|" in s for s in got["signatures"].values())
    code, out, _ = cli(store, capsys, "rescore", "--project", "tok", "--system", "sys", "--metrics", METRICS)
    assert out.splitlines()[0] == ("tok / sys (stored captions, 40 captions); tokenisation: none (raw text, case and "
                                   "punctuation kept; reproduces the error-analysis study's released scores)")
    # A project set to PTB still scores raw text when asked to, bit for bit.
    set_project_tokenize(store, "tok", "ptb")
    code, out, _ = cli(store, capsys, "rescore", "--project", "tok", "--system", "sys", "--metrics", METRICS,
                       "--tokenize", "none", "--json")
    assert {k: json.loads(out)[k] for k in want} == want


@needs_java
@pytest.mark.java
def test_tokenised_mode_equals_pycocoevalcap_with_its_ptb_tokenizer(project, capsys):
    store, hyps, refs = project
    want = ptb_coco(hyps, refs)
    assert want != coco(hyps, refs)  # the two modes differ on this corpus
    set_project_tokenize(store, "tok", "ptb")
    code, out, _ = cli(store, capsys, "rescore", "--project", "tok", "--system", "sys", "--metrics", METRICS, "--json")
    got = json.loads(out)
    assert code == 0 and {k: got[k] for k in want} == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert got["tokenize"] == "ptb" and all("|tok=ptb|" in s for s in got["signatures"].values())
    code, out, _ = cli(store, capsys, "rescore", "--project", "tok", "--system", "sys", "--metrics", METRICS)
    assert out.splitlines()[0].endswith(tokenize_header("ptb")) and "|tok=ptb|" in out
    # The by-type table and a rescored caption file read the same setting.
    table = by_type_table(store, "tok", "sys", metrics=["Bleu_4", "CIDEr"], resamples=10)
    assert table["meta"]["tokenize"] == "ptb"
    assert table["baseline"] == pytest.approx({k: want[k] for k in ("Bleu_4", "CIDEr")}, rel=1e-12)
    assert all("|tok=ptb|" in s for s in table["meta"]["signatures"].values())
    text = format_by_type(table)
    assert text.splitlines()[0] == f"tok / sys; {tokenize_header('ptb')}" and "|tok=ptb|" in text
    lines = rescore_lines(store, "tok", hyps, system="sys", resamples=10, metrics=["CIDEr"])
    assert lines["tokenize"] == "ptb" and lines["scores"]["CIDEr"] == pytest.approx(want["CIDEr"], rel=1e-12)
    raw = rescore_lines(store, "tok", hyps, system="sys", resamples=10, metrics=["CIDEr"], tokenize="none")
    assert raw["tokenize"] == "none" and raw["scores"]["CIDEr"] == coco(hyps, refs)["CIDEr"]


def test_by_type_table_prints_the_raw_mode(project):
    store, hyps, refs = project
    table = by_type_table(store, "tok", "sys", metrics=["Bleu_4", "CIDEr"], resamples=10)
    assert table["meta"]["tokenize"] == "none"
    assert table["baseline"] == {k: coco(hyps, refs)[k] for k in ("Bleu_4", "CIDEr")}
    assert format_by_type(table).splitlines()[0] == f"tok / sys; {tokenize_header('none')}"
