"""Correction starts from the spans: the queue's marked words and pre-filled caption, the span rule on save
(SQLite and PostgreSQL), ``corrections queue`` and the Correction page."""

from __future__ import annotations

import json

import pytest

from annotator.correction import correct_caption, queue
from annotator.correction.span_rule import caption_spans
from annotator.errors import GuardViolation
from annotator.spans import Span
from annotator.store.judgements import save_judgement
from annotator.store.users import user_id
from tests.apptest_helpers import page_test
from tests.cli_helpers import run_cli
from tests.test_correction_store import ALICE, BOB, build_demo

# "A man in a blue shirt is climbing a rock.": blue = token 4, shirt = 5.
ALICE_SPAN = Span(4, 5, "clothing_color", "orange")
BOB_SPAN = Span(4, 6, "clothing_color")


def build(store) -> dict:
    ids = build_demo(store)
    with store.read() as conn:
        alice, bob = user_id(conn, "alice"), user_id(conn, "bob")
    save_judgement(store, ids[0], alice, label="inaccurate", error_types=ALICE[0], spans=[ALICE_SPAN])
    save_judgement(store, ids[0], bob, label="inaccurate", error_types=BOB[0], spans=[BOB_SPAN])
    return ids


def test_the_queue_carries_the_layers_spans_and_the_guard_keeps_to_them(store):
    ids = build(store)
    (entry, *_) = queue(store, "demo", "sys", "clothing_color", "annotator:alice")
    assert entry.caption_id == ids[0] and entry.spans == (ALICE_SPAN,)
    # The adjudicated layer (the lead marked no words) has none: the word-class rule stays.
    assert queue(store, "demo", "sys", "clothing_color", "adjudicated")[0].spans == ()
    assert caption_spans(store, ids[0], "clothing_color", "annotator:bob") == (BOB_SPAN,)
    assert caption_spans(store, ids[0], "clothing_color") == (Span(4, 6, "clothing_color"),)  # everyone's, joined
    # Inside alice's span (and the article before it): saved under the span rule.
    ok = correct_caption(store, ids[0], "clothing_color", "alice", "A man in an orange shirt is climbing a rock.",
                         layer="annotator:alice")
    assert ok.report.rule == "spans" and ok.report.ok
    # "man" lies outside the marked words: refused, naming it; nothing stored.
    with pytest.raises(GuardViolation, match=r"'man' → 'boy': changed outside the words marked with Color of "
                                             r"clothing \('blue'\)"):
        correct_caption(store, ids[0], "clothing_color", "alice", "A boy in an orange shirt is climbing a rock.",
                        layer="annotator:alice")
    # "shirt" is outside alice's span but inside bob's: bob's layer lets it change, and so would the word-class rule
    # refuse it.
    with pytest.raises(GuardViolation, match="'shirt' replaced"):
        correct_caption(store, ids[0], "clothing_color", "alice", "A man in an orange jacket is climbing a rock.",
                        layer="annotator:alice")
    assert correct_caption(store, ids[0], "clothing_color", "bob", "A man in an orange jacket is climbing a rock.",
                           layer="annotator:bob").report.ok


def test_corrections_queue_shows_the_marked_words_and_the_prefill(store, capsys):
    ids = build(store)
    args = ("--db", store.url, "corrections", "queue", "--project", "demo", "--system", "sys", "--type",
            "clothing_color", "--layer", "annotator:alice")
    code, out, _ = run_cli(capsys, *args)
    assert code == 0 and "img0.jpg\tA man in a [blue → orange] shirt is climbing a rock." in out
    code, out, _ = run_cli(capsys, *args, "--json")
    first = json.loads(out)[0]
    assert first["caption_id"] == ids[0]
    assert first["spans"] == [{"start": 4, "end": 5, "type": "clothing_color", "fix": "orange"}]
    assert first["prefill"] == "A man in a orange shirt is climbing a rock."


def test_correction_page_highlights_the_spans_and_prefills_the_fix(sqlite_store, monkeypatch, tmp_path):
    from annotator.correction.blind import set_project_blind
    monkeypatch.setenv("PATH", str(tmp_path))  # no java: no live scores
    build(sqlite_store)
    set_project_blind(sqlite_store, "demo", False)
    at = page_test("correct", sqlite_store.url, user="lead", role="lead", project="demo").run()
    assert not at.exception, at.exception
    at.selectbox(key="correct_layer").set_value("annotator:alice").run()
    at.selectbox(key="correct_type").set_value("clothing_color").run()
    assert not at.exception, at.exception
    marked = [h.proto.body for h in at.get("html") if "span-mark" in h.proto.body]
    assert marked and "<mark class='span-mark span-people'>blue</mark>" in marked[0] and "→ orange" in marked[0]
    (area,) = [t for t in at.text_area if t.label == "Corrected caption"]
    assert area.value == "A man in a orange shirt is climbing a rock."
    assert any("change only those" in i.value for i in at.info)
