"""Reliability tests: a closing "reliability figures" section with what the load tests measured.

Tests add a line through the ``reliability_report`` fixture; the line travels with the test's report (also from
an xdist worker), and tests/conftest.py prints the lines after the run, with or without ``-s``.
"""

from __future__ import annotations

import pytest

#: The user_properties key tests/conftest.py collects the lines under.
FIGURES_PROPERTY = "reliability figure"


@pytest.fixture
def reliability_report(request):
    """A function taking one line of measured figures for the end-of-run summary."""
    return lambda line: request.node.user_properties.append((FIGURES_PROPERTY, line))
