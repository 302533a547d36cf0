"""The People screen (admins): page.py."""

from .page import render  # noqa: F401
