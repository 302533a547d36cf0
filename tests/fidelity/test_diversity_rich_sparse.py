"""The lexical-gap study's Section 3.2 protocol: metrics on human and machine descriptions, each as ground truth."""

from __future__ import annotations

import json
from math import comb

import numpy as np
import pytest
from apptest_helpers import page_test, texts
from tests.core.test_diversity_helpers import HUMAN_CAPTIONS, SPARSE_A, SPARSE_B, run_cli

from annotator.diversity import rich_sparse as RS
from annotator.diversity.sources import pools_from, project_pools
from annotator.errors import InputError
from annotator.metrics import REGISTRY
from annotator.model import Caption, Item, Project, Reference
from annotator.store.projects import write_project

#: Image 1: three human descriptions sharing only "a"; three identical machine ones. Image 2: two human ones.
HAND = pools_from(["one.jpg", "two.jpg"], [["a b", "a c", "a d"], ["x y", "x z"]], [["e f"] * 3, ["e f"] * 3],
                  ["S1", "S2", "S3"])


def test_hand_made_case_shows_the_studys_pattern():
    """Hand-computed with ground truth of two descriptions.

    Human vs human (image 1 only: image 2 has no third description): "a b"
    against {"a c", "a d"} shares one word of two with each, so ROUGE-L has
    P = R = 1/2 and F = 1/2, BLEU-1 = 1/2 (clipped "a", equal lengths) — the
    same for every draw. Machine vs machine: "e f" against two copies of
    itself, ROUGE-L = BLEU-1 = 1. Across pools no word is shared: 0. The
    sparse descriptions score best against sparse ground truth, the rich ones
    are penalised for their variety.
    """
    rep = RS.rich_sparse_table(HAND, metrics=["bleu", "rouge"], settings=RS.DrawSettings(draws=40, ground_truth=2))
    hh, hm, mh, mm = (rep.cell(*c) for c in RS.CELLS)
    assert hh.mean["ROUGE_L"] == 0.5 and hh.sd["ROUGE_L"] == 0.0
    assert hh.mean["Bleu_1"] == pytest.approx(0.5, rel=1e-8)
    assert mm.mean["ROUGE_L"] == 1.0 and mm.mean["Bleu_1"] == pytest.approx(1.0, rel=1e-8)
    assert hm.mean["ROUGE_L"] == 0.0 and mh.mean["ROUGE_L"] == 0.0
    assert hm.mean["Bleu_1"] < 1e-9 and mh.mean["Bleu_1"] < 1e-9
    # who took part: human/human needs three human descriptions; image 2 has two
    assert (hh.images, hh.skipped, hh.candidates_per_draw, hh.pairs) == (1, 1, 1, 3)
    assert (hm.images, hm.candidates_per_draw) == (2, 6)
    assert (mh.images, mh.candidates_per_draw) == (2, 5)
    assert (mm.images, mm.candidates_per_draw) == (2, 2)
    assert any("1 of 2 images left out" in n for n in rep.notes)
    table = rep.table()
    assert list(table.index) == ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L"]
    assert table.loc["ROUGE-L", ("Ground truth: Machine", "Candidates: Machine")] == 1.0
    assert rep.to_dict()["cells"][0]["mean"]["ROUGE_L"] == 0.5


