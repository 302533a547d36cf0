"""The guidelines page through AppTest: every type, its key, definition, example, guidance; contrasts."""

from __future__ import annotations

from annotator.annotation import load_guidelines
from annotator.taxonomy import taxonomy
from tests.apptest_helpers import page_test, texts


def test_guidelines_page_shows_every_type_and_contrast(sqlite_store):
    at = page_test("guidelines", sqlite_store.url, user="ann1", role="annotator").run()
    assert not at.exception
    shown = texts(at)
    tax = taxonomy()
    for t in tax.types:
        assert f"**{t.name}** `{t.key}`" in shown, t.id
        assert t.definition in shown
        assert t.example_caption.replace(".", "\\.").split()[0] in shown
    for c in load_guidelines().contrasts:
        assert c.title in shown and c.rule in shown
    assert "Task 1" in shown and "Task 2" in shown  # the instructions
    assert "Stance or activity?" in shown and "Scene or position?" in shown
