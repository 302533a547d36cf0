"""``annotator estimate`` on stored projects (SQLite and PostgreSQL): the same numbers as the core, layers,
system differences, exports and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from annotator.estimate import HumanLabels, detect, estimate_report, evidence_of_item
from annotator.model import Caption, Item, Project, Reference, Role
from annotator.store.judgements import insert_judgement
from annotator.store.projects import load_project, write_project
from annotator.store.users import create_user
from annotator.taxonomy import ERROR_TYPE_IDS
from tests.cli_helpers import run_cli as run
from tests.store.test_agreement_store import PROJECT as HAND_MADE, build_project

PROJECT = "street"
PEOPLE = [("man", "woman"), ("woman", "man"), ("boy", "girl"), ("girl", "boy")]
COLOURS = ["red", "blue", "green", "yellow", "black"]
PLACES = ["park", "street", "beach", "kitchen"]


def scene(i: int) -> tuple[str, str, str]:
    who, _ = PEOPLE[i % 4]
    return who, COLOURS[i % 5], PLACES[(i // 5) % 4]


def caption_of(i: int, error: str | None) -> str:
    who, colour, place = scene(i)
    if error == "gender":
        who = dict(PEOPLE)[who]
    elif error == "clothing_color":
        colour = COLOURS[(i + 2) % 5]
    elif error == "scene":
        place = PLACES[(i // 5 + 1) % 4]
    return f"A {who} in a {colour} shirt walks in the {place}"


def build_street(store, n: int = 120, labelled=None, seed: int = 0, names=("good", "poor")):
    """n images with five references; systems ``names`` with 10 % and 50 % errors (good, poor); annotator ann
    labels ``labelled`` (caption rows, default a random 40 %) of both with the true errors. Returns the truth per
    system."""
    rng = np.random.default_rng(seed)
    truth = {names[0]: [], names[1]: []}
    items = []
    for i in range(n):
        who, colour, place = scene(i)
        refs = [Reference(f"A {who} wearing a {colour} shirt in the {place}"),
                Reference(f"A {who} walking through the {place}"), Reference(f"Someone in {colour} outdoors"),
                Reference(f"A {who} in a {colour} top strolls in the {place}"), Reference(f"A {who} in the {place}")]
        caps = []
        for system, rate in ((names[0], 0.1), (names[1], 0.5)):
            error = str(rng.choice(["gender", "clothing_color", "scene"])) if rng.random() < rate else None
            truth[system].append((error,) if error else ())
            caps.append(Caption(system, caption_of(i, error)))
        items.append(Item(key=f"img{i}", references=refs, captions=caps, is_practice=(i == n - 1)))
    with store.transaction() as conn:
        write_project(conn, Project(PROJECT, items=items))
        uid = create_user(conn, "ann", Role.ANNOTATOR)
    project = load_project(store, PROJECT)
    if labelled is None:
        labelled = np.sort(rng.choice(n, int(0.4 * n), replace=False))
    with store.transaction() as conn:
        for system in truth:
            ids = [c.caption_id for it in project.items for c in it.captions if c.system == system]
            for row in labelled:
                types = truth[system][row]
                insert_judgement(conn, ids[row], uid, label="inaccurate" if types else "accurate", error_types=types)
    return project, truth, labelled


def test_json_equals_the_core_computation(store, capsys):
    project, truth, labelled = build_street(store)
    code, out, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                         "--system", "poor", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["system"], data["layer"], data["n_total"]) == ("poor", "annotator:ann", 119)  # practice item out
    assert data["n_human"] == len([r for r in labelled if r != 119])
    # the same figures straight from the core, without the store
    items = project.items[:119]
    det = detect([c.text for it in items for c in it.captions if c.system == "poor"], list(range(119)),
                 [evidence_of_item(it) for it in items])
    rows = [int(r) for r in labelled if r != 119]
    human = HumanLabels.from_lists(rows, [bool(truth["poor"][r]) for r in rows], [truth["poor"][r] for r in rows])
    core = estimate_report(det, human, system="poor")
    assert data["inaccurate"]["estimate"] == pytest.approx(core.inaccurate.estimate)
    assert data["inaccurate"]["ci"] == pytest.approx(list(core.inaccurate.ci))
    assert data["types"]["gender"]["classical_ci"] == pytest.approx([max(0, core.types["gender"].classical_ci[0]),
                                                                     core.types["gender"].classical_ci[1]])
    true_share = np.mean([bool(t) for t in truth["poor"][:119]])
    assert data["inaccurate"]["ci"][0] <= true_share <= data["inaccurate"]["ci"][1]
    # the detectors carry signal here, so the normal-approximation interval is narrower than the human sample's
    # alone (they are nearly exact: the printed interval is widened to the exact one when residuals are sparse)
    assert data["inaccurate"]["sparse"] == core.inaccurate.sparse
    width = data["inaccurate"]["normal_ci"][1] - data["inaccurate"]["normal_ci"][0]
    assert width < 0.8 * (data["inaccurate"]["classical_ci"][1] - data["inaccurate"]["classical_ci"][0])
    assert data["detectors"]["gender"]["recall"] == 1.0
    assert any("practice" in n for n in data["notes"])
    assert not any("random sample" in w for w in data["warnings"])


def test_systems_side_by_side_with_their_difference(store, capsys, tmp_path):
    build_street(store)
    code, out, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--layer", "annotator:ann",
                         "--difference", "poor", "good", "--types", "top5", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data["systems"]) == {"good", "poor"}
    (diff,) = data["differences"]
    assert (diff["a"], diff["b"]) == ("poor", "good")
    lo, hi = diff["targets"]["inaccurate"]["ci"]
    assert lo > 0.1  # 50 % against 10 % (nearly exact detectors: widened to the exact intervals, 0.14 here)
    assert all(len(s["types"]) == 5 for s in data["systems"].values())
    code, out, _ = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                       "--difference", "poor", "good")
    assert code == 0 and "system poor" in out and "poor minus good:" in out and "CHAIR-i" in out
    target = tmp_path / "estimates.csv"
    code, _, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                       "--format", "csv", "--output", str(target), "--difference", "poor", "good")
    assert code == 0 and "wrote" in err
    text = target.read_text(encoding="utf-8")
    assert "system_a" in text and "ci_low" in text


def test_labels_taken_from_the_top_of_a_queue_are_flagged(store, capsys):
    build_street(store, labelled=np.arange(48))
    code, out, _ = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                       "--system", "good", "--json")
    assert code == 0
    assert any("random sample" in w for w in json.loads(out)["warnings"])


def test_adjudicated_layer_with_open_types_and_practice_items(store, capsys):
    build_project(store)
    code, out, err = run(capsys, "--db", store.url, "estimate", "--project", HAND_MADE, "--layer", "adjudicated",
                         "--system", "sysA", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["n_total"] == 9  # img9 is a practice item
    assert data["inaccurate"]["n_human"] >= data["types"]["gender"]["n_human"]
    assert any("error types pending" in n for n in data["notes"])
    assert list(data["types"]) == list(ERROR_TYPE_IDS)


@pytest.mark.parametrize("argv, message", [
    (["--system", "nope"], "has no system 'nope'"),
    (["--alpha", "1.5"], "--alpha"),
    (["--types", "colr"], "unknown error type label 'colr'"),
    (["--difference", "poor", "nope"], "has no system 'nope'"),
    (["--difference", "poor", "poor"], "--difference: compare two different systems, not 'poor' with itself"),
    (["--alpha", "1e-320"], "--alpha: must be between 0.001 and 0.5"),
    (["--alpha", "0.6"], "--alpha: must be between 0.001 and 0.5"),
])
def test_bad_input_is_named(store, capsys, argv, message):
    build_street(store, n=30)
    code, _, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann", *argv)
    assert code == 2 and message in err


def test_unknown_annotator_and_project(store, capsys):
    build_street(store, n=30)
    code, _, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "zoe")
    assert code == 2 and "'zoe' has no judgements" in err
    code, _, err = run(capsys, "--db", store.url, "estimate", "--project", "nope", "--annotator", "ann")
    assert code == 2 and "nope" in err


def test_a_system_without_labels_is_skipped_not_fatal(store, capsys):
    """Without --system every system is estimated that can be; one without labels is listed with the reason."""
    project, truth, _ = build_street(store)
    ids = [c.caption_id for it in project.items for c in it.captions if c.system == "poor"]
    with store.transaction() as conn:
        uid = create_user(conn, "bea", Role.ANNOTATOR)  # bea labelled system poor only
        for row in range(40):
            types = truth["poor"][row]
            insert_judgement(conn, ids[row], uid, label="inaccurate" if types else "accurate", error_types=types)
    code, out, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "bea")
    assert code == 0, err
    assert "system poor, layer annotator:bea" in out and "system good," not in out
    assert "skipped system good: layer 'annotator:bea' labels 0 of the 119 captions of system 'good'" in out
    code, out, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "bea", "--json")
    data = json.loads(out)
    assert code == 0 and data["system"] == "poor" and "at least two" in data["skipped"]["good"]
    # asked for by name (or as one side of a difference), it is still an error
    for argv in (["--system", "good"], ["--difference", "poor", "good"]):
        code, _, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "bea", *argv)
        assert code == 2 and "system 'good'" in err


def test_detector_scores_are_written_for_another_tool(store, capsys, tmp_path):
    """--scores FILE: every estimated caption's scores, human label and trigger words, CSV or JSONL by extension;
    the file reproduces the estimate with ppi_py."""
    import pandas as pd
    import ppi_py
    project, truth, labelled = build_street(store)
    jsonl, csv = tmp_path / "scores.jsonl", tmp_path / "scores.csv"
    code, out, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                         "--population", "--json", "--scores", str(jsonl))
    assert code == 0, err
    assert f"wrote the detector scores of {2 * 119} captions" in err
    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 * 119 and {r["system"] for r in rows} == {"good", "poor"}
    assert set(rows[0]) >= {"caption_id", "image", "system", "human_label", "human_types", "gender", "inaccurate",
                            "triggers"}
    ids = {c.caption_id: (it.key, c.system, n) for it in project.items for n, c in enumerate(it.captions)}
    for r in rows:
        assert ids[r["caption_id"]][:2] == (r["image"], r["system"])
    # the caption with a gender error names the word behind its flag
    poor = [r for r in rows if r["system"] == "poor"]
    flagged = next(i for i, t in enumerate(truth["poor"][:119]) if t == ("gender",))
    assert poor[flagged]["gender"] >= 0.5 and poor[flagged]["triggers"]["gender"]
    # the file alone gives the estimate back (the reference implementation, --population)
    est = json.loads(out)["systems"]["poor"]["inaccurate"]
    y = np.array([r["human_label"] == "inaccurate" for r in poor if r["human_label"]], dtype=float)
    f = np.array([r["inaccurate"] for r in poor if r["human_label"]])
    f_all = np.array([r["inaccurate"] for r in poor])
    assert float(ppi_py.ppi_mean_pointestimate(y, f, f_all)[0]) == pytest.approx(est["estimate"], abs=1e-12)
    code, _, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                       "--scores", str(csv))
    assert code == 0, err
    frame = pd.read_csv(csv, keep_default_na=False)
    assert len(frame) == 2 * 119 and list(frame.columns[:5]) == ["caption_id", "image", "system", "human_label",
                                                                 "human_types"]
    assert "gender: " in frame.loc[(frame["system"] == "poor")].iloc[flagged]["triggers"]
    code, _, err = run(capsys, "--db", store.url, "estimate", "--project", PROJECT, "--annotator", "ann",
                       "--scores", str(tmp_path / "scores.txt"))
    assert code == 2 and "--scores: the file name must end in .csv or .jsonl" in err
