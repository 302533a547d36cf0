"""Rescoring glue: by-type table, caption files, live Δ — checked against pycocoevalcap itself."""

from __future__ import annotations

import argparse
import json

import pytest
from metric_helpers import coco  # independent reference: pycocoevalcap's scorers on raw strings

from annotator import rescoring
from annotator.cli import CommandContext, main
from annotator.commands.rescore import add_by_type_arguments, run_by_type
from annotator.correction import correct_caption, leave_untouched
from annotator.errors import InputError, NotFound
from annotator.metrics import REGISTRY
from annotator.model import Caption, Item, Project
from annotator.store import projects as P
from annotator.store.judgements import save_judgement
from annotator.store.users import user_id
from tests.store.test_correction_store import CAPTIONS, REFS, build_demo

FAST = ("Bleu_1", "Bleu_4", "ROUGE_L", "CIDEr")

CC = "A man in an orange shirt is climbing a rock."       # clothing_color of line 0
AGE = "A boy in a blue shirt is climbing a rock."         # age of line 0
GEN = "A boy playing soccer on the grass."                # gender of line 1
ACT = "A woman in a red dress is talking."                # activity of line 3
ALL0 = "A boy in an orange shirt is climbing a rock."     # both edits of line 0 merged


def _corrections(store, ids):
    correct_caption(store, ids[0], "clothing_color", "alice", CC)
    correct_caption(store, ids[0], "age", "alice", AGE)
    correct_caption(store, ids[1], "gender", "alice", GEN)
    correct_caption(store, ids[3], "activity", "alice", ACT)
    leave_untouched(store, ids[3], "clothing_color", "alice")


def _with(line_texts: dict) -> list[str]:
    hyps = list(CAPTIONS)
    for k, v in line_texts.items():
        hyps[k] = v
    return hyps


def test_by_type_matches_pycocoevalcap(store):
    ids = build_demo(store)
    _corrections(store, ids)
    out = rescoring.by_type_table(store, "demo", "sys", resamples=200, seed=3, metrics=FAST)
    assert set(out) == {"baseline", "types", "all", "meta"}
    assert list(out["types"]) == ["age", "gender", "clothing_color", "activity"]  # taxonomy order
    expected = {"age": _with({0: AGE}), "gender": _with({1: GEN}), "clothing_color": _with({0: CC}),
                "activity": _with({3: ACT})}
    base = coco(CAPTIONS, REFS)
    for m in FAST:
        assert out["baseline"][m] == pytest.approx(base[m], abs=1e-12)
    for t, hyps in expected.items():
        ref = coco(hyps, REFS)
        row = out["types"][t]
        assert row["changed"] == 1
        for m in FAST:
            assert row["scores"][m] == pytest.approx(ref[m], abs=1e-12)
            assert row["delta"][m] == pytest.approx(ref[m] - base[m], abs=1e-12)
            lo, hi = row["ci"][m]
            assert lo <= hi
            assert 0.0 <= row["p"][m] <= 1.0
    # "all": line 0 merges the age and colour edits; lines 1 and 3 take their one correction.
    ref_all = coco(_with({0: ALL0, 1: GEN, 3: ACT}), REFS)
    assert out["all"]["changed"] == 3
    for m in FAST:
        assert out["all"]["scores"][m] == pytest.approx(ref_all[m], abs=1e-12)
    meta = out["meta"]
    assert meta["untouched"] == {"clothing_color": 1} and meta["conflicts"] == [] and meta["metrics"] == list(FAST)
    json.dumps(out.to_dict())  # JSON-ready (the same field names as the JSON output)


