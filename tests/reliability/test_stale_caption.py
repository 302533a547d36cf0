"""A page open from before a restore or a new import cannot save onto the caption that took its id.

Caption ids are handed out again when a backup is restored (SQLite) or a store is emptied and another project
imported into it (``TRUNCATE … RESTART IDENTITY``, which is what ``pg_restore --clean`` of another database's
dump leaves on PostgreSQL). Each save path that writes onto a caption a page showed earlier (an annotation,
a skip, a draft, an adjudication, a correction and a "leave untouched") takes the stamp of that caption and is refused
with CaptionChanged when the id holds another caption by then; every table keeps its row count and no
judgement or correction is written. Saves whose caption did not change, including after a restore of a
backup holding the very same captions, go through. The annotate, adjudication and correction pages, open
when a backup is restored underneath them, show the refusal as their error and store nothing; the annotate and
correction pages keep the user's choice on screen, the adjudication page moves on to the caption the id holds now.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from annotator import backup as B
from annotator.adjudication import adjudicate, caption_case
from annotator.annotation import Queue
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.correction import correct_caption, leave_untouched, queue as correction_queue
from annotator.errors import CaptionChanged
from annotator.layers import Layer
from annotator.model import Caption, Item, Project
from annotator.store import open_store
from annotator.store.judgements import save_judgement
from annotator.store.projects import project_id, write_project
from annotator.store.schema import captions, corrections, drafts, items, judgements, metadata
from annotator.store.stamps import CaptionStamp, caption_stamp
from annotator.store.users import user_id
from tests.apptest_helpers import page_test, visible
from tests.store_helpers import refused

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "beta"
SYSTEM = "sys"
BEFORE = "a brown dog runs along the beach {i}"
AFTER = "two men ride horses across a field {i}"
N_ITEMS = 4
pytestmark = pytest.mark.timeout(300)


def _import(store, template: str, *, assigned: bool = True) -> list[int]:
    """Import PROJECT (captions from ``template``) and give every caption to ann1 (unless not ``assigned``); the
    caption ids in item order."""
    new_items = [Item(key=f"img{i}.jpg", image=f"img{i}.jpg", width=64, height=48,
                  captions=[Caption(SYSTEM, template.format(i=i))]) for i in range(N_ITEMS)]
    with store.transaction() as conn:
        write_project(conn, Project(name=PROJECT, items=new_items))
    if assigned:
        assign(store, PROJECT, ["ann1"], double_fraction=0)
    with store.read() as conn:
        pid = project_id(conn, PROJECT)
        return list(conn.execute(select(captions.c.id).join(items, items.c.id == captions.c.item_id)
                                 .where(items.c.project_id == pid).order_by(captions.c.line_no)).scalars())


def _build(store, template: str, *, assigned: bool = True) -> list[int]:
    """Accounts first, then the project: any fresh store built this way hands out the same ids."""
    add_user(store, "ann1", "annotator")
    add_user(store, "lead", "lead")
    return _import(store, template, assigned=assigned)


def _replace_underneath(store, tmp_path, *, assigned: bool = True) -> list[int]:
    """Put another project of the same name under the same caption ids, as a restore or a re-import does."""
    if store.url.startswith("sqlite"):
        other = open_store(f"sqlite:///{tmp_path / 'other.db'}")
        try:
            _build(other, AFTER, assigned=assigned)
        finally:
            other.dispose()
        B.restore(tmp_path / "other.db", store.url, safety_copy=False)
        with store.read() as conn:
            return [r[0] for r in conn.execute(select(captions.c.id).order_by(captions.c.line_no))]
    tables = ", ".join(t.name for t in metadata.sorted_tables if t.name != "schema_migrations")
    with store.transaction() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    return _build(store, AFTER, assigned=assigned)


def _written(store) -> tuple[int, int]:
    with store.read() as conn:
        return tuple(conn.execute(select(func.count()).select_from(t)).scalar() for t in (judgements, corrections))


def _text_of(store, cid: int) -> str:
    with store.read() as conn:
        return conn.execute(select(captions.c.text).where(captions.c.id == cid)).scalar()


@pytest.fixture
def stale(store, tmp_path):
    """The store with PROJECT built from BEFORE; returns (store, caption ids, a function replacing it underneath)."""
    cids = _build(store, BEFORE)

    def replace(assigned: bool = True):
        new = _replace_underneath(store, tmp_path, assigned=assigned)
        assert new == cids, "the replacement reuses the caption ids"
        assert _text_of(store, cids[0]) == AFTER.format(i=0)
        return new
    return store, cids, replace


def _refused(store, call):
    exc = refused(store, call, "changed underneath", "restored", "imported again", "Nothing was saved", "Reload",
                  error=CaptionChanged)
    assert _written(store) == (0, 0)
    return exc


def test_annotation_save_and_skip_refused_after_the_caption_changed(stale):
    store, cids, replace = stale
    q = Queue.open(store, "ann1", "annotator", PROJECT)
    task = q.task(q.first_todo())
    assert task.caption_id == cids[0] and task.caption.text == BEFORE.format(i=0)
    assert task.stamp == CaptionStamp.of(cids[0], PROJECT, SYSTEM, "img0.jpg", 0, BEFORE.format(i=0))
    replace()
    exc = _refused(store, lambda: q.save(task, "accurate"))
    # Same id, same item key, system and project: the message says that the text differs.
    assert f"caption {cids[0]}" in str(exc) and "'img0.jpg'" in str(exc) and "another text" in str(exc)
    _refused(store, lambda: q.skip(task, "later"))
    # A draft from the stale page is refused the same way: nothing lands on the caption that took the id.
    _refused(store, lambda: q.save_draft(task, "inaccurate", ["subject_wrong"], "half done"))
    with store.read() as conn:
        assert conn.execute(select(func.count()).select_from(drafts)).scalar() == 0
    # The caption as it is now can be judged: a task read after the change saves.
    fresh = Queue.open(store, "ann1", "annotator", PROJECT)
    assert fresh.save(fresh.task(fresh.first_todo()), "accurate").revision == 1


def test_the_caption_change_is_the_news_when_the_assignment_went_with_it(stale):
    """The restored project gives ann1 nothing: the save says the caption changed, not merely "not assigned"."""
    store, cids, replace = stale
    q = Queue.open(store, "ann1", "annotator", PROJECT)
    task = q.task(q.first_todo())
    replace(assigned=False)
    _refused(store, lambda: q.save(task, "accurate"))


def test_adjudication_refused_after_the_caption_changed(stale):
    store, cids, replace = stale
    case = caption_case(store, PROJECT, cids[1])
    assert case.text == BEFORE.format(i=1)
    replace()
    _refused(store, lambda: adjudicate(store, cids[1], "lead", "lead", "inaccurate", ["subject_wrong"], stamp=case.stamp))
    # A stamp of an id that holds nothing now: refused the same way (not "no caption with id").
    gone = CaptionStamp.of(10_000, PROJECT, SYSTEM, "img9.jpg", 9, "gone")
    exc = _refused(store, lambda: adjudicate(store, 10_000, "lead", "lead", "accurate", stamp=gone))
    assert "no caption has that id any more" in str(exc)


def test_correction_refused_after_the_caption_changed(stale):
    store, cids, replace = stale
    with store.read() as conn:
        ann1 = user_id(conn, "ann1")
    save_judgement(store, cids[2], ann1, label="inaccurate", error_types=("subject_wrong",))
    (entry,) = correction_queue(store, PROJECT, SYSTEM, "subject_wrong", Layer.annotator("ann1").label)
    # What the correction page builds from the entry it shows is the stamp of the stored caption.
    shown = CaptionStamp.of(entry["caption_id"], PROJECT, SYSTEM, entry["item_key"], entry["line_no"], entry["text"])
    with store.read() as conn:
        assert shown == caption_stamp(conn, cids[2])
    replace()
    _refused(store, lambda: correct_caption(store, cids[2], "subject_wrong", "lead", "a brown cat runs along the beach 2",
                                            stamp=shown))
    _refused(store, lambda: leave_untouched(store, cids[2], "subject_wrong", "lead", stamp=shown))


def test_unchanged_captions_save_with_their_stamps(stale, tmp_path):
    store, cids, _ = stale
    q = Queue.open(store, "ann1", "annotator", PROJECT)
    task = q.task(q.first_todo())
    case = caption_case(store, PROJECT, cids[1])
    with store.read() as conn:
        stamp2 = caption_stamp(conn, cids[2])
    if store.url.startswith("sqlite"):
        # A restore of a backup holding the very same captions changes nothing the stamps cover.
        copy = B.backup(store.url, tmp_path / "same.db").path
        B.restore(copy, store.url, safety_copy=False)
    assert q.save_draft(task, "inaccurate", [], "unchanged caption").note == "unchanged caption"
    assert q.save(task, "accurate").revision == 1
    assert adjudicate(store, cids[1], "lead", "lead", "inaccurate", ["subject_wrong"], stamp=case.stamp) == 1
    # Nobody tagged caption 2 with the type, so the correction goes in with a reason.
    saved = correct_caption(store, cids[2], "subject_wrong", "lead", "a brown cat runs along the beach 2", stamp=stamp2,
                            override_reason="not annotated; checks the stamp")
    assert saved.revision == 1
    assert _written(store) == (2, 1)


def test_a_stamp_names_its_own_caption(stale):
    store, cids, _ = stale
    with store.read() as conn:
        stamp0 = caption_stamp(conn, cids[0])
    exc = _refused(store, lambda: adjudicate(store, cids[1], "lead", "lead", "accurate", stamp=stamp0))
    assert f"named caption {cids[1]}" in str(exc)
    # A stamp of another project's caption under this id: the message names both.
    elsewhere = CaptionStamp.of(cids[0], "alpha", SYSTEM, "img0.jpg", 0, BEFORE.format(i=0))
    exc = _refused(store, lambda: adjudicate(store, cids[0], "lead", "lead", "accurate", stamp=elsewhere))
    assert (f"it was item 'img0.jpg' of system '{SYSTEM}' in project 'alpha' when the page showed it, and that id "
            f"now holds item 'img0.jpg' of system '{SYSTEM}' in project '{PROJECT}'") in str(exc)


# ------------------------------------------------------------------ as the annotator meets it

def _backup_with_another_project(live, tmp_path, accounts, judge=lambda store, cids: None) -> str:
    """Create ``accounts`` in ``live``, import PROJECT there from BEFORE, and return a backup file in which the
    same accounts (session epochs included: open sessions stay valid after the restore) got PROJECT from AFTER.
    ``judge(store, caption ids)`` saves the same judgements in both."""
    for name, role in accounts:
        add_user(live, name, role)
    seed = Path(B.backup(live.url, tmp_path / "accounts.db").path)
    judge(live, _import(live, BEFORE))
    shutil.copy(seed, tmp_path / "other.db")
    other = open_store(f"sqlite:///{tmp_path / 'other.db'}")
    try:
        judge(other, _import(other, AFTER))
    finally:
        other.dispose()
    return B.backup(f"sqlite:///{tmp_path / 'other.db'}", tmp_path / "last-week.db").path


def _shown_caption(at, testid: str) -> str:
    return next(h.value for h in at.html if f'data-testid="{testid}"' in h.value)


def _errors(at) -> list[str]:
    return [visible(e.value) for e in at.error]


def _says_changed(errors: list[str]) -> bool:
    return any("changed underneath" in e and "Nothing was saved" in e and "Reload the page" in e for e in errors)


def test_annotate_page_refuses_a_save_after_a_restore_underneath(sqlite_store, tmp_path):
    """ann1 has a caption open; the lead restores a backup in which the project was imported from another file
    (same names, so the same ids); ann1 presses Save: the page says what happened, keeps the choice, stores nothing."""
    live = sqlite_store
    backup_file = _backup_with_another_project(live, tmp_path, [("ann1", "annotator")])

    at = page_test("annotate", live.url, user="ann1", role="annotator", project=PROJECT, create_user=False).run()
    assert not at.exception, at.exception
    assert BEFORE.format(i=0) in _shown_caption(at, "ann-caption")
    at.radio(key="ann_label").set_value("inaccurate")
    at.checkbox(key="ann_type_subject_wrong").check()
    at.text_input(key="ann_note").input("wrong animal")

    done = subprocess.run([sys.executable, "-m", "annotator", "--db", live.url, "restore", backup_file],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert _text_of(live, 1) == AFTER.format(i=0)

    at.button(key="ann_save").click().run()
    assert not at.exception, at.exception
    assert _says_changed(_errors(at)), _errors(at)
    assert _written(live) == (0, 0)
    # The choice stays on screen, on the caption it was made for.
    assert at.radio(key="ann_label").value == "inaccurate"
    assert at.checkbox(key="ann_type_subject_wrong").value is True
    assert at.text_input(key="ann_note").value == "wrong animal"
    assert BEFORE.format(i=0) in _shown_caption(at, "ann-caption")

    # A reload shows the caption as it is now, and saving it works.
    again = page_test("annotate", live.url, user="ann1", role="annotator", project=PROJECT, create_user=False).run()
    assert AFTER.format(i=0) in _shown_caption(again, "ann-caption")
    again.radio(key="ann_label").set_value("accurate")
    again.button(key="ann_save").click().run()
    assert not again.error and _written(live) == (1, 0)


def _disagree(store, cids):
    with store.read() as conn:
        ann1, ann2 = user_id(conn, "ann1"), user_id(conn, "ann2")
    save_judgement(store, cids[0], ann1, label="accurate")
    save_judgement(store, cids[0], ann2, label="inaccurate", error_types=("subject_wrong",))


def test_adjudication_page_refuses_a_decision_after_a_restore_underneath(sqlite_store, tmp_path):
    live = sqlite_store
    backup_file = _backup_with_another_project(
        live, tmp_path, [("ann1", "annotator"), ("ann2", "annotator"), ("lea", "lead")], _disagree)
    at = page_test("adjudicate", live.url, user="lea", role="lead", project=PROJECT, create_user=False).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="adj_caption").value == 1
    assert BEFORE.format(i=0) in _shown_caption(at, "adj-caption")
    at.radio(key="adj_label").set_value("accurate").run()

    B.restore(backup_file, live.url, safety_copy=False)
    at.button(key="adj_save").click().run()
    assert not at.exception, at.exception
    assert _says_changed(_errors(at)), _errors(at)
    assert _written(live) == (2, 0), "only the two annotations the backup holds"
    # The page then shows the caption the id holds now, to decide afresh.
    assert AFTER.format(i=0) in _shown_caption(at, "adj-caption")


def _judge_subject(store, cids):
    with store.read() as conn:
        ann1 = user_id(conn, "ann1")
    save_judgement(store, cids[0], ann1, label="inaccurate", error_types=("subject_wrong",))


def test_correction_page_refuses_a_correction_after_a_restore_underneath(sqlite_store, tmp_path):
    live = sqlite_store
    backup_file = _backup_with_another_project(live, tmp_path, [("ann1", "annotator"), ("lea", "lead")],
                                               _judge_subject)
    at = page_test("correct", live.url, user="lea", role="lead", project=PROJECT, create_user=False).run()
    at.selectbox(key="correct_type").set_value("subject_wrong").run()
    at.selectbox(key="correct_layer").set_value(Layer.annotator("ann1").label).run()
    assert not at.exception, at.exception
    assert BEFORE.format(i=0) in [t.value for t in at.text]
    edit_key = "correct_text::1::subject_wrong"
    edited = "a brown cat runs along the beach 0"
    at.text_area(key=edit_key).input(edited).run()

    B.restore(backup_file, live.url, safety_copy=False)
    at.button(key="correct_save").click().run()
    assert not at.exception, at.exception
    assert _says_changed(_errors(at)), _errors(at)
    assert _written(live) == (1, 0)
    assert at.text_area(key=edit_key).value == edited
    # The page now shows the caption as the store holds it (its cached queue was older than the restore).
    assert AFTER.format(i=0) in [t.value for t in at.text]
