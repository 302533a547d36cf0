"""The Error estimates screen (analysts, leads): page.py; judges.py the judge chosen as predictor and every judge's
intervals."""

from .page import render  # noqa: F401
