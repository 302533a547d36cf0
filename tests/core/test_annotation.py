"""The annotation core: rules, queue order, save/skip/revise, staged second pass, privacy, guidelines."""

from __future__ import annotations

import pytest

from annotator.annotation import (
    STAGE_COARSE, STAGE_FINE, STAGE_FULL, Queue, judgement_history, judgements_of, keyboard_map, load_guidelines,
    unrelated_hint, validate,
)
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.errors import InputError, NotFound, PermissionDenied
from annotator.model import Label
from annotator.store.judgements import current_judgement, history
from annotator.taxonomy import ERROR_TYPE_IDS, taxonomy
from tests.apptest_helpers import seed_project

# --------------------------------------------------------------------------- rules


def test_rules():
    assert validate("accurate") == ()
    assert validate(Label.INACCURATE, ["gender", "age"]) == ("age", "gender")  # taxonomy order
    with pytest.raises(InputError, match="Accurate or Inaccurate"):
        validate(None, ["age"])
    with pytest.raises(InputError, match="at least one error type"):
        validate("inaccurate", [])
    with pytest.raises(InputError, match="no error types"):
        validate("accurate", ["age"])
    with pytest.raises(InputError, match="unknown error type"):
        validate("inaccurate", ["teeth"])
    with pytest.raises(InputError, match="'Other'"):
        validate("inaccurate", ["other"], note="  ")
    assert validate("inaccurate", ["other"], note="wrong weather") == ("other",)
    # Coarse stage of a staged second pass: the label only.
    assert validate("inaccurate", [], stage=STAGE_COARSE) == ()
    with pytest.raises(InputError, match="asked later"):
        validate("inaccurate", ["age"], stage=STAGE_COARSE)
    with pytest.raises(InputError, match="at least one error type"):
        validate("inaccurate", [], stage=STAGE_FINE)


def test_unrelated_hint_threshold():
    assert taxonomy().unrelated_hint_above == 3
    assert unrelated_hint(["age", "gender"]) is None
    assert unrelated_hint(["age", "gender", "stance"]) is None  # three errors are common, no reminder
    assert unrelated_hint(["age", "gender", "stance", "number"]) is not None
    assert unrelated_hint(["age", "gender", "stance", "number", "unrelated"]) is None  # already chosen
    assert unrelated_hint(["age", "unrelated", "gender"]) is None


def test_keyboard_map_covers_every_type_once():
    keys = keyboard_map()
    assert keys["y"] == "accurate" and keys["n"] == "inaccurate"
    assert sorted(a[5:] for a in keys.values() if a.startswith("type:")) == sorted(ERROR_TYPE_IDS)
    assert {keys["k"], keys["h"], keys["t"]} == {"skip", "boxes", "references"}
    assert all(len(k) == 1 for k in keys)


# --------------------------------------------------------------------------- queue


@pytest.fixture
def demo(store):
    caps = seed_project(store, "demo", n_items=6)
    for n in ("ann1", "ann2"):
        add_user(store, n, "annotator")
    add_user(store, "lea", "lead")
    assign(store, "demo", ["ann1"], double_fraction=0)
    return store, caps


def test_save_next_revise_and_history(demo):
    store, caps = demo
    q = Queue.open(store, "ann1", "annotator", "demo")
    assert q.first_todo() == 0 and q.progress().done == 0 and q.progress().assigned == 6
    t0 = q.task(0)
    assert t0.caption_id == caps[0] and t0.current is None and t0.stage == STAGE_FULL
    assert t0.caption.text.endswith("number 0") and [b.box_id for b in t0.item.boxes] == ["1", "2"]
    assert len(t0.item.references) == 2
    r = q.save(t0, "inaccurate", ["age"], "", 4.5)
    assert r.revision == 1 and not r.was_done
    assert q.next_todo(after=0) == 1
    q.save(q.task(1), "accurate")
    assert q.progress().done == 2
    # Revise item 0: a new revision, the first one kept.
    t0 = q.task(0)
    assert t0.current.label is Label.INACCURATE and t0.current.error_types == ("age",)
    r = q.save(t0, "inaccurate", ["age", "gender"], "two things", 2.0)
    assert r.revision == 2 and r.was_done
    hist = q.history(caps[0])
    assert [(j.revision, j.error_types) for j in hist] == [(1, ("age",)), (2, ("age", "gender"))]
    assert hist[0].seconds == 4.5 and hist[1].note == "two things"
    # After revising, the next caption to do is still the first unjudged one.
    assert q.next_todo(after=0) == 2
    # A brand-new session (reload, new login) starts there too.
    assert Queue.open(store, "ann1", "annotator", "demo").first_todo() == 2


