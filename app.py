"""The app's entry point (`streamlit run app.py`): page config, login gate, navigation by role.

Every page file that exists is registered so that any URL resolves; the menu
lists only the pages the user's role may open (annotator.accounts.access.PAGES), and
each page guards itself again with ui.page_setup. While nobody is logged in,
every URL shows the log-in form and, once logged in, the page asked for.
"""

from pathlib import Path

import streamlit as st

from annotator import ui
from annotator.config import load_settings
from annotator.errors import StoreUnavailable
from annotator.ui import login

ROOT = Path(__file__).resolve().parent
HOME_PAGE = "annotate"  # the page the root URL shows
SIDEBAR_WIDTH = 220  # pixels

# A narrow sidebar (menu and project box only): a laptop's window keeps its width for the pages' work.
st.set_page_config(page_title="annotator", page_icon=":material/edit_note:", layout="wide",
                   initial_sidebar_state=SIDEBAR_WIDTH)


@st.cache_resource(show_spinner=False)
def _sample_loaded(url: str) -> bool:
    # Load the sample project once per process and database, if that module exists yet.
    try:
        from annotator.sample import ensure_sample
    except ImportError:
        return False
    # A first start with no account: the local admin gets the sample's captions to annotate straight away.
    ensure_sample(store, assign_to=ui.LOCAL_USER if ui.no_accounts(store) else None)
    return True


try:
    store = ui.get_store()
    if load_settings().load_sample:
        _sample_loaded(store.url)
    user = ui.current_user(store)
except StoreUnavailable as exc:  # down before this session ever reached it: nothing of the user's to keep
    ui.outage_notice(exc)
    st.stop()
menu = ui.menu_pages(user.role if user else None, ROOT)

if user is None:
    login_page = st.Page(str(ROOT / "pages" / "login.py"), title="Log in", icon=":material/login:", url_path="login",
                         default=True)
    hidden = [st.Page(str(ROOT / s.path), title=s.title, url_path=s.page_id, visibility="hidden") for s, _ in menu]
    page = st.navigation([login_page, *hidden], position="hidden")
    if page is login_page:
        with ui.shell_run():
            page.run()
    else:
        login.render(store)  # any other URL: log in first, then that page opens
    st.stop()

sections: dict[str, list] = {}
for spec, allowed in menu:
    sections.setdefault(spec.section, []).append(
        st.Page(str(ROOT / spec.path), title=spec.title, icon=spec.icon, url_path=spec.page_id,
                visibility="visible" if allowed else "hidden"))
    if spec.page_id == HOME_PAGE:
        # The app's root URL runs the annotate page too, from a hidden page of its own: a default page is
        # reached only at "/", so marking Annotate itself default made a typed or reloaded /annotate open
        # with "Page not found" once the session was known on the first run.
        sections[spec.section].append(st.Page(str(ROOT / spec.path), title=spec.title, icon=spec.icon,
                                              url_path="home", default=True, visibility="hidden"))
if not sections:
    st.error("No page exists yet.")
    st.stop()
# Every page a role may open stays in view: a folded menu hid Data & users and People from leads.
page = st.navigation(sections, expanded=True)
if user.local_mode:
    ui.local_mode_banner()
try:
    ui.sidebar(store, user, page.url_path or HOME_PAGE)
    with ui.shell_run(user):
        page.run()
except StoreUnavailable as exc:  # a read the page could not do without the database
    ui.outage_notice(exc)
