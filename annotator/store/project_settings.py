"""Small per-project settings (key → text value), e.g. how the second pass of
double annotation runs. The table arrives with migration 2."""

from __future__ import annotations

import secrets

from sqlalchemy import Connection, select

from .rows import upsert
from .schema import project_settings

#: The setting that says how a project's second pass runs ("staged": coarse label first, error types once both
#: annotators call a caption inaccurate; "full": everything at once), and its value where none is stored.
SECOND_PASS_KEY = "second_pass"
DEFAULT_SECOND_PASS = "staged"


def get_setting(conn: Connection, pid: int, key: str, default: str | None = None) -> str | None:
    """The value of setting ``key`` of project ``pid``, or ``default``."""
    value = conn.execute(select(project_settings.c.value).where(
        project_settings.c.project_id == pid, project_settings.c.key == key)).scalar()
    return default if value is None else value


def set_setting(conn: Connection, pid: int, key: str, value: str) -> None:
    """Set ``key`` of project ``pid`` inside the caller's (write) transaction."""
    upsert(conn, project_settings, {"project_id": pid, "key": key, "value": str(value)}, ["project_id", "key"])


#: The setting of a project's assignment stamp: a new random token with every change of its assignment rows, so a
#: reader can tell in one look-up whether the assignments it holds are still current
#: (annotator.store.frame_versions.assignment_version) instead of summing every row.
ASSIGNMENT_STAMP = "assignments_stamp"


def stamp_assignments(conn: Connection, pid: int) -> str:
    """Give project ``pid``'s assignments a new stamp inside the caller's write transaction; return it.

    Every function that writes assignment rows (annotator.store.assignments, annotator.store.samples) calls it.
    A random token rather than a counter, so two histories that part (a backup restored, then changed again)
    never carry the same stamp."""
    token = secrets.token_hex(16)
    set_setting(conn, pid, ASSIGNMENT_STAMP, token)
    return token
