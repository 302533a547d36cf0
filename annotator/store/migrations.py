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


MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "initial schema: projects, items, boxes, references, captions, users, judgements, "
        "corrections, assignments, human scores", _m0001_initial),
    (2, "per-project settings (key/value)", _m0002_project_settings),
    (3, "index current judgements by judgement id (reading only what changed)", _m0003_current_judgement_index),
]


def applied_versions(conn: Connection) -> list[int]:
    """Versions recorded in the database (empty for a new database)."""
    if not inspect(conn).has_table("schema_migrations"):
        return []
    return [r[0] for r in conn.execute(select(schema.schema_migrations.c.version).order_by(schema.schema_migrations.c.version))]


def migrate(engine) -> list[int]:
    """Apply pending migrations; return the versions applied now."""
    with engine.begin() as conn:
        schema.schema_migrations.create(conn, checkfirst=True)
    done = []
    for version, name, apply in MIGRATIONS:
        with engine.begin() as conn:
            # Re-check inside the transaction: another process may have migrated meanwhile.
            if version in applied_versions(conn):
                continue
            apply(conn)
            conn.execute(schema.schema_migrations.insert().values(
                version=version, name=name, applied_at=datetime.now(timezone.utc)))
            done.append(version)
    return done
