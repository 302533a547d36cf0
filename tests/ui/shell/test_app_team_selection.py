"""AppTest of the whole app: the team chosen on one lead page is the team of the others and of the next
session; the local-mode account is left out of a default team until chosen."""

from __future__ import annotations

from sqlalchemy import text

from tests.apptest_helpers import app_test, texts
from tests.store.test_agreement_store import PROJECT, build_project


def _open(at, page):
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, texts(at)
    return at


def test_one_team_across_agreement_adjudication_analysis_and_the_next_session(sqlite_store):
    build_project(sqlite_store)
    at = app_test(sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    _open(at, "agreement")
    assert at.multiselect(key="agr_annotators").value == ["ann1", "ann2", "ann3"]
    at.multiselect(key="agr_annotators").set_value(["ann1", "ann3"]).run()
    _open(at, "adjudicate")
    assert at.multiselect(key="adj_annotators").value == ["ann1", "ann3"]
    _open(at, "analysis")
    assert at.multiselect(key="ana_team").value == ["ann1", "ann3"]
    layers = at.selectbox(key="ana_layer").options
    assert not any("ann2" in o for o in layers) and any("ann3" in o for o in layers), layers
    _open(at, "agreement")
    assert at.multiselect(key="agr_annotators").value == ["ann1", "ann3"]

    again = app_test(sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    _open(again, "adjudicate")
    assert again.multiselect(key="adj_annotators").value == ["ann1", "ann3"]
    # another lead has a team of their own
    other = app_test(sqlite_store.url, user="leo", role="lead", project=PROJECT).run()
    _open(other, "agreement")
    assert other.multiselect(key="agr_annotators").value == ["ann1", "ann2", "ann3"]


def test_the_local_account_is_left_out_until_chosen(sqlite_store):
    build_project(sqlite_store)
    with sqlite_store.transaction() as conn:
        conn.execute(text("UPDATE users SET name = 'local', name_key = 'local' WHERE name = 'ann3'"))
    at = app_test(sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    _open(at, "agreement")
    assert at.multiselect(key="agr_annotators").value == ["ann1", "ann2"]
    assert "local" in at.multiselect(key="agr_annotators").options
    at.multiselect(key="agr_annotators").set_value(["ann1", "ann2", "local"]).run()
    _open(at, "analysis")
    assert at.multiselect(key="ana_team").value == ["ann1", "ann2", "local"]


def test_assignment_preselects_only_annotators_who_can_log_in(sqlite_store):
    from annotator.accounts.auth import add_user, set_active
    build_project(sqlite_store)  # ann1..ann3 come from an import: no password
    add_user(sqlite_store, "zoe", "annotator", "correct horse battery")
    add_user(sqlite_store, "max", "annotator", "correct horse battery")
    add_user(sqlite_store, "sample-ann", "annotator", "correct horse battery")
    set_active(sqlite_store, "max", False)
    at = app_test(sqlite_store.url, user="lea", role="lead", project=PROJECT).run()
    _open(at, "assign")
    assert at.multiselect(key="assign_annotators").value == ["zoe"]
    assert at.multiselect(key="sample_annotators").value == ["zoe"]
    assert {"ann1", "sample-ann"} <= set(at.multiselect(key="assign_annotators").options)
