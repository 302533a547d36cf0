"""Who a page run acts for: the session's user, the local admin of local mode, log-out and ended sessions.

Local mode (no account with a password) is granted only to a browser on the server's own machine that asked for
it by a loopback name (annotator.accounts.access.is_local_client); everyone else gets the log-in form.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ...errors import StoreUnavailable
from ...model import Role
from . import cookie as session_cookie
from .caches import get_store
from .cookie import CLEAR_KEY, REJECTED_KEY, request_cookie
from .state import LOCAL_MODE_KEY, LOCAL_USER, SESSION_ENDED_KEY, USER_KEY, log_in, remembered


@dataclass(frozen=True)
class SessionUser:
    """The user a session acts as."""

    name: str
    role: Role
    local_mode: bool = False


def no_accounts(store) -> bool:
    """True when no account can log in yet (accounts made by imports have no password and do not count)."""
    from ...store.users import any_user_with_password

    def read():
        with store.read() as conn:
            return not any_user_with_password(conn)
    return remembered(LOCAL_MODE_KEY, read)


def client_address() -> tuple[str | None, dict[str, str]]:
    """This session's peer address (None for a loopback one, as Streamlit reports it) and request headers."""
    peer = st.context.ip_address
    # A real server gives a string or None; a harness without a client connection (AppTest) gives neither.
    return (peer if isinstance(peer, str) else None), st.context.headers.to_dict()


def server_port() -> int:
    """The port this server listens on (Streamlit's ``server.port``)."""
    return int(st.get_option("server.port"))


def request_is_local() -> bool:
    """True when this session's browser connects straight from the server's machine and asked for it by a
    loopback name and this server's port (annotator.accounts.access.is_local_client)."""
    from ...accounts.access import is_local_client
    return is_local_client(*client_address(), port=server_port())


def local_mode(store) -> bool:
    """True when no account can log in and the browser runs on the server's own machine: it then works as
    the local admin. Any other browser gets the log-in form, which says how to create the first admin."""
    return no_accounts(store) and request_is_local()


def current_user(store) -> SessionUser | None:
    """The logged-in user as the store has them now, the local admin in local mode, or None.

    A logged-in session is checked against the store on every call (one read
    of the user row by primary key, with the tab's store session joined on:
    annotator.accounts.sessions.check_session, or annotator.accounts.auth.resume_session for a
    tab without one): the role comes from the store, and a session whose
    account changed since the log-in (password, role, deactivation), that
    expired or was logged out in another tab is logged out here, with a
    message for the log-in form. A tab without a login of its own resumes the
    session of the cookie its browser sent (a reload, a new tab, a typed URL).
    While the database is down the session keeps the user it last saw:
    nothing can be read or written then anyway.
    """
    from ...accounts.auth import SessionClaim, resume_session
    from ...errors import SessionEnded
    from ...accounts.sessions import check_session
    raw = st.session_state.get(USER_KEY)
    if raw:
        try:
            if raw.get("sid"):
                user = check_session(store, int(raw["id"]), str(raw["name"]), int(raw["epoch"]), str(raw["sid"]))
            else:
                user = resume_session(store, SessionClaim.from_dict(raw))
        except SessionEnded as exc:
            end_session(str(exc))
        except StoreUnavailable:
            return SessionUser(raw["name"], Role(raw["role"]))
        else:
            raw["role"] = user.role.value
            return SessionUser(user.name, user.role)
    else:
        resumed = session_cookie.resume(store)
        if resumed is not None:
            log_in(resumed.user, sid=resumed.sid)
            session_cookie.restore_place(store, resumed.user)
            return SessionUser(resumed.user.name, resumed.user.role)
    if local_mode(store):
        return SessionUser(LOCAL_USER, Role.ADMIN, True)
    return None


def signed_in(callback):
    """Wrap a widget callback that acts for the session's user: it runs only while the session is valid.

    Callbacks run before the script, so before :func:`page_setup`; a session
    ended since the page was drawn (password, role or access changed) must not
    save anything, and the run that follows shows the log-in form.
    """
    import functools

    @functools.wraps(callback)
    def run(*args, **kwargs):
        if current_user(get_store()) is None:
            return None
        return callback(*args, **kwargs)
    return run


def _forget_everything() -> None:
    for key in list(st.session_state.keys()):
        del st.session_state[key]


def log_out() -> None:
    """Log out (callback of the logout button): end the store session, so every tab using it ends too, forget
    everything this tab knew and have the log-in page clear the browser's cookie."""
    from ...accounts.sessions import end_session as end_store_session
    sid = (st.session_state.get(USER_KEY) or {}).get("sid")
    if sid:
        try:
            end_store_session(get_store(), sid)
        except StoreUnavailable:
            pass  # the cookie route ends it by the cookie as well
    _forget_everything()
    st.session_state[CLEAR_KEY] = True


def end_session(message: str) -> None:
    """Log the session out because it ended (account changed, expired, logged out elsewhere); the log-in form
    shows ``message`` and clears the browser's cookie."""
    _forget_everything()
    st.session_state[SESSION_ENDED_KEY] = message
    st.session_state[CLEAR_KEY] = True
    st.session_state[REJECTED_KEY] = request_cookie()  # the cookie this tab came with names the ended session


FIRST_ADMIN_COMMAND = "annotator users add NAME --role admin"


def local_mode_banner() -> None:
    """The visible notice that the app runs without accounts."""
    st.info("**Local mode**: no account has a password, so on the server's own machine you work as the local admin "
            "without logging in (browsers elsewhere, or behind a proxy, get the log-in form). Create accounts "
            f"(`{FIRST_ADMIN_COMMAND}`, then `--role annotator` …) to switch on log-in.", icon=":material/person:")


def first_admin_notice() -> None:
    """On the log-in form of a server without accounts, for a browser that is not on the server's machine."""
    st.info("This server has no account yet. Working without an account (local mode) is only possible in a browser "
            "on the server's own machine, not over the network or through a proxy. On the server, create the first "
            f"admin with `{FIRST_ADMIN_COMMAND}` (it asks for a password), then log in here.",
            icon=":material/admin_panel_settings:")
