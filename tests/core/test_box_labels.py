"""Box labels placed as text over the picture: never overlapping, inside the picture, near their box."""

from __future__ import annotations

import itertools
import random

import pytest

from annotator.images import place_labels
from annotator.model import Box


def _overlap(a, b) -> bool:
    return a.left < b.left + b.width and b.left < a.left + a.width and a.top < b.top + b.height and b.top < a.top + a.height


def test_two_boxes_sharing_a_corner_get_two_places():
    # Like a flag held by a woman: both boxes start at the same corner.
    boxes = [Box("1", "woman", 100, 100, 300, 400), Box("4", "flag", 100, 100, 120, 80)]
    a, b = place_labels(boxes, 800, 600)
    assert (a.box_id, b.box_id) == ("1", "4") and (a.index, b.index) == (0, 1)
    assert not _overlap(a, b)
    # The larger box is placed first, just above its corner (12 px labels over a 340 px wide picture).
    line = (12 * 1.35 + 2) / (340 * 600 / 800)
    assert a.left == pytest.approx(100 / 800) and a.top == pytest.approx(100 / 600 - line)
    assert a.height == pytest.approx(line) and a.width == pytest.approx((len("1 woman") * 12 * 0.6 + 8) / 340)
    # The flag's label cannot go above the same corner: it goes inside it.
    assert b.left == pytest.approx(100 / 800) and b.top == pytest.approx(100 / 600)


def test_a_box_at_the_top_edge_puts_its_label_inside():
    (p,) = place_labels([Box("1", "sky", 0, 0, 800, 100)], 800, 600)
    assert p.left == 0 and p.top == 0


def test_hidden_boxes_get_no_label():
    boxes = [Box("1", "dog", 10, 10, 50, 50), Box("2", "ball", 100, 100, 20, 20)]
    assert [p.box_id for p in place_labels(boxes, 320, 240, hidden=("1",))] == ["2"]


@pytest.mark.parametrize("seed", range(20))
def test_crowded_items_keep_labels_apart_and_inside(seed):
    rng = random.Random(seed)
    W, H = rng.choice([(640, 480), (500, 375), (480, 640), (1024, 683)])
    boxes = []
    for k in range(rng.randint(2, 9)):
        x, y = rng.uniform(0, W * 0.8), rng.uniform(0, H * 0.8)
        boxes.append(Box(str(k + 1), rng.choice(["man", "woman", "flag", "dog", "tennis racket", "bike"]),
                         x, y, rng.uniform(20, W - x), rng.uniform(20, H - y)))
    places = place_labels(boxes, W, H)
    assert sorted(p.box_id for p in places) == sorted(b.box_id for b in boxes)
    for p in places:
        assert 0 <= p.left and p.left + p.width <= 1 + 1e-9 and 0 <= p.top and p.top + p.height <= 1 + 1e-9
    clashes = [(a.box_id, b.box_id) for a, b in itertools.combinations(places, 2) if _overlap(a, b)]
    # With up to nine boxes there is always a free place among the candidates on these sizes.
    assert clashes == []


def test_one_picture_is_sent_when_the_page_draws_the_boxes():
    from types import SimpleNamespace

    from annotator.annotation import labels_as_text, pictures_sent
    boxes = [Box("1", "dog", 20, 30, 120, 90)]
    drawn_by_page = SimpleNamespace(item=SimpleNamespace(width=320, height=240, boxes=boxes))
    size_unknown = SimpleNamespace(item=SimpleNamespace(width=None, height=None, boxes=boxes))
    no_boxes = SimpleNamespace(item=SimpleNamespace(width=320, height=240, boxes=[]))
    assert labels_as_text(drawn_by_page) and pictures_sent(drawn_by_page) == (False,)
    # Without the item's size the boxes are drawn into a second picture, so h can still switch them off.
    assert not labels_as_text(size_unknown) and pictures_sent(size_unknown) == (True, False)
    assert pictures_sent(no_boxes) == (False,)


def test_the_overlay_outlines_every_box_where_the_picture_has_it():
    import re
    from types import SimpleNamespace

    from annotator.ui.widgets.figure_html import box_overlay_html
    item = SimpleNamespace(width=320, height=240, boxes=[Box("1", "dog", 20, 30, 120, 90),
                                                         Box("2", "ball", 200, 150, 40, 40)])
    markup = box_overlay_html(item)
    lines = re.findall(r'<div class="ann-boxline" data-box="(\d)" style="left:([\d.]+)%;top:([\d.]+)%;'
                       r'width:([\d.]+)%;height:([\d.]+)%', markup)
    assert [(b, *map(float, v)) for b, *v in lines] == [("1", 6.25, 12.5, 37.5, 37.5),
                                                        ("2", 62.5, 62.5, 12.5, 16.667)]  # 3 decimals
