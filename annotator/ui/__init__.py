"""Streamlit glue shared by the app and its pages (the only core module that imports streamlit).

Contract every page follows::

    from annotator import ui
    ctx = ui.page_setup("agreement")   # login + role guard; st.stop() on refusal
    ctx.store, ctx.user, ctx.project

Session keys: ``ui.USER_KEY`` holds the logged-in user as a dict
``{"name", "role"}``; ``ui.PROJECT_KEY`` the selected project name.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ..access import check_page
from ..config import load_settings
from ..errors import AnnotatorError, PermissionDenied
from ..model import Role

USER_KEY = "annotator_user"
PROJECT_KEY = "annotator_project"
LOCAL_USER = "local"


@dataclass(frozen=True)
class SessionUser:
    """The user a session acts as."""

    name: str
    role: Role
    local_mode: bool = False


@dataclass(frozen=True)
class PageContext:
    """What a page gets from :func:`page_setup`."""

    store: object
    user: SessionUser
    project: str | None


@st.cache_resource(show_spinner=False)
def _store_for(url: str):
    from ..store import open_store
    return open_store(url)


def get_store():
    """The process-wide store for the configured database URL (migrated once)."""
    return _store_for(load_settings().database_url)


def local_mode(store) -> bool:
    """True when no account can log in: the app then runs as a local admin."""
    from ..store.users import count_users_with_password
    with store.read() as conn:
        return count_users_with_password(conn) == 0


def current_user(store) -> SessionUser | None:
    """The logged-in user, the local admin in local mode, or None."""
    raw = st.session_state.get(USER_KEY)
    if raw:
        return SessionUser(raw["name"], Role(raw["role"]), bool(raw.get("local_mode", False)))
    if local_mode(store):
        return SessionUser(LOCAL_USER, Role.ADMIN, True)
    return None


def selected_project(store) -> str | None:
    """The project chosen in this session (default: the first one)."""
    from ..store.projects import project_names
    names = project_names(store)
    chosen = st.session_state.get(PROJECT_KEY)
    if chosen in names:
        return chosen
    return names[0] if names else None


def page_setup(page_id: str) -> PageContext:
    """Guard a page: the user must be logged in and their role allowed; else explain and stop."""
    try:
        store = get_store()
        user = current_user(store)
        if user is None:
            st.warning("Please log in to open this page.")
            st.stop()
        check_page(user.role, page_id)
        return PageContext(store=store, user=user, project=selected_project(store))
    except PermissionDenied as exc:
        st.error(f"Not allowed: {exc}.")
        st.stop()
    except AnnotatorError as exc:
        st.error(str(exc))
        st.stop()
    raise AssertionError("unreachable")
