"""Streamlit glue shared by the app and its pages (the only core module that imports streamlit).

Contract every page follows (tests/test_page_convention.py checks it)::

    from annotator import ui
    from annotator.ui import agreement
    ctx = ui.page_setup("agreement")   # login + role guard; st.stop() on refusal
    agreement.render(ctx)              # annotator/ui/agreement.py draws it from ctx.store, ctx.user, ctx.project

A render function usually starts with ``project = ui.page_header(ctx)``: the title, what the page shows
(annotator/ui/pages.toml) and the selected project. Page JavaScript lives in annotator/ui/static/.

Session keys: ``ui.USER_KEY`` holds the logged-in user as a dict
``{"name", "role"}``; ``ui.PROJECT_KEY`` the selected project name.
"""

from __future__ import annotations

import functools
import threading
import tomllib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ..accounts.access import check_page
from ..errors import AnnotatorError, PermissionDenied, StoreUnavailable
from ..model import Role
from . import session_cookie
from .session_cookie import CLEAR_KEY, REJECTED_KEY, request_cookie
from .caches import (SCORING_PAGES, cached_layer, frame_snapshots, get_store, live_judgements,  # noqa: F401
                     start_metric_warm_up, store_for)
from .text import WORD_JOINER, md_escape  # noqa: F401
from .formatting import show_table  # noqa: F401
from .state import (LOCAL_MODE_KEY, LOCAL_USER, PROJECT_KEY, PROJECT_NAMES_KEY, SESSION_ENDED_KEY,  # noqa: F401
                    USER_KEY, log_in, outage_notice, project_names, remembered)

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
    page_id: str | None = None


def no_accounts(store) -> bool:
    """True when no account can log in yet (accounts made by imports have no password and do not count)."""
    from ..store.users import any_user_with_password

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
    from ..accounts.access import is_local_client
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
    from ..accounts.auth import SessionClaim, resume_session
    from ..errors import SessionEnded
    from ..accounts.sessions import check_session
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


def selected_project(store) -> str | None:
    """The project chosen in this session (default: the first one)."""
    names = project_names(store)
    chosen = st.session_state.get(PROJECT_KEY)
    if chosen in names:
        return chosen
    return names[0] if names else None


_SHELL = threading.local()


@contextmanager
def shell_run(user: SessionUser | None = None):
    """Mark the page run inside it as routed by the app shell (app.py wraps ``page.run()`` in this);
    ``user`` is who the shell checked in this run, so the page's guard need not read the store again."""
    _SHELL.active = True
    _SHELL.user = user
    try:
        yield
    finally:
        _SHELL.active = False
        _SHELL.user = None


def ensure_shell() -> None:
    """Make sure the app shell (app.py: navigation, sidebar, login gate) runs around the page.

    Because the pages live in ``pages/`` beside app.py, Streamlit starts in its
    legacy pages-directory mode until app.py has called ``st.navigation`` once in
    the process, and in that mode a request for a page URL runs the page without
    app.py. Every session that got there (after a server restart many tabs
    reconnect at once, and all of them may) switches that mode off and reruns,
    and the rerun goes through app.py, which routes to the same page. A page run
    as the main script itself (AppTest of one page) has no shell to wait for.
    """
    if getattr(_SHELL, "active", False):
        return
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    if ctx is None or not (Path(ctx.main_script_path).resolve().parent / "pages").is_dir():
        return
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - a future Streamlit without the legacy mode: nothing to leave
        return
    PagesManager.uses_pages_directory = False
    st.rerun()


def allowed_pages_links(role) -> None:
    """Links to the pages ``role`` may open (under a refusal, so a typed URL is not a dead end)."""
    from ..accounts.access import pages_for
    links = " · ".join(f"[{spec.title}](/{spec.page_id})" for spec in pages_for(role))
    st.markdown(f"Pages you may open: {links}")


