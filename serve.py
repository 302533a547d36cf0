"""The app as served (`streamlit run serve.py`, or `uvicorn serve:app`): app.py plus the session-cookie routes.

Streamlit serves app.py as usual; annotator.ui.session.routes adds the two small HTTP routes that set and
clear the HttpOnly session cookie, so a log-in survives reloads, new tabs and typed URLs (docs/teams.md);
annotator.ui.session.origin_guard refuses websockets opened by pages of another origin (any other port included).
`streamlit run app.py` still works, with log-ins that last as long as their tab.

When the server starts it also starts the start-up tasks of annotator.startup that start with the server (the
slow imports, the dashboards' frames), each in a background thread with a switch of its own, so no page's first
visit waits for them.
"""

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from annotator import startup
from annotator.ui.session.origin_guard import OriginGuard
from annotator.ui.session.routes import routes

app = st.App(Path(__file__).resolve().parent / "app.py", routes=routes(), middleware=[Middleware(OriginGuard)])

startup.start(startup.SERVER_START)