def test_invalid_save_writes_nothing(demo):
    store, caps = demo
    q = Queue.open(store, "ann1", "annotator", "demo")
    with pytest.raises(InputError):
        q.save(q.task(0), "inaccurate", [])
    with store.read() as conn:
        assert history(conn, caps[0]) == []


def test_skip_comes_back_at_the_end_and_never_erases(demo):
    store, caps = demo
    q = Queue.open(store, "ann1", "annotator", "demo")
    assert q.skip(q.task(0), seconds=1.0).label is None
    assert q.next_todo(after=0) == 1
    # Resume skips past the skipped caption to the first never-seen one.
    assert q.first_todo() == 1
    for pos in range(1, 6):
        q.save(q.task(pos), "accurate")
    assert q.next_todo(after=5) == 0  # only the skipped one is left
    assert q.progress().done == 5
    q.save(q.task(0), "accurate")
    assert q.next_todo(after=0) is None and q.first_todo() is None
    # Skipping a judged caption stores nothing.
    assert q.skip(q.task(3)) is None
    with store.read() as conn:
        assert [j.label for j in history(conn, caps[3])] == [Label.ACCURATE]
        assert [j.label for j in history(conn, caps[0])] == [None, Label.ACCURATE]


def test_next_wraps_round_to_earlier_unseen(demo):
    store, _ = demo
    q = Queue.open(store, "ann1", "annotator", "demo")
    for pos in (3, 4, 5):
        q.save(q.task(pos), "accurate")
    assert q.next_todo(after=5) == 0
    assert q.neighbour(0, -1) is None and q.neighbour(0, 1) == 1 and q.neighbour(5, 1) is None


def test_unassigned_caption_refused(demo):
    store, caps = demo
    q1 = Queue.open(store, "ann1", "annotator", "demo")
    q2 = Queue.open(store, "ann2", "annotator", "demo")
    assert q2.size() == 0 and q2.first_todo() is None
    with pytest.raises(NotFound):
        q2.task(0)
    with pytest.raises(PermissionDenied, match="not assigned"):
        q2.save(q1.task(0), "accurate")


def test_annotators_read_only_their_own_judgements(demo):
    store, caps = demo
    q = Queue.open(store, "ann1", "annotator", "demo")
    q.save(q.task(0), "accurate")
    own = judgements_of(store, "ann1", "annotator", "demo", user="ann1")
    assert list(own["user"]) == ["ann1"]
    with pytest.raises(PermissionDenied):
        judgements_of(store, "ann2", "annotator", "demo", user="ann1")
    with pytest.raises(PermissionDenied):
        judgements_of(store, "ann2", "annotator", "demo")  # everyone's
    with pytest.raises(PermissionDenied):
        judgement_history(store, "ann2", "annotator", caps[0], "ann1")
    assert len(judgements_of(store, "lea", "lead", "demo")) == 1
    assert [j.user for j in judgement_history(store, "lea", "lead", caps[0], "ann1")] == ["ann1"]
    assert [j.label for j in judgement_history(store, "ann1", "annotator", caps[0], "ann1")] == [Label.ACCURATE]


# --------------------------------------------------------------------------- second pass


def _double_setup(store, mode):
    caps = seed_project(store, "demo", n_items=4)
    for n in ("ann1", "ann2"):
        add_user(store, n, "annotator")
    # All four captions double-annotated: ann1 first on 0-1, ann2 first on 2-3.
    assign(store, "demo", ["ann1", "ann2"], double_fraction=1.0, seed=0, second_pass=mode)
    return caps


