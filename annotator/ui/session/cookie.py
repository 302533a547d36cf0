"""The tab's side of the session cookie (annotator.accounts.sessions): start a session at log-in, hand its one-time code
to the cookie route, resume a session from the cookie a new tab brings, and clear the cookie after a log-out."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import streamlit as st

from ...errors import SessionEnded, StoreUnavailable
from ...accounts.sessions import COOKIE_NAME, resume_from_cookie, start_session
from ...accounts.landing import LAST_PAGE, LAST_PROJECT  # noqa: F401 - the sidebar names them through this module
from .routes import END_PATH, SESSION_PATH, served
from .state import PROJECT_KEY, SESSION_ENDED_KEY, project_names

log = logging.getLogger(__name__)

_SCRIPT = Path(__file__).with_name("cookie.js").read_text(encoding="utf-8")

#: Session keys: the pending one-time code and when it stops being worth sending; a cookie this tab found
#: invalid (not checked again); whether the login page should ask the route to clear the cookie.
HANDOFF_KEY = "annotator_cookie_handoff"
REJECTED_KEY = "annotator_cookie_rejected"
CLEAR_KEY = "annotator_cookie_clear"
#: Session key of the page a log-in should open (annotator.accounts.landing), switched to by the app shell's sidebar.
LANDING_KEY = "annotator_landing_page"

_warned = False


def begin(store, account) -> str | None:
    """Start a store session for a log-in (when this server sets cookies); its id, or None."""
    global _warned
    if not served():
        if not _warned:
            log.warning("log-ins last as long as their browser tab: start the app with `streamlit run serve.py` "
                        "for sessions that survive reloads")
            _warned = True
        return None
    new = start_session(store, account)
    st.session_state[HANDOFF_KEY] = (new.handoff_code, time.monotonic() + 60)
    return new.sid


def _script(url: str, body: dict) -> None:
    config = json.dumps({"url": url, "body": body}).replace("</", "<\\/")
    st.html(f"<script>{_SCRIPT.replace('__CONFIG__', config)}</script>", unsafe_allow_javascript=True)


def hand_over() -> None:
    """While a log-in's code is pending, have the page send it to the cookie route (which sets the cookie)."""
    pending = st.session_state.get(HANDOFF_KEY)
    if not pending:
        return
    code, until = pending
    if time.monotonic() > until:
        st.session_state.pop(HANDOFF_KEY, None)
        return
    _script(SESSION_PATH, {"code": code})


def clear_if_asked() -> None:
    """After a log-out, or when the cookie the tab came with was refused, have the route clear the cookie."""
    if st.session_state.pop(CLEAR_KEY, False) and served():
        _script(END_PATH, {})


def request_cookie() -> str | None:
    """The session cookie this tab's connection came with, if any."""
    try:
        value = st.context.cookies.get(COOKIE_NAME)
    except Exception:  # a harness without a request (AppTest) has no cookies
        return None
    return value if isinstance(value, str) and value else None


def resume(store):
    """The session the tab's cookie belongs to (annotator.accounts.sessions.ResumedSession), or None.

    A cookie found invalid is remembered (and cleared in the browser), so the tab does not check it again;
    an ended session leaves its message for the log-in form.
    """
    cookie = request_cookie()
    if cookie is None or st.session_state.get(REJECTED_KEY) == cookie:
        return None
    try:
        resumed = resume_from_cookie(store, cookie)
    except SessionEnded as exc:
        st.session_state[SESSION_ENDED_KEY] = str(exc)
        resumed = None
    except StoreUnavailable:
        return None
    if resumed is None:
        st.session_state[REJECTED_KEY] = cookie
        st.session_state[CLEAR_KEY] = True
    return resumed


def restore_place(store, user) -> None:
    """Open a resumed session on the project its user worked on last (a reload keeps the project)."""
    from ...accounts.sessions import recall
    try:
        last = recall(store, user.user_id, [LAST_PROJECT]).get(LAST_PROJECT)
        if last and last in project_names(store):
            st.session_state[PROJECT_KEY] = last
            st.session_state[_SAVED_PREFIX + LAST_PROJECT] = last
    except StoreUnavailable:
        pass


_SAVED_PREFIX = "annotator_remembered_"


def remember_place(store, user_id: int | None, key: str, value: str | None) -> None:
    """Remember the user's current project or page in the store when it changed (one write per change)."""
    from ...accounts.sessions import remember
    if user_id is None or not value or st.session_state.get(_SAVED_PREFIX + key) == value:
        return
    try:
        remember(store, user_id, key, value)
    except StoreUnavailable:
        return
    st.session_state[_SAVED_PREFIX + key] = value


def land(store, account, *, open_page: bool) -> None:
    """After a log-in: select the project where the user's work is (annotator.accounts.landing) and, when the log-in
    form was not shown for a page the user asked for by URL (``open_page``), have the shell open its page."""
    from ...accounts.landing import landing
    try:
        where = landing(store, account.user_id, account.name, account.role)
    except StoreUnavailable:
        return
    if where.project:
        st.session_state[PROJECT_KEY] = where.project
    if open_page and where.page:
        st.session_state[LANDING_KEY] = where.page


def open_landing_page(current_page: str | None) -> None:
    """Switch to the page a log-in chose (once); the app shell calls this before running the page."""
    from ...accounts.access import PAGES_BY_ID
    target = st.session_state.pop(LANDING_KEY, None)
    spec = PAGES_BY_ID.get(target or "")
    if spec is not None and target != current_page:
        st.switch_page(spec.path)
