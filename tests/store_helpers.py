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


def lines_project(store, folder, captions: list[str], references: list[str], *, project: str = "p",
                  system: str = "sys") -> None:
    """Import one system's captions and one reference per line (files written in ``folder``)."""
    from annotator.io import import_lines
    caps, refs = folder / "caps.txt", folder / "refs.txt"
    caps.write_text("\n".join(captions) + "\n", encoding="utf-8")
    refs.write_text("\n".join(references) + "\n", encoding="utf-8")
    import_lines(store, project, system, caps, [refs])


def annotated_project(store, *, leads=("lead1",), n_items: int = 3) -> list[int]:
    """Project ``p`` (seed_project's items, system ``sys-a``) with annotator ann1 given every caption and the
    ``leads`` as lead accounts; returns the caption ids."""
    from annotator.assignment import assign
    from annotator.accounts.auth import add_user
    from tests.apptest_helpers import seed_project
    caps = seed_project(store, "p", n_items=n_items)
    add_user(store, "ann1", "annotator")
    for lead in leads:
        add_user(store, lead, "lead")
    assign(store, "p", ["ann1"], double_fraction=0)
    return caps
