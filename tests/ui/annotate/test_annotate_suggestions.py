"""The annotate page with suggestions on (AppTest): a first annotator's panel starts from the judge's answer and
the save records it; the second annotator of a double-annotated caption never sees the judge."""

from __future__ import annotations

import pytest

from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.judges.suggestions import set_suggestion_judge
from annotator.sample import load_sample
from annotator.store.judgements import history
from annotator.store.projects import load_project
from tests.apptest_helpers import page_test, texts

NOTICE = "Started from the answer of judge sample-vlm"


@pytest.fixture
def sample(sqlite_store):
    load_sample(sqlite_store)
    for name in ("ann", "ben"):
        add_user(sqlite_store, name, "annotator")
    # every caption is double-annotated: ann first on half of them, ben first on the other half
    assign(sqlite_store, "sample", ["ann", "ben"], double_fraction=1.0, seed=2)
    return sqlite_store


def open_as(store, user: str):
    at = page_test("annotate", store.url, user=user, role="annotator", project="sample", create_user=False)
    at.run(timeout=120)
    assert not at.exception, at.exception
    return at


def shown_task(at):
    return at.session_state["ann_task"]


def ticked(at) -> set[str]:
    """The ticked types (none shown in a staged second pass's first step)."""
    return {cb.key.removeprefix("ann_type_") for cb in at.checkbox if cb.key.startswith("ann_type_") and cb.value}


def walk(at, n: int):
    """The first ``n`` captions of the queue: (task, label shown, types ticked, the page's text), skipping each."""
    seen = []
    for _ in range(n):
        shown = texts(at) + "".join(h.value for h in at.html)  # the status line is HTML
        seen.append((shown_task(at), at.radio(key="ann_label").value, ticked(at), shown))
        at.button(key="ann_skip").click().run(timeout=120)
        assert not at.exception
    return seen


def test_off_by_default(sample):
    for task, label, types, shown in walk(open_as(sample, "ann"), 4):
        assert label is None and not types and NOTICE not in shown


def test_first_annotators_start_from_the_judge_second_annotators_never(sample):
    set_suggestion_judge(sample, "sample", "sample-vlm")
    judge = {c.caption_id: c.text for it in load_project(sample, "sample").items for c in it.captions}
    firsts = seconds = 0
    for user in ("ann", "ben"):
        for task, label, types, shown in walk(open_as(sample, user), 16):
            if task.is_second:
                seconds += 1
                assert label is None and not types and NOTICE not in shown, (user, judge[task.caption_id])
            else:
                firsts += 1
                assert label is not None and NOTICE in shown, (user, judge[task.caption_id])
    assert firsts == 16 and seconds == 16


def test_a_save_records_whether_the_panel_was_pre_filled(sample):
    set_suggestion_judge(sample, "sample", "sample-vlm")
    at = open_as(sample, "ann")
    while shown_task(at).is_second:
        at.button(key="ann_skip").click().run(timeout=120)
    task = shown_task(at)
    label, types = at.radio(key="ann_label").value, ticked(at)
    if "other" in types:
        at.text_input(key="ann_note").input("as the judge says")
    at.button(key="ann_save").click().run(timeout=120)
    assert not at.exception
    with sample.read() as conn:
        (j,) = [j for j in history(conn, task.caption_id) if j.user == "ann"]
        from sqlalchemy import select
        from annotator.store.schema import judgements
        suggested = conn.execute(select(judgements.c.suggested).where(judgements.c.id == j.judgement_id)).scalar()
    assert (j.label.value, set(j.error_types), suggested) == (label, types, True)
