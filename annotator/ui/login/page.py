"""The log-in form (used by app.py for every URL while nobody is logged in, and by pages/login.py)."""

from __future__ import annotations

import streamlit as st

from ...accounts.auth import authenticate
from ...errors import AccountLocked, AuthenticationFailed, StoreUnavailable
from ..session import cookie as session_cookie, password
from .. import (
    SESSION_ENDED_KEY, current_user, ensure_shell, first_admin_notice, get_store, log_in, md_escape, no_accounts,
    outage_notice,
)


def render_page() -> None:
    """The log-in page (pages/login.py): the one page shown before anyone is logged in, so not guarded."""
    ensure_shell()
    render(get_store(), open_landing_page=True)


def render(store, *, open_landing_page: bool = False) -> None:
    """Show the form; on success mark the session logged in and rerun into the app (into the page where the
    user's work is when ``open_landing_page``: the form was not shown for a page asked for by URL)."""
    _, middle, _ = st.columns([1, 1.3, 1])
    with middle:
        _render(store, open_landing_page)


def _render(store, open_landing_page: bool) -> None:
    st.title("annotator")
    user = current_user(store)
    if user is not None:
        st.success(f"You are logged in as {md_escape(user.name)}.")
        return
    st.caption("Find out what image-captioning models get wrong.")
    session_cookie.clear_if_asked()
    if password.must_change_first(store, open_landing_page=open_landing_page):
        return
    ended = st.session_state.get(SESSION_ENDED_KEY)
    if ended:
        st.warning(ended, icon=":material/logout:")
    if no_accounts(store):
        first_admin_notice()
    with st.form("login", clear_on_submit=False, enter_to_submit=True):
        name = st.text_input("User name", key="login_name", autocomplete="username")
        typed = st.text_input("Password", type="password", key="login_password", autocomplete="current-password")
        submitted = st.form_submit_button("Log in", type="primary")
    if submitted:
        try:
            account = authenticate(store, name, typed)
        except AccountLocked as exc:
            st.error(str(exc), icon=":material/lock:")
        except AuthenticationFailed as exc:
            st.error(str(exc))
        except StoreUnavailable as exc:
            outage_notice(exc)
        else:
            st.session_state.pop(SESSION_ENDED_KEY, None)
            if account.must_change_password:
                password.require_new_password(account)
            try:
                sid = session_cookie.begin(store, account)
            except StoreUnavailable as exc:
                outage_notice(exc)
                return
            log_in(account, sid=sid)
            session_cookie.land(store, account, open_page=open_landing_page)
            st.rerun()
