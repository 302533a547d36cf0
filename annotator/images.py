"""Images: safe path resolution under a project's image root, and drawing gold boxes.

An item names its image by a path relative to the project's image root.
:func:`resolve_image_path` refuses anything that could reach outside that root
(absolute paths, ``..`` parts, symlinks that point elsewhere) before a file is
opened. :func:`render_boxes` draws boxes with their id and label on the photo,
or on a neutral canvas of the recorded size when the photo is missing or
unreadable, so an item stays usable without its image. Rendering is cached on
(path, modification time, boxes, options); callers get PNG bytes or a fresh
PIL image they may change.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath

from PIL import Image, ImageDraw, ImageFont, UnidentifiedImageError

from .errors import InputError
from .model import Box

#: Longest side of a rendered image; larger photos are scaled down for display.
DEFAULT_MAX_SIDE = 1024
#: Canvas size when neither the image nor a recorded size is available.
FALLBACK_SIZE = (640, 480)
CANVAS_COLOUR = (200, 200, 200)

# Distinct colours that stay apart for the common colour-vision deficiencies
# (Okabe–Ito, then a few darker extras); cycled when an item has more boxes.
PALETTE: tuple[tuple[int, int, int], ...] = (
    (230, 159, 0), (86, 180, 233), (0, 158, 115), (240, 228, 66), (0, 114, 178), (213, 94, 0),
    (204, 121, 167), (255, 255, 255), (153, 0, 0), (0, 90, 50), (120, 60, 160), (0, 0, 0),
)


def box_colour(index: int) -> tuple[int, int, int]:
    """The colour used for the ``index``-th box of an item (stable across renders)."""
    return PALETTE[index % len(PALETTE)]


_PLAIN_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\- ]*(?:/[A-Za-z0-9_][A-Za-z0-9_.\- ]*)*\Z")


def check_relative_image_path(name: str, *, source: str | None = None, location=None) -> str:
    """Validate an image path as written in an input file; return it unchanged.

    Refuses empty names, absolute paths (POSIX or Windows, including drive
    letters and UNC paths), and any ``..`` component, raising InputError that
    names the path (and the file/line it came from when given).
    """
    if name is None or str(name).strip() == "":
        raise InputError("empty image path", source, location)
    name = str(name)
    if _PLAIN_PATH.match(name):  # fast path for ordinary names (no dot-leading part, no drive, no backslash)
        return name
    if "\x00" in name:
        raise InputError(f"image path {name!r} contains a NUL character", source, location)
    posix, windows = PurePosixPath(name), PureWindowsPath(name)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or name.startswith(("/", "\\")):
        raise InputError(f"image path {name!r} is absolute; give it relative to the image root", source, location)
    if ".." in posix.parts or ".." in windows.parts:
        raise InputError(f"image path {name!r} leaves the image root (contains '..')", source, location)
    return name


def effective_image_root(root: Path | str) -> str:
    """A stored image root as an absolute path: relative roots (the bundled sample's) are
    anchored at the installation directory, not at the current working directory."""
    from .config import REPO_ROOT
    path = Path(root)
    return str(path if path.is_absolute() else REPO_ROOT / path)


def resolve_image_path(root: Path | str | None, name: str, *, source: str | None = None, location=None) -> Path:
    """The absolute path of image ``name`` under ``root``, checked to stay inside it.

    Besides the checks of :func:`check_relative_image_path`, the joined path is
    resolved (following symlinks) and must still lie under the resolved root,
    so a symlink inside the root that points elsewhere is refused. The file need
    not exist. A relative ``root`` is taken relative to the installation directory
    (where the bundled sample lives). InputError names the path on refusal or when there is no root.
    """
    check_relative_image_path(name, source=source, location=location)
    if root is None or str(root) == "":
        raise InputError(f"no image root is set, so image {name!r} cannot be located", source, location)
    try:
        root_path = Path(effective_image_root(root)).resolve()
        candidate = (root_path / name).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # symlink loop, name too long, NUL in the root
        raise InputError(f"image path {name!r} cannot be resolved ({type(exc).__name__}: {exc})", source, location) from None
    if candidate != root_path and root_path not in candidate.parents:
        raise InputError(f"image path {name!r} resolves outside the image root {str(root_path)!r}", source, location)
    return candidate


def image_size(path: Path | str) -> tuple[int, int] | None:
    """(width, height) of an image read from its header only, or None if missing/unreadable."""
    try:
        with Image.open(path) as im:
            return int(im.size[0]), int(im.size[1])
    except (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError):
        return None


@dataclass(frozen=True)
class RenderOptions:
    """How to draw: which boxes stand out or are left out, labels, output size."""

    highlight: frozenset[str] = frozenset()  # when non-empty, other boxes are drawn faint
    hidden: frozenset[str] = frozenset()
    show_labels: bool = True
    max_side: int = DEFAULT_MAX_SIDE


def render_boxes(root: Path | str | None, image: str | None, boxes, *, width: int | None = None, height: int | None = None,
                 highlight=(), hidden=(), show_labels: bool = True, max_side: int = DEFAULT_MAX_SIDE) -> Image.Image:
    """Draw ``boxes`` (id + label, one colour each) on an item's image; return a new PIL image.

    ``image`` is the item's path relative to ``root``. A path that would leave
    the root raises InputError; a missing or unreadable file gives a grey canvas
    of the recorded ``width`` x ``height`` with a visible note instead. Box
    colours follow the order of ``boxes`` (see :func:`box_colour`), so a legend
    drawn elsewhere can use the same colours. The result is scaled so its longer
    side is at most ``max_side``.
    """
    png = render_boxes_png(root, image, boxes, width=width, height=height, highlight=highlight, hidden=hidden,
                           show_labels=show_labels, max_side=max_side)
    with Image.open(io.BytesIO(png)) as im:
        im.load()
        return im.copy()


def render_boxes_png(root: Path | str | None, image: str | None, boxes, *, width: int | None = None, height: int | None = None,
                     highlight=(), hidden=(), show_labels: bool = True, max_side: int = DEFAULT_MAX_SIDE) -> bytes:
    """Like :func:`render_boxes` but return PNG bytes (cached; cheap to call again)."""
    path: str | None = None
    mtime: float | None = None
    note: str | None = None
    if image:
        resolved = resolve_image_path(root, image)
        path = str(resolved)
        try:
            mtime = os.stat(resolved).st_mtime_ns
        except OSError:
            path, note = None, f"image not found: {image}"
    else:
        note = "no image recorded for this item"
    opts = RenderOptions(frozenset(highlight), frozenset(hidden), bool(show_labels), int(max_side))
    return _render_cached(path, mtime, tuple(_as_box(b) for b in boxes), width, height, opts, note, image or "")


def render_item_png(root: Path | str | None, item, **options) -> bytes:
    """Render an :class:`annotator.model.Item` with its gold boxes (see :func:`render_boxes_png`)."""
    return render_boxes_png(root, item.image, item.boxes, width=item.width, height=item.height, **options)


def _as_box(b) -> Box:
    if isinstance(b, Box):
        return b
    raise TypeError(f"expected Box, got {type(b).__name__}")


@lru_cache(maxsize=256)
def _render_cached(path: str | None, mtime, boxes: tuple[Box, ...], width, height, opts: RenderOptions,
                   note: str | None, name: str) -> bytes:
    base = None
    if path is not None:
        try:
            with Image.open(path) as im:
                im.load()
                base = im.convert("RGB")
        except (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError) as exc:
            note = f"image not readable: {name} ({type(exc).__name__})"
    if base is None:
        size = (int(width), int(height)) if width and height else FALLBACK_SIZE
        base = Image.new("RGB", size, CANVAS_COLOUR)
    orig_w, orig_h = base.size
    scale = min(1.0, opts.max_side / max(orig_w, orig_h)) if opts.max_side > 0 else 1.0
    if scale < 1.0:
        base = base.resize((max(1, round(orig_w * scale)), max(1, round(orig_h * scale))), Image.Resampling.LANCZOS)
    _draw(base, boxes, scale, opts)
    if note:
        _draw_note(base, note)
    out = io.BytesIO()
    base.save(out, format="PNG", optimize=False)
    return out.getvalue()


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow without FreeType: fixed bitmap font
        return ImageFont.load_default()


def _text_colour(fill: tuple[int, int, int]) -> tuple[int, int, int]:
    # Dark text on light fills, white on dark ones (relative luminance).
    r, g, b = fill
    return (0, 0, 0) if 0.2126 * r + 0.7152 * g + 0.0722 * b > 140 else (255, 255, 255)


def _draw(img: Image.Image, boxes: tuple[Box, ...], scale: float, opts: RenderOptions) -> None:
    if not boxes:
        return
    w, h = img.size
    line = max(2, round(max(w, h) / 250))
    font = _font(max(11, round(max(w, h) / 45)))
    overlay = Image.new("RGBA", img.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    faint = bool(opts.highlight)
    order = [(i, b) for i, b in enumerate(boxes) if b.box_id not in opts.hidden]
    # Faint boxes first so highlighted ones are drawn on top.
    order.sort(key=lambda ib: faint and ib[1].box_id in opts.highlight)
    labels = []
    for index, b in order:
        colour = box_colour(index)
        strong = not faint or b.box_id in opts.highlight
        alpha = 255 if strong else 110
        width = line * 2 if faint and strong else line
        x0, y0 = b.x * scale, b.y * scale
        x1, y1 = max(x0, (b.x + b.w) * scale), max(y0, (b.y + b.h) * scale)
        # A dark outline under the colour keeps light colours visible on light photos.
        draw.rectangle([x0, y0, x1, y1], outline=(0, 0, 0, alpha), width=width + 2)
        if x1 - x0 > 2 and y1 - y0 > 2:
            draw.rectangle([x0 + 1, y0 + 1, x1 - 1, y1 - 1], outline=colour + (alpha,), width=width)
        labels.append((b, colour, alpha, x0, y0))
    if opts.show_labels:
        # Labels after all rectangles, so no box line crosses a label.
        for b, colour, alpha, x0, y0 in labels:
            label = f"{b.box_id} {b.label}".strip()
            tx0, ty0, tx1, ty1 = draw.textbbox((0, 0), label, font=font)
            tw, th = tx1 - tx0, ty1 - ty0
            pad = 3
            lx = min(max(0.0, x0), max(0.0, w - tw - 2 * pad))
            ly = y0 - th - 2 * pad if y0 - th - 2 * pad >= 0 else max(0.0, y0)
            draw.rectangle([lx, ly, lx + tw + 2 * pad, ly + th + 2 * pad], fill=colour + (min(alpha + 30, 255),))
            draw.text((lx + pad - tx0, ly + pad - ty0), label, font=font, fill=_text_colour(colour) + (alpha,))
    img.paste(Image.alpha_composite(img.convert("RGBA"), overlay).convert("RGB"))


def _draw_note(img: Image.Image, note: str) -> None:
    w, h = img.size
    font = _font(max(12, round(min(w, h) / 22)))
    draw = ImageDraw.Draw(img)
    tx0, ty0, tx1, ty1 = draw.textbbox((0, 0), note, font=font)
    tw, th = tx1 - tx0, ty1 - ty0
    x, y = max(4, (w - tw) // 2), max(4, (h - th) // 2)
    draw.rectangle([x - 6, y - 6, x + tw + 6, y + th + 6], fill=(255, 255, 255), outline=(120, 0, 0), width=2)
    draw.text((x - tx0, y - ty0), note, font=font, fill=(120, 0, 0))


def clear_render_cache() -> None:
    """Forget cached renders (tests; after replacing image files in place with the same mtime)."""
    _render_cached.cache_clear()
