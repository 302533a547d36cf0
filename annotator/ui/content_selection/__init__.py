"""The Content selection screen: page.py."""

from .page import render  # noqa: F401