def test_bootstrap_p_value_matches_hand_computation(sqlite_store):
    """One improved caption out of six: Δ* is 0 exactly in the resamples that miss it, which
    happens with probability (5/6)^6, so the two-sided p is about 2·(5/6)^6 ≈ 0.670 and the
    interval starts at 0."""
    ids = build_demo(sqlite_store)
    correct_caption(sqlite_store, ids[0], "clothing_color", "alice", CC)
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=2000, seed=11, metrics=("ROUGE_L", "CIDEr"))
    row = out["types"]["clothing_color"]
    for m in ("ROUGE_L", "CIDEr"):
        assert row["delta"][m] > 0
        assert row["p"][m] == pytest.approx(2 * (5 / 6) ** 6, abs=0.06)
        assert row["ci"][m][0] == 0.0 and row["ci"][m][1] > row["delta"][m]
    # Same seed, same answer; another seed, other resamples.
    again = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=2000, seed=11, metrics=("ROUGE_L", "CIDEr"))
    assert again["types"] == out["types"]
    other = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=2000, seed=12, metrics=("ROUGE_L", "CIDEr"))
    assert other["types"]["clothing_color"]["p"] != row["p"]
    assert other["types"]["clothing_color"]["delta"] == row["delta"]


def test_no_corrections_gives_baseline_only(sqlite_store):
    build_demo(sqlite_store)
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=50, metrics=FAST)
    assert out["types"] == {}
    assert out["all"]["changed"] == 0 and all(v == 0 for v in out["all"]["delta"].values())
    assert all(p == 1.0 for p in out["all"]["p"].values())


def test_layer_and_corrector_filters_change_the_table(sqlite_store):
    ids = build_demo(sqlite_store)
    correct_caption(sqlite_store, ids[3], "clothing_color", "alice", "A woman in a blue dress is holding a sign.")
    correct_caption(sqlite_store, ids[0], "clothing_color", "bob", CC)
    # Without a layer, the adjudicated one decides (a lead adjudicated), which tags only line 0 with the type.
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=50, metrics=FAST)
    assert out["types"]["clothing_color"]["changed"] == 1 and out["meta"]["layer"] == "adjudicated"
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=50, metrics=FAST, layer="annotator:alice")
    assert out["types"]["clothing_color"]["changed"] == 2
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=50, metrics=FAST, layer="adjudicated")
    assert out["types"]["clothing_color"]["changed"] == 1 and out["meta"]["dropped"] == 1
    assert out["meta"]["layer"] == "adjudicated"
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=50, metrics=FAST, correctors=["alice"],
                                  layer="annotator:alice")
    ref = coco(_with({3: "A woman in a blue dress is holding a sign."}), REFS)
    assert out["types"]["clothing_color"]["scores"]["CIDEr"] == pytest.approx(ref["CIDEr"], abs=1e-12)


def test_conflicting_corrections_are_reported(sqlite_store):
    ids = build_demo(sqlite_store)
    # The lead's adjudication tags line 0 with the three types corrected below.
    with sqlite_store.transaction() as conn:
        lead = user_id(conn, "lead")
    save_judgement(sqlite_store, ids[0], lead, label="inaccurate", kind="adjudication",
                   error_types=["clothing_color", "clothing_type", "scene"])
    correct_caption(sqlite_store, ids[0], "clothing_color", "alice", CC)
    correct_caption(sqlite_store, ids[0], "clothing_type", "alice", "A man in a blue jacket is climbing a rock.")
    # Four changed words: over the limit, saved with a reason.
    correct_caption(sqlite_store, ids[0], "scene", "alice", "A man in a long green coat is climbing a big rock.",
                    override_reason="test overlap")
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=20, metrics=FAST)
    (conflict,) = out["meta"]["conflicts"]
    # clothing_type and clothing_color touch different words and merge; scene overlaps both.
    assert conflict["applied"] == ["clothing_type", "clothing_color"] and conflict["left_out"] == ["scene"]
    ref = coco(_with({0: "A man in an orange jacket is climbing a rock."}), REFS)
    assert out["all"]["scores"]["Bleu_4"] == pytest.approx(ref["Bleu_4"], abs=1e-12)
    assert out["meta"]["overrides"][0]["override_reason"] == "test overlap"


