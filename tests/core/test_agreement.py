"""Agreement core: golden values against scikit-learn, krippendorff, statsmodels and hand computations."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support
from statsmodels.stats.inter_rater import fleiss_kappa

from annotator.agreement import agreement_report, cohen_kappa_from_table, fleiss_kappa_counts, krippendorff_alpha_nominal
from annotator.errors import InputError
from annotator.layers import masks_to_ids, type_bitmasks
from annotator.taxonomy import ERROR_TYPE_IDS
from tests.property_helpers import examples

LABELS = ("accurate", "inaccurate")


def frame(rows) -> pd.DataFrame:
    """rows: (caption_id, user, label, types[, is_practice]) → a judgement frame."""
    out = []
    for r in rows:
        cid, user, label, types = r[:4]
        practice = r[4] if len(r) > 4 else False
        out.append({"caption_id": cid, "item_id": 1000 + cid, "is_practice": practice, "system": "sys", "user": user,
                    "kind": "annotation", "label": label, "error_types": " ".join(types)})
    return pd.DataFrame(out)


def binary_frame(labels: dict[str, list]) -> pd.DataFrame:
    """{user: [label or None per caption]} → frame (None = not judged)."""
    rows = []
    for user, seq in labels.items():
        for cid, lab in enumerate(seq):
            if lab is not None:
                rows.append((cid, user, lab, ("gender",) if lab == "inaccurate" else ()))
    return frame(rows)


# ------------------------------------------------------------------ the study's own figures

def study_frame() -> pd.DataFrame:
    # 100 double-annotated captions: A inaccurate 86, B 81, both 79 → A-only 7, B-only 2, neither 12.
    a = ["inaccurate"] * 79 + ["inaccurate"] * 7 + ["accurate"] * 2 + ["accurate"] * 12
    b = ["inaccurate"] * 79 + ["accurate"] * 7 + ["inaccurate"] * 2 + ["accurate"] * 12
    return binary_frame({"A": a, "B": b})


def test_study_marginals_reproduce_kappa_and_accuracy():
    r = agreement_report(study_frame(), ["A", "B"])
    p = r.pair("A", "B")
    assert p.n == 100
    assert p.inaccurate == {"A": 86, "B": 81} and p.both_inaccurate == 79
    assert p.confusion == ((12, 2), (7, 79))
    # By hand: p_o = 91/100; p_e = .86·.81 + .14·.19 = .6966 + .0266 = .7232;
    # kappa = (.91 − .7232)/(1 − .7232) = .1868/.2768 = .674855…
    assert p.agreement == pytest.approx(0.91)
    assert p.kappa == pytest.approx(0.1868 / 0.2768, abs=1e-12)
    assert round(p.kappa, 2) == 0.67
    a = ["inaccurate"] * 86 + ["accurate"] * 14
    b = ["inaccurate"] * 79 + ["accurate"] * 7 + ["inaccurate"] * 2 + ["accurate"] * 12
    assert p.kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    lo, hi = p.kappa_ci
    assert lo < p.kappa < hi and 0.3 < lo and hi < 1.0
    assert cohen_kappa_from_table([[12, 2], [7, 79]]) == pytest.approx(p.kappa)


def test_bootstrap_is_seeded_and_matches_caption_resampling():
    f = study_frame()
    r1 = agreement_report(f, ["A", "B"], n_resamples=4000, seed=3)
    r2 = agreement_report(f, ["A", "B"], n_resamples=4000, seed=3)
    r3 = agreement_report(f, ["A", "B"], n_resamples=4000, seed=4)
    assert r1.first.kappa_ci == r2.first.kappa_ci
    assert r1.first.kappa_ci != r3.first.kappa_ci
    # Independent reference: resample the 100 captions themselves (kappa by its textbook formula,
    # which test_kappa_equals_sklearn_on_shared_captions ties to scikit-learn).
    a = np.array([1] * 86 + [0] * 14)
    b = np.array([1] * 79 + [0] * 7 + [1] * 2 + [0] * 12)
    idx = np.random.default_rng(99).integers(0, 100, (20000, 100))
    ra, rb = a[idx], b[idx]
    po = (ra == rb).mean(axis=1)
    pa, pb = ra.mean(axis=1), rb.mean(axis=1)
    pe = pa * pb + (1 - pa) * (1 - pb)
    ok = pe < 1
    ks = (po[ok] - pe[ok]) / (1 - pe[ok])
    lo, hi = np.quantile(ks, [0.025, 0.975])
    assert r1.first.kappa_ci[0] == pytest.approx(lo, abs=0.03)
    assert r1.first.kappa_ci[1] == pytest.approx(hi, abs=0.03)
    assert r1.bootstrap.n_resamples == 4000 and r1.bootstrap.seed == 3


def test_confidence_level_widens_interval():
    f = study_frame()
    narrow = agreement_report(f, ["A", "B"], confidence=0.5).first.kappa_ci
    wide = agreement_report(f, ["A", "B"], confidence=0.99).first.kappa_ci
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    with pytest.raises(InputError):
        agreement_report(f, ["A", "B"], confidence=1.5)


# ------------------------------------------------------------------ kappa against scikit-learn

@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(LABELS + (None,)), st.sampled_from(LABELS + (None,))), min_size=1, max_size=60))
def test_kappa_equals_sklearn_on_shared_captions(pairs):
    f = binary_frame({"x": [p[0] for p in pairs], "y": [p[1] for p in pairs]})
    shared = [(a, b) for a, b in pairs if a is not None and b is not None]
    if len({p[0] for p in pairs if p[0]}) == 0 or len({p[1] for p in pairs if p[1]}) == 0:
        return
    r = agreement_report(f, ["x", "y"], n_resamples=50)
    p = r.first
    assert p.n == len(shared)
    if not shared:
        assert p.kappa is None and p.agreement is None
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = cohen_kappa_score([a for a, _ in shared], [b for _, b in shared], labels=list(LABELS))
    if np.isnan(ref):
        assert p.kappa is None
    else:
        assert p.kappa == pytest.approx(ref, abs=1e-12)
    assert p.agreement == pytest.approx(np.mean([a == b for a, b in shared]))


def test_kappa_undefined_when_both_constant():
    f = binary_frame({"x": ["accurate"] * 5, "y": ["accurate"] * 5})
    p = agreement_report(f, ["x", "y"]).first
    assert p.kappa is None and p.kappa_ci is None and p.agreement == 1.0


# ------------------------------------------------------------------ alpha and Fleiss against the packages

@pytest.mark.parametrize("seed", range(8))
def test_alpha_and_fleiss_equal_reference_packages_on_random_data(seed):
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(3, 6)), int(rng.integers(20, 120))
    truth = rng.random(n) < rng.uniform(0.3, 0.9)
    noise = rng.random((k, n)) < rng.uniform(0.05, 0.4)
    values = np.where(noise, ~truth, truth).astype(float)
    missing = rng.random((k, n)) < 0.25
    values[missing] = np.nan
    users = [f"u{i}" for i in range(k)]
    labels = {u: [None if np.isnan(v) else LABELS[int(v)] for v in values[i]] for i, u in enumerate(users)}
    r = agreement_report(binary_frame(labels), users, n_resamples=20)
    ref_alpha = krippendorff.alpha(reliability_data=values, level_of_measurement="nominal")
    assert r.alpha == pytest.approx(ref_alpha, abs=1e-10)
    # Fleiss: only captions judged by all k.
    full = ~np.isnan(values).any(axis=0)
    table = np.stack([(values[:, full] == 0).sum(axis=0), (values[:, full] == 1).sum(axis=0)], axis=1)
    assert r.fleiss_items == int(full.sum()) and r.fleiss_m == k
    if full.sum():
        assert r.fleiss_kappa == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-10)
    # Every pair's kappa equals scikit-learn on that pair's shared captions.
    for p in r.pairs:
        i, j = users.index(p.a), users.index(p.b)
        both = ~np.isnan(values[i]) & ~np.isnan(values[j])
        assert p.n == int(both.sum())
        assert p.kappa == pytest.approx(cohen_kappa_score(values[i, both], values[j, both]), abs=1e-10)


def test_fleiss_with_chosen_m_uses_items_with_exactly_m_ratings():
    labels = {"a": ["inaccurate", "inaccurate", "accurate", "accurate", None],
              "b": ["inaccurate", "accurate", "accurate", None, "inaccurate"],
              "c": ["inaccurate", None, "accurate", "inaccurate", "inaccurate"]}
    r = agreement_report(binary_frame(labels), ["a", "b", "c"], fleiss_m=2)
    # Captions 1, 3, 4 have exactly two judgements: (A,I)=(1,1), (1,1), (0,2).
    assert r.fleiss_items == 3 and r.fleiss_m == 2
    assert r.fleiss_kappa == pytest.approx(fleiss_kappa(np.array([[1, 1], [1, 1], [0, 2]]), method="fleiss"))
    with pytest.raises(InputError):
        agreement_report(binary_frame(labels), ["a", "b", "c"], fleiss_m=4)


def test_alpha_hand_computed_two_coders():
    # Krippendorff's classic example reduced to two coders, binary: units (0,0),(1,1),(0,1),(1,1)
    # o_01 = o_10 = 1, n0 = 3, n1 = 5, n = 8; alpha = 1 − (n−1)·o_01/(n0·n1) = 1 − 7/15.
    alpha, units = krippendorff_alpha_nominal([[2, 0], [0, 2], [1, 1], [0, 2]])
    assert units == 4 and alpha == pytest.approx(1 - 7 / 15)
    assert krippendorff_alpha_nominal([[1, 0], [0, 1]]) == (None, 0)
    assert fleiss_kappa_counts(np.array([[3, 0], [0, 3]])) == pytest.approx(1.0)


# ------------------------------------------------------------------ error types

HAND = [
    # caption, user, label, types
    (1, "A", "inaccurate", ("gender", "activity")), (1, "B", "inaccurate", ("gender",)),
    (2, "A", "inaccurate", ("clothing_color",)), (2, "B", "inaccurate", ("clothing_type", "clothing_color")),
    (3, "A", "inaccurate", ("unrelated",)), (3, "B", "inaccurate", ("scene", "number")),
    (4, "A", "inaccurate", ("age",)), (4, "B", "accurate", ()),  # not both inaccurate: no fine figures
    (5, "A", "accurate", ()), (5, "B", "accurate", ()),
]


def test_fine_precision_recall_hand_computed():
    p = agreement_report(frame(HAND), ["A", "B"]).pair("A", "B")
    f = p.fine
    # Both inaccurate: captions 1–3. TP = 1 (gender) + 1 (clothing colour) + 0 = 2;
    # B ticked 1 + 2 + 2 = 5 → precision 2/5; A ticked 2 + 1 + 1 = 4 → recall 2/4.
    assert (f.n, f.tp, f.fp, f.fn) == (3, 2, 3, 2)
    assert f.precision == pytest.approx(0.4) and f.recall == pytest.approx(0.5)
    assert f.f1 == pytest.approx(2 * 0.4 * 0.5 / 0.9)
    assert f.exact_match == 0.0
    per = {t.type_id: t for t in f.per_type}
    assert (per["gender"].reference, per["gender"].retrieved, per["gender"].both) == (1, 1, 1)
    assert per["gender"].precision == 1.0 and per["gender"].recall == 1.0 and per["gender"].kappa == pytest.approx(1.0)
    # activity: A ticked it once, B never: recall 0, precision undefined; kappa: po = 2/3, pe = 2/3 → 0.
    assert per["activity"].precision is None and per["activity"].recall == 0.0 and per["activity"].kappa == pytest.approx(0.0)
    assert per["age"].reference == 0  # caption 4 is not both-inaccurate
    assert per["age"].kappa is None  # never ticked by either: undefined
    # Macro over the 7 types either ticked: P = (gender 1 + clothing colour 1)/7, R likewise.
    assert f.macro_precision == pytest.approx(2 / 7) and f.macro_recall == pytest.approx(2 / 7)
    assert set(per) == set(ERROR_TYPE_IDS)
    # The other annotator as reference swaps precision and recall.
    q = agreement_report(frame(HAND), ["A", "B"]).pair("B", "A")
    assert q.fine.precision == pytest.approx(0.5) and q.fine.recall == pytest.approx(0.4)
    # Rows: the first annotator's label (accurate, inaccurate); caption 4 is A-inaccurate, B-accurate.
    assert p.confusion == ((1, 0), (1, 3)) and q.confusion == ((1, 1), (0, 3))


def test_captions_waiting_for_the_fine_pass_are_left_out_of_type_agreement():
    # Caption 9: both inaccurate, but B's staged second pass gave the label only (no types yet).
    rows = HAND + [(9, "A", "inaccurate", ("gender", "scene")), (9, "B", "inaccurate", ())]
    p = agreement_report(frame(rows), ["A", "B"]).pair("A", "B")
    assert p.both_inaccurate == 4 and p.fine_pending == 1
    # The type figures are exactly those without caption 9 (A's two types are not counted as misses).
    f = p.fine
    assert (f.n, f.tp, f.fp, f.fn) == (3, 2, 3, 2)
    assert f.recall == pytest.approx(0.5)
    assert p.summary()["fine_pending"] == 1 and p.summary()["fine_n"] == 3
    assert p.swapped().fine_pending == 1
    row = agreement_report(frame(rows), ["A", "B"]).pairs_frame().iloc[0]
    assert (row["types compared"], row["types pending"]) == (3, 1)


@pytest.mark.parametrize("seed", range(6))
def test_fine_figures_equal_sklearn_multilabel(seed):
    rng = np.random.default_rng(seed)
    n = 80
    rows = []
    ref_m, ret_m = [], []
    for cid in range(n):
        la = "inaccurate" if rng.random() < 0.8 else "accurate"
        lb = "inaccurate" if rng.random() < 0.8 else "accurate"
        ta = tuple(t for t in ERROR_TYPE_IDS if rng.random() < 0.12) or ("other",)
        tb = tuple(t for t in ERROR_TYPE_IDS if rng.random() < 0.12) or ("other",)
        ta, tb = (ta if la == "inaccurate" else ()), (tb if lb == "inaccurate" else ())
        rows += [(cid, "A", la, ta), (cid, "B", lb, tb)]
        if la == lb == "inaccurate":
            ref_m.append([t in ta for t in ERROR_TYPE_IDS])
            ret_m.append([t in tb for t in ERROR_TYPE_IDS])
    f = agreement_report(frame(rows), ["A", "B"]).first.fine
    y_true, y_pred = np.array(ref_m, int), np.array(ret_m, int)
    p, r, f1, _ = precision_recall_fscore_support(y_true, y_pred, average="micro", zero_division=0)
    assert (f.precision, f.recall, f.f1) == pytest.approx((p, r, f1))
    used = [i for i in range(len(ERROR_TYPE_IDS)) if y_true[:, i].any() or y_pred[:, i].any()]
    p, r, f1, _ = precision_recall_fscore_support(y_true, y_pred, average="macro", zero_division=0, labels=used)
    assert (f.macro_precision, f.macro_recall, f.macro_f1) == pytest.approx((p, r, f1))
    for i, t in enumerate(f.per_type):
        if y_true[:, i].any() or y_pred[:, i].any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                k = cohen_kappa_score(y_true[:, i], y_pred[:, i])
            assert (t.kappa is None and np.isnan(k)) or t.kappa == pytest.approx(k)


# ------------------------------------------------------------------ practice items and disagreements

def test_practice_items_are_left_out_and_counted():
    rows = list(HAND) + [(9, "A", "inaccurate", ("age",), True), (9, "B", "accurate", (), True),
                         (10, "A", "accurate", (), True)]
    r = agreement_report(frame(rows), ["A", "B"])
    base = agreement_report(frame(HAND), ["A", "B"])
    assert r.first.n == base.first.n == 5
    assert r.first.kappa == base.first.kappa
    assert (r.practice_items_excluded, r.practice_captions_excluded, r.practice_judgements_excluded) == (2, 2, 3)
    assert r.summary()["practice_excluded"] == {"items": 2, "captions": 2, "judgements": 3}


def test_adjudications_and_skips_do_not_count():
    f = frame(HAND)
    extra = f.iloc[:2].copy()
    extra["kind"] = "adjudication"
    extra["user"] = "lead"
    skipped = f.iloc[:1].copy()
    skipped["caption_id"] = 77
    skipped["label"] = None
    r = agreement_report(pd.concat([f, extra, skipped]), ["A", "B"])
    assert r.first.n == 5 and r.judged == {"A": 5, "B": 5}


def test_disagreements_list_labels_and_types():
    r = agreement_report(frame(HAND), ["A", "B"])
    d = r.disagreements("A", "B")
    assert d["caption_id"].tolist() == [1, 2, 3, 4]
    assert d["disagreement"].tolist() == ["types", "types", "types", "label"]
    assert d.loc[d.caption_id == 1, "types_A"].item() == "gender activity"
    assert d.loc[d.caption_id == 4, "label_B"].item() == "accurate"
    assert r.disagreements("A", "B", types=False)["caption_id"].tolist() == [4]


def test_duplicate_judgement_rows_are_refused():
    f = frame(HAND + [(1, "A", "accurate", ())])
    with pytest.raises(InputError, match="more than one current judgement"):
        agreement_report(f, ["A", "B"])


def test_bitmask_helpers_round_trip():
    masks, unknown = type_bitmasks(pd.Series(["gender activity", "", "bogus color", "activity gender"]))
    assert masks[0] == masks[3] and masks[1] == 0
    assert masks_to_ids(masks[0]) == ("gender", "activity")
    assert masks_to_ids(masks[2]) == ("color",) and unknown == {"bogus"}


def test_summary_has_the_cli_keys_and_tables():
    r = agreement_report(frame(HAND), ["A", "B"])
    s = r.summary()
    for key in ("n", "kappa", "accuracy", "inaccurate", "both_inaccurate", "fine_precision", "fine_recall", "fine_f1",
                "per_type", "alpha", "fleiss_kappa", "kappa_ci", "pairs"):
        assert key in s
    assert s["inaccurate"] == {"A": 4, "B": 3} and s["both_inaccurate"] == 3
    assert set(s["per_type"]) == set(ERROR_TYPE_IDS)
    tables = r.to_tables()
    assert list(tables)[:2] == ["Pairwise agreement", "Overall"]
    conf = tables["Confusion A vs B"]
    assert list(conf.columns) == ["A \\ B", "accurate", "inaccurate"]
    assert conf.iloc[1, 2] == 3 and conf.iloc[1, 1] == 1
