"""The Agreement screen (leads): page.py draws kappa, error-type and span agreement; suggestions.py the judge
suggestions' figures."""

from .page import render  # noqa: F401
