"""Changing one's own password (annotator.accounts.auth.change_own_password) and "must change at next log-in" for
generated passwords, on SQLite and PostgreSQL (issue 24, items 17 and 18)."""

from __future__ import annotations

import pytest

from annotator.accounts import auth
from annotator.cli import main
from annotator.errors import AuthenticationFailed, InputError, SessionEnded
from annotator.model import Role
from annotator.accounts.people import account_changes, add_person, reset_password

ADMIN = {"actor": "root", "actor_role": Role.ADMIN}
PW = "correct horse battery"
NEW = "staple battery horse"


def test_generated_passwords_must_be_changed_and_typed_ones_not(store, monkeypatch):
    auth.add_user(store, "root", Role.ADMIN, PW)
    assert auth.authenticate(store, "root", PW).must_change_password is False
    _, generated = add_person(store, "dana", "annotator", **ADMIN)
    assert auth.authenticate(store, "dana", generated).must_change_password is True
    changed = auth.change_own_password(store, "dana", generated, NEW)
    assert auth.authenticate(store, "dana", NEW).must_change_password is False
    assert changed.session_epoch == auth.authenticate(store, "dana", NEW).session_epoch
    reset = reset_password(store, "dana", **ADMIN)
    assert auth.authenticate(store, "dana", reset).must_change_password is True
    # `annotator users passwd` is the person (or the server's operator) typing a password: not flagged.
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(PW + "\n"))
    assert main(["--db", store.url, "users", "passwd", "dana", "--password-stdin"]) == 0
    assert auth.authenticate(store, "dana", PW).must_change_password is False


def test_change_own_password_rules(store):
    auth.add_user(store, "lea", Role.LEAD, PW)
    before = auth.authenticate(store, "lea", PW)
    with pytest.raises(AuthenticationFailed):
        auth.change_own_password(store, "lea", "not my password", NEW)
    assert [u.failed_logins for u in auth.list_users(store) if u.name == "lea"] == [1]  # counts as a failure
    with pytest.raises(InputError, match="at least 8 characters"):
        auth.change_own_password(store, "lea", PW, "short")
    with pytest.raises(InputError, match="same as the current one"):
        auth.change_own_password(store, "lea", PW, PW)
    assert auth.authenticate(store, "lea", PW)  # nothing changed so far
    after = auth.change_own_password(store, "lea", PW, NEW)
    assert after.name == "lea" and after.role is Role.LEAD and after.session_epoch != before.session_epoch
    with pytest.raises(AuthenticationFailed):
        auth.authenticate(store, "lea", PW)
    # Sessions started before the change end (other browsers and tabs).
    with pytest.raises(SessionEnded):
        auth.resume_session(store, auth.SessionClaim.of(before))
    assert auth.resume_session(store, auth.SessionClaim.of(after)).name == "lea"
    last = account_changes(store).to_dict("records")[0]
    assert (last["by"], last["action"], last["account"], last["detail"]) == (
        "lea", "password", "lea", "changed by the account itself")
