"""µ of the lexical gap from rich and sparse ld distributions (Fig. 5) and per-image TTR curves (Fig. 4)."""

from __future__ import annotations

import json
import math

import pytest
from apptest_helpers import page_test, texts
from tests.core.test_diversity_helpers import run_cli

from annotator.diversity.calibration import estimate_mu, minimum_error_threshold, project_mu_estimate
from annotator.diversity.curves import compare_image_curves, image_curves
from annotator.diversity.indices import DiversitySettings
from annotator.diversity.sources import pools_from
from annotator.errors import InputError, NotFound
from annotator.model import Caption, Item, Project, Reference
from annotator.store.projects import write_project


def test_gaussian_minimum_error_point_by_hand():
    """Sparse ld {0, 2}: mean 1, variance 2; rich {2, 6}: mean 4, variance 8.

    The normal densities cross where (x−1)²/4 − (x−4)²/16 = ln 2, i.e.
    3x² − 12 = 16 ln 2, x = √(4 + 16 ln 2 / 3) = 2.77431 (between the means).
    """
    mu, method = minimum_error_threshold([2, 6], [0, 2])
    assert method == "gaussian"
    assert mu == pytest.approx(math.sqrt(4 + 16 * math.log(2) / 3), rel=1e-12)
    assert mu == pytest.approx(2.77431, abs=1e-5)
    # equal spreads: the midpoint of the means
    assert minimum_error_threshold([0.8, 1.0], [0.6, 0.8])[0] == pytest.approx(0.8, rel=1e-12)


def test_empirical_minimum_error_point_by_hand():
    """Rich {0.9, 1.0, 1.1}, sparse {0.6, 0.7, 0.95}: thresholds between neighbours are 0.65, 0.8, 0.925, 0.975,
    1.05 with mean error rates 1/3, 1/6, 1/3, 1/6, 1/3; of the two best, 0.8 lies nearer the means' midpoint 0.875."""
    assert minimum_error_threshold([0.9, 1.0, 1.1], [0.6, 0.7, 0.95], "empirical") == (0.8, "empirical")
    # no spread on one side: the empirical rule is used even when the Gaussian one is asked for
    assert minimum_error_threshold([1.0, 1.0], [0.2, 0.6]) == (0.8, "empirical")
    with pytest.raises(InputError, match="gaussian or empirical"):
        minimum_error_threshold([1], [0], "median")


#: Image one: references "a b", "c d"; captions "a a", "a b". Image two: "e f", "g h"; captions "e e", "e e".
POOLS = pools_from(["one.jpg", "two.jpg"], [["a b", "c d"], ["e f", "g h"]], [["a a", "a b"], ["e e", "e e"]],
                   ["S", "T"])


def test_mu_from_per_image_sub_corpora_by_hand():
    """With TTR as L and the references as cr (8 tokens, 8 types: TTR 1): each image's references have TTR 1,
    so ld 1; its captions TTR 2/4 and 1/4, so ld 0.5 and 0.25. The rich values have no spread, so µ is the
    empirical split between 0.5 and 1: 0.75, with no sub-corpus on the wrong side."""
    cr = [t for image in POOLS.human for t in image]
    est = estimate_mu(POOLS, cr, measure_key="ttr")
    assert est.rich == (1.0, 1.0) and est.sparse == (0.5, 0.25)
    assert (est.rich_names, est.sparse_names) == (("one.jpg", "two.jpg"), ("one.jpg", "two.jpg"))
    assert (est.mu, est.method, est.error, est.dropped, est.separated) == (0.75, "empirical", 0.0, 0, True)
    assert est.to_dict()["summary"]["sparse"] == {"n": 2, "mean": 0.375, "sd": pytest.approx(math.sqrt(0.03125))}
    groups = estimate_mu(POOLS, cr, measure_key="ttr", split=1, seed=3)
    assert len(groups.rich) == 4 and len(groups.sparse) == 4 and groups.split == "1"
    assert sorted(groups.sparse) == [0.5, 0.5, 0.5, 1.0]  # "a a", "e e", "e e": 1/2; "a b": 1
    # HD-D with samples of 42 tokens is undefined on these tiny sub-corpora
    with pytest.raises(InputError, match="the reference corpus has no defined hdd"):
        estimate_mu(POOLS, cr, measure_key="hdd")
    small_draws = DiversitySettings(hdd_draws=3)
    est = estimate_mu(POOLS, cr, measure_key="hdd", settings=small_draws)
    assert est.dropped == 0 and len(est.rich) == 2
    with pytest.raises(InputError, match="defined hdd on both sides"):
        estimate_mu(POOLS, cr * 10, measure_key="hdd", settings=DiversitySettings(hdd_draws=5))
    with pytest.raises(InputError, match="'image' or a number"):
        estimate_mu(POOLS, cr, measure_key="ttr", split="system")


