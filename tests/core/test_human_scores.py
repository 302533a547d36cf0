"""Human scores: import (all-or-nothing, SQLite and PostgreSQL) and correlations with metrics, ld and Lg."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_diversity_helpers import HUMAN_CAPTIONS, SPARSE_A, SPARSE_B, run_cli as run

from annotator import diversity as D
from annotator.errors import InputError
from annotator.diversity.correlation import correlate, project_correlations, read_metric_scores
from annotator.io.human_scores import read_score_lines, read_scores_csv
from annotator.io.human_scores import import_human_scores
from annotator.model import Caption, Item, Project, Reference
from annotator.store.human_scores import scores_frame, score_names
from annotator.store.projects import table_counts, write_project

SYSTEMS = {"A": SPARSE_A, "B": SPARSE_B, "H": [c.lower() for c in HUMAN_CAPTIONS[::-1]]}


def seed(store, name="hs"):
    items = [Item(key=f"im{i:02d}.jpg", references=[Reference(HUMAN_CAPTIONS[i]), Reference(SPARSE_A[(i + 3) % 20])],
                  captions=[Caption(s, texts[i]) for s, texts in SYSTEMS.items()]) for i in range(20)]
    with store.transaction() as conn:
        write_project(conn, Project(name, items=items))


def b(text: str) -> bytes:
    return text.encode()


# --------------------------------------------------------------------------- reading and importing

def test_import_item_system_csv(store):
    seed(store)
    s = import_human_scores(store, "hs", b("Item,System,correctness,completeness\n"
                                           "im00.jpg,A,4,3.5\n"
                                           "im01.jpg,A,2,\n"
                                           "im00.jpg,B,1,1\n"), source="scores.csv")
    assert s.names == ("correctness", "completeness") and s.captions == 3 and s.values == 5
    df = scores_frame(store, "hs")
    got = {(r.item_key, r.system, r.name): r.value for r in df.itertuples()}
    assert got == {("im00.jpg", "A", "correctness"): 4.0, ("im00.jpg", "A", "completeness"): 3.5,
                   ("im01.jpg", "A", "correctness"): 2.0, ("im00.jpg", "B", "correctness"): 1.0,
                   ("im00.jpg", "B", "completeness"): 1.0}
    assert score_names(store, "hs") == ["completeness", "correctness"]


def test_import_line_keys_long_form_tsv_and_columns(store, tmp_path):
    seed(store)
    path = tmp_path / "long.tsv"
    path.write_text("system\tline\tname\tvalue\nB\t0\tq\t0.5\nB\t19\tq\t1\nH\t3\tother\t2\n")
    import_human_scores(store, "hs", path, columns=["q"])
    df = scores_frame(store, "hs")
    assert sorted(zip(df["system"], df["line_no"], df["value"])) == [("B", 0, 0.5), ("B", 19, 1.0)]
    # both keys present and consistent; the 'comment' column is not read when columns are given
    import_human_scores(store, "hs", b("system,line,item,q,comment\nA,5,im05.jpg,3,fine\n"), columns=["q"])
    assert scores_frame(store, "hs").query("system == 'A'")["line_no"].tolist() == [5]


def test_one_score_per_line(store, tmp_path):
    seed(store)
    path = tmp_path / "a.txt"
    path.write_text("\n".join(str(i / 10) for i in range(20)) + "\n")
    s = import_human_scores(store, "hs", path, system="A", name="quality")
    assert s.values == 20 and s.systems == ("A",)
    df = scores_frame(store, "hs")
    assert df["line_no"].tolist() == list(range(20))
    assert df["value"].tolist() == pytest.approx([i / 10 for i in range(20)])
    assert df["item_key"].tolist()[:2] == ["im00.jpg", "im01.jpg"]


def test_reimport_updates_and_replace(store):
    seed(store)
    import_human_scores(store, "hs", b("item,system,q\nim00.jpg,A,1\nim01.jpg,A,2\n"))
    import_human_scores(store, "hs", b("item,system,q\nim00.jpg,A,5\n"))
    df = scores_frame(store, "hs").set_index("item_key")
    assert df.loc["im00.jpg", "value"] == 5 and df.loc["im01.jpg", "value"] == 2
    s = import_human_scores(store, "hs", b("item,system,q\nim02.jpg,A,7\n"), replace=True)
    assert s.replaced == 2
    assert scores_frame(store, "hs")["item_key"].tolist() == ["im02.jpg"]


BAD_FILES = [
    ("item,system,q\nim00.jpg,A,1\nim01.jpg,Z,2\n", None, "line 3", "no system called 'Z'"),
    ("item,system,q\nim00.jpg,A,1\nim99.jpg,A,2\n", None, "line 3", "no item 'im99.jpg'"),
    ("system,line,q\nA,0,1\nA,20,2\n", None, "line 3", "out of range"),
    ("system,line,q\nA,-1,1\n", None, "line 2", "negative"),
    ("system,line,q\nA,x,1\n", None, "line 2", "not a whole number"),
    ("item,system,q\nim00.jpg,A,1\nim01.jpg,A,high\n", None, "line 3", "'high' is not a number"),
    ("item,system,q\nim00.jpg,A,inf\n", None, "line 2", "not a finite number"),
    ("item,system,q\nim00.jpg,A,1\nim00.jpg,A,2\n", None, "line 3", "already has a 'q' score on line 2"),
    ("item,system,q\nim00.jpg,A,1,9\n", None, "line 2", "4 fields but the header has 3"),
    ("caption,q\nx,1\n", None, "line 1", "needs a 'system' column"),
    ("system,line,item,q\nA,1,im00.jpg,3\n", None, "line 2", "name different captions"),
    ("item,system,q\n", None, "", "holds no score"),
    ("", None, "line 1", "empty"),
    ("1\n2\n\n4\n", "A", "line 3", "line is empty"),
    ("1\n2\n", "A", "line 2", "2 scores but system 'A' has 20 captions"),
    ("1\nabc\n", "A", "line 2", "'abc' is not a number"),
]


def test_bad_input_names_file_and_line_and_writes_nothing(store):
    seed(store)
    import_human_scores(store, "hs", b("item,system,q\nim10.jpg,B,9\n"))
    before = table_counts(store)
    old = scores_frame(store, "hs")
    for content, system, where, message in BAD_FILES:
        with pytest.raises(InputError) as err:
            import_human_scores(store, "hs", b(content), system=system, name="q" if system else None, source="bad.csv",
                                replace=True)
        text = str(err.value)
        assert text.startswith("bad.csv") and where in text and message in text, (content, text)
        assert table_counts(store) == before, content
        pd.testing.assert_frame_equal(scores_frame(store, "hs"), old)


def test_readers_without_store():
    recs = read_scores_csv(io.BytesIO(b"\xef\xbb\xbfsystem,line,a,b\nS,0,1,\n\nS,1,,2\n"), source="x.csv")
    assert [(r.line, r.index, r.name, r.value) for r in recs] == [(2, 0, "a", 1.0), (4, 1, "b", 2.0)]
    recs = read_score_lines(io.StringIO("0.5\r\n1\r\n"), "S", "q")
    assert [(r.index, r.value) for r in recs] == [(0, 0.5), (1, 1.0)]
    with pytest.raises(InputError, match="not UTF-8"):
        read_scores_csv(b"system,line,q\nS,0,\xff\n", source="x.csv")
    with pytest.raises(InputError, match="cannot read"):
        read_scores_csv("/nonexistent/file.csv")


# --------------------------------------------------------------------------- correlations

def frame(rows):
    return pd.DataFrame(rows, columns=["caption_id", "system", "name", "value"])


def test_coefficients_by_hand():
    # metric 1..5 against human 2,1,4,3,5: Σd² = 4 → ρ = 1 − 6·4/(5·24) = 0.8 (ranks = values, so r = 0.8 too);
    # Kendall: 8 concordant, 2 discordant pairs → τ = 0.6.
    human = frame([(i, "S", "q", v) for i, v in enumerate([2, 1, 4, 3, 5])])
    rep = correlate(human, {"M": {i: float(i + 1) for i in range(5)}})
    row = rep.rows.query("scope == 'overall' and measure == 'M'").iloc[0]
    assert row["n"] == 5
    assert row["spearman"] == pytest.approx(0.8) and row["pearson"] == pytest.approx(0.8)
    assert row["kendall"] == pytest.approx(0.6)
    assert 0 < row["spearman_p"] < 1 and 0 < row["kendall_p"] < 1
    # a missing metric value drops the pair; a constant column gives NaN
    rep = correlate(human, {"M": {0: 1.0, 1: 2.0, 2: 3.0, 3: 4.0}, "C": {i: 1.0 for i in range(5)}})
    rows = rep.rows.query("scope == 'overall'").set_index("measure")
    assert rows.loc["M", "n"] == 4 and math.isnan(rows.loc["C", "spearman"])


def test_weighted_metrics_and_diversity_measures():
    rng = np.random.default_rng(3)
    rows, metric = [], {}
    systems = {"A": (0.6, D.lexical_gap(0.6)), "B": (0.9, D.lexical_gap(0.9)), "C": (1.05, D.lexical_gap(1.05))}
    cid = 0
    for s, (ld, _) in systems.items():
        for _ in range(15):
            rows.append((cid, s, "q", float(rng.normal(ld, 0.3))))
            metric[cid] = float(rng.uniform(0, 1))
            cid += 1
    human = frame(rows)
    rep = correlate(human, {"M": metric}, systems)
    y = human["value"].to_numpy()
    m = np.array([metric[c] for c in human["caption_id"]])
    ld = np.array([systems[s][0] for s in human["system"]])
    lg = np.array([systems[s][1] for s in human["system"]])
    got = rep.rows.query("scope == 'overall'").set_index(["measure", "variant"])
    for key, x in ((("M", "standard"), m), (("M", "ldr"), m * ld), (("M", "gap"), m * lg),
                   (("ld", "standard"), ld), (("lexical_gap", "standard"), lg)):
        assert got.loc[key, "spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
        assert got.loc[key, "pearson"] == pytest.approx(stats.pearsonr(x, y).statistic)
        assert got.loc[key, "kendall"] == pytest.approx(stats.kendalltau(x, y).statistic)
        assert got.loc[key, "pearson_p"] == pytest.approx(stats.pearsonr(x, y).pvalue)
    # Lg is increasing in ld: identical rank correlations, different Pearson
    assert got.loc[("ld", "standard"), "spearman"] == got.loc[("lexical_gap", "standard"), "spearman"]
    assert got.loc[("ld", "standard"), "pearson"] != got.loc[("lexical_gap", "standard"), "pearson"]
    # within one system ld is constant and weighting by a constant changes nothing
    a = rep.rows.query("scope == 'A'").set_index(["measure", "variant"])
    assert math.isnan(a.loc[("ld", "standard"), "spearman"])
    for meth in ("spearman", "pearson", "kendall"):
        assert a.loc[("M", "gap"), meth] == pytest.approx(a.loc[("M", "standard"), meth])
    # one point per system
    means = rep.rows.query("scope == 'system means'").set_index(["measure", "variant"])
    assert means.loc[("ld", "standard"), "n"] == 3
    by_sys = human.groupby("system")["value"].mean()
    assert means.loc[("ld", "standard"), "pearson"] == pytest.approx(
        stats.pearsonr([systems[s][0] for s in by_sys.index], by_sys.to_numpy()).statistic)
    table = rep.table()
    assert list(table.index) == ["M", "ld", "Lg"]
    assert table.loc["M", ("Spearman", "M·Lg")] == pytest.approx(got.loc[("M", "gap"), "spearman"])
    assert math.isnan(table.loc["ld", ("Pearson", "M·ld")])


def test_project_correlations_with_coco_bleu(store):
    from pycocoevalcap.bleu.bleu import Bleu
    seed(store)
    rng = np.random.default_rng(0)
    lines = ["system,line,quality"] + [f"{s},{i},{rng.integers(1, 6)}" for s in SYSTEMS for i in range(20)]
    import_human_scores(store, "hs", b("\n".join(lines) + "\n"))
    rep = project_correlations(store, "hs", compute_metrics=("bleu",))
    # per-caption BLEU-4 from pycocoevalcap itself, then scipy, must give the same overall coefficients
    human = scores_frame(store, "hs")
    refs_of = {f"im{i:02d}.jpg": [HUMAN_CAPTIONS[i], SPARSE_A[(i + 3) % 20]] for i in range(20)}
    bleu4 = {}
    for s, texts in SYSTEMS.items():
        part = human[human["system"] == s]
        res = {k: [t] for k, t in enumerate(texts)}
        gts = {k: refs_of[f"im{k:02d}.jpg"] for k in range(20)}
        _, per = Bleu(4).compute_score(gts, res, verbose=0)
        for cid, line in zip(part["caption_id"], part["line_no"]):
            bleu4[cid] = per[3][line]
    x = np.array([bleu4[c] for c in human["caption_id"]])
    y = human["value"].to_numpy(dtype=float)
    row = rep.rows.query("scope == 'overall' and measure == 'Bleu_4' and variant == 'standard'").iloc[0]
    assert row["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, rel=1e-9)
    assert row["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic, rel=1e-9)
    div = D.project_diversity(store, "hs")
    assert rep.systems["A"] == (div.systems["A"].ld, div.systems["A"].lexical_gap)
    assert set(rep.scopes()) == {"overall", "system means", "A", "B", "H"}


def test_metric_scores_from_a_file(store):
    seed(store)
    import_human_scores(store, "hs", b("system,line,q\n" + "".join(f"A,{i},{i % 4}\n" for i in range(20))))
    metrics = read_metric_scores(store, "hs", b("system,line,mine\n" + "".join(f"A,{i},{(i % 4) * 2}\n" for i in range(20))))
    assert len(metrics["mine"]) == 20
    rep = project_correlations(store, "hs", metrics=metrics)
    row = rep.rows.query("scope == 'overall' and measure == 'mine' and variant == 'standard'").iloc[0]
    assert row["spearman"] == pytest.approx(1.0) and row["pearson"] == pytest.approx(1.0)
    with pytest.raises(InputError, match="no human scores"):
        correlate(pd.DataFrame(columns=["caption_id", "system", "name", "value"]))


def test_cli_correlate_and_human_scores(store, capsys, tmp_path):
    seed(store)
    human = tmp_path / "human.csv"
    human.write_text("item,system,quality\n" + "".join(f"im{i:02d}.jpg,{s},{(i * 7 + len(s)) % 5}\n"
                                                         for s in SYSTEMS for i in range(20)))
    rc, out, err = run(store, capsys, "correlate", "--project", "hs", "--human", str(human), "--metric", "bleu", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["imported"]["values"] == 60
    assert set(data["systems"]) == {"A", "B", "H"}
    rows = data["correlations"]
    assert {r["scope"] for r in rows} == {"overall", "system means", "A", "B", "H"}
    overall = {(r["measure"], r["variant"]): r for r in rows if r["scope"] == "overall"}
    assert {("Bleu_4", v) for v in ("standard", "ldr", "gap")} <= set(overall)
    assert overall[("ld", "standard")]["spearman"] == overall[("lexical_gap", "standard")]["spearman"]
    assert all(k in overall[("Bleu_4", "gap")] for k in ("n", "spearman", "spearman_p", "pearson", "pearson_p",
                                                         "kendall", "kendall_p"))
    rc, out, _ = run(store, capsys, "correlate", "--project", "hs", "--no-metrics", "--overall-only")
    assert rc == 0 and "ld" in out and "Lg" in out and "system means" not in out
    rc, out, _ = run(store, capsys, "human-scores", "list", "--project", "hs", "--json")
    assert rc == 0 and {(r["name"], r["system"], r["captions"]) for r in json.loads(out)["scores"]} == \
        {("quality", s, 20) for s in SYSTEMS}
    bad = tmp_path / "bad.csv"
    bad.write_text("item,system,quality\nim00.jpg,A,1\nim00.jpg,Q,2\n")
    before = table_counts(store)
    rc, _, err = run(store, capsys, "human-scores", "import", "--project", "hs", str(bad), "--replace")
    assert rc == 2 and "bad.csv, line 3" in err and "no system called 'Q'" in err
    assert table_counts(store) == before
    rc, out, _ = run(store, capsys, "human-scores", "clear", "--project", "hs", "--json")
    assert rc == 0 and json.loads(out)["deleted"] == 60


def test_import_verb_alias_for_human_scores(store, capsys, tmp_path):
    """``annotator import human-scores`` is the same command as ``annotator human-scores import``."""
    seed(store)
    good = tmp_path / "h.csv"
    good.write_text("item,system,quality\n" + "".join(f"im{i:02d}.jpg,A,{i % 5}\n" for i in range(20)))
    rc, out, err = run(store, capsys, "import", "human-scores", "--project", "hs", str(good), "--json")
    assert rc == 0, err
    rc, out, _ = run(store, capsys, "human-scores", "list", "--project", "hs", "--json")
    assert {(r["name"], r["system"], r["captions"]) for r in json.loads(out)["scores"]} == {("quality", "A", 20)}
    bad = tmp_path / "bad.csv"
    bad.write_text("item,system,quality\nim00.jpg,A,not-a-number\n")
    before = table_counts(store)
    rc, _, err = run(store, capsys, "import", "human-scores", "--project", "hs", str(bad), "--replace")
    assert rc == 2 and "bad.csv, line 2" in err
    assert table_counts(store) == before
