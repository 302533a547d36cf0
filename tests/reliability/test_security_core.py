"""Security at the core level: secrets stay secret, the app is local unless deployed, brute force is stopped.

Hashing, uniform messages and the sequential lock-out policy are tested in
tests/core/test_auth.py; here the angle is the deployed system: raw database
bytes, error messages and logs with a database password in the URL, the
shipped Streamlit configuration, and log-in attempts made in parallel (as
several browser sessions or app processes would make them).
"""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import threading
import tomllib
import traceback
from pathlib import Path

import pytest

from annotator.accounts import auth
from annotator.cli import main
from annotator.errors import AccountLocked, AuthenticationFailed, StoreUnavailable
from annotator.store import Store, open_store

ROOT = Path(__file__).resolve().parents[2]
PW = "Tr0ub4dor&3-horse"
DB_SECRET = "Db-pa55word-XYZ"
# Nothing listens on port 1: connecting fails at once.
DEAD_PG = f"postgresql+psycopg://annotator:{DB_SECRET}@127.0.0.1:1/annotator"


# ---------------------------------------------------------------- passwords at rest

def test_database_file_never_holds_a_plaintext_password(tmp_path):
    """Scan the raw SQLite bytes (main file and WAL) after accounts are made, used and changed."""
    db = tmp_path / "sec.db"
    store = open_store(f"sqlite:///{db}")
    auth.add_user(store, "alice", "annotator", PW)
    auth.authenticate(store, "alice", PW)
    with pytest.raises(AuthenticationFailed):
        auth.authenticate(store, "alice", PW + "-typo")
    auth.set_password(store, "alice", PW[::-1])
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("sec.db"))
    assert b"$argon2id$" in raw, "the scan must see the users table"
    for secret in (PW, PW + "-typo", PW[::-1]):
        assert secret.encode() not in raw, f"plaintext password found in the database files: {secret!r}"
    with sqlite3.connect(db) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(users)")]
        # only the hash, and the flag that a generated password must be changed (a boolean, no secret)
        assert not [c for c in cols if "password" in c and c not in ("password_hash", "must_change_password")]
        assert {r[0] for r in conn.execute("SELECT must_change_password FROM users")} <= {0, 1}
        (h,) = conn.execute("SELECT password_hash FROM users WHERE name='alice'").fetchone()
    assert h.startswith("$argon2id$") and auth.verify_password(h, PW[::-1])
    store.dispose()


def test_user_names_are_data_not_sql(sqlite_store):
    evil = "x' OR '1'='1"
    with pytest.raises(AuthenticationFailed):
        auth.authenticate(sqlite_store, evil, "anything at all")
    auth.add_user(sqlite_store, evil, "annotator", PW)
    assert auth.authenticate(sqlite_store, evil, PW).name == evil
    assert [u.name for u in auth.list_users(sqlite_store)] == [evil]


# ---------------------------------------------------------------- the database password in URLs

def test_unreachable_database_error_hides_the_password():
    with pytest.raises(StoreUnavailable) as err:
        open_store(DEAD_PG)
    msg = str(err.value)
    assert "127.0.0.1:1" in msg and "is not available" in msg
    assert DB_SECRET not in msg and "***" in msg
    # Not even the chained driver error shows it, should a page or log print the whole traceback.
    assert DB_SECRET not in "".join(traceback.format_exception(err.value))
    assert DB_SECRET not in repr(Store(DEAD_PG))


def test_store_errors_do_not_log_the_password(caplog):
    caplog.set_level(logging.DEBUG)
    store = Store(DEAD_PG)
    with pytest.raises(StoreUnavailable):
        with store.transaction() as conn:
            conn.exec_driver_sql("SELECT 1")
    assert store.ping() is False
    assert DB_SECRET not in caplog.text