def test_per_image_curves_by_hand():
    """Image one's references "a b", "c d" never repeat a word: TTR 1 after every token. Its captions "a a",
    "a b" in either order read a, a, … : TTR 1, 1/2, then 2/3 or 1/3, then 1/2 — mean 1/2 after three tokens
    over orders in which each comes first."""
    one = image_curves(POOLS, ["one.jpg"], points=4, shuffles=2, seed=0)[0]
    assert one.key == "one.jpg"
    assert one.human.tokens.tolist() == [1, 2, 3, 4] and one.human.ttr.tolist() == [1.0, 1.0, 1.0, 1.0]
    assert one.machine.ttr[0] == 1.0 and one.machine.ttr[1] in (0.5, 0.75) and one.machine.ttr[3] == 0.5
    frame = one.to_frame()
    assert set(frame["corpus"]) == {"human", "machine"} and set(frame["image"]) == {"one.jpg"}
    with pytest.raises(NotFound):
        image_curves(POOLS, ["three.jpg"])
    cmp = compare_image_curves(POOLS)
    assert (cmp.images, cmp.human_higher, cmp.machine_higher, cmp.skipped) == (2, 2, 0, 0)


def seed(store):
    items = [Item(key=k, references=[Reference(t) for t in h], captions=[Caption(s, t) for s, t in zip("ST", m)])
             for k, h, m in zip(POOLS.keys, POOLS.human, POOLS.machine)]
    with store.transaction() as conn:
        write_project(conn, Project("mu", items=items))


def test_stored_project_cli_and_page(store, capsys):
    seed(store)
    est = project_mu_estimate(store, "mu", measure_key="ttr")
    assert (est.mu, est.reference) == (0.75, "references of project 'mu' (4 texts)")
    rc, out, err = run_cli(store, capsys, "diversity", "--project", "mu", "--measure", "ttr", "--estimate-mu",
                           "--image", "two.jpg", "--curves", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["mu_estimate"]["mu"] == 0.75 and data["mu_estimate"]["sparse"] == {"one.jpg": 0.5, "two.jpg": 0.25}
    assert data["image_curves"]["two.jpg"]["machine"]["ttr"] == pytest.approx([1.0, 0.5, 1 / 3, 0.25], rel=1e-12)
    assert data["image_curve_comparison"] == {"images": 2, "human_higher": 2, "machine_higher": 0, "equal": 0,
                                              "skipped": 0}
    rc, out, err = run_cli(store, capsys, "diversity", "--project", "mu", "--measure", "ttr", "--estimate-mu",
                           "--curves")
    assert rc == 0, err
    assert "estimated mu = 0.750 (empirical; error 0.000)" in out
    assert "references more diverse than captions on 2 of 2 images" in out
    rc, _, err = run_cli(store, capsys, "diversity", "--project", "mu", "--image", "nope.jpg")
    assert rc != 0 and "nope.jpg" in err
    rc, _, err = run_cli(store, capsys, "diversity", "--project", "mu", "--estimate-mu")
    assert rc == 2 and "no defined hdd" in err


def test_page_shows_the_estimate_and_the_image_curves(sqlite_store):
    seed(sqlite_store)
    at = page_test("diversity", sqlite_store.url, user="ana", role="analyst", project="mu").run()
    assert not at.exception
    assert at.selectbox(key="div_image").options == ["one.jpg", "two.jpg"]
    at.selectbox(key="div_measure").set_value("ttr").run()
    at.toggle(key="div_mu_on").set_value(True).run()
    assert not at.exception
    assert "Estimated µ = 0.750 (empirical)" in texts(at)
    at.selectbox(key="div_measure").set_value("hdd").run()
    assert not at.exception
    assert any("no defined hdd" in e.value for e in at.error)
