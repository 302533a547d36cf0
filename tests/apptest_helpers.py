"""Shared helpers for Streamlit AppTest tests of the pages (used by every engineer).

Typical use::

    from tests.apptest_helpers import page_test, seed_project

    def test_my_page(store):
        seed_project(store, "demo")
        at = page_test("agreement", store.url, user="lea", role="lead", project="demo").run()
        assert not at.exception
        assert "Not allowed" not in [e.value for e in at.error]

``page_test`` runs the page file on its own (fast; the page's own
``ui.page_setup`` does login and role checks). ``app_test`` runs the whole app
(``app.py``: navigation, sidebar, login) and can switch to a page with
``at.switch_page("pages/x.py")`` after a first ``run()``.

Both point the app at ``store_url`` through the ANNOTATOR_DATABASE_URL
environment variable (the app reads it at every run), switch off the sample
project, and by default create the user's account row (no password, so the
app's local mode is not affected) and log the user in through session state.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest

# Each AppTest's first run looks for Streamlit components in the metadata of every installed distribution (0.12 s
# of CPU; make check alone runs it over 200 times, about a tenth of its CPU). Nothing is installed while the suite
# runs, so one look per test process answers them all.
manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app.py"
PAGES = ROOT / "pages"

USER_KEY = "annotator_user"
PROJECT_KEY = "annotator_project"
DEFAULT_TIMEOUT = 30.0


def _behave_like_a_running_server() -> None:
    """AppTest starts every run as a fresh server would: in Streamlit's legacy pages-directory mode
    (our pages live in ``pages/``), which runs a page without app.py. A real server leaves that mode
    for good once app.py has run (and ``ui.ensure_shell`` forces that on the very first request);
    make AppTest runs start like those later requests. Idempotent."""
    from streamlit.runtime.pages_manager import PagesManager
    if getattr(PagesManager, "_annotator_patched", False):
        return
    original = PagesManager.__init__

    def __init__(self, main_script_path, *args, **kwargs):
        original(self, main_script_path, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = __init__
    PagesManager._annotator_patched = True


def use_store(store_url: str) -> None:
    """Point app runs in this process at ``store_url`` (and skip loading the sample project)."""
    os.environ["ANNOTATOR_DATABASE_URL"] = store_url
    os.environ["ANNOTATOR_SAMPLE"] = "0"


def ensure_user(store_url: str, name: str, role: str) -> None:
    """Create the account row ``name`` with ``role`` unless it exists (no password)."""
    from annotator.model import Role
    from annotator.store import open_store
    from annotator.store.users import create_user, get_user_row
    store = open_store(store_url)
    try:
        with store.transaction() as conn:
            if get_user_row(conn, name) is None:
                create_user(conn, name, Role(role))
    finally:
        store.dispose()


def session_claim(store_url: str, name: str) -> dict:
    """What a log-in of ``name`` puts in the session (id, name, session epoch); {} if there is no such user."""
    from annotator.store import open_store
    from annotator.store.users import get_user_row
    store = open_store(store_url)
    try:
        with store.read() as conn:
            row = get_user_row(conn, name)
    finally:
        store.dispose()
    return {} if row is None else {"id": row.id, "name": row.name, "epoch": int(row.session_epoch)}


def login(at: AppTest, name: str, role: str, store_url: str | None = None) -> AppTest:
    """Log ``name`` in (with ``role``) in an AppTest's session state, as the log-in form would (the session
    remembers the account's id and session epoch from the store at ``store_url``, default: the one in use)."""
    claim = session_claim(store_url or os.environ["ANNOTATOR_DATABASE_URL"], name)
    at.session_state[USER_KEY] = {"name": name, **claim, "role": str(role.value if hasattr(role, "value") else role)}
    return at


def _page_path(page: str) -> Path:
    path = Path(page)
    if path.suffix != ".py":
        path = PAGES / f"{page}.py"
    elif not path.is_absolute():
        path = ROOT / path
    return path


def page_test(page: str, store_url: str, *, user: str | None = "tester", role: str = "admin",
              project: str | None = None, create_user: bool = True, timeout: float = DEFAULT_TIMEOUT) -> AppTest:
    """An AppTest of one page (page id like ``"annotate"`` or a path), not run yet.

    ``user=None`` leaves the session logged out (the page should then refuse,
    unless the store has no password account at all: local mode).
    """
    use_store(store_url)
    if user is not None and create_user:
        ensure_user(store_url, user, role)
    at = AppTest.from_file(str(_page_path(page)), default_timeout=timeout)
    if user is not None:
        login(at, user, role)
    if project is not None:
        at.session_state[PROJECT_KEY] = project
    return at


