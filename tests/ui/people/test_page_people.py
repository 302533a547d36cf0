"""AppTest of the People page: an admin adds, changes and deactivates accounts; every change is recorded and shown."""

from __future__ import annotations

import pytest

from annotator.accounts import auth
from annotator.errors import AuthenticationFailed
from annotator.accounts.people import account_changes
from annotator.ui import md_escape
from tests.apptest_helpers import page_test, refused

PW = "correct horse battery"


def _changes(store):
    return [(r["by"], r["action"], r["account"]) for r in account_changes(store).to_dict("records")][::-1]


def test_admin_manages_people_and_every_change_is_recorded(sqlite_store):
    store = sqlite_store
    at = page_test("people", store.url, user="root", role="admin").run()
    assert not at.exception and not at.error
    # Add an account: its generated password is shown once, and it logs in with it.
    at.text_input(key="ppl_new_name").input("dana")
    at.selectbox(key="ppl_new_role").set_value("annotator")
    at.button[0].click().run()   # the form's submit button
    assert not at.error, [e.value for e in at.error]
    password = at.code[0].value
    assert auth.authenticate(store, "dana", password).role.value == "annotator"
    assert any(md_escape("Added dana (annotator).") == s.value for s in at.success)
    assert at.selectbox(key="ppl_account").value == "dana"   # the new account is the one to change next
    at.run()
    assert not at.code  # shown once only

    at.selectbox(key="ppl_account").set_value("dana").run()
    at.selectbox(key="ppl_role_dana").set_value("lead").run()
    at.button(key="ppl_set_role").click().run()
    assert auth.authenticate(store, "dana", password).role.value == "lead"

    at.button(key="ppl_reset").click().run()
    fresh = at.code[0].value
    assert fresh != password and auth.authenticate(store, "dana", fresh)
    with pytest.raises(AuthenticationFailed):
        auth.authenticate(store, "dana", password)

    with pytest.raises(AuthenticationFailed):
        auth.authenticate(store, "dana", "wrong password!")
    at.run()
    at.button(key="ppl_unlock").click().run()
    at.button(key="ppl_deactivate").click().run()
    with pytest.raises(AuthenticationFailed):
        auth.authenticate(store, "dana", fresh)
    at.button(key="ppl_activate").click().run()
    assert auth.authenticate(store, "dana", fresh)
    at.button(key="ppl_logout").click().run()

    expected = [("root", "created", "dana"), ("root", "role", "dana"), ("root", "password", "dana"),
                ("root", "unlocked", "dana"), ("root", "deactivated", "dana"), ("root", "activated", "dana"),
                ("root", "logged out", "dana")]
    assert _changes(store) == expected
    shown = at.dataframe[-1].value
    assert [(r["by"], r["action"], r["account"]) for r in shown.to_dict("records")][::-1] == expected


def test_an_admin_cannot_lock_themselves_out(sqlite_store):
    at = page_test("people", sqlite_store.url, user="root", role="admin").run()
    at.selectbox(key="ppl_account").set_value("root").run()
    at.button(key="ppl_deactivate").click().run()
    assert any("your own account" in e.value for e in at.error)
    assert [u.active for u in auth.list_users(sqlite_store) if u.name == "root"] == [True]
    assert account_changes(sqlite_store).empty


@pytest.mark.parametrize("role", ["lead", "annotator", "analyst"])
def test_only_admins_open_the_page(sqlite_store, role):
    at = refused("people", sqlite_store.url, user="lea", role=role)
    assert not at.text_input
