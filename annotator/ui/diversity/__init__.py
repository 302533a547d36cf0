"""The Lexical diversity screen: page.py."""

from .page import render  # noqa: F401