def test_staged_second_pass(store):
    caps = _double_setup(store, "staged")
    a = Queue.open(store, "ann1", "annotator", "demo")
    b = Queue.open(store, "ann2", "annotator", "demo")
    assert b.staged and a.staged  # both are second annotators of the other's captions
    pos_b = {b.task(p).caption_id: p for p in range(4)}
    tb = b.task(pos_b[caps[0]])
    assert tb.is_second and tb.stage == STAGE_COARSE
    with pytest.raises(InputError, match="asked later"):
        b.save(tb, "inaccurate", ["age"])
    b.save(tb, "inaccurate", [])  # coarse only
    # The first annotator has not judged yet: nothing waits for a fine pass.
    assert b.task(pos_b[caps[0]]).stage == STAGE_COARSE
    assert b.progress().fine_waiting == 0
    ta = a.task(0)
    assert ta.caption_id == caps[0] and ta.stage == STAGE_FULL and not ta.is_second
    a.save(ta, "inaccurate", ["gender"], "")
    # Now both found it inaccurate: the fine pass opens for the second annotator, without the first's types.
    tb = b.task(pos_b[caps[0]])
    assert tb.stage == STAGE_FINE and tb.current.error_types == ()
    prog = b.progress()
    assert prog.fine_waiting == 1 and prog.done == 0
    # Unseen captions come first, the fine pass after them.
    assert b.next_todo(after=pos_b[caps[0]]) != pos_b[caps[0]]
    for p in range(4):
        if p != pos_b[caps[0]]:
            t = b.task(p)
            b.save(t, "accurate")
    assert b.next_todo(after=3) == pos_b[caps[0]]
    with pytest.raises(InputError, match="at least one error type"):
        b.save(tb, "inaccurate", [])
    b.save(tb, "inaccurate", ["age"])
    assert b.progress().fine_waiting == 0 and b.progress().done == 4
    # Disagreement on the coarse label: no fine pass.
    tb1 = b.task(pos_b[caps[1]])
    a.save(a.task(1), "inaccurate", ["stance"])
    assert tb1.current.label is Label.ACCURATE and b.task(pos_b[caps[1]]).stage == STAGE_COARSE
    # The second annotator's task never carries the first annotator's judgement.
    with store.read() as conn:
        mine = current_judgement(conn, caps[0], b.user_id)
    assert b.task(pos_b[caps[0]]).current == mine and mine.user == "ann2"


def test_full_second_pass(store):
    caps = _double_setup(store, "full")
    b = Queue.open(store, "ann2", "annotator", "demo")
    assert not b.staged
    t = b.task(0)
    assert t.is_second and t.stage == STAGE_FULL and t.caption_id == caps[0]
    with pytest.raises(InputError, match="at least one error type"):
        b.save(t, "inaccurate", [])
    b.save(t, "inaccurate", ["age"])


def test_practice_items_are_never_staged(sqlite_store):
    store = sqlite_store
    seed_project(store, "demo", n_items=4, practice=2)
    for n in ("ann1", "ann2"):
        add_user(store, n, "annotator")
    assign(store, "demo", ["ann1", "ann2"], double_fraction=1.0)
    b = Queue.open(store, "ann2", "annotator", "demo")
    assert b.task(0).item.is_practice and b.task(0).stage == STAGE_FULL


# --------------------------------------------------------------------------- guidelines


def test_every_error_type_is_documented():
    g = load_guidelines()
    tax = taxonomy()
    assert set(tax.ids) == set(ERROR_TYPE_IDS)
    for t in tax.types:
        assert t.definition.strip() and t.example_caption.strip() and t.example_note.strip(), t.id
        assert len(g.type_notes.get(t.id, "")) > 80, f"error_types.md has no guidance for {t.id}"
    assert set(g.type_notes) == set(ERROR_TYPE_IDS)


def test_required_contrasts_are_there():
    pairs = {frozenset(c.types) for c in load_guidelines().contrasts}
    for needed in ({"stance", "activity"}, {"scene", "position"}, {"object_similar", "position"}):
        assert frozenset(needed) in pairs
    assert any({"number", "subject_extra", "object_extra"} <= set(p) for p in pairs)
    text = load_guidelines().instructions
    for key in ("Enter", "Esc", "**y**", "**n**", "**k**"):
        assert key in text


def test_guidelines_errors_name_the_file(tmp_path):
    (tmp_path / "instructions.md").write_text("x")
    (tmp_path / "error_types.md").write_text("## teeth\nnot a type\n")
    (tmp_path / "contrasts.toml").write_text("")
    with pytest.raises(InputError, match="error_types.md.*teeth"):
        load_guidelines(tmp_path)
    (tmp_path / "error_types.md").write_text("## age\nfine\n")
    (tmp_path / "contrasts.toml").write_text('[[contrast]]\nid="x"\ntitle="t"\ntypes=["age","teeth"]\nrule="r"\n')
    with pytest.raises(InputError, match="contrasts.toml.*teeth"):
        load_guidelines(tmp_path)
