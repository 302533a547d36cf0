"""What a session keeps in ``st.session_state``: its keys, and what it last read from the store (shown again
while the database is down). The shell (annotator.ui) and the session cookie (ui/session/cookie.py) both read it."""

from __future__ import annotations

import streamlit as st

from ...errors import StoreUnavailable
from ...store.projects import project_names as read_project_names

USER_KEY = "annotator_user"
PROJECT_KEY = "annotator_project"
LOCAL_USER = "local"
#: Session keys of what the shell last read from the store, shown again while the database is down.
PROJECT_NAMES_KEY = "annotator_project_names"
LOCAL_MODE_KEY = "annotator_local_mode"


def remembered(key: str, read):
    """``read()``, remembered in the session; during a database outage the value this session saw last
    (the outage is raised again when the session never saw one). The page then still shows its widgets
    with their unsaved values, and the action that needs the database reports the outage."""
    try:
        value = read()
    except StoreUnavailable:
        if key in st.session_state:
            return st.session_state[key]
        raise
    st.session_state[key] = value
    return value


def project_names(store) -> list[str]:
    """All project names (during a database outage: the ones this session saw last)."""
    return remembered(PROJECT_NAMES_KEY, lambda: read_project_names(store))


#: Session key of the message a session that was ended shows on the log-in form.
SESSION_ENDED_KEY = "annotator_session_ended"


def log_in(user, sid: str | None = None) -> None:
    """Mark the session as logged in as ``user``, the account annotator.accounts.auth.authenticate returned
    (the session keeps its claim: id, name and session epoch, the role for outages, and ``sid``, the store
    session behind the browser's cookie, annotator.accounts.sessions)."""
    from ...accounts.auth import SessionClaim
    from ...model import Role
    st.session_state[USER_KEY] = {**SessionClaim.of(user).to_dict(), "role": Role(user.role).value,
                                  **({"sid": sid} if sid else {})}


def outage_notice(exc: StoreUnavailable) -> None:
    """Say plainly that the database is down and what happens to the user's work."""
    from ..widgets.text import md_escape
    st.error(f"{md_escape(str(exc))}. Nothing you saved before is affected; this page works again by itself "
             "once the database answers.", icon=":material/cloud_off:")