def test_items_without_references_are_skipped(sqlite_store):
    build_demo(sqlite_store)
    with sqlite_store.transaction() as conn:
        P.write_project(conn, Project("demo", items=[Item("extra.jpg", captions=[Caption("sys", "A cat.")])]))
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=20, metrics=FAST)
    assert out["meta"]["skipped_lines"] == [6] and out["meta"]["scored"] == 6
    assert out["baseline"]["CIDEr"] == pytest.approx(coco(CAPTIONS, REFS)["CIDEr"], abs=1e-12)


def test_without_java_meteor_is_left_out_with_a_note(sqlite_store, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `java` on PATH
    ids = build_demo(sqlite_store)
    correct_caption(sqlite_store, ids[1], "gender", "alice", GEN)
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=20)
    assert "METEOR" not in out["baseline"] and "METEOR" not in out["types"]["gender"]["delta"]
    assert set(out["baseline"]) == set(REGISTRY.score_keys(REGISTRY.defaults())) - {"METEOR"}
    assert "Java" in out["meta"]["unavailable"]
    assert "Java" in rescoring.format_by_type(out)
    live = rescoring.LiveDelta(sqlite_store, "demo", "sys", "gender")
    assert live.delta()["metrics"] == ["Bleu_4", "ROUGE_L", "CIDEr"] and "Java" in live.delta()["unavailable"]


@pytest.mark.slow
@pytest.mark.java
def test_by_type_with_meteor(sqlite_store, reference_scorers):
    """METEOR through Java, compared with pycocoevalcap's Meteor wrapper."""
    from annotator.metrics import meteor_available
    if not meteor_available():
        pytest.skip("no Java here")
    ids = build_demo(sqlite_store)
    correct_caption(sqlite_store, ids[1], "gender", "alice", GEN)
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=100)
    assert list(out["baseline"]) == list(REGISTRY.score_keys(REGISTRY.defaults())) and out["meta"]["unavailable"] is None
    m = reference_scorers("meteor")
    base, _ = m.compute_score({i: r for i, r in enumerate(REFS)}, {i: [h] for i, h in enumerate(CAPTIONS)})
    fixed, _ = m.compute_score({i: r for i, r in enumerate(REFS)}, {i: [h] for i, h in enumerate(_with({1: GEN}))})
    assert out["baseline"]["METEOR"] == pytest.approx(base, abs=1e-9)
    assert out["types"]["gender"]["delta"]["METEOR"] == pytest.approx(fixed - base, abs=1e-9)


def test_table_frame_and_text(sqlite_store):
    ids = build_demo(sqlite_store)
    _corrections(sqlite_store, ids)
    out = rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=20, metrics=FAST)
    df = rescoring.table_frame(out)
    assert list(df["row"]) == ["Baseline", "Age", "Gender", "Color of clothing", "Activity", rescoring.ALL_CORRECTIONS_ROW]
    assert list(df["changed"]) == [0, 1, 1, 1, 1, 3]
    assert df.loc[0, "BLEU-4"] == pytest.approx(100 * out["baseline"]["Bleu_4"])
    assert df.loc[3, "CIDEr-D Δ"] == pytest.approx(100 * out["types"]["clothing_color"]["delta"]["CIDEr"])
    assert df.loc[5, "ROUGE-L p"] == out["all"]["p"]["ROUGE_L"]
    assert {"BLEU-1 Δ low", "BLEU-1 Δ high"} <= set(df.columns)
    text = rescoring.format_by_type(out)
    assert "Color of clothing" in text and rescoring.ALL_CORRECTIONS_ROW in text and "Baseline" in text
    from annotator.io.tables import write_table
    assert rescoring.ALL_CORRECTIONS_ROW.encode() in write_table(df, "csv")
    assert b"\\toprule" in write_table(df, "latex")


