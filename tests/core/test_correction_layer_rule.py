"""Only corrections of captions annotated with the type count (the study corrects those, one type at a time):
the by-type table reads one judgement layer, and a correction of an untagged caption needs a reason."""

from __future__ import annotations

import pytest

from annotator.cli import main
from annotator.correction import correct_caption, default_layer
from annotator.errors import GuardViolation, InputError
from annotator.io import import_corrections
from annotator.layers import ADJUDICATED, Layer
from annotator.model import Role
from annotator.rescoring import by_type_table, format_by_type
from annotator.store import projects as P
from annotator.store import users as U
from annotator.store.judgements import save_judgement
from tests.store_helpers import lines_project, refused

CAPTIONS = ["A man is riding a horse on a beach .", "A man is reading a book in a park ."]
REFS = ["A woman rides a horse along the beach .", "A woman reads a book on a bench in a park ."]
FIXED = ["A woman is riding a horse on a beach .", "A woman is reading a book in a park ."]
FAST = ("Bleu_4", "CIDEr")


@pytest.fixture
def demo(store, tmp_path):
    lines_project(store, tmp_path, CAPTIONS, REFS)
    with store.transaction() as conn:
        ids = {r.line_no: r.id for r in P.captions_of_system(conn, P.project_id(conn, "p"), "sys")}
        uids = {n: U.create_user(conn, n, r) for n, r in (("alice", Role.ANNOTATOR), ("bob", Role.ANNOTATOR),
                                                             ("lead", Role.LEAD))}
    return store, ids, uids


def _judge(store, cid, uid, types, kind="annotation"):
    save_judgement(store, cid, uid, label="inaccurate" if types else "accurate", error_types=types, kind=kind)


def test_one_annotator_decides_and_untagged_corrections_need_a_reason(demo):
    store, ids, uids = demo
    _judge(store, ids[0], uids["alice"], ["gender"])
    _judge(store, ids[1], uids["alice"], [])  # alice found line 1 accurate
    assert default_layer(store, "p", "sys") == Layer.annotator("alice")
    correct_caption(store, ids[0], "gender", "carol", FIXED[0], create_role=Role.ANNOTATOR)
    with pytest.raises(GuardViolation, match="no judgement of this caption carries Gender"):
        correct_caption(store, ids[1], "gender", "carol", FIXED[1], create_role=Role.ANNOTATOR)
    s = correct_caption(store, ids[1], "gender", "carol", FIXED[1], override_reason="the reader is a woman")
    assert s.override_reason == "the reader is a woman"
    out = by_type_table(store, "p", "sys", resamples=10, metrics=FAST)
    # Line 1's correction is stored but not counted: alice never tagged it with gender.
    assert out.types["gender"].changed == 1 and out.meta.dropped == 1 and out.meta.layer == "annotator:alice"
    assert "Corrections count only for captions whose judgement in the layer 'annotator:alice' carries their type (1 left out)." \
        in format_by_type(out)


def test_an_adjudication_decides_over_the_annotators(demo):
    store, ids, uids = demo
    _judge(store, ids[0], uids["alice"], ["gender"])
    _judge(store, ids[0], uids["bob"], [])
    _judge(store, ids[1], uids["bob"], ["gender"])
    _judge(store, ids[0], uids["lead"], ["gender"], kind="adjudication")
    assert default_layer(store, "p", "sys") == ADJUDICATED
    correct_caption(store, ids[0], "gender", "carol", FIXED[0], create_role=Role.ANNOTATOR)
    correct_caption(store, ids[1], "gender", "carol", FIXED[1])  # bob tagged it: no reason needed
    out = by_type_table(store, "p", "sys", resamples=10, metrics=FAST)
    # The adjudicated layer: line 0 by the lead, line 1 by bob alone (the only judgement of it).
    assert out.types["gender"].changed == 2 and out.meta.layer == "adjudicated"


def test_several_annotators_without_adjudication_need_a_layer(demo, capsys):
    store, ids, uids = demo
    _judge(store, ids[0], uids["alice"], ["gender"])
    _judge(store, ids[0], uids["bob"], [])
    correct_caption(store, ids[0], "gender", "carol", FIXED[0], create_role=Role.ANNOTATOR)
    with pytest.raises(InputError, match="2 annotators judged system 'sys' .alice, bob. and nobody adjudicated"):
        by_type_table(store, "p", "sys", resamples=10, metrics=FAST)
    rc = main(["--db", store.url, "rescore", "--project", "p", "--system", "sys", "--by-type", "--resamples", "10"])
    assert rc == 2 and "--layer" in capsys.readouterr().err
    assert by_type_table(store, "p", "sys", resamples=10, metrics=FAST, layer="annotator:alice").types["gender"].changed == 1
    assert by_type_table(store, "p", "sys", resamples=10, metrics=FAST, layer="annotator:bob").types == {}


def test_without_judgements_every_correction_counts_and_says_so(demo):
    store, ids, _ = demo
    assert default_layer(store, "p", "sys") is None
    correct_caption(store, ids[1], "gender", "carol", FIXED[1], create_role=Role.ANNOTATOR)  # no reason needed
    out = by_type_table(store, "p", "sys", resamples=10, metrics=FAST)
    assert out.types["gender"].changed == 1 and out.meta.layer is None
    assert "Nobody judged these captions: every stored correction counts." in format_by_type(out)


def test_import_refuses_an_untagged_line_without_a_reason(demo, tmp_path):
    store, ids, uids = demo
    _judge(store, ids[0], uids["alice"], ["gender"])
    fixed = tmp_path / "fixed.txt"
    fixed.write_text("\n".join(FIXED) + "\n", encoding="utf-8")
    refused(store, lambda: import_corrections(store, "p", "sys", "gender", fixed), "line 2",
            "no judgement of this caption carries Gender")
    r = import_corrections(store, "p", "sys", "gender", fixed, reason="checked against the image")
    assert (r.corrections, r.overridden) == (2, 1)
