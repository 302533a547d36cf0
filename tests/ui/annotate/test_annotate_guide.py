"""The annotate page's guide overlay and key labels (AppTest and the markup itself)."""

from __future__ import annotations

import dataclasses
import html
import re

import pytest

from annotator.annotation import PAGE_KEYS, keyboard_map, load_guidelines
from annotator.assignment import assign
from annotator.accounts.auth import add_user
from annotator.taxonomy import taxonomy
from annotator.ui.annotate.html import guide_overlay_html
from tests.apptest_helpers import page_test, seed_project


def test_the_guide_holds_every_type_with_definition_example_and_contrast():
    tax, guide = taxonomy(), load_guidelines()
    markup = guide_overlay_html(tax, guide)
    assert 'role="dialog"' in markup and 'aria-modal="true"' in markup and 'aria-labelledby="ann-help-title"' in markup
    assert re.search(r'<h2 id="ann-help-title">[^<]+</h2>', markup)
    assert " hidden>" in markup  # closed until asked for
    sections = dict(re.findall(r'<section class="ann-help-type" data-type="([a-z_]+)"[^>]*>(.*?)</section>', markup))
    assert list(sections) == [t.id for t in tax.types]
    for t in tax.types:
        body = sections[t.id]
        assert f"<kbd>{html.escape(t.key)}</kbd>" in body
        assert html.escape(t.definition) in body
        assert html.escape(t.example_caption) in body and html.escape(t.example_note) in body
        for c in guide.contrasts:
            assert (html.escape(c.rule) in body) == (t.id in c.types), (t.id, c.id)
    for c in guide.contrasts:
        for ex in c.examples:
            assert html.escape(ex.text(tax)) in markup
    for key in keyboard_map(tax):
        if key in PAGE_KEYS or key in (tax.accurate_key, tax.inaccurate_key):
            assert f"<kbd>{html.escape(key)}</kbd>" in markup, key


def test_guide_text_is_escaped(monkeypatch):
    tax = taxonomy()
    hostile = type(tax.types[0])(**{**tax.types[0].__dict__, "definition": "<img src=x onerror=alert(1)> & more"})
    fake = dataclasses.replace(tax, types=(hostile, *tax.types[1:]), _by_id={**tax._by_id, hostile.id: hostile})
    markup = guide_overlay_html(fake, load_guidelines(tax=tax))
    assert "<img" not in markup and "&lt;img src=x onerror=alert(1)&gt; &amp; more" in markup


@pytest.fixture
def demo(sqlite_store, tmp_path):
    seed_project(sqlite_store, "demo", n_items=2, image_root=str(tmp_path / "img"), with_images=True)
    add_user(sqlite_store, "ann1", "annotator")
    assign(sqlite_store, "demo", ["ann1"], double_fraction=0)
    return sqlite_store


def test_every_control_shows_its_key(demo):
    at = page_test("annotate", demo.url, user="ann1", role="annotator", project="demo", create_user=False).run()
    assert not at.exception
    tax = taxonomy()
    for t in tax.types:
        assert f"`{t.key}`" in at.checkbox(key=f"ann_type_{t.id}").label, t.id
    (view,) = [h.value for h in at.html if h.value.startswith('<div class="ann-view"')]  # switches of the browser
    assert 'st-key-ann_show_boxes' in view and "Boxes <code>h</code>" in view
    assert 'st-key-ann_show_refs' in view and "References <code>t</code>" in view
    assert "`/`" in at.text_input(key="ann_note").label
    options = list(at.radio(key="ann_label").options)
    assert f"`{tax.accurate_key}`" in options[0] and f"`{tax.inaccurate_key}`" in options[1]
    assert "`k`" in at.button(key="ann_skip").label and "⏎" in at.button(key="ann_save").label
    assert at.button(key="ann_prev").label.startswith("←") and at.button(key="ann_next").label.endswith("→")
    assert any('data-help-open="ann"' in h.value and "<kbd>?</kbd>" in h.value for h in at.html)


def test_one_picture_with_the_boxes_drawn_over_it(demo):
    """The item's size is known: the page sends the plain picture once and outlines and labels the boxes over it."""
    at = page_test("annotate", demo.url, user="ann1", role="annotator", project="demo", create_user=False).run()
    assert not at.exception
    assert len(at.image) == 1
    (overlay,) = [h.value for h in at.html if 'data-testid="ann-box-overlay"' in h.value]
    assert overlay.count('class="ann-boxline"') == 2 and overlay.count('class="ann-boxlabel"') == 2
