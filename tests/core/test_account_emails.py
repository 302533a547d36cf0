"""Accounts carry an e-mail address: checked, unique regardless of case (the whole address), set from the command
line and the People page, listed by ``users list --json``; migration 16 adds it to an older database."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import inspect, text

from annotator.accounts import auth
from annotator.accounts.people import account_changes
from annotator.errors import InputError
from annotator.model import Role
from annotator.names import check_email, email_key
from annotator.store import schema
from annotator.store.users import user_by_email
from tests.apptest_helpers import page_test
from tests.cli_helpers import run_cli


@pytest.mark.parametrize("typed, stored", [
    ("ann@lab.example.org", "ann@lab.example.org"),
    ("  Sample-Ann@Attacker.Example ", "Sample-Ann@attacker.example"),  # the domain is kept in lower case
    ("first.last+tag@sub.uni-x.ac.uk", "first.last+tag@sub.uni-x.ac.uk"),
    ("o'brien@xn--bcher-kva.example", "o'brien@xn--bcher-kva.example"),
])
def test_addresses_that_are_stored(typed, stored):
    assert check_email(typed) == stored


@pytest.mark.parametrize("typed, fragment", [
    ("sample-ann", "NAME@DOMAIN"), ("@lab.org", "NAME@DOMAIN"), ("ann@", "NAME@DOMAIN"),
    ("ann smith@lab.org", "part before"), ("ann..b@lab.org", "part before"), (".ann@lab.org", "part before"),
    ("ann@localhost", "domain name"), ("ann@lab.o", "domain name"), ("ann@-lab.org", "domain name"),
    ("ann@lab..org", "domain name"), ("ann@lab.org\n", None), ("a" * 65 + "@lab.org", "too long"),
    ("ann@" + "a" * 250 + ".org", "too long"), ("änn@lab.org", "part before"), ("ann@lab.org\x00", "domain name"),
])
def test_what_is_not_an_address_is_refused(typed, fragment):
    if fragment is None:  # white space around an address is not part of it
        assert check_email(typed) == "ann@lab.org"
        return
    with pytest.raises(InputError, match=fragment):
        check_email(typed)


def test_an_address_belongs_to_one_account_regardless_of_case(store):
    auth.add_user(store, "ann", Role.ANNOTATOR, email="Ann@Lab.example.org")
    assert auth.get_email(store, "ANN") == "Ann@lab.example.org"
    with pytest.raises(InputError, match="belongs to the account 'ann'"):
        auth.add_user(store, "ann2", Role.ANNOTATOR, email="ann@LAB.EXAMPLE.ORG")
    auth.add_user(store, "bo", Role.LEAD)
    with pytest.raises(InputError, match="belongs to the account 'ann'"):
        auth.set_email(store, "bo", "ANN@lab.example.org")
    assert auth.get_email(store, "bo") is None and [u.name for u in auth.list_users(store)] == ["ann", "bo"]
    # the whole address is compared: the same name at another domain is another address
    assert auth.set_email(store, "bo", "ann@lab.example.net") == "ann@lab.example.net"
    # an account may give its own address again in another case, and give it up
    assert auth.set_email(store, "ann", "ANN@lab.example.org") == "ANN@lab.example.org"
    with store.read() as conn:
        assert user_by_email(conn, "ann@lab.example.ORG").name == "ann"
        assert user_by_email(conn, "ann@lab.example.com") is None
    assert auth.set_email(store, "ann", "") is None
    auth.add_user(store, "cy", Role.ANNOTATOR, email="ann@lab.example.org")  # free again
    details = [r["detail"] for r in account_changes(store).to_dict("records") if r["action"] == "e-mail"]
    assert details[::-1] == ["(none) → ann@lab.example.net", "Ann@lab.example.org → ANN@lab.example.org",
                             "ANN@lab.example.org → (none)"]


def test_migration_16_gives_older_accounts_an_empty_address(sqlite_store):
    store = sqlite_store
    auth.add_user(store, "ann", Role.ANNOTATOR)
    with store.transaction() as conn:
        conn.execute(text("DROP INDEX uq_users_email_key"))
        conn.execute(text("ALTER TABLE users DROP COLUMN email"))
        conn.execute(text("ALTER TABLE users DROP COLUMN email_key"))
        conn.execute(schema.schema_migrations.delete().where(schema.schema_migrations.c.version == 16))
    assert store.migrate() == [16]
    with store.read() as conn:
        assert {"email", "email_key"} <= {c["name"] for c in inspect(conn).get_columns("users")}
        assert "uq_users_email_key" in {i["name"] for i in inspect(conn).get_indexes("users")}
    assert auth.get_email(store, "ann") is None
    auth.set_email(store, "ann", "ann@lab.example.org")
    with pytest.raises(InputError, match="belongs to"):
        auth.add_user(store, "bea", Role.ANNOTATOR, email="ANN@lab.example.org")
    assert store.migrate() == []


def test_the_command_line_sets_and_lists_addresses(sqlite_store, capsys):
    url = sqlite_store.url
    code, out, _ = run_cli(capsys, "--db", url, "users", "add", "sample-ann", "--role", "annotator", "--no-password",
                           "--email", "Sample-Ann@Lab.example.org", "--json")
    assert code == 0 and json.loads(out)["email"] == "Sample-Ann@lab.example.org"
    code, _, err = run_cli(capsys, "--db", url, "users", "add", "other", "--role", "annotator", "--no-password",
                           "--email", "sample-ann@lab.example.org")
    assert code == 2 and "belongs to the account 'sample-ann'" in err
    code, _, err = run_cli(capsys, "--db", url, "users", "email", "sample-ann", "not an address")
    assert code == 2 and "not an e-mail address" in err
    assert run_cli(capsys, "--db", url, "users", "add", "boss", "--role", "admin", "--no-password")[0] == 0
    assert run_cli(capsys, "--db", url, "users", "email", "boss", "boss@lab.example.org")[0] == 0
    code, out, _ = run_cli(capsys, "--db", url, "users", "list", "--json")
    assert {u["name"]: u["email"] for u in json.loads(out)} == {"boss": "boss@lab.example.org",
                                                              "sample-ann": "Sample-Ann@lab.example.org"}
    code, out, _ = run_cli(capsys, "--db", url, "users", "list")
    assert "boss@lab.example.org" in out
    assert email_key("Sample-Ann@lab.example.org") == email_key("sample-ann@LAB.example.org")


def test_the_people_page_shows_and_sets_addresses(sqlite_store):
    store = sqlite_store
    auth.add_user(store, "dana", Role.ANNOTATOR, email="dana@lab.example.org")
    at = page_test("people", store.url, user="root", role="admin").run()
    table = at.dataframe[0].value
    assert dict(zip(table["name"], table["e-mail"])) == {"dana": "dana@lab.example.org", "root": ""}
    at.selectbox(key="ppl_account").set_value("root").run()
    at.text_input(key="ppl_email_root").input("DANA@lab.example.org").run()
    at.button(key="ppl_set_email").click().run()
    assert any("belongs to the account" in e.value for e in at.error) and auth.get_email(store, "root") is None
    at.text_input(key="ppl_email_root").input("root@lab.example.org").run()
    at.button(key="ppl_set_email").click().run()
    assert not at.error and auth.get_email(store, "root") == "root@lab.example.org"
    at.text_input(key="ppl_new_name").input("eve")
    at.text_input(key="ppl_new_email").input("Eve@Lab.example.org")
    at.button[0].click().run()
    assert not at.error and auth.get_email(store, "eve") == "Eve@lab.example.org"
