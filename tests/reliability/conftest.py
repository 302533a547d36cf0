"""Reliability tests: a closing "reliability figures" section with what the load tests measured.

Tests add a line through the ``reliability_report`` fixture; the lines are printed after the run, with or
without ``-s``.
"""

from __future__ import annotations

import pytest

_LINES: list[str] = []


@pytest.fixture
def reliability_report():
    """A function taking one line of measured figures for the end-of-run summary."""
    return _LINES.append


def pytest_terminal_summary(terminalreporter):
    if _LINES:
        terminalreporter.section("reliability figures")
        for line in _LINES:
            terminalreporter.write_line(line)
