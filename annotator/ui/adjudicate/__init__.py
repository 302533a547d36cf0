"""The Adjudication screen (leads): page.py draws each disagreement and saves the decision; marks.js draws the
annotators' marks under the caption's words."""

from .page import render  # noqa: F401
