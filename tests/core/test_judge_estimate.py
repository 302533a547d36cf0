"""``annotator estimate --judge J``: a judge's probabilities as the predictor of prediction-powered inference, with
every guarantee the detectors' estimates have (the reference implementation's numbers, the classical interval
where it scores nothing, missing outputs, differences, the scores file)."""

from __future__ import annotations

import json

import numpy as np
import ppi_py
import pytest

from tests.cli_helpers import run_cli as run
from tests.judge_helpers import PROJECT, RATES, synthetic


def estimate(store, capsys, *argv):
    code, out, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann", "--json",
                         *argv)
    assert code == 0, err
    return json.loads(out)


def labelled_arrays(synth, system: str, judge: str, target: str):
    """Human labels of the labelled captions, the judge's scores of them and of every caption of the system."""
    out = synth.judges[judge]
    ids = synth.ids[system]

    def score(cid):
        row = out[cid]
        return row["p_inaccurate"] if target == "inaccurate" else row["types"][target]

    y = np.array([bool(synth.truth[system][r]) if target == "inaccurate" else target in synth.truth[system][r]
                  for r in synth.labelled.tolist()], dtype=float)
    f_all = np.array([score(c) for c in ids])
    return y, f_all[synth.labelled], f_all


def test_population_estimates_equal_ppi_py_with_the_judge_as_predictor(store, tmp_path, capsys):
    synth = synthetic(store, tmp_path)
    data = estimate(store, capsys, "--judge", "good", "--population", "--system", "a")
    assert data["judge"] == "good" and data["predictor"] == "good" and data["signature"]["k"] == 5
    assert data["classical_only"] == ["age", "clothing_type", "clothing_color", "subject_wrong", "subject_similar",
                                      "subject_nonexistent", "subject_extra", "object_wrong", "object_similar",
                                      "object_nonexistent", "object_extra", "stance", "activity", "position",
                                      "other", "unrelated"]
    for target in ["inaccurate", *RATES]:
        y, f, f_all = labelled_arrays(synth, "a", "good", target)
        entry = data["inaccurate"] if target == "inaccurate" else data["types"][target]
        assert 0 < entry["lambda"] < 1  # tuned inside [0, 1]: ppi_py's tuned lambda, unclipped, is the same
        lo, hi = ppi_py.ppi_mean_ci(y, f, f_all, alpha=0.05)
        assert entry["estimate"] == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, f, f_all)[0]), abs=1e-9)
        # the interval before any widening for a sparse target (the rare type is one), clipped to [0, 1]
        assert entry["normal_ci"] == pytest.approx([max(0.0, float(lo[0])), min(1.0, float(hi[0]))], abs=1e-9)
        if not entry["sparse"]:
            assert entry["ci"] == entry["normal_ci"]
    assert data["types"]["number"]["sparse"]  # 3 % of 150 labels: widened to hold the exact interval


def test_types_a_judge_does_not_score_get_the_classical_interval(store, tmp_path, capsys):
    synthetic(store, tmp_path, judges={"labels": {"k": 5, "accuracy": 0.9, "types": ()}})
    data = estimate(store, capsys, "--judge", "labels", "--system", "a")
    assert set(data["classical_only"]) == set(data["types"])
    for entry in data["types"].values():
        assert entry["ci"] == entry["classical_ci"] and entry["lambda"] == 0.0
        assert entry["estimate"] == pytest.approx(entry["classical"], abs=1e-15)
    assert data["inaccurate"]["lambda"] > 0
    assert any("judge 'labels' does not score 20 error types" in n and "classical" in n for n in data["notes"])


def test_captions_without_an_output_are_scored_with_the_judges_mean(store, tmp_path, capsys):
    synth = synthetic(store, tmp_path, judges={"partial": {"k": 5, "accuracy": 0.9, "skip": 40}})
    data = estimate(store, capsys, "--judge", "partial", "--system", "b", "--population")
    assert any("no output for 40 of these 300 captions" in n for n in data["notes"])
    out = synth.judges["partial"]
    have = [out[c]["p_inaccurate"] for c in synth.ids["b"] if c in out]
    f_all = np.array([out[c]["p_inaccurate"] if c in out else np.mean(have) for c in synth.ids["b"]])
    y = np.array([bool(synth.truth["b"][r]) for r in synth.labelled.tolist()], dtype=float)
    lo, hi = ppi_py.ppi_mean_ci(y, f_all[synth.labelled], f_all, alpha=0.05)
    assert data["inaccurate"]["normal_ci"] == pytest.approx([float(lo[0]), float(hi[0])], abs=1e-9)


