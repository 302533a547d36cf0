"""One rule for user names, and a log-in form that does not tell which names exist.

Names are compared by their key (case-folded, NFKC, invisible format characters dropped), for creating,
logging in, importing and assigning alike; the failure counters belong to the typed name's key and live in
the store for every name, known or not, so an attacker sees the same messages and the same lock-out for a
real account and for a name nobody has, from one app process or several.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from annotator.accounts import auth
from annotator.cli import main
from annotator.errors import AccountLocked, AuthenticationFailed, InputError, NotFound
from annotator.model import Role
from annotator.store import open_store
from annotator.store.users import get_user_row, user_id, user_name_key

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)
PW = "correct horse battery"


def _answer(store, name, password, at) -> str:
    """What the log-in form would say: the error's class and message, or "ok"."""
    try:
        auth.authenticate(store, name, password, now=at)
    except AuthenticationFailed as exc:
        return f"{type(exc).__name__}: {exc}"
    return "ok"


def _probe(store, variants: list[str], at: datetime) -> list[str]:
    """Five spaced-out failures with ``variants[0]``, then one try with each other spelling."""
    out = []
    for k in range(5):
        out.append(_answer(store, variants[0], "guess guess", at + timedelta(seconds=20 * k)))
    for k, name in enumerate(variants[1:]):
        out.append(_answer(store, name, "guess guess", at + timedelta(seconds=200 + k)))
    return out


def test_name_key_rule():
    assert user_name_key("Alice") == user_name_key("ALICE") == user_name_key("  alice ") == "alice"
    assert user_name_key("ａｌｉｃｅ") == "alice"                     # full-width letters
    assert user_name_key("al\u200bice") == "alice"                    # zero-width space
    assert user_name_key("Stra\u00dfe") == user_name_key("STRASSE")     # case folding, not lower()
    assert user_name_key("Jose\u0301") == user_name_key("Jos\u00e9")    # NFC / NFD
    assert user_name_key("ann  smith") == user_name_key("ann smith")
    assert user_name_key("\u200b\u200d") == ""


def test_create_and_look_up_by_the_rule(store):
    auth.add_user(store, " Alice ", "annotator", PW)
    with store.read() as conn:
        row = get_user_row(conn, "ALICE")
        assert row.name == "Alice"                          # stored as typed, stripped
        assert user_id(conn, "ａｌｉｃｅ") == row.id
    for other in ("alice", "ALICE", "al\u200bice"):
        with pytest.raises(InputError, match="taken by the user 'Alice'"):
            auth.add_user(store, other, "lead", PW)
    # An import naming the annotator in another case attaches to the same account.
    with store.transaction() as conn:
        assert user_id(conn, "aLiCe", create_role=Role.ANNOTATOR) == row.id
    # Roles, passwords and unlocks find the account by the same rule.
    auth.set_role(store, "ALICE", "lead")
    auth.set_password(store, "alice", "another good secret")
    assert auth.authenticate(store, "aLIce", "another good secret", now=T0).name == "Alice"


@pytest.mark.parametrize("bad, message", [
    ("", "cannot be empty"), ("   ", "cannot be empty"), ("\u200b\u200b", "visible character"),
    ("ann\x1b[31m", r"control character U\+001B"), ("evil\u202egnp", r"control character U\+202E"),
    ("x" * 101, "at most 100"),
])
def test_names_that_cannot_be_user_names(sqlite_store, bad, message):
    with pytest.raises(InputError, match=message):
        auth.add_user(sqlite_store, bad, "annotator", PW)


def test_existing_and_unknown_names_answer_alike(store):
    """The issue's case: five failures with a name in another case, then the name as it is spelled."""
    auth.add_user(store, "alice", "annotator", PW)
    real = _probe(store, ["ALICE", "alice", "Alice"], T0)
    ghost = _probe(store, ["ZED", "zed", "Zed"], T0)
    assert real == ghost
    assert real[0] == "AuthenticationFailed: " + auth.FAILED_MESSAGE
    assert real[4].startswith("AccountLocked: Too many failed log-ins")
    assert all(a.startswith("AccountLocked: This account is locked") for a in real[5:])
    # The lock holds for the real account's right password too, and ends for both alike.
    assert _answer(store, "alice", PW, T0 + timedelta(minutes=5)).startswith("AccountLocked")
    later = T0 + timedelta(minutes=30)
    assert _answer(store, "zed", "guess guess", later) == "AuthenticationFailed: " + auth.FAILED_MESSAGE
    assert _answer(store, "alice", "guess guess", later + timedelta(seconds=1)) == \
        "AuthenticationFailed: " + auth.FAILED_MESSAGE


