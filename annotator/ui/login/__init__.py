"""The log-in screen (app.py shows it for every URL while nobody is logged in): page.py."""

from .page import render, render_page  # noqa: F401
