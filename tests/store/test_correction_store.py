"""Correction storage, history, queues by layer and correction sets, on SQLite and PostgreSQL."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from annotator.correction import (
    correct_caption, caption_corrections, correction_set, corrections_table, leave_untouched, queue,
)
from annotator.errors import GuardViolation, InputError, NotFound
from annotator.layers import ADJUDICATED
from annotator.model import Box, Caption, Item, Project, Reference, Role
from annotator.store import projects as P
from annotator.store import users as U
from annotator.store.correction_queries import caption_context, layer_choices
from annotator.store.judgements import save_judgement

# Captions of system "sys" (line = item index) and the types each layer gives them.
CAPTIONS = [
    "A man in a blue shirt is climbing a rock.",
    "A girl playing soccer on the grass.",
    "A dog runs through the snow.",
    "A woman in a red dress is holding a sign.",
    "Two men are playing guitars.",
    "A man is standing in a kitchen.",
]
REFS = [
    ["A boy in an orange shirt climbs a rock.", "A young boy in orange is rock climbing."],
    ["A boy plays soccer on a field.", "A young boy kicks a soccer ball on the grass."],
    ["A dog runs through the snow.", "A brown dog running in snow."],
    ["A woman in a blue dress is talking.", "A woman wearing a blue dress speaks to a crowd."],
    ["Three men are playing instruments.", "Three musicians play guitars on stage."],
    ["A man is standing in a laboratory.", "A scientist stands in a lab."],
]
ALICE = {0: ["clothing_color", "age"], 1: ["gender"], 3: ["clothing_color", "activity"], 4: ["number"], 5: ["scene"]}
BOB = {0: ["clothing_color"], 1: ["gender"], 3: ["activity"]}
ADJ = {0: ["clothing_color", "age"], 1: ["gender"], 3: ["activity"]}

# An image root in an allowed folder (tests allow the temporary directory) that does not exist.
NO_IMAGES = str(Path(tempfile.gettempdir()).resolve() / "annotator-no-images")


def build_demo(store, project="demo", system="sys"):
    """Write the demo project, three users and their judgements; return {line: caption_id}."""
    items = [Item(key=f"img{i}.jpg", image=f"img{i}.jpg", width=64, height=48,
                  boxes=[Box("0", "person", 1, 2, 30, 20)], references=[Reference(r) for r in REFS[i]],
                  captions=[Caption(system, CAPTIONS[i])]) for i in range(len(CAPTIONS))]
    with store.transaction() as conn:
        P.write_project(conn, Project(project, image_root=NO_IMAGES, items=items))
        uids = {n: U.create_user(conn, n, r) for n, r in
                (("alice", Role.ANNOTATOR), ("bob", Role.ANNOTATOR), ("lead", Role.LEAD))}
        pid = P.project_id(conn, project)
        ids = {r.line_no: r.id for r in P.captions_of_system(conn, pid, system)}
    for user, layer, kind in (("alice", ALICE, "annotation"), ("bob", BOB, "annotation"), ("lead", ADJ, "adjudication")):
        for line in range(len(CAPTIONS)):
            types = layer.get(line, [])
            save_judgement(store, ids[line], uids[user], label="inaccurate" if types else "accurate",
                           error_types=types, kind=kind)
    return ids


def test_save_keeps_original_and_appends_history(store):
    ids = build_demo(store)
    cid = ids[0]
    s1 = correct_caption(store, cid, "clothing_color", "alice", "A man in an orange shirt is climbing a rock.")
    assert s1.revision == 1 and s1.override_reason is None and s1.report.ok
    s2 = correct_caption(store, cid, "clothing_color", "alice", "A man in a red shirt is climbing a rock.")
    assert s2.revision == 2
    # Another type and another user are separate keys.
    assert correct_caption(store, cid, "age", "alice", "A boy in a blue shirt is climbing a rock.").revision == 1
    assert correct_caption(store, cid, "clothing_color", "bob", "A man in a green shirt is climbing a rock.").revision == 1
    hist = caption_corrections(store, cid, "clothing_color")
    assert [(h.user, h.revision, h.corrected_text) for h in hist] == [
        ("alice", 1, "A man in an orange shirt is climbing a rock."),
        ("alice", 2, "A man in a red shirt is climbing a rock."),
        ("bob", 1, "A man in a green shirt is climbing a rock.")]
    assert all(h.original_text == CAPTIONS[0] for h in hist)
    # The caption itself is never overwritten.
    with store.read() as conn:
        assert caption_context(conn, cid)["text"] == CAPTIONS[0]


def test_guard_blocks_without_reason_and_keeps_reason(store):
    ids = build_demo(store)
    with pytest.raises(GuardViolation, match="age as well as gender"):
        correct_caption(store, ids[1], "gender", "alice", "A man playing soccer on the grass.")
    assert caption_corrections(store, ids[1]) == []  # nothing stored
    with pytest.raises(GuardViolation, match="changes age, not gender"):
        correct_caption(store, ids[1], "gender", "alice", "A woman playing soccer on the grass.")
    s = correct_caption(store, ids[1], "gender", "alice", "A woman playing soccer on the grass.",
                        override_reason="the player is an adult woman")
    assert s.override_reason == "the player is an adult woman" and not s.report.ok
    (h,) = caption_corrections(store, ids[1])
    assert h.override_reason == "the player is an adult woman"
    table = corrections_table(store, "demo")
    row = table[table["error_type"] == "gender"].iloc[0]
    assert row["override_reason"] == "the player is an adult woman"
    assert row["diff"] == "A [-girl-] {+woman+} playing soccer on the grass."
    # A clean correction given a reason stores no reason.
    s = correct_caption(store, ids[1], "gender", "bob", "A boy playing soccer on the grass.", override_reason="x")
    assert s.override_reason is None


def test_leave_untouched_is_a_recorded_decision(store):
    ids = build_demo(store)
    s = leave_untouched(store, ids[3], "clothing_color", "alice")
    assert s.corrected_text is None and s.revision == 1
    (h,) = caption_corrections(store, ids[3])
    assert h.untouched and h.original_text == CAPTIONS[3]
    # Saving the unchanged text is the same decision.
    s = correct_caption(store, ids[3], "clothing_color", "alice", "  " + CAPTIONS[3] + " ")
    assert s.corrected_text is None and s.revision == 2
    table = corrections_table(store, "demo")
    assert bool(table.iloc[0]["untouched"]) and table.iloc[0]["revision"] == 2
    with pytest.raises(InputError, match="empty"):
        correct_caption(store, ids[3], "clothing_color", "alice", "   ")


def test_correction_needs_known_caption_type_and_user(store):
    ids = build_demo(store)
    with pytest.raises(NotFound):
        correct_caption(store, 10_000, "gender", "alice", "x")
    with pytest.raises(InputError, match="unknown error type"):
        correct_caption(store, ids[0], "bogus", "alice", "x")
    with pytest.raises(InputError, match="not corrected"):
        correct_caption(store, ids[0], "unrelated", "alice", "A cat.")
    with pytest.raises(NotFound, match="nobody"):
        correct_caption(store, ids[0], "clothing_color", "nobody", "A man in a red shirt is climbing a rock.")
    # The app's local mode creates its password-less account on first save.
    s = correct_caption(store, ids[0], "clothing_color", "local", "A man in a red shirt is climbing a rock.",
                        create_role=Role.ADMIN)
    assert s.revision == 1


def test_queue_follows_the_chosen_layer(store):
    ids = build_demo(store)
    q = queue(store, "demo", "sys", "clothing_color", "annotator:alice", user="alice")
    assert [e["line_no"] for e in q] == [0, 3]
    assert q[0]["error_types"] == ("age", "clothing_color") and q[0]["correction"] is None
    assert [e["line_no"] for e in queue(store, "demo", "sys", "clothing_color", "annotator:bob")] == [0]
    assert [e["line_no"] for e in queue(store, "demo", "sys", "clothing_color", ADJUDICATED)] == [0]
    assert [e["line_no"] for e in queue(store, "demo", "sys", "activity", "adjudicated")] == [3]
    # "color" must not match "clothing_color".
    assert queue(store, "demo", "sys", "color", "annotator:alice") == []
    correct_caption(store, ids[3], "clothing_color", "alice", "A woman in a blue dress is holding a sign.")
    q = queue(store, "demo", "sys", "clothing_color", "annotator:alice", user="alice")
    assert q[1]["correction"]["corrected_text"] == "A woman in a blue dress is holding a sign."
    assert queue(store, "demo", "sys", "clothing_color", "annotator:alice", user="bob")[1]["correction"] is None
    with pytest.raises(InputError, match="not corrected"):
        queue(store, "demo", "sys", "unrelated", "adjudicated")
    with store.read() as conn:
        choices = layer_choices(conn, P.project_id(conn, "demo"))
    assert choices == {"annotators": ["alice", "bob"], "adjudicated": True}


def test_latest_adjudication_wins(store):
    ids = build_demo(store)
    with store.transaction() as conn:
        other = U.create_user(conn, "lead2", Role.LEAD)
    save_judgement(store, ids[3], other, label="inaccurate", error_types=["clothing_color"], kind="adjudication")
    assert [e["line_no"] for e in queue(store, "demo", "sys", "clothing_color", "adjudicated")] == [0, 3]
    assert [e["line_no"] for e in queue(store, "demo", "sys", "activity", "adjudicated")] == []


def test_correction_set_variants_and_all(store):
    ids = build_demo(store)
    correct_caption(store, ids[0], "clothing_color", "alice", "A man in an orange shirt is climbing a rock.")
    correct_caption(store, ids[0], "age", "alice", "A boy in a blue shirt is climbing a rock.")
    correct_caption(store, ids[1], "gender", "alice", "A boy playing soccer on the grass.")
    correct_caption(store, ids[3], "activity", "alice", "A woman in a red dress is talking.")
    leave_untouched(store, ids[3], "clothing_color", "alice")
    cs = correction_set(store, "demo", "sys")
    assert cs.baseline == CAPTIONS and cs.types == ["age", "gender", "clothing_color", "activity"]
    v = cs.variants()
    assert v["clothing_color"][0] == "A man in an orange shirt is climbing a rock."
    assert v["clothing_color"][1:] == CAPTIONS[1:]
    assert v["gender"] == [CAPTIONS[0], "A boy playing soccer on the grass."] + CAPTIONS[2:]
    assert cs.changed("clothing_color") == 1 and cs.untouched == {"clothing_color": 1}
    allv = cs.all_variant()
    assert allv[0] == "A boy in an orange shirt is climbing a rock."
    assert allv[1] == "A boy playing soccer on the grass." and allv[3] == "A woman in a red dress is talking."
    assert allv[2] == CAPTIONS[2] and cs.conflicts == []


def test_correction_set_layer_and_corrector_filters(store):
    ids = build_demo(store)
    correct_caption(store, ids[3], "clothing_color", "alice", "A woman in a blue dress is holding a sign.")
    correct_caption(store, ids[0], "clothing_color", "alice", "A man in an orange shirt is climbing a rock.")
    correct_caption(store, ids[0], "clothing_color", "bob", "A man in a red shirt is climbing a rock.")
    # Without filters the most recent correction of a (caption, type) wins: bob's.
    cs = correction_set(store, "demo", "sys")
    assert cs.by_type["clothing_color"] == {0: "A man in a red shirt is climbing a rock.",
                                            3: "A woman in a blue dress is holding a sign."}
    cs = correction_set(store, "demo", "sys", correctors=["alice"])
    assert cs.by_type["clothing_color"][0] == "A man in an orange shirt is climbing a rock."
    # The adjudicated layer does not give caption 3 clothing_color: its correction is dropped.
    cs = correction_set(store, "demo", "sys", layer="adjudicated", correctors=["alice"])
    assert cs.by_type["clothing_color"] == {0: "A man in an orange shirt is climbing a rock."} and cs.dropped == 1
    cs = correction_set(store, "demo", "sys", types=["gender"])
    assert cs.types == []


def test_override_listed_in_correction_set(store):
    ids = build_demo(store)
    # Four changed words: over the limit of three.
    correct_caption(store, ids[5], "scene", "alice", "A scientist is standing in a big laboratory now.", override_reason="needed")
    cs = correction_set(store, "demo", "sys")
    assert cs.overrides == [{"line_no": 5, "caption_id": ids[5], "error_type": "scene", "user": "alice",
                             "corrected_text": "A scientist is standing in a big laboratory now.", "override_reason": "needed"}]


def test_caption_context(store):
    ids = build_demo(store)
    with store.read() as conn:
        ctx = caption_context(conn, ids[2])
        with pytest.raises(NotFound):
            caption_context(conn, 99999)
    assert ctx["item_key"] == "img2.jpg" and ctx["image_root"] == NO_IMAGES and ctx["system"] == "sys"
    assert ctx["boxes"] == [Box("0", "person", 1, 2, 30, 20)] and ctx["line_no"] == 2


def test_unknown_system(store):
    build_demo(store)
    with pytest.raises(NotFound):
        correction_set(store, "demo", "nope")
    with pytest.raises(NotFound):
        queue(store, "demo", "nope", "gender", "adjudicated")


def test_adjudicated_layer_without_adjudications_uses_agreement(store):
    """The adjudicated layer is the analysis layer: where nobody adjudicated, annotators who agree on
    label and types decide; captions with open types or differing labels are not in the queue."""
    from annotator.correction import layer_types
    items = [Item(key=f"k{i}", references=[Reference(REFS[i][0])], captions=[Caption("s2", CAPTIONS[i])])
             for i in range(len(CAPTIONS))]
    with store.transaction() as conn:
        P.write_project(conn, Project("p2", items=items))
        uids = {n: U.create_user(conn, n, Role.ANNOTATOR) for n in ("alice", "bob")}
        ids = {r.line_no: r.id for r in P.captions_of_system(conn, P.project_id(conn, "p2"), "s2")}
    for user, layer in (("alice", ALICE), ("bob", BOB)):
        for line in range(len(CAPTIONS)):
            types = layer.get(line, [])
            save_judgement(store, ids[line], uids[user], label="inaccurate" if types else "accurate", error_types=types)
    # Line 1: both say gender. Lines 0 and 3: types differ (open). Lines 4 and 5: labels differ.
    assert layer_types(store, "p2", "s2", ADJUDICATED) == {ids[1]: ("gender",)}
    assert [e["line_no"] for e in queue(store, "p2", "s2", "gender", "adjudicated")] == [1]
    assert queue(store, "p2", "s2", "activity", "adjudicated") == []
    assert [e["line_no"] for e in queue(store, "p2", "s2", "activity", "annotator:bob")] == [3]
    with store.read() as conn:
        assert layer_choices(conn, P.project_id(conn, "p2"))["adjudicated"] is True


def test_text_is_saved_as_written(sqlite_store):
    """Guards compare case-insensitively, but the stored text keeps the user's spelling."""
    ids = build_demo(sqlite_store)
    s = correct_caption(sqlite_store, ids[0], "clothing_color", "alice", "a MAN in an Orange shirt is climbing a rock.")
    assert s.report.ok and s.report.changed_words == 2
    (h,) = caption_corrections(sqlite_store, ids[0])
    assert h.corrected_text == "a MAN in an Orange shirt is climbing a rock."
