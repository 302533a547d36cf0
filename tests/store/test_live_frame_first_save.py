"""A project whose judgements were first read empty, then the first save, then a refresh.

pandas 3 gives names the ``str`` dtype and refuses to unite ``str`` with ``object`` categories; the empty
frame used to carry ``object`` categories, so the dashboards crashed on the first save of a new project.
Checked with pandas 3's default and with its pandas-2 behaviour (``future.infer_string`` off), through
LiveJudgementFrame and through the agreement, adjudication and error-analysis pages.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from annotator.model import Role
from annotator.frames.live import LiveJudgementFrame, merge_judgement_frames
from annotator.store.analysis_queries import judgement_frame
from annotator.store.judgements import save_judgement
from annotator.store.users import create_user
from tests.apptest_helpers import page_test, seed_project, texts
from tests.store.test_live_frame import assert_same


@pytest.fixture(params=["pandas3", "pandas2"])
def string_inference(request):
    """Run with pandas 3's ``str`` names, and with names as ``object`` as pandas 2 has them."""
    if request.param == "pandas3":
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the option is deprecated in pandas 3, still honoured
        with pd.option_context("future.infer_string", False):
            yield


def _users(store, *names):
    with store.transaction() as conn:
        return [create_user(conn, n, Role.ANNOTATOR) for n in names]


def test_first_save_after_an_empty_read(store, string_inference):
    cids = seed_project(store, "fresh", n_items=3, systems=("sys-a", "sys-b"))
    ann, bob = _users(store, "ann", "bob")
    live = LiveJudgementFrame(store, "fresh")
    empty, _ = live.get()
    assert empty.empty
    save_judgement(store, cids[0], ann, label="inaccurate", error_types=("gender",))
    frame, _ = live.get()
    assert live.delta_reads == 1 and len(frame) == 1
    assert_same(frame, judgement_frame(store, "fresh", kinds=("annotation", "adjudication")))
    # Later saves (a new user, a new type string, a skip over a judgement) keep merging.
    save_judgement(store, cids[1], bob, label="accurate")
    save_judgement(store, cids[2], ann, label="inaccurate", error_types=("scene", "number"))
    save_judgement(store, cids[0], ann, label=None)
    frame, _ = live.get()
    assert live.delta_reads == 2 and live.full_reads == 1
    assert_same(frame, judgement_frame(store, "fresh", kinds=("annotation", "adjudication")))
    assert sorted(frame["user"].astype(str)) == ["ann", "bob"]


def test_first_save_when_the_project_had_no_users_yet(sqlite_store, string_inference):
    cids = seed_project(sqlite_store, "fresh", n_items=2)
    live = LiveJudgementFrame(sqlite_store, "fresh")
    assert live.get()[0].empty  # no user at all: the early empty frame
    (ann,) = _users(sqlite_store, "ann")
    save_judgement(sqlite_store, cids[1], ann, label="inaccurate", error_types=("age",))
    frame, _ = live.get()
    assert_same(frame, judgement_frame(sqlite_store, "fresh", kinds=("annotation", "adjudication")))


def test_merge_unites_names_read_under_either_setting(sqlite_store):
    cids = seed_project(sqlite_store, "fresh", n_items=2)
    (ann,) = _users(sqlite_store, "ann")
    save_judgement(sqlite_store, cids[0], ann, label="inaccurate", error_types=("age",))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pd.option_context("future.infer_string", False):
            old = judgement_frame(sqlite_store, "fresh")
    assert old["user"].cat.categories.dtype == object
    save_judgement(sqlite_store, cids[1], ann, label="accurate")
    changed = judgement_frame(sqlite_store, "fresh", include_skipped=True, changed_after=1)
    merged = merge_judgement_frames(old, changed)
    assert_same(merged, judgement_frame(sqlite_store, "fresh"))


@pytest.mark.parametrize("page, role, marker", [
    ("agreement", "lead", "Shared captions"),
    ("adjudicate", "lead", None),
    ("analysis", "analyst", None),
])
def test_pages_refresh_after_the_first_save(sqlite_store, page, role, marker):
    cids = seed_project(sqlite_store, "fresh", n_items=4)
    ann, bob = _users(sqlite_store, "ann", "bob")
    at = page_test(page, sqlite_store.url, user="viewer", role=role, project="fresh").run()
    assert not at.exception, at.exception
    for c in cids:  # the first saves of the project, then the same session runs the page again
        save_judgement(sqlite_store, c, ann, label="inaccurate", error_types=("gender",))
        save_judgement(sqlite_store, c, bob, label="inaccurate" if c != cids[0] else "accurate",
                       error_types=("gender",) if c != cids[0] else ())
    at.run()
    assert not at.exception, at.exception
    assert "dtype of categories" not in texts(at)
    if marker:
        assert marker in [m.label for m in at.metric]
