"""Assertions shared by the store and importer tests."""

from __future__ import annotations

import pytest

from annotator.errors import InputError
from annotator.store.projects import table_counts


def refused(store, call, *fragments, error=InputError):
    """Run ``call``; it must raise ``error`` mentioning every fragment and leave every table as it was.

    Returns the exception, for further checks of its message or location.
    """
    before = table_counts(store)
    with pytest.raises(error) as info:
        call()
    for f in fragments:
        assert f in str(info.value), str(info.value)
    assert table_counts(store) == before
    return info.value