def test_cli_error_hides_the_password():
    proc = subprocess.run([sys.executable, "-m", "annotator", "--db", DEAD_PG, "projects"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4, proc.stderr  # StoreUnavailable's exit code
    assert proc.stderr.startswith("annotator: error: the database at") and "Traceback" not in proc.stderr
    assert DB_SECRET not in proc.stderr + proc.stdout


def test_cli_backup_hint_hides_the_password(capsys):
    assert main(["--db", DEAD_PG, "backup"]) == 1
    out = capsys.readouterr()
    assert "pg_dump" in out.err and DB_SECRET not in out.err + out.out


# ---------------------------------------------------------------- shipped configuration

def test_streamlit_config_is_local_and_xsrf_protected():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    server = cfg["server"]
    assert server["enableXsrfProtection"] is True
    assert server["address"] == "127.0.0.1", "the default install must not listen on the network"
    assert server.get("headless") is True
    assert cfg.get("browser", {}).get("gatherUsageStats") is False


def test_streamlit_config_keeps_tracebacks_in_the_server_log():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    # Tracebacks (paths, SQL, maybe URLs) belong in the server log, not in the browser.
    assert cfg.get("client", {}).get("showErrorDetails") in ("type", "none")


def test_no_secrets_file_is_shipped():
    assert not (ROOT / ".streamlit" / "secrets.toml").exists()
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert any(line.strip().startswith("data/annotator.db") for line in ignored)


# ---------------------------------------------------------------- brute force in parallel

def _parallel_wrong_logins(store, n: int) -> list[Exception]:
    barrier = threading.Barrier(n)
    errors: list[Exception] = []

    def attempt(i):
        barrier.wait()
        try:
            auth.authenticate(store, "victim", f"guess-number-{i:03d}")
        except AuthenticationFailed as exc:  # AccountLocked included
            errors.append(exc)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return errors


def _checked(errors) -> int:
    """Attempts whose password was actually compared (the rest were refused unchecked)."""
    return sum(str(e) == auth.FAILED_MESSAGE for e in errors)


def test_parallel_wrong_passwords_lock_the_account_sqlite(sqlite_store):
    """12 guesses at once (12 browser sessions): the account ends locked and few guesses were ever checked."""
    auth.add_user(sqlite_store, "victim", "annotator", PW)
    errors = _parallel_wrong_logins(sqlite_store, 12)
    assert len(errors) == 12
    policy = auth.DEFAULT_POLICY
    assert _checked(errors) <= policy.free_failures + 1
    assert any(isinstance(e, AccountLocked) for e in errors)
    with pytest.raises(AccountLocked):
        auth.authenticate(sqlite_store, "victim", PW)  # even the right password, until unlocked


def test_parallel_wrong_passwords_lock_the_account_postgres(pg_store):
    auth.add_user(pg_store, "victim", "annotator", PW)
    errors = _parallel_wrong_logins(pg_store, 12)
    assert len(errors) == 12
    assert _checked(errors) <= auth.DEFAULT_POLICY.free_failures + 1, f"{_checked(errors)} of 12 guesses were checked"
    with pytest.raises(AccountLocked):
        auth.authenticate(pg_store, "victim", PW)


def test_login_does_not_hold_the_write_lock_while_hashing(sqlite_store, monkeypatch):
    db = sqlite_store.url.removeprefix("sqlite:///")
    auth.add_user(sqlite_store, "victim", "annotator", PW)
    seen = []
    real_verify = auth.verify_password

    def probing_verify(password_hash, password):
        # Another connection tries to start a write without waiting while the hash is being checked.
        other = sqlite3.connect(db, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            seen.append("free")
        except sqlite3.OperationalError:
            seen.append("locked")
        finally:
            other.close()
        return real_verify(password_hash, password)

    monkeypatch.setattr(auth, "verify_password", probing_verify)
    with pytest.raises(AuthenticationFailed):
        auth.authenticate(sqlite_store, "nobody", PW)
    auth.authenticate(sqlite_store, "victim", PW)
    assert seen == ["free", "free"]