def test_rescore_lines(sqlite_store):
    build_demo(sqlite_store)
    lines = _with({0: CC, 1: GEN})
    ref = coco(lines, REFS)
    base = coco(CAPTIONS, REFS)
    # Project item order, no comparison.
    out = rescoring.rescore_lines(sqlite_store, "demo", lines, metrics=FAST)
    for m in FAST:
        assert out["scores"][m] == pytest.approx(ref[m], abs=1e-12)
    assert out["n"] == 6 and out["compare"] is None and out["aligned_to"] is None
    # Aligned with the system's lines and compared with its captions.
    cmp = rescoring.rescore_lines(sqlite_store, "demo", lines, system="sys", metrics=FAST, resamples=50)
    assert cmp["compare"]["changed"] == 2 and cmp["aligned_to"] == "sys"
    assert cmp["compare"]["delta"]["Bleu_4"] == pytest.approx(ref["Bleu_4"] - base["Bleu_4"], abs=1e-12)
    assert cmp["compare"]["baseline"]["CIDEr"] == pytest.approx(base["CIDEr"], abs=1e-12)
    with pytest.raises(InputError, match="upload.txt, line 6: 5 lines but project 'demo' has 6 items"):
        rescoring.rescore_lines(sqlite_store, "demo", lines[:5], source="upload.txt")
    with pytest.raises(InputError, match="5 lines but system 'sys' has 6 captions"):
        rescoring.rescore_lines(sqlite_store, "demo", lines[:5], system="sys", source="upload.txt")
    with pytest.raises(InputError, match="upload.txt, line 3: empty caption"):
        rescoring.rescore_lines(sqlite_store, "demo", lines[:2] + [" "] + lines[3:], source="upload.txt")
    with pytest.raises(NotFound):
        rescoring.rescore_lines(sqlite_store, "demo", lines, system="nope")


def test_rescore_lines_follow_the_system_order(sqlite_store):
    """A second system imported in another item order: line i is that system's line i, not item i."""
    build_demo(sqlite_store)
    order = [5, 4, 3, 2, 1, 0]
    with sqlite_store.transaction() as conn:
        P.write_project(conn, Project("demo", items=[Item(f"img{i}.jpg", captions=[Caption("rev", f"caption {i}")])
                                                      for i in order]))
    lines = [CAPTIONS[i] for i in order]  # the first system's captions, in the second system's order
    out = rescoring.rescore_lines(sqlite_store, "demo", lines, system="rev", metrics=FAST, resamples=20)
    assert out["scores"]["CIDEr"] == pytest.approx(coco(CAPTIONS, REFS)["CIDEr"], abs=1e-12)
    assert out["compare"]["changed"] == 6


def test_live_delta_tracks_saves_and_store(sqlite_store):
    ids = build_demo(sqlite_store)
    correct_caption(sqlite_store, ids[0], "clothing_color", "alice", CC)
    live = rescoring.LiveDelta(sqlite_store, "demo", "sys", "clothing_color", metrics=FAST)
    base = coco(CAPTIONS, REFS)
    d = live.delta()
    assert d["changed"] == 1
    ref = coco(_with({0: CC}), REFS)
    for m in FAST:
        assert d["baseline"][m] == pytest.approx(base[m], abs=1e-12)
        assert d["delta"][m] == pytest.approx(ref[m] - base[m], abs=1e-12)
    # A save applied directly (what the page does right after saving).
    live.apply(3, "A woman in a blue dress is holding a sign.")
    ref2 = coco(_with({0: CC, 3: "A woman in a blue dress is holding a sign."}), REFS)
    assert live.delta()["scores"]["CIDEr"] == pytest.approx(ref2["CIDEr"], abs=1e-12)
    assert live.delta()["changed"] == 2
    # sync() drops what the store does not have (line 3 was never saved) and picks up other changes.
    leave_untouched(sqlite_store, ids[0], "clothing_color", "alice")
    correct_caption(sqlite_store, ids[0], "clothing_color", "bob", "A man in a green shirt is climbing a rock.")
    live.sync(sqlite_store)
    ref3 = coco(_with({0: "A man in a green shirt is climbing a rock."}), REFS)
    assert live.delta()["changed"] == 1
    assert live.delta()["scores"]["Bleu_4"] == pytest.approx(ref3["Bleu_4"], abs=1e-12)
    # Back to nothing.
    live.apply(0, None)
    assert all(abs(v) < 1e-15 for v in live.delta()["delta"].values())


