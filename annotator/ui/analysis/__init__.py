"""The Error analysis screen (analysts, leads): page.py."""

from .page import render  # noqa: F401
