"""Where a log-in opens (annotator.accounts.landing): an annotator on the project with their work, a lead on the page and
project used last; the log-in form and the sidebar remember and apply it (AppTest of the whole app)."""

from __future__ import annotations

from annotator.assignment import assign
from annotator.accounts.auth import add_user, authenticate
from annotator.accounts.landing import Landing, landing
from annotator.accounts.sessions import recall, remember
from tests.apptest_helpers import app_test, seed_project, texts

PW = "correct horse battery"


def _team(store):
    for name in ("alpha", "beta", "gamma"):
        seed_project(store, name, n_items=3)
    add_user(store, "alice", "annotator", PW)
    add_user(store, "lea", "lead", PW)
    assign(store, "beta", ["alice"], double_fraction=0.0)
    assign(store, "gamma", ["alice"], double_fraction=0.0)
    return authenticate(store, "alice", PW), authenticate(store, "lea", PW)


def _finish(store, project, user="alice"):
    from annotator.annotation import Queue
    from annotator.model import Label
    queue = Queue.open(store, user, "annotator", project)
    pos = queue.first_todo()
    while pos is not None:
        queue.save(queue.task(pos), Label.ACCURATE, [], "", 1.0)
        pos = queue.first_todo()


def test_an_annotator_lands_where_their_work_is(store):
    alice, lea = _team(store)
    # nothing remembered: the first project by name that has work (alpha has none)
    assert landing(store, alice.user_id, "alice", "annotator") == Landing("beta", "annotate")
    remember(store, alice.user_id, "last_project", "gamma")
    assert landing(store, alice.user_id, "alice", "annotator") == Landing("gamma", "annotate")
    _finish(store, "gamma")
    assert landing(store, alice.user_id, "alice", "annotator") == Landing("beta", "annotate")
    _finish(store, "beta")
    assert landing(store, alice.user_id, "alice", "annotator") == Landing("gamma", "annotate")  # all done: last one


def test_a_lead_lands_on_the_last_page_and_project(store):
    alice, lea = _team(store)
    # Nothing remembered: a lead starts on Team, an analyst on Error analysis, never on an empty Annotate
    # (issue 24 item 16).
    assert landing(store, lea.user_id, "lea", "lead") == Landing(None, "team")
    assert landing(store, lea.user_id, "lea", "analyst") == Landing(None, "analysis")
    remember(store, lea.user_id, "last_project", "gamma")
    remember(store, lea.user_id, "last_page", "agreement")
    assert landing(store, lea.user_id, "lea", "lead") == Landing("gamma", "agreement")
    # a page the role no longer opens, a project since deleted: left out
    assert landing(store, lea.user_id, "lea", "analyst") == Landing("gamma", "analysis")
    remember(store, lea.user_id, "last_project", "gone")
    assert landing(store, lea.user_id, "lea", "lead") == Landing(None, "agreement")


def _log_in(at, name):
    at.text_input(key="login_name").input(name)
    at.text_input(key="login_password").input(PW)
    at.form_submit_button[0].click()
    return at.run()


def test_the_login_form_opens_the_landing_and_the_sidebar_remembers_it(sqlite_store):
    alice, lea = _team(sqlite_store)
    at = _log_in(app_test(sqlite_store.url).run(), "alice")
    assert not at.exception, texts(at)
    assert at.session_state["annotator_project"] == "beta"
    assert at.selectbox(key="annotator_project").value == "beta"

    remember(sqlite_store, lea.user_id, "last_project", "gamma")
    remember(sqlite_store, lea.user_id, "last_page", "agreement")
    at = _log_in(app_test(sqlite_store.url).run(), "lea")
    assert not at.exception, texts(at)
    assert "Agreement" in [t.value for t in at.title], texts(at)
    assert at.selectbox(key="annotator_project").value == "gamma"
    at.selectbox(key="annotator_project").set_value("alpha").run()
    at.switch_page("pages/assign.py").run()
    assert recall(sqlite_store, lea.user_id) == {"last_project": "alpha", "last_page": "assign"}