def test_a_better_judge_narrows_the_interval_and_differences_pair(store, tmp_path, capsys):
    synthetic(store, tmp_path)
    good = estimate(store, capsys, "--judge", "good", "--difference", "a", "b")
    poor = estimate(store, capsys, "--judge", "poor", "--difference", "a", "b")
    for system in ("a", "b"):
        g, p = good["systems"][system]["inaccurate"], poor["systems"][system]["inaccurate"]
        assert g["ci"][1] - g["ci"][0] < p["ci"][1] - p["ci"][0] < p["classical_ci"][1] - p["classical_ci"][0]
    (diff,) = good["differences"]
    target = diff["targets"]["inaccurate"]
    assert target["design"] == "paired" and target["pairs"] == 150
    a, b = good["systems"]["a"]["inaccurate"]["estimate"], good["systems"]["b"]["inaccurate"]["estimate"]
    assert target["estimate"] == pytest.approx(a - b, abs=1e-12)
    assert good["systems"]["a"]["inaccurate"]["estimate"] != poor["systems"]["a"]["inaccurate"]["estimate"]


def test_the_detectors_by_name_are_the_default_and_the_scores_file_holds_the_judge(store, tmp_path, capsys):
    synth = synthetic(store, tmp_path, judges={"labels": {"k": 5, "accuracy": 0.9, "types": ("gender",)}})
    default, named = estimate(store, capsys), estimate(store, capsys, "--judge", "detectors")
    assert default == named and default["judge"] == "detectors"
    target = tmp_path / "scores.jsonl"
    code, _, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                       "--judge", "labels", "--scores", str(target))
    assert code == 0 and "wrote judge 'labels''s scores of 600 captions" in err
    rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    out = synth.judges["labels"]
    for r in rows[:20]:
        assert r["inaccurate"] == out[r["caption_id"]]["p_inaccurate"]
        assert r["gender"] == out[r["caption_id"]]["types"]["gender"]
        assert r["scene"] is None  # not scored: no score, not 0
    code, _, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                       "--judge", "nope")
    assert code == 2 and "no judge called 'nope'" in err


def test_an_active_draw_reads_a_judges_uncertainty(store, tmp_path, capsys):
    """assign --active --judge J: the chances are the allocation worked out from J's scores (recomputed here
    without the store), J is recorded with the draw, and the estimate from the draw uses any judge."""
    from annotator.estimate import HumanLabels, estimate_report
    from annotator.estimate.sampling import TARGETS, allocate, draw_seed, interval_widths
    from annotator.judges import load_judge
    from annotator.store.assignments import draw_members
    from annotator.store.projects import load_project, project_id, system_id
    from annotator.estimate.project import project_detections
    from sqlalchemy import select
    from annotator.store.schema import sample_draws
    synth = synthetic(store, tmp_path)
    code, out, err = run(capsys, "--db", store.url, "assign", "--project", PROJECT, "--annotators", "ann",
                         "--active", "40", "--system", "a", "--layer", "annotator:ann", "--judge", "good", "--seed", "5")
    assert code == 0, err
    assert "how unsure each caption is: judge good" in out
    sc = project_detections(load_project(store, PROJECT))["a"]
    scores = load_judge(store, PROJECT, "good").scores_for(sc)
    rows = synth.labelled
    human = HumanLabels.from_lists(rows, [bool(synth.truth["a"][r]) for r in rows], [synth.truth["a"][r] for r in rows])
    widths = interval_widths(estimate_report(sc.detections, human, predictor=scores))
    alloc = allocate({t: scores.score(t) for t in TARGETS}, human, 40, widths=widths)
    with store.read() as conn:
        pid = project_id(conn, PROJECT)
        taken = alloc.draw(draw_seed(5, system_id(conn, pid, "a"), 1))
        stored = {r.caption_id: r.probability for r in draw_members(conn, pid)}
        (predictor,) = conn.execute(select(sample_draws.c.predictor)).scalars().all()
    assert predictor == "good"
    assert stored == pytest.approx({synth.ids["a"][r]: alloc.probabilities[r] for r in taken})
    # the captions say nothing the detectors can read: without the judge an active draw is refused
    code, _, err = run(capsys, "--db", store.url, "assign", "--project", PROJECT, "--annotators", "ann",
                       "--active", "40", "--system", "b", "--layer", "annotator:ann")
    assert code == 2 and "the detectors give every caption not labelled yet the same expected error" in err
    from annotator.store.judgements import insert_judgement
    from annotator.store.users import user_id
    fresh = [r for r in taken if r not in set(rows.tolist())]
    with store.transaction() as conn:  # ann labels the drawn captions
        for r in fresh:
            t = synth.truth["a"][r]
            insert_judgement(conn, synth.ids["a"][r], user_id(conn, "ann"), label="inaccurate" if t else "accurate",
                             error_types=t)
    data = estimate(store, capsys, "--judge", "poor", "--system", "a")
    assert data["sampling"]["design"] == "draws" and data["predictor"] == "poor"
    code, _, err = run(capsys, "--db", store.url, "assign", "--project", PROJECT, "--annotators", "ann",
                       "--random", "10", "--judge", "good")
    assert code == 2 and "--judge belongs to --active" in err
