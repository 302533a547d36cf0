"""Image paths stay under the root; boxes are drawn where they belong; missing images give a canvas."""

from __future__ import annotations

import io
import os

import pytest
from PIL import Image

from annotator.errors import InputError
from annotator.images import (
    CANVAS_COLOUR, PALETTE, box_colour, check_relative_image_path, clear_render_cache, image_size, render_boxes,
    render_boxes_png, resolve_image_path,
)
from annotator.model import Box


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_render_cache()
    yield
    clear_render_cache()


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "root"
    (r / "sub").mkdir(parents=True)
    Image.new("RGB", (200, 100), (10, 20, 30)).save(r / "sub" / "a.png")
    return r


@pytest.mark.parametrize("name, fragment", [
    ("../secret.png", "leaves the image root"),
    ("sub/../../secret.png", "leaves the image root"),
    ("..\\secret.png", "leaves the image root"),
    ("/etc/passwd", "absolute"),
    ("\\\\server\\share\\x.png", "absolute"),
    ("C:\\images\\x.png", "absolute"),
    ("c:x.png", "absolute"),
    ("", "empty"),
    ("a\x00b.png", "NUL"),
])
def test_unsafe_names_are_refused(root, name, fragment):
    with pytest.raises(InputError) as info:
        resolve_image_path(root, name, source="list.txt", location=7)
    assert fragment in str(info.value)
    assert "list.txt, line 7" in str(info.value)


def test_safe_names_resolve_inside(root):
    assert resolve_image_path(root, "sub/a.png") == (root / "sub" / "a.png").resolve()
    assert resolve_image_path(root, "sub/./a.png") == (root / "sub" / "a.png").resolve()
    # A file that does not exist (yet) is still a valid location.
    assert resolve_image_path(root, "missing.jpg") == (root / "missing.jpg").resolve()
    assert check_relative_image_path("x..y.jpg") == "x..y.jpg"  # two dots inside a name are fine


def test_symlink_pointing_outside_is_refused(root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    Image.new("RGB", (5, 5)).save(outside / "x.png")
    os.symlink(outside / "x.png", root / "link.png")
    os.symlink(outside, root / "linkdir")
    with pytest.raises(InputError) as info:
        resolve_image_path(root, "link.png")
    assert "'link.png'" in str(info.value) and "outside the image root" in str(info.value)
    with pytest.raises(InputError):
        resolve_image_path(root, "linkdir/x.png")
    with pytest.raises(InputError):
        render_boxes_png(root, "link.png", [])
    # A symlink that stays inside the root is fine.
    os.symlink(root / "sub" / "a.png", root / "inside.png")
    assert resolve_image_path(root, "inside.png") == (root / "sub" / "a.png").resolve()


def test_no_root_is_an_error(tmp_path):
    with pytest.raises(InputError) as info:
        resolve_image_path(None, "a.png")
    assert "no image root" in str(info.value)


def test_image_size_reads_header(root, tmp_path):
    assert image_size(root / "sub" / "a.png") == (200, 100)
    assert image_size(root / "nothing.png") is None
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not an image at all")
    assert image_size(junk) is None


def test_boxes_are_drawn_in_their_colours(root):
    boxes = [Box("1", "dog", 20, 20, 60, 40), Box("2", "ball", 120, 10, 50, 80)]
    img = render_boxes(root, "sub/a.png", boxes, show_labels=False)
    assert img.size == (200, 100)
    line = 2  # max(2, round(200 / 250))
    # The coloured line sits one pixel inside the dark outline, on each box's left edge.
    assert img.getpixel((21 + line // 2, 40)) == box_colour(0) == PALETTE[0]
    assert img.getpixel((121 + line // 2, 50)) == box_colour(1)
    # Inside a box the photo is untouched.
    assert img.getpixel((50, 40)) == (10, 20, 30)


def test_hidden_and_highlighted_boxes(root):
    boxes = [Box("1", "dog", 20, 20, 60, 40), Box("2", "ball", 120, 10, 50, 80)]
    hidden = render_boxes(root, "sub/a.png", boxes, hidden={"2"}, show_labels=False)
    assert hidden.getpixel((122, 50)) == (10, 20, 30)  # box 2 not drawn
    assert hidden.getpixel((22, 40)) == PALETTE[0]
    faint = render_boxes(root, "sub/a.png", boxes, highlight={"1"}, show_labels=False)
    strong_px, faint_px = faint.getpixel((22, 40)), faint.getpixel((122, 50))
    assert strong_px == PALETTE[0]
    # The other box is blended with the photo, not drawn at full strength.
    assert faint_px != box_colour(1) and faint_px != (10, 20, 30)


def test_labels_add_text_pixels(root):
    boxes = [Box("1", "dog", 20, 40, 60, 40)]
    plain = render_boxes(root, "sub/a.png", boxes, show_labels=False)
    labelled = render_boxes(root, "sub/a.png", boxes)
    region = (20, 10, 80, 40)  # above the box, where its label goes
    assert plain.crop(region).getcolors(10_000) == [(60 * 30, (10, 20, 30))]
    assert len(labelled.crop(region).getcolors(10_000)) > 2


def test_missing_image_gives_canvas_of_recorded_size_with_note(root):
    img = render_boxes(root, "nope.jpg", [Box("1", "cat", 10, 10, 100, 50)], width=300, height=150)
    assert img.size == (300, 150)
    assert img.getpixel((295, 5)) == CANVAS_COLOUR
    # The note is drawn in dark red in the middle of the canvas.
    colours = {c for _, c in img.crop((0, 40, 300, 110)).getcolors(100_000)}
    assert (120, 0, 0) in colours
    assert render_boxes(root, None, []).size == (640, 480)


def test_unreadable_image_also_gives_canvas(root):
    (root / "broken.jpg").write_bytes(b"\xff\xd8 truncated")
    img = render_boxes(root, "broken.jpg", [], width=120, height=80)
    assert img.size == (120, 80) and img.getpixel((2, 2)) == CANVAS_COLOUR


def test_large_images_are_scaled_with_their_boxes(root):
    Image.new("RGB", (3000, 1500), (100, 100, 100)).save(root / "big.png")
    img = render_boxes(root, "big.png", [Box("1", "x", 1500, 750, 600, 300)], max_side=1000, show_labels=False)
    assert img.size == (1000, 500)
    # Box left edge at 1500 px → 500 px after scaling by 1/3.
    assert img.getpixel((502, 300)) == PALETTE[0]
    assert img.getpixel((495, 300)) == (100, 100, 100)
    assert img.getpixel((498, 200)) == (100, 100, 100)  # above the scaled box (y 250..350)


def test_cache_returns_same_bytes_and_notices_file_changes(root):
    p = root / "sub" / "a.png"
    first = render_boxes_png(root, "sub/a.png", [])
    assert render_boxes_png(root, "sub/a.png", []) is first  # served from the cache
    Image.new("RGB", (200, 100), (250, 0, 0)).save(p)
    st = os.stat(p)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    second = render_boxes_png(root, "sub/a.png", [])
    assert second != first
    assert Image.open(io.BytesIO(second)).getpixel((5, 5)) == (250, 0, 0)


def test_returned_image_is_a_private_copy(root):
    a = render_boxes(root, "sub/a.png", [])
    a.putpixel((0, 0), (1, 2, 3))
    assert render_boxes(root, "sub/a.png", []).getpixel((0, 0)) == (10, 20, 30)
