"""rescore(), IncrementalScorer, delta_table() and merge_variants()."""

from __future__ import annotations

import shutil

import pytest
from metric_helpers import coco

from annotator.metrics import (IncrementalScorer, Meteor, MetricInputError, delta_table, merge_variants, meteor,
                               rescore)
from annotator.metrics.synthetic import perturb, synthetic_corpus

pytest.importorskip("pycocoevalcap")

HAS_JAVA = shutil.which("java") is not None
needs_java = pytest.mark.skipif(not HAS_JAVA, reason="METEOR and PTB tokenisation need Java (no `java` on PATH)")
ALL_KEYS = ["Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr"]


def data(n=150, seed=0):
    hyps, refs = synthetic_corpus(n, 5, seed, odd_rate=0.15)
    hyps[0], hyps[-1] = "", "dog"
    return hyps, refs


def test_rescore_equals_pycocoevalcap():
    hyps, refs = data()
    got = rescore(hyps, refs, metrics=["bleu", "rouge", "cider"])
    want = coco(hyps, refs)
    assert {k: got[k] for k in want} == want
    assert list(got)[:6] == ["Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "ROUGE_L", "CIDEr"]
    assert set(got["signatures"]) == {"BLEU", "ROUGE-L", "CIDEr-D"}
    assert got["notes"] == [] and got["n"] == 150 and got["tokenize"] == "none"


@needs_java
@pytest.mark.slow
@pytest.mark.java
def test_rescore_all_four_with_meteor():
    hyps, refs = data(120, 1)
    got = rescore(hyps, refs, per_segment=True)
    assert list(got)[:7] == ALL_KEYS
    want = Meteor().corpus_score(hyps, refs)  # coco-caption's own protocol: one EVAL over every caption
    assert got["METEOR"] == want.value
    assert got["per_segment"]["METEOR"] == want.per_segment
    assert len(got["per_segment"]["Bleu_4"]) == 120


@needs_java
@pytest.mark.java
def test_rescore_with_ptb_tokenisation():
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
    hyps, refs = data(100, 2)
    tok = PTBTokenizer()
    gts = tok.tokenize({i: [{"caption": r} for r in rs] for i, rs in enumerate(refs)})
    res = tok.tokenize({i: [{"caption": h}] for i, h in enumerate(hyps)})
    want = coco([res[i][0] for i in range(100)], [gts[i] for i in range(100)])
    got = rescore(hyps, refs, metrics=["bleu", "rouge", "cider"], tokenize="ptb")
    assert {k: got[k] for k in want} == want
    assert got["tokenize"] == "ptb" and all("tok=ptb" in s for s in got["signatures"].values())


@pytest.mark.java
def test_incremental_equals_full_rescore_after_edits():
    hyps, refs = data(150, 3)
    metrics = ["bleu", "meteor", "rouge", "cider"] if HAS_JAVA else ["bleu", "rouge", "cider"]
    inc = IncrementalScorer(hyps, refs, metrics=metrics)
    base = inc.scores()
    assert base == inc.baseline()
    edits = [(3, "a man in a black shirt is standing in front of a building"), (0, "a dog runs"),
             (149, ""), (3, "a woman in a red shirt"), (77, hyps[78]), (10, "zebra")]
    for i, text in edits:
        inc.replace(i, text)
    inc.revert(10)
    current = list(hyps)
    for i, text in edits:
        current[i] = text
    current[10] = hyps[10]
    assert inc.hyps == current
    assert inc.changed == [0, 3, 77, 149]
    full = rescore(current, refs, metrics=metrics)
    now = inc.scores()
    for key in (ALL_KEYS if HAS_JAVA else [k for k in ALL_KEYS if k != "METEOR"]):
        assert now[key] == full[key], key
    delta = inc.delta()
    assert all(delta[k] == now[k] - base[k] for k in delta)
    # replacing with the baseline text is a revert; reset undoes everything
    inc.replace(0, hyps[0])
    assert inc.changed == [3, 77, 149]
    assert inc.reset() == base and inc.changed == []


def test_incremental_caption_scores_and_bootstrap():
    hyps, refs = data(60, 4)
    inc = IncrementalScorer(hyps, refs, metrics=["bleu", "rouge", "cider"])
    inc.replace(5, refs[5][0])  # copy a reference: every per-caption score goes up or stays
    cs = inc.caption_scores(5)
    assert set(cs) == {"baseline", "current"}
    assert cs["current"]["ROUGE_L"] == 1.0
    assert cs["current"]["Bleu_1"] >= cs["baseline"]["Bleu_1"]
    full = rescore(inc.hyps, refs, metrics=["rouge"], per_segment=True)
    assert cs["current"]["ROUGE_L"] == full["per_segment"]["ROUGE_L"][5]
    boot = inc.bootstrap(resamples=200, seed=1)
    assert boot["ROUGE_L"]["delta"] == pytest.approx(inc.delta()["ROUGE_L"])
    with pytest.raises(MetricInputError):
        inc.replace(60, "x")


def test_delta_table():
    hyps, refs = data(150, 5)
    a = perturb(hyps, 0.1, seed=1)
    b = list(hyps)
    for i in range(0, 150, 7):
        b[i] = refs[i][1]  # "corrections" that copy a reference
    out = delta_table(hyps, refs, {"noise": a, "fix": b}, seed=4, resamples=300, metrics=["bleu", "rouge", "cider"])
    keys = ["Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "ROUGE_L", "CIDEr"]
    base = rescore(hyps, refs, metrics=["bleu", "rouge", "cider"])
    assert out["baseline"] == {k: base[k] for k in keys}
    for name, hy in (("noise", a), ("fix", b)):
        row = out["types"][name]
        full = rescore(hy, refs, metrics=["bleu", "rouge", "cider"])
        assert row["scores"] == {k: full[k] for k in keys}
        assert row["delta"] == {k: full[k] - base[k] for k in keys}
        assert row["changed"] == sum(x != y for x, y in zip(hy, hyps))
        for k in keys:
            lo, hi = row["ci"][k]
            assert lo <= hi and 0.0 <= row["p"][k] <= 1.0
    assert all(v > 0 for v in out["types"]["fix"]["delta"].values())
    assert all(v == 0.0 for v in out["types"]["fix"]["p"].values())
    # all corrections together: here the two variants may touch the same caption
    merged, conflicts = merge_variants(hyps, {"noise": a, "fix": b})
    full = rescore(merged, refs, metrics=["bleu", "rouge", "cider"])
    assert out["all"]["scores"] == {k: full[k] for k in keys}
    assert out["all"]["conflicts"] == conflicts
    again = delta_table(hyps, refs, {"noise": a, "fix": b}, seed=4, resamples=300, metrics=["bleu", "rouge", "cider"])
    assert again == out
    assert delta_table(hyps, refs, {"noise": a}, resamples=50, metrics=["bleu"], combined=False)["all"] is None


def test_merge_variants():
    base = ["a man in a red shirt rides a bike", "a dog", "two cats", "a girl sits"]
    colour = ["a man in a blue shirt rides a bike", "a dog", "two cats", "a boy sits"]
    gender = ["a woman in a red shirt rides a bike", "a dog", "three cats", "a woman sits"]
    merged, conflicts = merge_variants(base, {"colour": colour, "gender": gender})
    assert merged[0] == "a woman in a blue shirt rides a bike"  # edits to different words combine
    assert merged[1] == "a dog" and merged[2] == "three cats"
    assert merged[3] == "a boy sits"  # same word edited differently: first type wins, reported
    assert conflicts == [{"index": 3, "types": ["colour", "gender"]}]
    same, none = merge_variants(base, {"x": colour, "y": colour})
    assert same == colour and none == []
    ins, _ = merge_variants(["a dog runs"], {"x": ["a big dog runs"], "y": ["a dog runs fast"]})
    assert ins == ["a big dog runs fast"]
    with pytest.raises(MetricInputError):
        merge_variants(base, {"short": base[:2]})


def test_without_java_meteor_is_reported_as_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(meteor, "POOL", meteor._Pool())
    meteor.clear_cache()
    hyps, refs = data(40, 6)
    got = rescore(hyps, refs)
    assert got["METEOR"] is None
    assert any("METEOR" in n and "Java" in n for n in got["notes"])
    assert got["Bleu_4"] == coco(hyps, refs)["Bleu_4"]
    inc = IncrementalScorer(hyps, refs)
    assert inc.scores()["METEOR"] is None and inc.notes
    assert inc.replace(1, "a cat")["ROUGE_L"] is not None
    table = delta_table(hyps, refs, {"x": perturb(hyps, 0.3)}, resamples=50)
    assert table["baseline"]["METEOR"] is None and "METEOR" not in table["types"]["x"]["delta"]


def test_bad_input():
    with pytest.raises(MetricInputError):
        rescore(["a"], [["a"]], metrics=["bleurt"])
    with pytest.raises(MetricInputError):
        rescore(["a"], [["a"]], tokenize="moses")
    with pytest.raises(MetricInputError):
        rescore(["a", "b"], [["a"]])
