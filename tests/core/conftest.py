"""Fixtures only the core tests use: ``refuses`` (a data file that must be refused) and ``reference_scorers``."""

from __future__ import annotations

import pytest


@pytest.fixture
def refuses(tmp_path):
    """``refuses(load, name, text, match)``: a file ``name`` holding ``text`` makes ``load(path)`` raise InputError
    whose message matches ``match``."""
    from annotator.errors import InputError

    def check(load, name: str, text: str, match: str) -> None:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match=match):
            load(path)
    return check


@pytest.fixture(scope="session")
def reference_scorers():
    """``reference_scorers(key)``: the reference implementation's scorer of a registered metric, one per metric
    for the whole run (pycocoevalcap's METEOR starts a JVM and loads its tables for several seconds; its answers
    do not depend on what it scored before)."""
    from metric_helpers import reference_scorer
    made: dict = {}

    def get(key):
        if key not in made:
            made[key] = reference_scorer(key)
        return made[key]
    yield get
    made.clear()