def test_every_possible_draw_is_one_subset_equals_coco_caption():
    """Human ground truth of exactly as many descriptions as each image has: every draw is the same, so the
    human-vs-machine cell is the coco-caption evaluation of the one system against all references."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    refs = [[HUMAN_CAPTIONS[i], SPARSE_B[(i + 5) % 20], SPARSE_A[(i + 9) % 20]] for i in range(20)]
    pools = pools_from([f"im{i}" for i in range(20)], refs, [[SPARSE_A[i]] for i in range(20)], ["A"])
    rep = RS.rich_sparse_table(pools, metrics=["bleu", "rouge", "cider"],
                               settings=RS.DrawSettings(draws=7, ground_truth=3))
    cell = rep.cell("human", "machine")
    gts = {i: refs[i] for i in range(20)}
    res = {i: [SPARSE_A[i]] for i in range(20)}
    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    rouge, _ = Rouge().compute_score(gts, res)
    cider, _ = Cider().compute_score(gts, res)
    for k in range(4):
        assert cell.mean[f"Bleu_{k + 1}"] == pytest.approx(bleu[k], rel=1e-12)
    assert cell.mean["ROUGE_L"] == pytest.approx(rouge, rel=1e-12)
    assert cell.mean["CIDEr"] == pytest.approx(cider, rel=1e-12)
    assert all(v == pytest.approx(0.0, abs=1e-12) for v in cell.sd.values())
    assert rep.cell("human", "human").images == 0  # no fourth reference to score


#: Twelve images with 4–6 human and 4 machine descriptions each, all different.
VARIED = pools_from([f"im{i}" for i in range(12)], [[HUMAN_CAPTIONS[(i + k) % 20] for k in range(4 + i % 3)]
                                                     for i in range(12)],
                    [[SPARSE_A[i], SPARSE_B[i], SPARSE_A[(i + 1) % 20], SPARSE_B[(i + 2) % 20]] for i in range(12)],
                    ["A", "B", "C", "D"])


def test_re_aggregation_equals_scoring_every_evaluation_from_scratch():
    """Evaluation r of a cell is the corpus score of every image's candidates against that image's draw r."""
    pools = VARIED
    settings = RS.DrawSettings(draws=25, ground_truth=3, seed=11)
    rep = RS.rich_sparse_table(pools, metrics=["bleu", "rouge"], settings=settings)
    draws = {pool: RS._draw([len(p) for p in pools.pool(pool)], 3, 25, np.random.default_rng([11, k]))
             for k, pool in enumerate(RS.POOLS)}
    bleu, rouge = REGISTRY.create(["bleu", "rouge"])
    for gt, cand in RS.CELLS:
        want = {"Bleu_4": [], "ROUGE_L": []}
        for r in range(25):
            hyps, refs = [], []
            for i in range(12):
                chosen = draws[gt].members[i][draws[gt].use[i, r]].tolist()
                truth = [pools.pool(gt)[i][m] for m in chosen]
                cands = ([t for m, t in enumerate(pools.pool(gt)[i]) if m not in chosen] if gt == cand
                         else list(pools.pool(cand)[i]))
                hyps += cands
                refs += [truth] * len(cands)
            want["Bleu_4"].append(bleu.corpus_score(hyps, refs).values["Bleu_4"])
            want["ROUGE_L"].append(rouge.corpus_score(hyps, refs).value)
        cell = rep.cell(gt, cand)
        for key, values in want.items():
            assert cell.mean[key] == pytest.approx(np.mean(values), rel=1e-12), (gt, cand, key)
            assert cell.sd[key] == pytest.approx(np.std(values, ddof=1), rel=1e-9, abs=1e-15)


def test_draws_are_uniform_seeded_and_numbered_one_to_one():
    g, d = 6, 3
    members = RS._unrank(np.arange(comb(g, d)), g, d)
    assert len({tuple(m) for m in members.tolist()}) == comb(g, d)
    assert all(list(m) == sorted(m) and 0 <= m[0] and m[-1] < g for m in members.tolist())
    a = RS._draw([6, 2, 6], d, 4000, np.random.default_rng([3, 0]))
    b = RS._draw([6, 2, 6], d, 4000, np.random.default_rng([3, 0]))
    assert np.array_equal(a.use, b.use)
    assert a.members[1].shape == (0, 3) and (a.use[1] == -1).all()
    counts = np.bincount(a.use[0], minlength=len(a.members[0]))
    assert len(a.members[0]) == comb(g, d)
    # each of the 20 subsets is drawn 200 times in expectation (binomial sd ≈ 13.8)
    assert counts.min() > 140 and counts.max() < 260
    rep1 = RS.rich_sparse_table(VARIED, metrics=["bleu"], settings=RS.DrawSettings(draws=30, ground_truth=2, seed=1))
    rep2 = RS.rich_sparse_table(VARIED, metrics=["bleu"], settings=RS.DrawSettings(draws=30, ground_truth=2, seed=1))
    rep3 = RS.rich_sparse_table(VARIED, metrics=["bleu"], settings=RS.DrawSettings(draws=30, ground_truth=2, seed=2))
    assert rep1.to_dict() == rep2.to_dict()
    assert rep1.cell("human", "human").mean != rep3.cell("human", "human").mean
    with pytest.raises(InputError, match="at least 1"):
        RS.DrawSettings(draws=0)


def seed(store):
    items = [Item(key=f"im{i:02d}.jpg", references=[Reference(HUMAN_CAPTIONS[(i + k) % 20]) for k in range(4)],
                  captions=[Caption("A", SPARSE_A[i]), Caption("B", SPARSE_B[i]), Caption("C", SPARSE_A[(i + 7) % 20])])
             for i in range(10)]
    with store.transaction() as conn:
        write_project(conn, Project("rs", items=items))


def test_project_pools_and_cli(store, capsys, tmp_path):
    seed(store)
    pools = project_pools(store, "rs")
    assert pools.keys[0] == "im00.jpg" and pools.systems == ("A", "B", "C")
    assert pools.machine[3] == (SPARSE_A[3], SPARSE_B[3], SPARSE_A[10]) and len(pools.human[3]) == 4
    settings = RS.DrawSettings(draws=50, ground_truth=2, seed=4)
    want = RS.project_rich_sparse(store, "rs", metrics=["bleu", "rouge"], settings=settings)
    out_file = tmp_path / "rs.md"
    rc, out, err = run_cli(store, capsys, "rich-sparse", "--project", "rs", "--draws", "50", "--ground-truth", "2",
                           "--seed", "4", "--metric", "bleu", "--metric", "rouge", "--output", str(out_file), "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["settings"] == {"draws": 50, "ground_truth": 2, "seed": 4, "tokenize": "none"}
    assert [(c["ground_truth"], c["candidates"]) for c in data["cells"]] == list(RS.CELLS)
    for got, cell in zip(data["cells"], want.cells):
        assert got["mean"]["Bleu_4"] == cell.mean["Bleu_4"] and got["images"] == cell.images == 10
    assert "Rich and sparse" in out_file.read_text()
    rc, out, err = run_cli(store, capsys, "rich-sparse", "--project", "rs", "--draws", "20", "--metric", "rouge",
                           "--system", "A", "--system", "B")
    assert rc == 0, err
    # The header says which paper the tokenisation reproduces: the lexical-gap study scored with coco-caption's
    # evaluation (PTB), so raw text does not reproduce its Table 1, and says how to.
    assert ("does not reproduce the lexical-gap study's Tables 1 and 5 (scored with coco-caption's evaluation, "
            "which tokenises): --tokenize ptb") in out.splitlines()[0]
    assert "Human / Machine" in out and "ROUGE-L" in out
    assert "machine ground truth, machine candidates: no image has 6 or more machine descriptions" in out
    rc, _, err = run_cli(store, capsys, "rich-sparse", "--project", "rs", "--draws", "0")
    assert rc == 2 and "at least 1" in err
    rc, _, err = run_cli(store, capsys, "rich-sparse", "--project", "rs", "--output", "x.unknown")
    assert rc == 2 and "--format" in err
    rc, _, err = run_cli(store, capsys, "rich-sparse", "--project", "rs", "--system", "Z")
    assert rc != 0 and "no system called 'Z'" in err


def test_the_paper_note_names_the_tokenisation_that_reproduces_the_lexical_gap_study():
    from annotator.metric_settings import paper_tokenize_note
    assert paper_tokenize_note("ptb", "lexical-gap").startswith("reproduces the lexical-gap study's Tables 1 and 5")
    assert paper_tokenize_note("none", "lexical-gap").startswith("does not reproduce")


def test_page_table_equals_the_core(sqlite_store):
    seed(sqlite_store)
    at = page_test("diversity", sqlite_store.url, user="ana", role="analyst", project="rs").run()
    assert not at.exception
    at.toggle(key="div_rs_on").set_value(True).run()
    at.number_input(key="div_rs_draws").set_value(30).run()
    at.number_input(key="div_rs_truth").set_value(3).run()
    assert not at.exception
    want = RS.project_rich_sparse(sqlite_store, "rs", metrics=REGISTRY.defaults(in_process_only=True),
                                  settings=RS.DrawSettings(draws=30, ground_truth=3))
    table = next(df.value for df in at.dataframe if "Ground truth: Human · Candidates: Human" in df.value.columns)
    # The page writes each column with one number of decimals: the core's figure rounded to them.
    for row, column, truth, candidates, key in [("CIDEr-D", "Ground truth: Machine · Candidates: Human", "machine", "human", "CIDEr"),
                                                ("BLEU-4", "Ground truth: Human · Candidates: Machine", "human", "machine", "Bleu_4")]:
        shown = table.loc[row, column]
        digits = len(shown.split(".")[1])
        assert digits in (2, 3) and shown == f"{want.cell(truth, candidates).mean[key]:.{digits}f}", (row, shown)
    assert "Mean over 30 draws of 3 ground-truth descriptions per image" in texts(at)
