"""The app as served (`streamlit run serve.py`, or `uvicorn serve:app`): app.py plus the session-cookie routes.

Streamlit serves app.py as usual; annotator.ui.session_routes adds the two small HTTP routes that set and
clear the HttpOnly session cookie, so a log-in survives reloads, new tabs and typed URLs (docs/teams.md).
`streamlit run app.py` still works, with log-ins that last as long as their tab.
"""

from pathlib import Path

import streamlit as st

from annotator.ui.session_routes import routes

app = st.App(Path(__file__).resolve().parent / "app.py", routes=routes())