def test_password_less_and_deactivated_accounts_answer_like_unknown_names(sqlite_store):
    store = sqlite_store
    auth.add_user(store, "imported", "annotator", None)
    auth.add_user(store, "gone", "annotator", PW)
    auth.set_active(store, "gone", False)
    answers = {name: _probe(store, [name, name.upper()], T0) for name in ("imported", "gone", "nobody")}
    assert answers["imported"] == answers["gone"] == answers["nobody"]
    # The deactivated account's right password does not help, and says nothing more.
    later = T0 + timedelta(hours=1)
    assert _answer(store, "gone", PW, later) == "AuthenticationFailed: " + auth.FAILED_MESSAGE
    auth.set_active(store, "gone", True)
    assert _answer(store, "gone", PW, later + timedelta(seconds=1)) == "ok"


def test_lock_of_an_unknown_name_is_seen_by_every_app_process(store):
    """Two processes behind a proxy share the counters of unknown names as they do those of real ones:
    a lock set through one is not missing in the other (which would tell the names apart)."""
    other = open_store(store.url)
    try:
        auth.add_user(store, "alice", "annotator", PW)
        for name in ("alice", "nobody"):
            for k in range(5):
                _answer(store, name, "guess guess", T0 + timedelta(seconds=20 * k))
            assert _answer(other, name.upper(), "guess guess", T0 + timedelta(seconds=200)).startswith(
                "AccountLocked: This account is locked")
    finally:
        other.dispose()


def test_unknown_name_counters_are_forgotten_after_a_day(sqlite_store):
    store = sqlite_store
    for k in range(3):
        _answer(store, f"ghost{k}", "x", T0)
    _answer(store, "late", "x", T0 + auth.FORGET_FAILURES_AFTER + timedelta(minutes=1))
    with store.read() as conn:
        keys = {r[0] for r in conn.execute(text("SELECT name_key FROM login_failures"))}
    assert keys == {"late"}


def test_users_cli_follows_the_rule(sqlite_store, capsys):
    url = sqlite_store.url
    auth.add_user(sqlite_store, "Alice", "lead", PW)
    assert main(["--db", url, "users", "role", "ALICE", "annotator"]) == 0
    assert main(["--db", url, "users", "deactivate", "alice"]) == 0
    assert main(["--db", url, "users", "list"]) == 0
    out = capsys.readouterr().out
    assert "Alice" in out and "annotator" in out and "deactivated" in out
    assert main(["--db", url, "users", "activate", "ALICE"]) == 0
    assert main(["--db", url, "users", "unlock", "nobody"]) == 2
    with pytest.raises(NotFound):
        auth.unlock(sqlite_store, "nobody")


def _downgrade_users_to_v3(store) -> None:
    """Give a fresh store the users table of schema version 3 (counters in the row, no key, epoch or flag)."""
    with store.transaction() as conn:
        conn.execute(text("DROP INDEX uq_users_name_key"))
        conn.execute(text("DROP TABLE login_failures"))
        for col in ("name_key", "session_epoch", "active"):
            conn.execute(text(f"ALTER TABLE users DROP COLUMN {col}"))
        conn.execute(text("ALTER TABLE users ADD COLUMN failed_logins INTEGER NOT NULL DEFAULT 0"))
        stamp = "DATETIME" if store.is_sqlite else "TIMESTAMP WITH TIME ZONE"
        for col in ("last_failed_at", "locked_until"):
            conn.execute(text(f"ALTER TABLE users ADD COLUMN {col} {stamp}"))
        conn.execute(text("DELETE FROM schema_migrations WHERE version = 4"))


def test_migration_4_keys_existing_names_and_moves_the_counters(store):
    _downgrade_users_to_v3(store)
    def when(dt):  # as the old columns held it: naive UTC on SQLite
        return dt.replace(tzinfo=None) if store.is_sqlite else dt
    locked = datetime.now(timezone.utc) + timedelta(minutes=10)
    with store.transaction() as conn:
        for k, (name, failures) in enumerate((("Bob", 5), ("bob", 0), ("ｃａｒｌ", 0))):
            conn.execute(text("INSERT INTO users (name, role, password_hash, created_at, failed_logins, "
                              "last_failed_at, locked_until) VALUES (:n, 'annotator', NULL, :t, :f, :t, :l)"),
                         {"n": name, "t": when(T0), "f": failures, "l": when(locked) if failures else None})
    assert store.migrate() == [4]
    with store.read() as conn:
        rows = conn.execute(text("SELECT name, name_key, session_epoch, active FROM users ORDER BY id")).all()
    assert [(r[0], r[1]) for r in rows] == [("Bob", "bob"), ("bob", "bob\n2"), ("ｃａｒｌ", "carl")]
    assert all(r[3] for r in rows) and len({r[2] for r in rows}) == 3
    # The old counters moved: Bob is still locked, under his key.
    assert _answer(store, "BOB", "x", datetime.now(timezone.utc)).startswith("AccountLocked: This account is locked")
    with store.read() as conn:
        from sqlalchemy import inspect
        assert "failed_logins" not in {c["name"] for c in inspect(conn).get_columns("users")}
    with pytest.raises(InputError, match="taken"):
        auth.add_user(store, "BOB", "annotator", PW)