def page_setup(page_id: str) -> PageContext:
    """Guard a page: the user must be logged in and their role allowed; else explain and stop."""
    ensure_shell()
    user = None
    try:
        store = get_store()
        user = getattr(_SHELL, "user", None) if getattr(_SHELL, "active", False) else None
        if user is None:
            user = current_user(store)
        if user is None:
            st.warning("Please log in to open this page.")
            st.stop()
        check_page(user.role, page_id)
        return PageContext(store=store, user=user, project=selected_project(store), page_id=page_id)
    except PermissionDenied as exc:
        st.error(f"Not allowed: {md_escape(str(exc))}.")
        if user is not None:
            allowed_pages_links(user.role)
        st.stop()
    except StoreUnavailable as exc:
        outage_notice(exc)
        st.stop()
    except AnnotatorError as exc:
        st.error(md_escape(str(exc)))
        st.stop()
    raise AssertionError("unreachable")


# --------------------------------------------------------------------------- page headers

def require_project(ctx: PageContext, hint: str = "") -> str:
    """The selected project; without one, say so (``hint``: what to do first) and stop the page."""
    if ctx.project is None:
        st.info(f"There is no project yet. {hint}".strip())
        st.stop()
    return ctx.project


@functools.cache
def page_texts() -> dict[str, dict[str, str]]:
    """Page id → what the page says under its title (``about``) and what to do first without a project
    (``needs``), from annotator/ui/pages.toml."""
    return tomllib.loads((Path(__file__).parent / "pages.toml").read_text(encoding="utf-8"))


def page_header(ctx: PageContext) -> str:
    """The page's title (annotator.accounts.access.PAGES) and what it shows (pages.toml), then the selected project;
    without one, say so and what to do first, and stop the page."""
    from ..accounts.access import PAGES
    text = page_texts()[ctx.page_id]
    st.title(next(spec.title for spec in PAGES if spec.page_id == ctx.page_id))
    st.caption(text["about"])
    return require_project(ctx, text["needs"])


def refusal_text(exc: AnnotatorError) -> str:
    """A refused save as the judging pages say it: a broken rule as one sentence ("Choose Accurate or
    Inaccurate first."), any other error as its message."""
    from ..errors import InputError
    if isinstance(exc, InputError) and exc.source is None:
        return exc.detail[:1].upper() + exc.detail[1:] + "."
    return str(exc)


def show_error_and_stop(exc: AnnotatorError) -> None:
    """Show a core error as plain text and end the page run."""
    if isinstance(exc, StoreUnavailable):
        outage_notice(exc)
    else:
        st.error(md_escape(str(exc)))
    st.stop()


def project_systems(ctx: PageContext) -> list[str]:
    """The selected project's systems (caption sources) in import order."""
    from ..store.projects import system_names
    try:
        return system_names(ctx.store, require_project(ctx))
    except AnnotatorError as exc:
        show_error_and_stop(exc)
    raise AssertionError("unreachable")


def project_judgements(ctx: PageContext):
    """(frame, data version) of the selected project's current annotations and adjudications.

    One live frame per project serves the agreement, adjudication and analysis pages of every session;
    after a save it reads only what changed. Pass the version as the cache key of anything derived
    from the frame (and the frame itself as an ``_``-prefixed, unhashed argument).
    """
    project = require_project(ctx)
    try:
        with st.spinner("Reading judgements…", show_time=True):
            return live_judgements(ctx.store.url, project).get()
    except AnnotatorError as exc:
        show_error_and_stop(exc)
    raise AssertionError("unreachable")


def case_picture(case, *, references: bool = False) -> None:
    """A caption case's photo with its gold boxes (annotator.adjudication.caption_case) as Annotate shows it: the
    boxes' labels as readable text over it (annotator.ui.figure), with the item's references if asked for."""
    from .figure import caption_figure
    caption_figure(get_store(), case.caption_id, references=references)


def judgement_layer(ctx: PageContext, frame, version: tuple, layer: str):
    """The layer ``layer`` (a Layer label) built from :func:`project_judgements`' frame, once per data version."""
    return cached_layer(ctx.store.url, require_project(ctx), version, layer, frame)


