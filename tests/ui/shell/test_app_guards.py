"""Role guards: annotators cannot open team or analysis pages, nor read others' judgements.

The guard is annotator.accounts.access.check_page (called by ui.page_setup); hiding pages
from the menu is only a convenience. Pages other engineers are still writing
are checked as soon as their file exists.
"""

from __future__ import annotations

import pytest

from annotator.accounts.access import PAGES, REVIEW, check_page, pages_for
from annotator.errors import PermissionDenied
from annotator.model import Role
from tests.apptest_helpers import ROOT, app_test, page_test, seed_project

RESTRICTED = [p for p in PAGES if Role.ANNOTATOR not in p.roles]


@pytest.mark.parametrize("spec", RESTRICTED, ids=[p.page_id for p in RESTRICTED])
def test_core_guard_refuses_annotators(spec):
    with pytest.raises(PermissionDenied):
        check_page(Role.ANNOTATOR, spec.page_id)
    with pytest.raises(PermissionDenied, match="log in"):
        check_page(None, spec.page_id)
    assert check_page(Role.ADMIN, spec.page_id) is spec


def test_analysis_pages_are_for_review_roles_only():
    analysis = [p for p in PAGES if p.section == "Analysis"]
    assert analysis and all(p.roles == REVIEW for p in analysis)
    assert all(Role.ANNOTATOR not in p.roles for p in PAGES if p.section in ("Analysis", "Team"))
    assert {p.page_id for p in pages_for(Role.ANNOTATOR)} == {"annotate", "guidelines"}
    assert check_page(Role.LEAD, "assign").page_id == "assign"
    with pytest.raises(PermissionDenied):
        check_page(Role.ANALYST, "assign")  # team pages are for leads and admins


EXISTING = [p for p in RESTRICTED if (ROOT / p.path).is_file()]


@pytest.mark.parametrize("spec", EXISTING, ids=[p.page_id for p in EXISTING])
def test_annotator_is_refused_by_every_existing_restricted_page(sqlite_store, spec):
    seed_project(sqlite_store, "demo", n_items=2)
    at = page_test(spec.page_id, sqlite_store.url, user="ann1", role="annotator", project="demo").run()
    assert any("Not allowed" in e.value for e in at.error), spec.page_id
    # page_setup stops the script: nothing of the page itself is rendered after the refusal.
    assert not at.button and not at.dataframe and not at.selectbox


def test_logged_out_session_is_refused_when_accounts_exist(sqlite_store):
    from annotator.accounts.auth import add_user
    add_user(sqlite_store, "alice", "annotator", "correct horse battery")
    at = page_test("annotate", sqlite_store.url, user=None).run()
    assert any("Please log in" in w.value for w in at.warning)
    assert not at.button


def test_annotator_menu_has_only_annotation_pages():
    from annotator.ui import menu_pages
    shown = {spec.page_id for spec, visible in menu_pages(Role.ANNOTATOR, ROOT) if visible}
    assert shown == {"annotate", "guidelines"}
    lead = {spec.page_id for spec, visible in menu_pages(Role.LEAD, ROOT) if visible}
    assert {"annotate", "guidelines", "assign"} <= lead
    assert not any(visible for _, visible in menu_pages(None, ROOT))


def test_annotator_opening_a_team_page_by_url_is_refused(sqlite_store):
    seed_project(sqlite_store, "demo", n_items=2)
    at = app_test(sqlite_store.url, user="ann1", role="annotator", project="demo").run()
    assert not at.exception
    at.switch_page("pages/assign.py").run()
    assert any("Not allowed" in e.value for e in at.error)
    assert not at.form_submit_button