def refused(page: str, store_url: str, **kwargs) -> AppTest:
    """Run ``page`` (arguments as :func:`page_test`) and check that it answers with its "Not allowed" refusal;
    returns the AppTest, run, for checks of what the page left out."""
    at = page_test(page, store_url, **kwargs).run()
    assert any("Not allowed" in e.value for e in at.error)
    return at


def refused_showing_nothing(page: str, store_url: str, **kwargs) -> AppTest:
    """As :func:`refused`, and the page neither failed nor showed a table before refusing."""
    at = refused(page, store_url, **kwargs)
    assert not at.exception
    assert not at.dataframe
    return at


def says_no_project(page: str, store_url: str, phrase: str = "There is no project yet", **kwargs) -> AppTest:
    """Run ``page`` (as an analyst unless told; arguments as :func:`page_test`) in a store without projects and
    check that it says so, without failing."""
    at = page_test(page, store_url, **{"user": "ana", "role": "analyst", **kwargs}).run()
    assert not at.exception
    assert phrase in texts(at)
    return at


def app_test(store_url: str, *, user: str | None = None, role: str = "admin", project: str | None = None,
             create_user: bool = True, timeout: float = DEFAULT_TIMEOUT) -> AppTest:
    """An AppTest of the whole app (``app.py``), not run yet; see :func:`page_test` for the arguments."""
    use_store(store_url)
    _behave_like_a_running_server()
    if user is not None and create_user:
        ensure_user(store_url, user, role)
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    if user is not None:
        login(at, user, role)
    if project is not None:
        at.session_state[PROJECT_KEY] = project
    return at


_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def visible(markdown: str) -> str:
    """A Markdown body as the reader sees its text: backslash escapes resolved and the invisible word joiners
    dropped (user-given strings reach Markdown through ui.md_escape, which adds both)."""
    return _ESCAPED.sub(r"\1", str(markdown)).replace("\u2060", "")


def texts(at: AppTest) -> str:
    """All visible text of markdown, text, code, captions, alerts and titles, joined (for `in` checks)."""
    parts = []
    for kind in ("title", "header", "subheader", "markdown", "text", "code", "caption", "error", "warning",
                 "info", "success"):
        for el in getattr(at, kind):
            parts.append(str(el.value) if kind in ("text", "code") else visible(el.value))
    return "\n".join(parts)


def seed_project(store, name: str = "demo", *, n_items: int = 6, systems=("sys-a",), image_root: str | None = None,
                 practice: int = 0, with_images: bool = False):
    """Write a small project: items ``img{i}.jpg`` with two boxes, two references (one with a
    mention), one caption per system; the first ``practice`` items are practice items.

    With ``with_images`` (and an ``image_root``), small JPEGs are written there too.
    Returns the project's caption ids in item order (then system order).
    """
    from annotator.model import Box, Caption, Item, Mention, Project, Reference
    from annotator.store.assignments import project_captions
    from annotator.store.projects import project_id, write_project
    items = []
    for i in range(n_items):
        items.append(Item(
            key=f"img{i}.jpg", image=f"img{i}.jpg", width=320, height=240, is_practice=i < practice,
            boxes=[Box("1", "dog", 20, 30, 120, 90), Box("2", "ball", 200, 150, 40, 40)],
            references=[Reference(f"A dog chases a red ball {i}", (Mention(0, 2, ("1",)), Mention(4, 6, ("2",)))),
                        Reference(f"a dog plays outside {i}")],
            captions=[Caption(s, f"{s} says: a cat sits on a sofa number {i}") for s in systems],
        ))
    if with_images and image_root:
        from PIL import Image
        Path(image_root).mkdir(parents=True, exist_ok=True)
        for i in range(n_items):
            Image.new("RGB", (320, 240), (40 + 30 * (i % 6), 120, 160)).save(Path(image_root) / f"img{i}.jpg")
    with store.transaction() as conn:
        write_project(conn, Project(name=name, image_root=image_root, items=items))
        pid = project_id(conn, name)
        return [r.caption_id for r in project_captions(conn, pid)]
