"""Fixtures only the core tests use: ``refuses`` (a data file that must be refused) and ``one_meteor_process``."""

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


@pytest.fixture(scope="module")
def one_meteor_process():
    """One warm METEOR process for the module (each start loads its tables for several seconds)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ANNOTATOR_METEOR_PROCESSES", "1")
    yield
    mp.undo()
