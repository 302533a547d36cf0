"""Suggestions from a judge in a real browser: the second annotator of a double-annotated caption and blind
correction never see a judge, while a first annotator's panel starts from its answer and an open correction
shows its fix."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from annotator.annotation import Queue
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.correction.blind import set_project_blind
from annotator.exchange.judge_files import import_judge
from annotator.judges.suggestions import set_suggestion_judge
from annotator.model import Caption, Item, Project, Reference, Role
from annotator.sample import load_sample
from annotator.store.judgements import save_judgement
from annotator.store.projects import load_project, write_project
from annotator.store.users import create_user
from tests.browser.annotate_helpers import PW, press
from tests.browser.conftest import signed_in, wait_until_settled

pytestmark = [pytest.mark.browser]
NOTICE = "Started from the answer of judge sample-vlm"


@pytest.fixture
def sample(server):
    store = server.store()
    load_sample(store)
    for name in ("ann", "ben"):
        add_user(store, name, "annotator", PW)
    assign(store, "sample", ["ann", "ben"], double_fraction=1.0, seed=2)  # every caption judged twice
    set_suggestion_judge(store, "sample", "sample-vlm")
    yield store
    store.dispose()


def queue_kinds(store, user: str) -> list[bool]:
    """Whether each position of ``user``'s queue is a second annotator's."""
    q = Queue.open(store, user, Role.ANNOTATOR, "sample")
    return [q.task(p).is_second for p in range(q.size())]


def test_a_double_annotated_captions_second_annotator_never_sees_the_judge(server, sample, page):
    checked = {True: 0, False: 0}
    for user in ("ann", "ben"):
        kinds = queue_kinds(sample, user)
        signed_in(page, server, user, PW)
        status = page.locator('[data-testid="ann-msg"]')
        radios = page.locator('.st-key-ann_label input[type="radio"]')
        for position, second in enumerate(kinds[:6]):
            if position:
                page.evaluate("() => document.activeElement && document.activeElement.blur()")
                press(page, "ArrowRight")
            expect(page.locator('[data-testid="ann-caption"]')).to_be_visible()
            if second:
                expect(radios.nth(0)).not_to_be_checked()
                expect(radios.nth(1)).not_to_be_checked()
                assert NOTICE not in (status.inner_text() if status.count() else "")
            else:
                expect(status).to_contain_text(NOTICE)
                assert radios.nth(0).is_checked() or radios.nth(1).is_checked()
            checked[second] += 1
        page.context.clear_cookies()
    assert checked[True] >= 3 and checked[False] >= 3


@pytest.fixture
def gender_project(server):
    """Three captions an annotator judged Gender, a judge whose spans fix the word, suggestions on, a lead."""
    store = server.store()
    items = [Item(key=f"p{i}", references=[Reference("A woman holds a flag")],
                  captions=[Caption("sys", f"A man holds flag number {i}")]) for i in range(3)]
    with store.transaction() as conn:
        write_project(conn, Project(name="demo", items=items))
        uid = create_user(conn, "alice", Role.ANNOTATOR)
    ids = [c.caption_id for it in load_project(store, "demo").items for c in it.captions]
    for cid in ids:
        save_judgement(store, cid, uid, label="inaccurate", error_types=["gender"])
    add_user(store, "lea", "lead", PW)
    yield store
    store.dispose()


def test_blind_correction_never_shows_the_judge(server, gender_project, page, tmp_path):
    store = gender_project
    path = tmp_path / "judge.jsonl"
    rows = [{"format": "annotator-judge", "version": 1, "judge": "vlm", "model": "stand-in", "prompt": "1"}]
    rows += [{"item": f"p{i}", "system": "sys", "p_inaccurate": 1.0, "types": {"gender": 1.0},
              "spans": [{"start": 1, "end": 2, "type": "gender", "fix": "woman"}]} for i in range(3)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    import_judge(store, "demo", path)
    set_suggestion_judge(store, "demo", "vlm")
    fix = "Judge vlm suggests: “man” → “woman”"
    for blind in (True, False):
        set_project_blind(store, "demo", blind)
        signed_in(page, server, "lea", PW, path="/correct")
        expect(page.get_by_role("textbox", name="Corrected caption")).to_be_visible()
        wait_until_settled(page)
        body = page.locator('[data-testid="stMain"]')
        expect(body).to_contain_text("A man holds flag number 0")
        if blind:
            assert "Judge vlm" not in body.inner_text()
        else:
            expect(body).to_contain_text(fix)
        page.context.clear_cookies()
