"""The Team screen (leads): page.py."""

from .page import render  # noqa: F401
