"""The People page (admins): add accounts, set roles, reset passwords, unlock, deactivate and activate;
every change recorded with who made it, and the record shown below (annotator.accounts.people)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ... import ui
from ...accounts.auth import list_users
from ...errors import AnnotatorError
from ...model import Role
from ..session.password import show_generated
from ...accounts.people import (
    account_changes, add_person, change_active, change_email, change_role, log_out_everywhere, reset_password,
    unlock_person,
)

K_ONCE = "ppl_once"      # (account, password) to show in the next run only
K_MSG = "ppl_msg"
K_ACCOUNT = "ppl_account"
ROLES = [r.value for r in Role]


def _accounts_table(users) -> pd.DataFrame:
    return pd.DataFrame([{"name": u.name, "role": u.role, "e-mail": u.email or "",
                          "can log in": "yes" if u.can_log_in else "no password",
                          "active": "yes" if u.active else "deactivated", "failed log-ins": u.failed_logins,
                          "locked until (UTC)": u.locked_until.strftime("%Y-%m-%d %H:%M") if u.locked_until else ""}
                         for u in users],
                        columns=["name", "role", "e-mail", "can log in", "active", "failed log-ins",
                                 "locked until (UTC)"])


def _done(message: str, password: tuple[str, str] | None = None, select: str | None = None) -> None:
    st.session_state[K_MSG] = message
    if password is not None:
        st.session_state[K_ONCE] = password
    if select is not None:
        # The account just added is the one the admin changes next; call only before the account list is drawn.
        st.session_state[K_ACCOUNT] = select
    st.rerun()


def _attempt(action) -> bool:
    try:
        action()
    except AnnotatorError as exc:
        st.error(ui.md_escape(str(exc)))
        return False
    return True


def render(ctx: ui.PageContext) -> None:
    """Draw the People page for the admin in ``ctx``."""
    ui.compact_header("People", "Accounts of this server. A new account and a reset get a generated password, shown "
                      "once: pass it on; the person must choose their own at the next log-in. Everyone changes their "
                      "own password with “Change my password” in the sidebar. A role change, a reset or a "
                      "deactivation ends that person's open sessions. Every change is recorded below with who made "
                      "it.")
    me = dict(actor=ctx.user.name, actor_role=ctx.user.role)
    once = st.session_state.pop(K_ONCE, None)
    msg = st.session_state.pop(K_MSG, None)
    if msg:
        st.success(ui.md_escape(msg))
    if once:
        show_generated(once[0], once[1], "ppl_once_done")

    try:
        users = list_users(ctx.store)
    except AnnotatorError as exc:
        ui.show_error_and_stop(exc)
    st.subheader("Accounts")
    ui.show_table(_accounts_table(users), hide_index=True, width="stretch")

    with st.form("ppl_add", clear_on_submit=True, border=True):
        st.markdown("**Add an account**")
        a1, a3, a2 = st.columns([2, 2, 1])
        name = a1.text_input("User name", key="ppl_new_name")
        email = a3.text_input("E-mail (optional)", key="ppl_new_email",
                              help="Unique; Label Studio and other tools know the person by it.")
        role = a2.selectbox("Role", ROLES, index=ROLES.index(Role.ANNOTATOR.value), key="ppl_new_role")
        if st.form_submit_button("Add with a generated password", type="primary"):
            created = {}
            if _attempt(lambda: created.update(zip(("name", "password"),
                                                   add_person(ctx.store, name, role, email=email or None, **me)))):
                _done(f"Added {created['name']} ({role}).", (created["name"], created["password"]),
                      select=created["name"])

    if not users:
        return
    st.subheader("Change an account")
    names = [u.name for u in users]
    who = st.selectbox("Account", names, key=K_ACCOUNT)
    info = next(u for u in users if u.name == who)
    st.text(f"{info.name}: {info.role}, " + ("active" if info.active else "deactivated")
            + (f", {info.email}" if info.email else "")
            + (f", {info.failed_logins} failed log-ins" if info.failed_logins else "")
            + (f", locked until {info.locked_until:%Y-%m-%d %H:%M} UTC" if info.locked_until else ""))
    r1, r2 = st.columns([2, 1], vertical_alignment="bottom")
    new_role = r1.selectbox("Role", ROLES, index=ROLES.index(info.role), key=f"ppl_role_{who}")
    if r2.button("Set role", key="ppl_set_role", disabled=new_role == info.role):
        if _attempt(lambda: change_role(ctx.store, who, new_role, **me)):
            _done(f"{who} is now {new_role}; their open sessions end.")
    e1, e2 = st.columns([2, 1], vertical_alignment="bottom")
    new_email = e1.text_input("E-mail", value=info.email or "", key=f"ppl_email_{who}",
                              help="Unique, compared regardless of case; empty for none.").strip()
    if e2.button("Set e-mail", key="ppl_set_email", disabled=new_email == (info.email or "")):
        if _attempt(lambda: change_email(ctx.store, who, new_email or None, **me)):
            _done(f"{who}'s e-mail address is now {new_email}." if new_email else f"{who} has no e-mail address now.")
    b1, b2, b3, b4 = st.columns(4)
    if b1.button("Reset password", key="ppl_reset",
                 help="Your own password: “Change my password” in the sidebar" if who == ctx.user.name else None):
        fresh = {}
        if _attempt(lambda: fresh.update(password=reset_password(ctx.store, who, **me))):
            _done(f"New password for {who}; their open sessions end.", (who, fresh["password"]))
    if b2.button("Unlock", key="ppl_unlock", disabled=not (info.failed_logins or info.locked_until)):
        if _attempt(lambda: unlock_person(ctx.store, who, **me)):
            _done(f"{who} is unlocked.")
    if info.active:
        if b3.button("Deactivate", key="ppl_deactivate"):
            if _attempt(lambda: change_active(ctx.store, who, False, **me)):
                _done(f"{who} is deactivated; their judgements stay, their open sessions end.")
    elif b3.button("Activate", key="ppl_activate"):
        if _attempt(lambda: change_active(ctx.store, who, True, **me)):
            _done(f"{who} can log in again.")

    if b4.button("Log out everywhere", key="ppl_logout"):
        ended = {}
        if _attempt(lambda: ended.update(n=log_out_everywhere(ctx.store, who, **me))):
            _done(f"Every open session of {who} ended.")

    st.subheader("Changes")
    try:
        changes = account_changes(ctx.store)
    except AnnotatorError as exc:
        ui.show_error_and_stop(exc)
    if changes.empty:
        st.caption("No account change recorded yet.")
    else:
        ui.show_table(changes, hide_index=True, width="stretch")
        st.caption("Newest first (the last 500). Changes made with `annotator users` are recorded as by the command line.")
