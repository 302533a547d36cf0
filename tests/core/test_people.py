"""Account changes are recorded with who made them, when and what (SQLite and PostgreSQL), from the app's
core functions and from the command line; a failed change records nothing."""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta, timezone

import pytest

from annotator.accounts import auth
from annotator.cli import main
from annotator.errors import AuthenticationFailed, InputError, NotFound, PermissionDenied
from annotator.model import Role
from annotator.accounts.people import (
    account_changes, add_person, change_active, change_role, generate_password, reset_password, unlock_person,
)
from annotator.store.migrations import MIGRATIONS

ADMIN = {"actor": "root", "actor_role": Role.ADMIN}
PW = "correct horse battery"


def _record(store):
    return [(r["by"], r["action"], r["account"], r["detail"]) for r in account_changes(store).to_dict("records")][::-1]


def test_every_change_is_recorded_with_who_and_what(store):
    auth.add_user(store, "root", Role.ADMIN, PW)                         # the command line's first admin
    before = datetime.now(timezone.utc) - timedelta(seconds=5)
    name, password = add_person(store, "dana", "annotator", **ADMIN)
    assert name == "dana" and len(password) == 16
    assert auth.authenticate(store, "dana", password).role is Role.ANNOTATOR   # the generated password works
    change_role(store, "dana", "lead", **ADMIN)
    change_role(store, "dana", "lead", **ADMIN)                          # no change, nothing recorded
    for _ in range(2):
        with pytest.raises(AuthenticationFailed):
            auth.authenticate(store, "dana", "wrong password!")
    assert [u.failed_logins for u in auth.list_users(store) if u.name == "dana"] == [2]
    unlock_person(store, "dana", **ADMIN)
    assert [u.failed_logins for u in auth.list_users(store) if u.name == "dana"] == [0]
    fresh = reset_password(store, "dana", **ADMIN)
    assert fresh != password and auth.authenticate(store, "dana", fresh).role is Role.LEAD
    with pytest.raises(AuthenticationFailed):
        auth.authenticate(store, "dana", password)
    change_active(store, "dana", False, **ADMIN)
    change_active(store, "dana", True, **ADMIN)
    assert _record(store) == [
        ("command line", "created", "root", "role admin, with a password"),
        ("root", "created", "dana", "role annotator, with a password"),
        ("root", "role", "dana", "annotator → lead"),
        ("root", "unlocked", "dana", "failed log-ins and lock cleared"),
        ("root", "password", "dana", "password reset (generated)"),
        ("root", "deactivated", "dana", ""),
        ("root", "activated", "dana", ""),
    ]
    whens = [datetime.strptime(w, "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
             for w in account_changes(store)["when (UTC)"]]
    assert all(before <= w <= datetime.now(timezone.utc) + timedelta(seconds=1) for w in whens)
    assert list(account_changes(store, target="root")["action"]) == ["created"]


def test_refused_changes_record_nothing(store):
    auth.add_user(store, "root", Role.ADMIN, PW)
    add_person(store, "dana", "annotator", **ADMIN)
    n = len(account_changes(store))
    with pytest.raises(PermissionDenied):
        add_person(store, "eve", "admin", actor="dana", actor_role=Role.LEAD)
    with pytest.raises(InputError):
        add_person(store, "DANA", "lead", **ADMIN)                     # the name is taken (case folded)
    with pytest.raises(InputError):
        change_role(store, "root", "annotator", **ADMIN)               # not one's own role
    with pytest.raises(InputError):
        change_active(store, "Root", False, **ADMIN)                   # nor deactivate oneself
    with pytest.raises(NotFound):
        reset_password(store, "nobody", **ADMIN)
    with pytest.raises(InputError):
        change_role(store, "dana", "wizard", **ADMIN)
    assert len(account_changes(store)) == n
    assert {u.name: u.role for u in auth.list_users(store)} == {"dana": "annotator", "root": "admin"}


def test_generated_passwords_are_unambiguous_and_differ():
    seen = {generate_password() for _ in range(200)}
    assert len(seen) == 200
    assert not set("".join(seen)) & set("0O1lI")


def test_command_line_changes_are_recorded(sqlite_store, monkeypatch, capsys):
    url = sqlite_store.url
    monkeypatch.setattr("sys.stdin", io.StringIO(PW + "\n"))
    assert main(["--db", url, "users", "add", "alice", "--role", "annotator", "--password-stdin"]) == 0
    assert main(["--db", url, "users", "role", "alice", "lead"]) == 0
    assert main(["--db", url, "users", "deactivate", "alice"]) == 0
    capsys.readouterr()
    assert main(["--db", url, "users", "changes", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["by"], r["action"], r["account"]) for r in rows] == [
        ("command line", "deactivated", "alice"), ("command line", "role", "alice"), ("command line", "created", "alice")]
    assert main(["--db", url, "users", "changes", "--name", "alice", "--limit", "1"]) == 0
    assert capsys.readouterr().out.count("alice") == 1


def test_the_record_has_its_migration():
    versions = [v for v, _, _ in MIGRATIONS]
    assert versions == list(range(1, len(versions) + 1))
    assert any("account changes" in text for _, text, _ in MIGRATIONS)
