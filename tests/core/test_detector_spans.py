"""The detectors scored word by word: trigger words as token spans, and their P/R/F1 against a layer's spans."""

from __future__ import annotations

import json

import pytest

from annotator.estimate.span_eval import evaluate_detectors, tally, word_pieces
from annotator.io.judgement_rows import import_judgement_rows
from annotator.sample import SAMPLE_PROJECT, load_sample
from annotator.spans import Span
from tests.cli_helpers import run_cli


def test_detector_tokens_map_onto_the_caption_words():
    # the detectors split "man's" and "t-shirt," at punctuation; each piece belongs to its whitespace word
    assert word_pieces("A man's t-shirt, red") == [0, 1, 1, 2, 2, 3]
    assert word_pieces("") == []
    assert word_pieces("-- dog") == [1]  # a word of punctuation only gives no detector token


def test_tally_equals_a_hand_computation():
    # caption 1: detector flags number at tokens 0-1 and colour at 3; the layer: number at 0, colour at 3-4
    # caption 2: detector flags number at 2; the layer: accurate (no types) -> every detector token is a false alarm
    # caption 3: detector flags colour at 1; the layer says colour without marking words -> left out of tokens
    # caption 4: not judged by the layer -> left out entirely
    rows = [
        (1, "", ("number", "color"), (Span(0, 2, "number"), Span(3, 4, "color")), 1.0),
        (2, "", ("number",), (Span(2, 3, "number"),), 1.0),
        (3, "", ("color",), (Span(1, 2, "color"),), 1.0),
        (4, "", ("number",), (Span(0, 1, "number"),), 1.0),
    ]
    human_types = {1: ("number", "color"), 2: (), 3: ("color",)}
    human_spans = {1: (Span(0, 1, "number"), Span(3, 5, "color"))}
    judged, with_spans, per_type = tally(rows, human_types, human_spans, type_ids=("number", "color", "scene"))
    assert (judged, with_spans) == (3, 1)
    assert set(per_type) == {"number", "color"}  # a type nobody marks is left out
    n, c = per_type["number"], per_type["color"]
    # number: detector tokens {0,1} + {2} = 3, human {0} = 1, both 1
    assert (n.tokens_detector, n.tokens_human, n.tokens_both) == (3, 1, 1)
    assert n.token_precision == pytest.approx(1 / 3) and n.token_recall == 1.0 and n.token_f1 == pytest.approx(0.5)
    # number captions: flagged on 1, 2; human on 1 -> P 1/2, R 1/1
    assert (n.captions_detector, n.captions_human, n.captions_both) == (2, 1, 1)
    # colour: caption 3 not localised -> only caption 1 counts: detector {3}, human {3,4}, both {3}
    assert (c.tokens_detector, c.tokens_human, c.tokens_both, c.not_localised) == (1, 2, 1, 1)
    assert c.token_f1 == pytest.approx(2 / 3)
    assert (c.captions_detector, c.captions_human, c.captions_both) == (2, 2, 2)


def _judge(store, tmp_path, rows):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_judgement_rows(store, SAMPLE_PROJECT, path)


def test_evaluate_on_the_sample_equals_a_hand_count(sqlite_store, tmp_path, capsys):
    load_sample(sqlite_store, with_judgements=False)
    caption = "A man in an orange jacket smiling in front of an american flag"
    # the detectors flag gender on "man" (token 1) and type of clothing on "jacket" (token 5)
    _judge(sqlite_store, tmp_path, [{"system": "sat-attn", "item": "astronaut.jpg", "caption": caption,
                                     "annotator": "ann", "label": "inaccurate",
                                     "error_types": ["gender", "clothing_color"],
                                     "spans": [{"start": 1, "end": 2, "type": "gender", "fix": "woman"},
                                               {"start": 4, "end": 5, "type": "clothing_color"}]}])
    report = evaluate_detectors(sqlite_store, SAMPLE_PROJECT, "annotator:ann")
    assert (report.captions, report.captions_with_spans) == (1, 1)
    g, cc, ct = report.per_type["gender"], report.per_type["clothing_color"], report.per_type["clothing_type"]
    assert (g.tokens_detector, g.tokens_human, g.tokens_both, g.token_f1) == (1, 1, 1, 1.0)
    assert (cc.tokens_detector, cc.tokens_human, cc.tokens_both, cc.token_recall) == (0, 1, 0, 0.0)
    assert cc.token_precision is None  # nothing predicted: undefined, not zero
    assert (ct.tokens_detector, ct.tokens_human, ct.token_precision) == (1, 0, 0.0)
    assert (ct.captions_detector, ct.captions_human, ct.caption_recall) == (1, 0, None)
    # the command line prints the same object
    code, out, _ = run_cli(capsys, "--db", sqlite_store.url, "detectors", "evaluate", "--project", SAMPLE_PROJECT,
                           "--annotator", "ann", "--json")
    assert code == 0
    assert json.loads(out) == json.loads(json.dumps(report.to_json()))
    code, out, _ = run_cli(capsys, "--db", sqlite_store.url, "detectors", "evaluate", "--project", SAMPLE_PROJECT,
                           "--annotator", "ann")
    assert code == 0 and "gender" in out and "—" in out


def test_threshold_is_checked(sqlite_store, capsys):
    load_sample(sqlite_store, with_judgements=False)
    code, _, err = run_cli(capsys, "--db", sqlite_store.url, "detectors", "evaluate", "--project", SAMPLE_PROJECT,
                           "--annotator", "x", "--threshold", "0")
    assert code == 2 and "--threshold" in err
