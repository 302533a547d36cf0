"""At least one active admin with a password remains after any account change (issue 22, item 3), on SQLite
and PostgreSQL: the last one cannot be demoted or deactivated, from the app's core or the command line, and
two changes that each take one of the last two admins away, run at the same moment in two threads, leave
one admin: one change is stored, the other refused, never both."""

from __future__ import annotations

import threading

import pytest

from annotator.accounts import auth
from annotator.cli import main
from annotator.errors import InputError
from annotator.model import Role
from annotator.accounts.people import account_changes, change_active, change_role
from annotator.store.users import count_admins_who_can_log_in

PW = "correct horse battery"


def _admins(store) -> int:
    with store.read() as conn:
        return count_admins_who_can_log_in(conn)


def test_the_last_admin_stays(store):
    auth.add_user(store, "root", Role.ADMIN, PW)
    auth.add_user(store, "ida", Role.ADMIN)          # an admin without a password cannot log in: does not count
    auth.add_user(store, "ola", Role.ADMIN, PW)
    auth.set_active(store, "ola", False)             # nor does a deactivated one
    for change in (lambda: auth.set_role(store, "root", Role.LEAD), lambda: auth.set_active(store, "root", False),
                   lambda: change_role(store, "root", "analyst", actor="ola", actor_role=Role.ADMIN)):
        with pytest.raises(InputError, match="root is the last active admin with a password"):
            change()
    assert main(["--db", store.url, "users", "role", "root", "annotator"]) == 2
    assert main(["--db", store.url, "users", "deactivate", "root"]) == 2
    assert _admins(store) == 1
    assert [(r["action"], r["account"]) for r in account_changes(store).to_dict("records")][::-1] == [
        ("created", "root"), ("created", "ida"), ("created", "ola"), ("deactivated", "ola")]
    # With a second admin, either may go.
    auth.set_active(store, "ola", True)
    auth.set_role(store, "root", Role.LEAD)
    assert _admins(store) == 1


def test_no_admin_before_no_refusal(store):
    """Local mode (no account with a password) is not a state the guard protects: changes go through."""
    auth.add_user(store, "ida", Role.ADMIN)
    auth.set_role(store, "ida", Role.LEAD)
    auth.add_user(store, "ann", Role.ANNOTATOR, PW)
    auth.set_active(store, "ann", False)
    assert _admins(store) == 0


ROUNDS = 6


@pytest.mark.parametrize("second", ["demote", "deactivate"])
def test_two_changes_at_once_leave_one_admin(store, second):
    auth.add_user(store, "ada", Role.ADMIN, PW)
    auth.add_user(store, "bea", Role.ADMIN, PW)
    for round_ in range(ROUNDS):
        barrier = threading.Barrier(2)
        outcome: dict[str, object] = {}

        def run(name, change):
            barrier.wait()
            try:
                change()
                outcome[name] = "stored"
            except InputError as exc:
                outcome[name] = exc
            except Exception as exc:  # a database error (a deadlock, a serialisation failure) is a failure too
                outcome[name] = exc

        second_change = ((lambda: auth.set_role(store, "bea", Role.LEAD)) if second == "demote"
                         else (lambda: auth.set_active(store, "bea", False)))
        threads = [threading.Thread(target=run, args=("ada", lambda: auth.set_role(store, "ada", Role.ANALYST))),
                   threading.Thread(target=run, args=("bea", second_change))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        stored = [n for n, o in outcome.items() if o == "stored"]
        refused = [o for o in outcome.values() if isinstance(o, InputError)]
        assert len(stored) == 1 and len(refused) == 1, (round_, outcome)
        assert "is the last active admin with a password" in str(refused[0])
        assert _admins(store) == 1
        # Both admins again for the next round.
        auth.set_role(store, "ada", Role.ADMIN)
        auth.set_role(store, "bea", Role.ADMIN)
        auth.set_active(store, "bea", True)
