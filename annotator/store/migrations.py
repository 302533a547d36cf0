"""Ordered, recorded schema migrations.

Each migration is (version, name, function). ``migrate`` applies the ones a
database has not recorded yet, in order, each in its own transaction together
with its row in ``schema_migrations``. Append new migrations at the end; never
edit or renumber one that has shipped.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

from sqlalchemy import Connection, inspect, select

from . import schema


# Tables as they were when migration 1 shipped; later tables arrive by their own migration.
_V1_TABLES = ("projects", "items", "boxes", "refs", "systems", "captions", "users", "judgements",
              "current_judgements", "corrections", "current_corrections", "assignments", "human_scores")


def _m0001_initial(conn: Connection) -> None:
    schema.metadata.create_all(conn, tables=[schema.metadata.tables[n] for n in _V1_TABLES])


def _m0002_project_settings(conn: Connection) -> None:
    schema.project_settings.create(conn, checkfirst=True)


def _m0003_current_judgement_index(conn: Connection) -> None:
    schema.ix_current_judgements_judgement.create(conn, checkfirst=True)


def _m0004_accounts(conn: Connection) -> None:
    """Users get a comparison key for their names, a session epoch and an active flag; failed log-ins move
    to their own table keyed by the typed name (known or not)."""
    from sqlalchemy import text

    from .users import new_session_epoch, user_name_key
    have = {c["name"] for c in inspect(conn).get_columns("users")}
    added = [c for c in ("name_key", "session_epoch", "active") if c not in have]
    true_ = "1" if conn.dialect.name == "sqlite" else "true"
    ddl = {"name_key": "VARCHAR(400) NOT NULL DEFAULT ''", "session_epoch": "BIGINT NOT NULL DEFAULT 0",
           "active": f"BOOLEAN NOT NULL DEFAULT {true_}"}
    for name in added:
        conn.execute(text(f"ALTER TABLE users ADD COLUMN {name} {ddl[name]}"))
    if added:
        # Names that differed only in case (or width, or invisible characters) were two accounts before; the
        # oldest keeps the plain key, the others get one no typed name can produce (they need a rename).
        seen: set[str] = set()
        users_ = schema.users
        for uid, name in conn.execute(select(users_.c.id, users_.c.name).order_by(users_.c.id)).all():
            key = user_name_key(name)
            if key in seen or not key:
                key = f"{key}\n{uid}"
            seen.add(key)
            conn.execute(users_.update().where(users_.c.id == uid).values(name_key=key, session_epoch=new_session_epoch()))
    schema.ix_users_name_key.create(conn, checkfirst=True)
    schema.login_failures.create(conn, checkfirst=True)
    if "failed_logins" in have:
        stamp = schema.login_failures.c.last_failed_at.type
        rows = conn.execute(text("SELECT name_key, failed_logins, last_failed_at, locked_until FROM users "
                                 "WHERE failed_logins > 0 AND last_failed_at IS NOT NULL")
                            .columns(last_failed_at=stamp, locked_until=stamp)).all()
        for key, failures, last, locked in rows:
            conn.execute(schema.login_failures.insert().values(name_key=key, failures=failures, last_failed_at=last,
                                                               locked_until=locked))
        for name in ("failed_logins", "last_failed_at", "locked_until"):
            conn.execute(text(f"ALTER TABLE users DROP COLUMN {name}"))


def _m0005_sample_draws(conn: Connection) -> None:
    schema.sample_draws.create(conn, checkfirst=True)
    schema.sample_draw_captions.create(conn, checkfirst=True)


def _m0006_sessions(conn: Connection) -> None:
    for table in (schema.sessions, schema.user_settings, schema.server_keys):
        table.create(conn, checkfirst=True)


def _m0007_correction_blind(conn: Connection) -> None:
    """Corrections record whether they were made blind (references and live scores hidden until saved)."""
    from sqlalchemy import text
    if "blind" not in {c["name"] for c in inspect(conn).get_columns("corrections")}:
        conn.execute(text("ALTER TABLE corrections ADD COLUMN blind BOOLEAN"))


def _m0008_account_changes(conn: Connection) -> None:
    schema.account_changes.create(conn, checkfirst=True)


def _m0009_type_masks(conn: Connection) -> None:
    """Current judgements carry their error types as an integer mask too (codec.type_mask) and the working
    time of their revision, filled in here."""
    from sqlalchemy import text

    from .codec import type_mask
    have = {c["name"] for c in inspect(conn).get_columns("current_judgements")}
    float_type = "REAL" if conn.dialect.name == "sqlite" else "DOUBLE PRECISION"
    for name, ddl in (("type_mask", "BIGINT"), ("seconds", float_type)):
        if name not in have:
            conn.execute(text(f"ALTER TABLE current_judgements ADD COLUMN {name} {ddl}"))
    conn.execute(text("UPDATE current_judgements SET seconds = "
                      "(SELECT seconds FROM judgements WHERE judgements.id = current_judgements.judgement_id)"))
    cj = schema.current_judgements
    known = [(t, type_mask(t)) for (t,) in conn.execute(select(cj.c.error_types).distinct())]
    known = [{"t": t, "m": m} for t, m in known if m is not None]
    if not known:
        return
    # One pass over the table through a small look-up table: there are few distinct type strings.
    temp = "CREATE TEMP TABLE type_mask_map (t TEXT PRIMARY KEY, m BIGINT NOT NULL)"
    conn.execute(text(temp + (" ON COMMIT DROP" if conn.dialect.name == "postgresql" else "")))
    conn.execute(text("INSERT INTO type_mask_map (t, m) VALUES (:t, :m)"), known)
    conn.execute(text("UPDATE current_judgements SET type_mask = "
                      "(SELECT m FROM type_mask_map WHERE type_mask_map.t = current_judgements.error_types)"))
    if conn.dialect.name != "postgresql":
        conn.execute(text("DROP TABLE type_mask_map"))


def _m0010_drafts(conn: Connection) -> None:
    schema.drafts.create(conn, checkfirst=True)


def _m0011_practice_index(conn: Connection) -> None:
    schema.ix_items_practice().create(conn, checkfirst=True)


def _m0012_must_change_password(conn: Connection) -> None:
    """Accounts say whether their password must be changed at the next log-in (generated ones)."""
    from sqlalchemy import text
    if "must_change_password" not in {c["name"] for c in inspect(conn).get_columns("users")}:
        false_ = "0" if conn.dialect.name == "sqlite" else "false"
        conn.execute(text(f"ALTER TABLE users ADD COLUMN must_change_password BOOLEAN NOT NULL DEFAULT {false_}"))


def _m0013_judgement_spans(conn: Connection) -> None:
    """Judgement revisions carry their error spans (JSON text; NULL for the revisions before spans)."""
    from sqlalchemy import text
    if "spans" not in {c["name"] for c in inspect(conn).get_columns("judgements")}:
        conn.execute(text("ALTER TABLE judgements ADD COLUMN spans TEXT"))


def _m0014_caption_samples(conn: Connection) -> None:
    """Captions carry a sample index ``n`` (0 for every caption stored before) and a system may hold one caption
    per item and sample: the unique (item, system) becomes (item, system, n), and (system, line) becomes
    (system, n, line), each sample counting its own lines. PostgreSQL alters the table;
    SQLite cannot drop a table constraint, so the table is rebuilt under its new definition with every row and
    id kept (``migrate`` runs this migration with SQLite's foreign keys off, so nothing cascades)."""
    from sqlalchemy import text
    from sqlalchemy.schema import CreateTable

    inspector = inspect(conn)
    have = {c["name"] for c in inspector.get_columns("captions")}
    uniques = {u["name"] for u in inspector.get_unique_constraints("captions")}
    if "n" in have and {"uq_captions_item_system_n", "uq_captions_system_sample_line"} <= uniques:
        return  # created at this shape (migration 1 creates the tables as they are now)
    if conn.dialect.name == "postgresql":
        if "n" not in have:
            conn.execute(text("ALTER TABLE captions ADD COLUMN n INTEGER NOT NULL DEFAULT 0"))
            conn.execute(text("ALTER TABLE captions ADD CONSTRAINT ck_captions_n CHECK (n >= 0)"))
        conn.execute(text("ALTER TABLE captions DROP CONSTRAINT IF EXISTS uq_captions_item_system"))
        conn.execute(text("ALTER TABLE captions DROP CONSTRAINT IF EXISTS uq_captions_system_line"))
        if "uq_captions_item_system_n" not in uniques:
            conn.execute(text("ALTER TABLE captions ADD CONSTRAINT uq_captions_item_system_n UNIQUE (item_id, system_id, n)"))
        if "uq_captions_system_sample_line" not in uniques:
            conn.execute(text("ALTER TABLE captions ADD CONSTRAINT uq_captions_system_sample_line "
                              "UNIQUE (system_id, n, line_no)"))
        return
    if conn.execute(text("PRAGMA foreign_keys")).scalar():
        raise RuntimeError("migration 14 rebuilds the captions table: it must run with SQLite's foreign keys off")
    ddl = str(CreateTable(schema.captions).compile(dialect=conn.dialect)).strip()
    conn.execute(text(ddl.replace("CREATE TABLE captions ", "CREATE TABLE captions_rebuilt ", 1)))
    kept = "id, item_id, system_id, line_no, text, mentions"
    conn.execute(text(f"INSERT INTO captions_rebuilt ({kept}, n) SELECT {kept}, {'n' if 'n' in have else '0'} "
                      "FROM captions"))
    conn.execute(text("DROP TABLE captions"))
    conn.execute(text("ALTER TABLE captions_rebuilt RENAME TO captions"))
    broken = conn.execute(text("PRAGMA foreign_key_check")).all()
    if broken:
        raise RuntimeError(f"migration 14 left rows whose foreign keys point nowhere: {broken[:3]}")


def _m0015_draft_spans(conn: Connection) -> None:
    """Drafts carry the error spans marked before Save draft, in a column of their own (JSON text; NULL: none)."""
    from sqlalchemy import text
    if "spans" not in {c["name"] for c in inspect(conn).get_columns("drafts")}:
        conn.execute(text("ALTER TABLE drafts ADD COLUMN spans TEXT"))


def _m0016_account_emails(conn: Connection) -> None:
    """Accounts carry an e-mail address (NULL: none) and its comparison key, unique (NULLs do not collide)."""
    from sqlalchemy import text
    have = {c["name"] for c in inspect(conn).get_columns("users")}
    for name in ("email", "email_key"):
        if name not in have:
            conn.execute(text(f"ALTER TABLE users ADD COLUMN {name} VARCHAR(254)"))
    schema.ix_users_email_key.create(conn, checkfirst=True)


def _m0017_judges(conn: Connection) -> None:
    schema.judges.create(conn, checkfirst=True)
    schema.judge_outputs.create(conn, checkfirst=True)


def _m0018_judge_answers(conn: Connection) -> None:
    schema.judge_answers.create(conn, checkfirst=True)


def _m0019_suggested(conn: Connection) -> None:
    """Judgement revisions record whether the panel was pre-filled from a judge; active draws record the judge
    they aimed with."""
    from sqlalchemy import text
    if "suggested" not in {c["name"] for c in inspect(conn).get_columns("judgements")}:
        conn.execute(text("ALTER TABLE judgements ADD COLUMN suggested BOOLEAN"))
    if "predictor" not in {c["name"] for c in inspect(conn).get_columns("sample_draws")}:
        conn.execute(text("ALTER TABLE sample_draws ADD COLUMN predictor VARCHAR(200)"))


def _m0020_queue_tallies(conn: Connection) -> None:
    """Each user's queue counted as saves happen, filled from the assignments and judgements stored."""
    from .queue_tallies import recount_all
    schema.queue_tallies.create(conn, checkfirst=True)
    recount_all(conn)


def _m0021_times_as_integers(conn: Connection) -> None:
    """Current judgements keep their save time as whole microseconds since the epoch, UTC (``saved_us``), in place
    of a timestamp (``updated_at``), and their working time as whole hundredths plus one (``hundredths``,
    codec.working_hundredths) in place of the float ``seconds`` of migration 9: the team dashboard reads a million
    of each as integers, with no text to parse and no test per row. Each time is converted as the dashboards read
    it before (annotator.store.save_times; the hundredths by the very test the read made)."""
    from sqlalchemy import Float, literal_column, text
    have = {c["name"] for c in inspect(conn).get_columns("current_judgements")}
    postgresql = conn.dialect.name == "postgresql"
    if "updated_at" in have:  # (a table created at today's shape by migration 1 has saved_us already)
        if "saved_us" not in have:
            conn.execute(text("ALTER TABLE current_judgements ADD COLUMN saved_us BIGINT NOT NULL DEFAULT 0"))
        if postgresql:
            # Exact: EXTRACT gives a numeric there, and this is the expression the dashboards read the times by.
            conn.execute(text("UPDATE current_judgements SET saved_us = "
                              "CAST(EXTRACT(EPOCH FROM updated_at) * 1000000 AS BIGINT)"))
            conn.execute(text("ALTER TABLE current_judgements ALTER COLUMN saved_us DROP DEFAULT"))
        else:
            _sqlite_save_times(conn)
        conn.execute(text("ALTER TABLE current_judgements DROP COLUMN updated_at"))
    if "seconds" in have:  # (added by migration 9 to every store, new ones included)
        from .codec import stored_hundredths
        if "hundredths" not in have:
            conn.execute(text("ALTER TABLE current_judgements ADD COLUMN hundredths INTEGER NOT NULL DEFAULT 0"))
        cj = schema.current_judgements
        seconds = literal_column("seconds", Float)
        conn.execute(cj.update().values(hundredths=stored_hundredths(seconds, not postgresql)))
        if postgresql:
            conn.execute(text("ALTER TABLE current_judgements ALTER COLUMN hundredths DROP DEFAULT"))
        conn.execute(text("ALTER TABLE current_judgements DROP COLUMN seconds"))


def _sqlite_save_times(conn: Connection, chunk: int = 200_000) -> None:
    """Migration 21 on SQLite: the stored texts parsed in numpy (annotator.store.save_times.stored_micros), a range
    of row ids at a time; a text that is no time at all (another program's) takes its revision's time, else 0."""
    import numpy as np

    from .save_times import NO_TIME, stored_micros
    lo, hi = conn.exec_driver_sql("SELECT min(rowid), max(rowid) FROM current_judgements").one()
    if lo is None:
        return
    for start in range(lo, hi + 1, chunk):
        rows = conn.exec_driver_sql("SELECT rowid, updated_at, judgement_id FROM current_judgements "
                                    "WHERE rowid BETWEEN ? AND ?", (start, start + chunk - 1)).all()
        if not rows:
            continue
        micros = stored_micros([r[1] for r in rows])
        for k in np.flatnonzero(micros == NO_TIME).tolist():
            created = conn.exec_driver_sql("SELECT created_at FROM judgements WHERE id = ?", (rows[k][2],)).scalar()
            again = stored_micros([created]) if created is not None else [NO_TIME]
            micros[k] = again[0] if again[0] != NO_TIME else 0
        conn.exec_driver_sql("UPDATE current_judgements SET saved_us = ? WHERE rowid = ?",
                             list(zip(micros.tolist(), (r[0] for r in rows))))


# Migrations that rebuild a table on SQLite: run with foreign keys off there (a dropped table would otherwise
# take every row that refers to it along, by ON DELETE CASCADE).
_SQLITE_REBUILDS = {14}


MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "initial schema: projects, items, boxes, references, captions, users, judgements, "
        "corrections, assignments, human scores", _m0001_initial),
    (2, "per-project settings (key/value)", _m0002_project_settings),
    (3, "index current judgements by judgement id (reading only what changed)", _m0003_current_judgement_index),
    (4, "accounts: case-insensitive name key, session epoch, active flag; failed log-ins per typed name",
     _m0004_accounts),
    (5, "sample draws: the captions each round of a human sample took and their inclusion probabilities",
     _m0005_sample_draws),
    (6, "log-in sessions behind a cookie, remembered per-user choices, server keys", _m0006_sessions),
    (7, "corrections record whether they were made blind (references and live scores hidden)", _m0007_correction_blind),
    (8, "account changes: who changed which account, when and how", _m0008_account_changes),
    (9, "current judgements carry their error types as an integer mask and their working time as well",
     _m0009_type_masks),
    (10, "drafts: the annotate panel as saved with Save draft, one per user and caption", _m0010_drafts),
    (11, "index each project's practice items (read by every dashboard and version check)", _m0011_practice_index),
    (12, "accounts: a generated password must be changed at the next log-in", _m0012_must_change_password),
    (13, "judgement revisions carry their error spans (which caption words each error type is about)",
     _m0013_judgement_spans),
    (14, "captions carry a sample index n: several descriptions per image and system, unique per (item, system, n) "
         "and (system, n, line)",
     _m0014_caption_samples),
    (15, "drafts carry the error spans marked before Save draft", _m0015_draft_spans),
    (16, "accounts carry an e-mail address, unique regardless of case", _m0016_account_emails),
    (17, "AI judges: each judge's signature and its outputs per caption, apart from human judgements", _m0017_judges),
    (18, "the answers of judge runs, kept as they arrive so a stopped run resumes", _m0018_judge_answers),
    (19, "judgement revisions record whether they were made with a judge's suggestion; active draws record "
         "their judge", _m0019_suggested),
    (20, "each user's queue counted as saves happen (resume, progress and the caption list read one row)",
     _m0020_queue_tallies),
    (21, "current judgements keep their save time as whole microseconds since the epoch and their working time as "
         "whole hundredths, in place of a timestamp and a float", _m0021_times_as_integers),
]


