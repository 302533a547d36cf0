"""The app as served (`streamlit run serve.py`, or `uvicorn serve:app`): app.py plus the session-cookie routes.

Streamlit serves app.py as usual; annotator.ui.session_routes adds the two small HTTP routes that set and
clear the HttpOnly session cookie, so a log-in survives reloads, new tabs and typed URLs (docs/teams.md);
annotator.ui.origin_guard refuses websockets opened by pages of another origin (any other port included).
`streamlit run app.py` still works, with log-ins that last as long as their tab.

When the server starts it also reads the dashboards' judgement frames of the most active projects in a
background thread (annotator.frames.warm; ANNOTATOR_WARM_DASHBOARDS=0 turns that off), and imports the modules
that are slow to import in another (annotator.ui.preload; ANNOTATOR_PRELOAD=0 turns that off), so no page's first visit waits for them.
"""

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from annotator.config import load_settings
from annotator.frames.warm import warm_up_in_background
from annotator.ui.origin_guard import OriginGuard
from annotator.ui.preload import preload_in_background
from annotator.ui.session_routes import routes

app = st.App(Path(__file__).resolve().parent / "app.py", routes=routes(), middleware=[Middleware(OriginGuard)])

_settings = load_settings()
if _settings.preload:
    preload_in_background()
if _settings.warm_dashboards:
    warm_up_in_background(_settings.database_url, snapshot_base=_settings.frame_cache)
