"""A system with several descriptions per image (samples n = 0, 1, 2): lexical diversity, ld and Lg, the µ
estimate and the rich-sparse table read the whole pool, as the lexical-gap study's machine pool. Every figure
below is counted by hand from the texts."""

from __future__ import annotations

import json
import math

import pytest

from annotator.diversity.calibration import project_mu_estimate
from annotator.diversity.gap import GapSettings
from annotator.diversity.report import project_diversity
from annotator.diversity.rich_sparse import DrawSettings, project_rich_sparse
from annotator.diversity.sources import project_pools
from annotator.io import import_jsonl

REFS = {"a": ["a dog runs", "a brown dog runs fast"], "b": ["a cat sleeps", "the cat sleeps on a bed"]}
BEAM = {"a": ["a dog runs", "a dog plays", "the dog jumps"], "b": ["a cat sleeps", "a cat sleeps", "a cat rests"]}


@pytest.fixture
def pooled(store, tmp_path):
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps({"key": k, "references": REFS[k], "captions": [
        {"system": "beam", "n": n, "text": t} for n, t in enumerate(BEAM[k])]}) + "\n" for k in REFS), encoding="utf-8")
    import_jsonl(store, "pool", path)
    return store


def test_ld_and_lg_read_every_sample_of_the_system(pooled):
    # System corpus: 6 descriptions, 18 tokens, 9 types (a dog runs plays the jumps cat sleeps rests): TTR 1/2.
    # References: 17 tokens, 10 types: TTR 10/17. ld = (1/2) / (10/17) = 0.85; Lg = 1 / (1 + e^(-5 (0.85 - 0.81))).
    # (With sample 0 alone the system would read 6 tokens, 5 types: TTR 5/6 and ld 17/12.)
    rep = project_diversity(pooled, "pool", gap=GapSettings(measure="ttr"))
    beam = rep.systems["beam"]
    assert beam.texts == 6 and (beam.measures["tokens"], beam.measures["types"]) == (18, 9)
    assert rep.references.measures["ttr"] == pytest.approx(10 / 17)
    assert beam.ld == pytest.approx(0.85)
    assert beam.lexical_gap == pytest.approx(1 / (1 + math.exp(-0.2)))


def test_the_machine_pool_and_mu_read_every_sample(pooled):
    pools = project_pools(pooled, "pool")
    assert pools.machine == (tuple(BEAM["a"]), tuple(BEAM["b"]))
    assert pools.machine_systems == (("beam",) * 3, ("beam",) * 3)
    # Sub-corpora by image against cr = the references (TTR 10/17):
    # sparse a: 9 tokens, 6 types -> (2/3) * 17/10; sparse b: 9 tokens, 4 types -> (4/9) * 17/10;
    # rich a: 8 tokens, 5 types -> (5/8) * 17/10; rich b: 9 tokens, 6 types -> (2/3) * 17/10.
    est = project_mu_estimate(pooled, "pool", measure_key="ttr")
    assert est.sparse == pytest.approx((34 / 30, 68 / 90))
    assert est.rich == pytest.approx((85 / 80, 34 / 30))


def test_rich_sparse_scores_every_sample_against_the_ground_truth(pooled):
    rep = project_rich_sparse(pooled, "pool", metrics=["bleu"], settings=DrawSettings(draws=3, ground_truth=2),
                              tokenize="none")
    # Human ground truth (both references of each image), machine candidates: all 3 samples of both images.
    # Clipped unigram matches 3 + 2 + 1 (image a) + 3 + 3 + 2 (image b) = 14 of 18 candidate tokens; every
    # candidate has 3 tokens and a 3-token reference, so no brevity penalty: BLEU-1 = 14/18.
    cell = rep.cell("human", "machine")
    assert (cell.images, cell.candidates_per_draw) == (2, 6)
    assert cell.mean["Bleu_1"] == pytest.approx(14 / 18, rel=1e-6)
    # Machine ground truth needs 2 drawn samples and one left as the candidate: only a pool has that.
    machine = rep.cell("machine", "machine")
    assert (machine.images, machine.skipped, machine.candidates_per_draw) == (2, 0, 2)
