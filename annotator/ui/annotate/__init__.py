"""The Annotate screen: page.py draws the caption, its picture and the task panel and runs their callbacks; html.py
builds the page's markup; panel.js, next.js and annotate.css are its script and style in the browser."""

from .page import render  # noqa: F401
