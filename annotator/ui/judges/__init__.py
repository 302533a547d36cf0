"""The Judges screen (leads, analysts): page.py; charts.py its calibration and confusion charts."""

from .page import render  # noqa: F401
