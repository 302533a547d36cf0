"""``annotator rescore`` on a stored project (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

import pytest
from metric_helpers import coco

from annotator.cli import main
from annotator.metrics.synthetic import synthetic_corpus
from annotator.model import Caption, Item, Project, Reference
from annotator.store.projects import write_project

pytest.importorskip("pycocoevalcap")

METRICS = "bleu,rouge,cider"  # METEOR through the CLI is covered by the scoring tests; here the store path matters


@pytest.fixture
def project(store):
    hyps, refs = synthetic_corpus(60, 4, seed=21, odd_rate=0.1)
    other, _ = synthetic_corpus(60, 4, seed=22)
    with store.transaction() as conn:
        write_project(conn, Project(name="demo", items=[Item(key=f"img{k:03d}", references=[Reference(r) for r in refs[k]])
                                                        for k in range(60)]))
    # sysA lists its captions in reverse item order, sysB in import order
    proj_a = Project(name="demo", items=[Item(key=f"img{k:03d}", captions=[Caption("sysA", hyps[k])])
                                         for k in reversed(range(60))])
    proj_b = Project(name="demo", items=[Item(key=f"img{k:03d}", captions=[Caption("sysB", other[k])]) for k in range(60)])
    for proj in (proj_a, proj_b):
        with store.transaction() as conn:
            write_project(conn, proj)
    return store, hyps, refs, other


def run(store, *args, capsys):
    code = main(["--db", store.url, "rescore", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_scores_stored_captions(project, capsys):
    store, hyps, refs, other = project
    code, out, _ = run(store, "--project", "demo", "--system", "sysA", "--metrics", METRICS, "--json", capsys=capsys)
    assert code == 0
    got = json.loads(out)
    want = coco(hyps[::-1], refs[::-1])  # scored in the system's line order (means are order-sensitive in the last bit)
    assert {k: got[k] for k in want} == want
    assert got["n"] == 60 and got["system"] == "sysA" and got["captions"] == "stored captions"
    code, out, _ = run(store, "--project", "demo", "--system", "sysB", "--metrics", METRICS, "--json", capsys=capsys)
    assert {k: json.loads(out)[k] for k in want} == coco(other, refs)


def test_caption_file_is_line_aligned_with_the_system(project, capsys, tmp_path):
    store, hyps, refs, other = project
    # sysA's line i is item 59 - i (its captions were written in reverse item order)
    lines = [other[59 - i] for i in range(60)]
    f = tmp_path / "caps.txt"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, _ = run(store, "--project", "demo", "--system", "sysA", "--captions", str(f), "--metrics", METRICS,
                       "--json", capsys=capsys)
    assert code == 0
    got = json.loads(out)
    want = coco(other[::-1], refs[::-1])
    assert {k: got[k] for k in want} == want
    assert got["captions"] == str(f)


def test_caption_file_errors(project, capsys, tmp_path):
    store, *_ = project
    short = tmp_path / "short.txt"
    short.write_text("a dog\n", encoding="utf-8")
    code, _, err = run(store, "--project", "demo", "--system", "sysA", "--captions", str(short), capsys=capsys)
    assert code == 2 and "short.txt" in err and "60" in err
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\xfe\n")
    code, _, err = run(store, "--project", "demo", "--system", "sysA", "--captions", str(bad), capsys=capsys)
    assert code == 2 and "bad.txt" in err and "line 2" in err
    code, _, err = run(store, "--project", "demo", "--system", "nope", capsys=capsys)
    assert code == 2 and "nope" in err


def test_readable_output(project, capsys):
    store, *_ = project
    code, out, _ = run(store, "--project", "demo", "--system", "sysA", "--metrics", "bleu", capsys=capsys)
    assert code == 0
    assert "Bleu_4" in out and "BLEU|n=4" in out and "ROUGE_L" not in out


def test_samples_carry_what_the_metrics_read(store, tmp_path):
    """The rescore command hands metrics samples: references, image size, gold boxes and, when asked, the image."""
    from annotator.commands.rescore import load_system
    from annotator.errors import InputError
    from annotator.metrics import Sample
    from annotator.model import Box
    dog = Box("1", "dog", 0, 0, 10, 10)
    with store.transaction() as conn:
        write_project(conn, Project(name="img", image_root=str(tmp_path), items=[
            Item(key="a", image="a.jpg", width=64, height=48, boxes=[dog], references=[Reference("a dog")],
                 captions=[Caption("s", "a dog runs")]),
            Item(key="b", image="b.jpg", width=32, height=32, captions=[Caption("s", "a cat")])]))
    hyps, samples, keys = load_system(store, "img", "s", frozenset({"boxes"}))
    assert hyps == ["a dog runs", "a cat"] and keys == ["a", "b"]
    assert samples == [Sample("a dog runs", ("a dog",), None, (64, 48), (dog,)), Sample("a cat", (), None, (32, 32))]
    _, samples, _ = load_system(store, "img", "s", frozenset({"image"}))
    assert [s.image for s in samples] == [str((tmp_path / "a.jpg").resolve()), str((tmp_path / "b.jpg").resolve())]
    with pytest.raises(InputError, match="item 'b' has no references, so system 's' cannot be scored"):
        load_system(store, "img", "s")