def test_unknown_metric_and_bad_resamples(sqlite_store):
    build_demo(sqlite_store)
    with pytest.raises(InputError, match="unknown metric"):
        rescoring.by_type_table(sqlite_store, "demo", "sys", metrics=("BLEU",))
    with pytest.raises(InputError, match="resample"):
        rescoring.by_type_table(sqlite_store, "demo", "sys", resamples=0)
    assert REGISTRY.score_keys(["cider", "bleu"]) == ("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "CIDEr")


def test_run_by_type_hook(sqlite_store, capsys):
    """The hook ``annotator rescore --by-type`` calls: its parser options and JSON output."""
    ids = build_demo(sqlite_store)
    correct_caption(sqlite_store, ids[1], "gender", "alice", GEN)
    parser = argparse.ArgumentParser()
    parser.add_argument("--project")
    parser.add_argument("--system")
    parser.add_argument("--metrics", default="bleu,rouge,cider")
    parser.add_argument("--json", action="store_true")
    add_by_type_arguments(parser)
    args = parser.parse_args(["--project", "demo", "--system", "sys", "--by-type", "--resamples", "30", "--seed", "4",
                              "--corrector", "alice", "--json"])
    args.db = sqlite_store.url
    ctx = CommandContext(args)
    try:
        assert run_by_type(args, ctx) == 0
    finally:
        ctx.close()
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"baseline", "types", "all"}
    assert set(out["types"]) == {"gender"}
    assert set(out["types"]["gender"]) == {"scores", "delta", "changed", "ci", "p"}
    assert out["types"]["gender"]["changed"] == 1 and out["meta"]["seed"] == 4 and out["meta"]["resamples"] == 30
    assert "METEOR" not in out["baseline"] and len(out["baseline"]) == 6


@pytest.mark.java  # the default metrics: METEOR too
def test_corrections_delta_cli(sqlite_store, capsys):
    ids = build_demo(sqlite_store)
    correct_caption(sqlite_store, ids[3], "activity", "alice", ACT)
    rc = main(["--db", sqlite_store.url, "corrections", "delta", "--project", "demo", "--system", "sys",
               "--resamples", "20", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["types"]) == ["activity"] and out["types"]["activity"]["changed"] == 1
    rc = main(["--db", sqlite_store.url, "corrections", "delta", "--project", "demo", "--system", "sys", "--resamples", "20"])
    assert rc == 0 and "Activity" in capsys.readouterr().out


def test_rescore_by_type_cli(sqlite_store, capsys):
    """End to end through ``annotator rescore --by-type --json`` (the metrics engineer's command)."""
    ids = build_demo(sqlite_store)
    correct_caption(sqlite_store, ids[0], "clothing_color", "alice", CC)
    correct_caption(sqlite_store, ids[1], "gender", "alice", GEN)
    rc = main(["--db", sqlite_store.url, "rescore", "--project", "demo", "--system", "sys", "--by-type", "--json",
               "--resamples", "40", "--seed", "2", "--metrics", "bleu,rouge,cider"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["types"]) == ["gender", "clothing_color"]
    ref = coco(_with({0: CC}), REFS)
    assert out["types"]["clothing_color"]["scores"]["CIDEr"] == pytest.approx(ref["CIDEr"], abs=1e-12)
    assert out["all"]["changed"] == 2 and set(out["all"]) == {"scores", "delta", "changed", "ci", "p"}
    assert out["meta"]["resamples"] == 40 and out["meta"]["seed"] == 2
    rc = main(["--db", sqlite_store.url, "rescore", "--project", "demo", "--system", "sys", "--by-type",
               "--captions", "x.txt"])
    assert rc == 2 and "--by-type" in capsys.readouterr().err