def applied_versions(conn: Connection) -> list[int]:
    """Versions recorded in the database (empty for a new database)."""
    if not inspect(conn).has_table("schema_migrations"):
        return []
    return [r[0] for r in conn.execute(select(schema.schema_migrations.c.version).order_by(schema.schema_migrations.c.version))]


def migrate(engine) -> list[int]:
    """Apply pending migrations; return the versions applied now."""
    with engine.connect() as conn:
        # Every open of a store lands here: an up-to-date one costs one look, not a transaction per migration.
        if set(applied_versions(conn)) >= {version for version, _, _ in MIGRATIONS}:
            return []
    with engine.begin() as conn:
        schema.schema_migrations.create(conn, checkfirst=True)
    done = []
    for version, name, apply in MIGRATIONS:
        with engine.connect() as conn:
            # SQLite ignores the foreign-keys pragma inside a transaction: set it before this one begins.
            keys_off = conn.dialect.name == "sqlite" and version in _SQLITE_REBUILDS
            if keys_off:
                conn.connection.dbapi_connection.execute("PRAGMA foreign_keys=OFF")
            try:
                with conn.begin():
                    # Re-check inside the transaction: another process may have migrated meanwhile.
                    if version in applied_versions(conn):
                        continue
                    apply(conn)
                    conn.execute(schema.schema_migrations.insert().values(
                        version=version, name=name, applied_at=datetime.now(timezone.utc)))
                    done.append(version)
            finally:
                if keys_off:
                    conn.connection.dbapi_connection.execute("PRAGMA foreign_keys=ON")
    return done
