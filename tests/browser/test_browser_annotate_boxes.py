"""Box labels over the picture in Chromium at 1280x720: aligned with the picture, legible, apart, and
linked to their mentions by hover; the toggles' labels are whole."""

from __future__ import annotations

import itertools

import pytest
from playwright.sync_api import expect

from tests.browser.annotate_helpers import (PW, caption, laptop_page, press,  # noqa: F401
                                             small_project, unfocus)
from tests.browser.conftest import signed_in, wait_until_settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _apart(a, b):
    return (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
            or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def test_box_labels_follow_the_picture_and_light_up_with_their_mentions(server, small_project, laptop_page):
    page = laptop_page
    signed_in(page, server, "alice", PW)
    expect(caption(page)).to_contain_text("number 0")
    picture = page.locator(".st-key-ann_figure img").first
    overlay = page.locator('[data-testid="ann-box-overlay"]')
    expect(overlay).to_be_visible()
    # The overlay takes the picture's size at once; the picture has a height once it is decoded (on a busy machine,
    # some time after the overlay is drawn; a picture of height 0 is not visible).
    expect(picture).to_be_visible()
    img, ov = picture.bounding_box(), overlay.bounding_box()
    for k in ("x", "y", "width", "height"):
        assert abs(img[k] - ov[k]) <= 1.5, (k, img, ov)
    labels = overlay.locator(".ann-boxlabel")
    expect(labels).to_have_count(2)
    assert labels.nth(0).inner_text() == "1 dog" and labels.nth(1).inner_text() == "2 ball"
    boxes = [labels.nth(i).bounding_box() for i in range(2)]
    for a, b in itertools.combinations(boxes, 2):
        assert _apart(a, b)
    for i in range(2):
        assert float(labels.nth(i).evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 12
        box = boxes[i]
        assert img["x"] <= box["x"] and box["x"] + box["width"] <= img["x"] + img["width"] + 0.5
        assert img["y"] <= box["y"] and box["y"] + box["height"] <= img["y"] + img["height"] + 0.5
    # One picture is sent; the boxes' outlines are drawn over it, at the seeded box (20, 30, 120 x 90 on a
    # 320 x 240 picture) at the size shown.
    expect(page.locator(".st-key-ann_figure img")).to_have_count(1)
    sx, sy = img["width"] / 320, img["height"] / 240
    line = overlay.locator('.ann-boxline[data-box="1"]')
    expect(line).to_be_visible()
    f = line.bounding_box()
    for got, want in ((f["x"], img["x"] + 20 * sx), (f["y"], img["y"] + 30 * sy), (f["width"], 120 * sx),
                      (f["height"], 90 * sy)):
        assert abs(got - want) <= 1.5, (f, img)
    frame = overlay.locator('.ann-boxhl[data-box="1"]')
    expect(frame).to_be_hidden()
    page.locator('.ann-ref mark[data-box="1"]').first.hover()
    expect(frame).to_be_visible()
    # The highlight stands on the same box.
    f = frame.bounding_box()
    for got, want in ((f["x"], img["x"] + 20 * sx), (f["y"], img["y"] + 30 * sy), (f["width"], 120 * sx),
                      (f["height"], 90 * sy)):
        assert abs(got - want) <= 1.5, (f, img)
    expect(labels.nth(0)).to_have_class("ann-boxlabel ann-on")
    # And the reverse: pointing at the label of box 2 marks its mention in the references.
    labels.nth(1).hover()
    expect(page.locator('.ann-ref mark[data-box="2"]').first).to_have_class("ann-on")
    expect(frame).to_be_hidden()

    # The switches show their whole label (with the key); h hides the boxes with their labels and t the
    # references, in the browser alone.
    for key in ("ann_show_boxes", "ann_show_refs"):
        assert page.locator(f".st-key-{key} label p").first.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), key
    unfocus(page)
    press(page, "h")
    expect(overlay).to_be_hidden()
    expect(picture).to_be_visible()  # the same picture, now without outlines and labels
    press(page, "t")
    expect(page.locator(".ann-ref").first).to_be_hidden()
    press(page, "h")
    press(page, "t")
    expect(overlay).to_be_visible()
    expect(page.locator(".ann-ref").first).to_be_visible()


def test_zoom_magnifies_picture_and_labels_together_in_the_browser(server, small_project, laptop_page):
    """m (or the Zoom switch) magnifies the picture 2.5× about the pointer, labels and outlines with it, inside
    the figure's own frame, and sends the server nothing; m again restores it."""
    page = laptop_page
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    signed_in(page, server, "alice", PW)
    expect(caption(page)).to_contain_text("number 0")
    figure = page.locator(".st-key-ann_figure")
    picture = page.locator(".st-key-ann_figure img").first
    label = page.locator('[data-testid="ann-box-overlay"] .ann-boxlabel').first
    expect(label).to_be_visible()
    # measure once the picture has loaded and the overlay stands at its size
    page.wait_for_function("""() => { const i = document.querySelector('.st-key-ann_figure img');
        const o = document.querySelector('[data-testid="ann-box-overlay"]');
        return i && i.complete && i.naturalHeight > 0 && o
            && Math.abs(i.getBoundingClientRect().height - o.getBoundingClientRect().height) < 1.5; }""")
    wait_until_settled(page)
    fig0, img0, lab0 = figure.bounding_box(), picture.bounding_box(), label.bounding_box()
    # the pointer over the picture's centre: the zoom is about that point
    page.mouse.move(img0["x"] + img0["width"] / 2, img0["y"] + img0["height"] / 2)
    unfocus(page)
    page.wait_for_timeout(300)
    before = len(sent)
    page.keyboard.press("m")
    expect(page.locator(".st-key-ann_zoom input")).to_be_checked()
    page.wait_for_function("() => document.body.classList.contains('ann-zoom')")
    page.mouse.move(img0["x"] + img0["width"] / 2 + 1, img0["y"] + img0["height"] / 2 + 1)
    page.wait_for_timeout(300)
    img1, lab1, fig1 = picture.bounding_box(), label.bounding_box(), figure.bounding_box()
    assert img1["width"] == pytest.approx(2.5 * img0["width"], rel=0.02)
    assert fig1["width"] == pytest.approx(fig0["width"], abs=1) and fig1["height"] == pytest.approx(fig0["height"], abs=1)
    assert page.evaluate("() => getComputedStyle(document.querySelector('.st-key-ann_figure')).overflow") == "hidden"
    # the label keeps its place on the picture: same fraction of the picture's width and height
    for axis, size in (("x", "width"), ("y", "height")):
        assert (lab1[axis] - img1[axis]) / img1[size] == pytest.approx((lab0[axis] - img0[axis]) / img0[size], abs=0.01)
    assert len(sent) == before, "zooming sent the server a message"
    page.keyboard.press("m")
    page.wait_for_function("() => !document.body.classList.contains('ann-zoom')")
    expect(page.locator(".st-key-ann_zoom input")).not_to_be_checked()
    img2 = picture.bounding_box()
    assert img2["width"] == pytest.approx(img0["width"], abs=1)
