"""Small per-project settings (key → text value), e.g. how the second pass of
double annotation runs. The table arrives with migration 2."""

from __future__ import annotations

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
