"""Two tabs on one caption: a save based on an older revision is refused, never silently stacked on top.

A page shows a caption with the user's judgement as it was (revision n, or none); another tab or window saves
revision n+1 meanwhile. The first page's save, and its skip, then raise JudgementChanged carrying the
judgement stored now, and nothing is written. Adjudications are checked the same way across leads: the
decision a lead's page showed must still be the one that counts. SQLite and PostgreSQL.
"""

from __future__ import annotations

import threading

import pytest

from annotator.adjudication import adjudicate, caption_case
from annotator.annotation import Queue
from annotator.errors import JudgementChanged
from annotator.model import Label
from annotator.store.judgements import history, save_judgement
from tests.store_helpers import annotated_project, refused

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def tabs(store):
    caps = annotated_project(store, leads=("lead1", "lead2"))
    # Two tabs of one annotator: each opened its own queue and shows the first caption.
    a, b = (Queue.open(store, "ann1", "annotator", "p") for _ in range(2))
    return store, caps, a, b


def _revisions(store, caption_id):
    with store.read() as conn:
        return [(j.revision, j.label, j.note) for j in history(conn, caption_id)]


def test_a_stale_tab_cannot_save_over_a_newer_judgement(tabs):
    store, caps, a, b = tabs
    ta, tb = a.task(0), b.task(0)
    assert ta.shown_revision == tb.shown_revision == 0
    assert b.save(tb, "inaccurate", ["gender"], "from tab B").revision == 1
    exc = refused(store, lambda: a.save(ta, "accurate", [], "from tab A"), "changed since this page showed it",
                  "no judgement", "revision 1", "inaccurate (Gender)", "'from tab B'", "saved by 'ann1'",
                  "Nothing was saved", error=JudgementChanged)
    assert exc.shown == 0 and exc.current.revision == 1 and exc.current.label is Label.INACCURATE
    assert exc.current.note == "from tab B" and exc.current.user == "ann1" and exc.current.created_at is not None
    assert _revisions(store, caps[0]) == [(1, Label.INACCURATE, "from tab B")]
    # Loading the newer judgement (the task read again) and saving goes through as revision 2.
    ta = a.task(0)
    assert ta.shown_revision == 1
    assert a.save(ta, "accurate", [], "from tab A").revision == 2
    # Tab B, still on the page it showed first, stays refused, now naming revision 2.
    refused(store, lambda: b.save(tb, "accurate"), "(no judgement)", "'from tab A': revision 2", error=JudgementChanged)
    refused(store, lambda: b.save(tb, "accurate", base_revision=1), "(revision 1)", error=JudgementChanged)
    # The page may name the revision it showed; the core decides against the store, not the task.
    assert b.save(tb, "inaccurate", ["age"], base_revision=2).revision == 3
    assert [r[0] for r in _revisions(store, caps[0])] == [1, 2, 3]


def test_a_stale_skip_does_not_bury_a_judgement(tabs):
    store, caps, a, b = tabs
    ta, tb = a.task(0), b.task(0)
    b.save(tb, "accurate")
    refused(store, lambda: a.skip(ta, "later"), "changed since this page showed it", error=JudgementChanged)
    assert _revisions(store, caps[0]) == [(1, Label.ACCURATE, "")]
    # A skip from a fresh page of a judged caption still writes nothing (as before).
    assert a.skip(a.task(0)) is None


def test_the_store_checks_the_base_revision_in_the_writing_transaction(tabs):
    store, caps, a, _ = tabs
    assert save_judgement(store, caps[1], a.user_id, label="accurate", base_revision=0) == 1
    refused(store, lambda: save_judgement(store, caps[1], a.user_id, label="accurate", base_revision=0),
            "no judgement", error=JudgementChanged)
    assert save_judgement(store, caps[1], a.user_id, label="accurate", base_revision=1) == 2
    # Without a base (imports, the command line) nothing is checked.
    assert save_judgement(store, caps[1], a.user_id, label="accurate") == 3


def test_tabs_saving_at_once_from_the_same_revision_store_exactly_one(tabs):
    store, caps, a, _ = tabs
    tasks = [Queue.open(store, "ann1", "annotator", "p") for _ in range(6)]
    shown = [(q, q.task(2)) for q in tasks]
    outcomes: list[str] = []
    start = threading.Barrier(len(shown))

    def run(q, task, k):
        start.wait()
        try:
            q.save(task, "inaccurate", ["age"], f"tab {k}")
            outcomes.append("saved")
        except JudgementChanged:
            outcomes.append("refused")

    threads = [threading.Thread(target=run, args=(q, t, k)) for k, (q, t) in enumerate(shown)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(outcomes) == ["refused"] * 5 + ["saved"]
    assert [r[0] for r in _revisions(store, caps[2])] == [1]


def test_a_lead_cannot_decide_over_a_decision_made_since(tabs):
    store, caps, _, _ = tabs
    seen1, seen2 = caption_case(store, "p", caps[0]), caption_case(store, "p", caps[0])
    assert seen1.adjudication is None
    assert adjudicate(store, caps[0], "lead1", "lead", "accurate", base=seen1.adjudication) == 1
    exc = refused(store, lambda: adjudicate(store, caps[0], "lead2", "lead", "inaccurate", ["age"], note="mine",
                                            base=seen2.adjudication),
                  "adjudication changed since this page showed it", "no adjudication", "accurate: revision 1",
                  "saved by 'lead1'", error=JudgementChanged)
    assert exc.current.user == "lead1" and exc.current.label is Label.ACCURATE
    # The same lead in a second tab: the decision shown is its own revision 1, and the first tab saved a second.
    seen2 = caption_case(store, "p", caps[0])
    assert adjudicate(store, caps[0], "lead1", "lead", "inaccurate", ["gender"], base=seen2.adjudication) == 2
    refused(store, lambda: adjudicate(store, caps[0], "lead1", "lead", "accurate", base=seen2.adjudication),
            "'lead1''s revision 1", "inaccurate (Gender): revision 2", error=JudgementChanged)
    # Loaded afresh, lead2's decision goes in; the command line (no base) is not checked.
    assert adjudicate(store, caps[0], "lead2", "lead", "accurate", base=caption_case(store, "p", caps[0]).adjudication) == 1
    assert adjudicate(store, caps[0], "lead1", "lead", "accurate") == 3
