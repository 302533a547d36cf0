"""The app shell around every page: the guard a page starts with (page_setup), its header, the sidebar (project
picker, progress, who is logged in) and the menu of pages a role may open."""

from __future__ import annotations

import functools
import threading
import tomllib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ... import startup
from ...accounts.access import check_page
from ...errors import AnnotatorError, PermissionDenied, StoreUnavailable
from ...model import Role
from ..session import cookie as session_cookie
from ..session.caches import get_store
from ..session.identity import SessionUser, current_user, log_out
from ..session.state import PROJECT_KEY, USER_KEY, outage_notice, project_names
from ..widgets.text import md_escape


@dataclass(frozen=True)
class PageContext:
    """What a page gets from :func:`page_setup`."""

    store: object
    user: SessionUser
    project: str | None
    page_id: str | None = None


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
    from ...accounts.access import pages_for
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
        startup.start(page_id)  # what this page's first visit starts (METEOR's processes for a page that scores)
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
    return tomllib.loads((Path(__file__).parents[1] / "pages.toml").read_text(encoding="utf-8"))


def page_title(page_id: str) -> str:
    """The page's title as the menu names it (annotator.accounts.access.PAGES)."""
    from ...accounts.access import PAGES
    return next(spec.title for spec in PAGES if spec.page_id == page_id)


#: The review pages' header: less space above the title, a smaller one, the page's prose folded beside it.
HEADER_STYLE = ("<style>.stMainBlockContainer{padding-top:2.5rem}"
                ".st-key-page_header h1{font-size:2.1rem;padding:0.1rem 0}</style>")


def compact_header(title: str, about: str | None = None):
    """A one-line page header: the title, and what the page shows (Markdown) folded in "About this page"
    beside it, so the page's first table or form starts high on the first screen. Returns the space beside the
    title (for a page that folds more there)."""
    st.html(HEADER_STYLE)
    with st.container(key="page_header"):
        left, right = st.columns([3, 2], vertical_alignment="center")
        left.title(title, anchor=False)
        if about:
            with right.expander("About this page"):
                st.markdown(about)
    return right


def page_header(ctx: PageContext) -> str:
    """The page's title (:func:`page_title`) and what it shows (pages.toml, folded: :func:`compact_header`),
    then the selected project; without one, say so and what to do first, and stop the page."""
    text = page_texts()[ctx.page_id]
    compact_header(page_title(ctx.page_id), text["about"])
    return require_project(ctx, text["needs"])


#: Session key of the cached progress: {(user, project): (Progress, monotonic time)}.
PROGRESS_KEY = "annotator_progress"
PROGRESS_MAX_AGE = 120.0  # seconds; the annotate page updates it on every save anyway


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

    from ...annotation import Queue
    from ...errors import NotFound
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
    from ...accounts.access import PAGES
    return [(spec, role is not None and Role(role) in spec.roles) for spec in PAGES if (Path(root) / spec.path).is_file()]


def sidebar(store, user: SessionUser, page_id: str | None = None) -> str | None:
    """Project picker, who is logged in, logout and progress; returns the selected project.

    The project and the page (``page_id``) are remembered for the user, so that a reload or the next log-in
    opens them again; a log-in's cookie is handed over here (annotator.ui.session.cookie)."""
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
            from ..session.password import sidebar_entry
            sidebar_entry(store, user)
        session_cookie.hand_over()
    return project
