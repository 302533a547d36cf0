"""The Correction screen: page.py draws the queue and the correction form; suggestions.py a judge's suggested fixes."""

from .page import render  # noqa: F401
