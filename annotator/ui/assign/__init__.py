"""The Assignment screen (leads, admins): page.py."""

from .page import render  # noqa: F401