# --------------------------------------------------------------------------- app shell helpers

#: Session key of the cached progress: {(user, project): (Progress, monotonic time)}.
PROGRESS_KEY = "annotator_progress"
PROGRESS_MAX_AGE = 120.0  # seconds; the annotate page updates it on every save anyway


def _forget_everything() -> None:
    for key in list(st.session_state.keys()):
        del st.session_state[key]


def log_out() -> None:
    """Log out (callback of the logout button): end the store session, so every tab using it ends too, forget
    everything this tab knew and have the log-in page clear the browser's cookie."""
    from ..accounts.sessions import end_session as end_store_session
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


def project_picker(store) -> str | None:
    """The sidebar project selector; sets PROJECT_KEY and returns the chosen project."""
    names = project_names(store)
    if not names:
        st.sidebar.caption("No project yet.")
        return None
    if st.session_state.get(PROJECT_KEY) not in names:
        st.session_state[PROJECT_KEY] = names[0]
    return st.sidebar.selectbox("Project", names, key=PROJECT_KEY)


def progress(store, user: SessionUser, project: str | None, *, refresh: bool = False):
    """The user's annotation Progress in ``project`` (cached per session for a little while), or None
    when the user has nothing assigned there."""
    import time

    from ..annotation import Queue
    from ..errors import NotFound
    if not project:
        return None
    cache = st.session_state.setdefault(PROGRESS_KEY, {})
    key = (user.name, project)
    hit = cache.get(key)
    if hit is not None and not refresh and time.monotonic() - hit[1] < PROGRESS_MAX_AGE:
        return hit[0]
    try:
        value = Queue.open(store, user.name, user.role, project).progress()
    except NotFound:
        value = None
    except StoreUnavailable:
        return hit[0] if hit is not None else None  # the last known figure until the database is back
    if value is not None and value.assigned == 0:
        value = None
    cache[key] = (value, time.monotonic())
    return value


def remember_progress(user: SessionUser, project: str, value) -> None:
    """Store a freshly known Progress (the annotate page calls this after a save)."""
    import time
    st.session_state.setdefault(PROGRESS_KEY, {})[(user.name, project)] = (value, time.monotonic())


def menu_pages(role: Role | None, root) -> list[tuple[object, bool]]:
    """(PageSpec, shown in the menu?) for every page whose file exists under ``root``.

    Pages the role may not open are still registered (hidden) so their URL
    answers with the page's own refusal instead of "page not found".
    """
    from ..accounts.access import PAGES
    return [(spec, role is not None and Role(role) in spec.roles) for spec in PAGES if (Path(root) / spec.path).is_file()]


def sidebar(store, user: SessionUser, page_id: str | None = None) -> str | None:
    """Project picker, who is logged in, logout and progress; returns the selected project.

    The project and the page (``page_id``) are remembered for the user, so that a reload or the next log-in
    opens them again; a log-in's cookie is handed over here (annotator.ui.session_cookie)."""
    project = project_picker(store)
    uid = (st.session_state.get(USER_KEY) or {}).get("id")
    session_cookie.remember_place(store, uid, session_cookie.LAST_PROJECT, project)
    session_cookie.open_landing_page(page_id)
    session_cookie.remember_place(store, uid, session_cookie.LAST_PAGE, page_id)
    with st.sidebar:
        prog = progress(store, user, project)
        if prog is not None:
            st.progress(prog.fraction, text=f"Your progress: {prog.done} / {prog.assigned}"
                        + (f" · {prog.fine_waiting} fine pass waiting" if prog.fine_waiting else ""))
        st.divider()
        if user.local_mode:
            st.caption("Local mode · working as the local admin")
        else:
            st.caption(f"Logged in as **{md_escape(user.name)}** ({user.role.value})")
            st.button("Log out", key="annotator_logout", on_click=log_out, icon=":material/logout:")
            from .password import sidebar_entry
            sidebar_entry(store, user)
        session_cookie.hand_over()
    return project
