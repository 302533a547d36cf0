"""AppTest of the adjudication page on the hand-made project."""

from __future__ import annotations

import re

import pytest

from annotator.store.analysis_queries import judgement_frame
from annotator.ui import md_escape
from tests.apptest_helpers import page_test, refused, texts, visible
from tests.store.test_agreement_store import PROJECT, build_project


@pytest.fixture
def ids(sqlite_store):
    return build_project(sqlite_store)


def name(i: int) -> str:
    """How the caption picker names the hand-made project's caption c<i>: its item, system and line."""
    return f"img{i % 10} · {'sysA' if i < 10 else 'sysB'}, line {i % 10}"


def _adjudications(store):
    f = judgement_frame(store, PROJECT, kinds=("adjudication",))
    return {(int(r.caption_id), str(r.user)): (str(r.label), str(r.error_types)) for r in f.itertuples()}


def test_queue_counts_and_side_by_side(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    assert not at.exception
    # Three annotators: label disagreements c2 c4 c5 c9 c12 c19, type disagreements c1 c3 c13 c18; c1, c4 adjudicated.
    assert "10 disagreements: 8 open, 2 adjudicated (6 on the label, 4 on the error types)." in texts(at)
    assert len(at.selectbox(key="adj_caption").options) == 8  # undecided first
    at.selectbox(key="adj_caption").set_value(ids[19]).run()
    shown = [t.value for t in at.text]
    assert "System sysB, line 9, item img9 (practice item)" in shown  # the 0-based line, as in every file and export
    votes = "".join(h.proto.body for h in at.get("html"))
    shown = re.sub(r"<[^>]+>", "", next(h.proto.body for h in at.get("html") if 'data-testid="adj-caption"' in h.proto.body))
    assert shown == "caption B9: two dogs on grass 9"  # once, word by word (the marks hold no text)
    # Who said what, side by side, escaped: ann1 accurate, ann2 inaccurate with Other and a note.
    assert "<td>ann1</td><td>accurate</td><td></td>" in votes
    assert "<td>ann2</td><td>inaccurate</td><td>Other</td><td>a dog &lt;b&gt;with&lt;/b&gt; *wings*</td>" in votes
    assert not any("wings" in str(m.value) for m in at.markdown)
    # Items without pictures (no image root): a compact note, no grey canvas and no warning (issue 38 item 15).
    assert len(at.image) == 0 and not at.warning
    assert any("img9" in c.value and "no image root is set" in c.value and ":orange[" not in c.value
               for c in at.caption)


def test_picker_names_item_system_and_line(sqlite_store, ids):
    """The caption picker names a caption as the files and the README do (item, system, 0-based line), never by
    the store's caption id (issue 38 item 8)."""
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    options = at.selectbox(key="adj_caption").options
    assert options[0] == f"{name(2)} · label disagreement · open", options
    assert not any(o.startswith("caption") for o in options), options


def test_queue_filters(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    at.selectbox(key="adj_kind").set_value("types").run()
    assert sorted(at.selectbox(key="adj_caption").options) == sorted(
        f"{name(i)} · types disagreement · open" for i in (3, 13, 18))
    at.selectbox(key="adj_kind").set_value("label").run()
    assert [o.split(" · ")[0] for o in at.selectbox(key="adj_caption").options] == [
        f"img{i % 10}" for i in sorted((2, 5, 9, 12, 19), key=lambda i: ids[i])]  # by caption id
    at.selectbox(key="adj_show").set_value("decided").run()
    assert at.selectbox(key="adj_caption").options == [f"{name(4)} · label disagreement · adjudicated"]
    at.selectbox(key="adj_show").set_value("all").run()
    assert len(at.selectbox(key="adj_caption").options) == 6


def test_types_are_prefilled_with_the_union(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    cid = ids[3]  # ann1 and ann3: unrelated; ann2: scene, number — all three inaccurate
    at.selectbox(key="adj_caption").set_value(cid).run()
    assert at.radio(key="adj_label").value == "inaccurate"
    ticked = {c.key.removeprefix("adj_type_") for c in at.checkbox if c.key.startswith("adj_type_") and c.value}
    assert ticked == {"unrelated", "scene", "number"}
    labels = {c.key: c.label for c in at.checkbox}
    assert labels["adj_type_unrelated"].endswith(" · " + md_escape("ann1, ann3"))
    assert labels["adj_type_scene"].endswith(" · ann2") and " · " not in labels["adj_type_gender"]
    # Keep only what the lead agrees with, then decide: saved as shown.
    at.checkbox(key="adj_type_scene").uncheck().run()
    at.checkbox(key="adj_type_number").uncheck().run()
    at.button(key="adj_save").click().run()
    assert not at.exception and not at.error
    assert _adjudications(sqlite_store)[(cid, "lea")] == ("inaccurate", "unrelated")


def test_prefill_follows_the_chosen_annotators(sqlite_store, ids):
    """The pre-fill is the union of the *chosen* annotators' types: choosing others draws the form again."""
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    cid = ids[2]  # ann1: clothing_color; ann2: clothing_type, clothing_color; ann3 accurate

    def ticked():
        return {c.key.removeprefix("adj_type_") for c in at.checkbox if c.key.startswith("adj_type_") and c.value}

    at.selectbox(key="adj_caption").set_value(cid).run()
    assert ticked() == {"clothing_type", "clothing_color"}
    at.multiselect(key="adj_annotators").set_value(["ann1", "ann3"]).run()
    assert at.selectbox(key="adj_caption").value == cid  # still a disagreement (labels differ)
    assert ticked() == {"clothing_color"}  # ann2's type is no longer offered
    at.multiselect(key="adj_annotators").set_value(["ann1", "ann2", "ann3"]).run()
    assert ticked() == {"clothing_type", "clothing_color"}


def test_label_disagreement_choose_inaccurate_keeps_the_types(sqlite_store, ids):
    """The reported failure: choosing inaccurate left the types empty and saving failed."""
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    cid = ids[2]  # ann1: clothing_color; ann2: clothing_type, clothing_color; ann3 accurate
    at.selectbox(key="adj_caption").set_value(cid).run()
    assert at.radio(key="adj_label").value is None  # the labels differ: the lead decides
    at.radio(key="adj_label").set_value("accurate").run()
    assert not [c for c in at.checkbox if c.key.startswith("adj_type_") and c.value]
    at.radio(key="adj_label").set_value("inaccurate").run()
    assert {c.key for c in at.checkbox if c.key.startswith("adj_type_") and c.value} == {
        "adj_type_clothing_type", "adj_type_clothing_color"}
    at.button(key="adj_save").click().run()
    assert not at.error
    assert _adjudications(sqlite_store)[(cid, "lea")] == ("inaccurate", "clothing_type clothing_color")


def test_lead_saves_a_decision(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    at.selectbox(key="adj_caption").set_value(ids[12]).run()
    cid = ids[12]
    at.radio(key="adj_label").set_value("inaccurate").run()
    for c in at.checkbox:
        if c.key.startswith("adj_type_") and c.value:
            c.uncheck()
    at.checkbox(key="adj_type_scene").check().run()
    at.text_input(key="adj_note").input("clearly a kitchen").run()
    at.button(key="adj_save").click().run()
    assert not at.exception and not at.error
    assert _adjudications(sqlite_store)[(cid, "lea")] == ("inaccurate", "scene")
    assert md_escape(f"Caption {cid} adjudicated as inaccurate (revision 1).") in [s.value for s in at.success]
    assert "10 disagreements: 7 open, 3 adjudicated (6 on the label, 4 on the error types)." in texts(at)
    # The queue moved on to the next open caption (by caption id; the systems' ids interleave).
    still_open = {ids[i] for i in (2, 3, 5, 9, 13, 18, 19)}
    assert at.selectbox(key="adj_caption").value == min(c for c in still_open if c > cid)


def test_rules_are_enforced(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    cid = ids[12]
    at.selectbox(key="adj_caption").set_value(cid).run()
    at.button(key="adj_save").click().run()
    assert any("Accurate or Inaccurate" in e.value for e in at.error)
    at.radio(key="adj_label").set_value("inaccurate").run()
    at.checkbox(key="adj_type_scene").uncheck().run()
    at.button(key="adj_save").click().run()
    assert any("at least one error type" in e.value for e in at.error)
    assert (cid, "lea") not in _adjudications(sqlite_store)
    assert at.selectbox(key="adj_caption").value == cid  # nothing saved, nothing moved


def test_show_adjudicated_prefills_the_form(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    at.selectbox(key="adj_show").set_value("decided").run()
    assert at.selectbox(key="adj_caption").options == [f"{name(1)} · types disagreement · adjudicated",
                                                       f"{name(4)} · label disagreement · adjudicated"]
    at.selectbox(key="adj_caption").set_value(ids[4]).run()
    assert at.radio(key="adj_label").value == "inaccurate"
    assert {c.key for c in at.checkbox if c.key.startswith("adj_type_") and c.value} == {"adj_type_color"}
    assert any("Adjudicated by lea (revision 1)" in i.value for i in at.info)


def test_queue_table_shows_no_none(sqlite_store, ids):
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    at.selectbox(key="adj_show").set_value("all").run()
    table = at.dataframe[0].value
    assert len(table) == 10
    assert not table.isna().any().any()
    assert "None" not in set(table.astype(str).to_numpy().ravel())
    row = table[table["caption"] == ids[12]].iloc[0]
    assert (row["ann3: label"], row["decided"], row["decision"]) == ("", "no", "")


@pytest.mark.parametrize("role", ["annotator", "analyst"])
def test_other_roles_are_refused(sqlite_store, ids, role):
    at = refused("adjudicate", sqlite_store.url, user="ann1", role=role, project=PROJECT)
    assert not at.radio


def test_a_decision_made_since_the_page_showed_the_caption_is_not_overwritten(sqlite_store, ids):
    from tests.apptest_helpers import visible
    cid = ids[12]
    lea = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    leo = page_test("adjudicate", sqlite_store.url, user="leo", role="lead", project=PROJECT).run()
    for at in (lea, leo):  # "Decided or not": the caption stays in the list once someone decides it
        at.selectbox(key="adj_show").set_value("all").run()
        at.selectbox(key="adj_caption").set_value(cid).run()
    leo.radio(key="adj_label").set_value("accurate").run()
    leo.text_input(key="adj_note").input("fine as it is").run()
    leo.button(key="adj_save").click().run()
    assert _adjudications(sqlite_store)[(cid, "leo")] == ("accurate", "")
    lea.radio(key="adj_label").set_value("inaccurate").run()
    lea.text_input(key="adj_note").input("clearly a kitchen").run()
    lea.button(key="adj_save").click().run()
    assert not lea.exception
    assert (cid, "lea") not in _adjudications(sqlite_store)
    (notice,) = [visible(w.value) for w in lea.warning if "changed since the page showed it" in visible(w.value)]
    assert "Saved now: Accurate (revision 1, saved by leo at" in notice and "Note: fine as it is" in notice
    assert lea.selectbox(key="adj_caption").value == cid  # nothing saved, nothing moved, the form as it was
    assert lea.radio(key="adj_label").value == "inaccurate" and lea.text_input(key="adj_note").value == "clearly a kitchen"
    # With the default list (undecided captions only) the caption stays on lea's screen as well.
    lea2 = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    lea2.selectbox(key="adj_caption").set_value(ids[13]).run()
    lea2.radio(key="adj_label").set_value("accurate").run()
    leo.selectbox(key="adj_caption").set_value(ids[13]).run()
    leo.radio(key="adj_label").set_value("inaccurate").run()
    leo.checkbox(key="adj_type_scene").check().run()
    leo.button(key="adj_save").click().run()
    lea2.text_input(key="adj_note").input("mine").run()  # a rerun after leo's decision: still on the caption
    assert lea2.selectbox(key="adj_caption").value == ids[13]
    lea2.button(key="adj_save").click().run()
    assert lea2.selectbox(key="adj_caption").value == ids[13] and lea2.text_input(key="adj_note").value == "mine"
    assert any("saved by leo" in visible(w.value) for w in lea2.warning)
    assert (ids[13], "lea") not in _adjudications(sqlite_store)
    # Leo goes back to the caption: his form shows his decision.
    leo.selectbox(key="adj_caption").set_value(cid).run()
    assert leo.radio(key="adj_label").value == "accurate"
    # Keep mine: lea's next decision is stored over leo's.
    lea.button(key="adj_keep_mine").click().run()
    assert lea.text_input(key="adj_note").value == "clearly a kitchen"
    lea.button(key="adj_save").click().run()
    assert not lea.error
    assert _adjudications(sqlite_store)[(cid, "lea")][0] == "inaccurate"
    # Leo's page, still showing his own decision, is now the stale one; loading brings lea's decision into his form.
    leo.text_input(key="adj_note").input("still fine").run()
    leo.button(key="adj_save").click().run()
    assert _adjudications(sqlite_store)[(cid, "leo")] == ("accurate", "")
    assert any("saved by lea" in visible(w.value) for w in leo.warning)
    leo.button(key="adj_load_newer").click().run()
    assert leo.radio(key="adj_label").value == "inaccurate" and leo.text_input(key="adj_note").value == "clearly a kitchen"


def _with_types_pending(store, ids):
    """c8 (ann1 and ann2 agree: activity) becomes a staged second pass: ann2 said inaccurate, types to come."""
    from annotator.store.judgements import insert_judgement
    from annotator.store.users import user_id
    with store.transaction() as conn:
        insert_judgement(conn, ids[8], user_id(conn, "ann2"), label="inaccurate", error_types=[])
    return ids[8]


def test_a_caption_waiting_for_types_is_listed_last_and_refused(sqlite_store, ids):
    """Issue 24 item 5: a caption whose second annotator has not given error types yet is not a types
    disagreement to decide: it is listed last as waiting for that annotator, and a decision is refused."""
    from annotator.adjudication import adjudicate, adjudication_queue
    from annotator.errors import InputError
    from annotator.model import Role
    cid = _with_types_pending(sqlite_store, ids)
    frame = judgement_frame(sqlite_store, PROJECT, kinds=("annotation", "adjudication"))
    q = adjudication_queue(frame, annotators=["ann1", "ann2"])
    assert q["caption_id"].iloc[-1] == cid and q["waiting_for"].iloc[-1] == "ann2"
    assert set(q["waiting_for"].iloc[:-1]) == {""}
    with pytest.raises(InputError, match="waiting for ann2's error types"):
        adjudicate(sqlite_store, cid, "lea", Role.LEAD, "inaccurate", ["activity"])

    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    at.multiselect(key="adj_annotators").set_value(["ann1", "ann2"]).run()
    options = at.selectbox(key="adj_caption").options
    assert options[-1] == f"{name(ids.index(cid))} · waiting for ann2's types · open", options
    at.selectbox(key="adj_caption").set_value(cid).run()
    assert any("Waiting for ann2's error types" in w.value for w in at.warning)
    assert at.button(key="adj_save").disabled
    assert (cid, "lea") not in _adjudications(sqlite_store)


def test_references_and_readable_box_labels_as_on_annotate(sqlite_store, ids):
    """Issue 24 item 6: the lead sees the references with their mentions and the boxes' labels as HTML text."""
    from sqlalchemy import select

    from annotator.model import Mention
    from annotator.store.codec import encode_mentions
    from annotator.store.schema import boxes, items, refs
    with sqlite_store.transaction() as conn:
        iid = conn.execute(select(items.c.id).where(items.c.key == "img2")).scalar_one()
        conn.execute(boxes.insert().values(item_id=iid, box_key="1", label="man", x=4, y=4, w=30, h=30))
        conn.execute(refs.insert().values(item_id=iid, position=0, text="A man in a green shirt waves",
                                          mentions=encode_mentions((Mention(0, 2, ("1",)),))))
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    at.selectbox(key="adj_caption").set_value(ids[2]).run()
    assert not at.exception, at.exception
    body = "".join(h.proto.body for h in at.get("html"))
    assert 'class="ann-ref"' in body and 'data-box="1"' in body and "green shirt waves" in body
    # No picture to put them on (no image root): the boxes are named in the one-line note instead (item 15).
    assert 'class="ann-boxlabel"' not in body and len(at.image) == 0
    assert any("gold boxes: 1 man" in c.value for c in at.caption)


def test_refusal_is_worded_as_on_annotate(sqlite_store, ids):
    """Issue 24 item 7: "Choose Accurate or Inaccurate first." as on Annotate (not lower case, no full stop)."""
    at = page_test("adjudicate", sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    at.selectbox(key="adj_caption").set_value(ids[12]).run()
    at.button(key="adj_save").click().run()
    assert [visible(e.value) for e in at.error] == ["Choose Accurate or Inaccurate first."], [e.value for e in at.error]
