"""Images: safe path resolution under a project's image root, and drawing gold boxes.

An item names its image by a path relative to the project's image root.
:func:`resolve_image_path` refuses anything that could reach outside that root
(absolute paths, ``..`` parts, symlinks that point elsewhere) before a file is
opened. :func:`render_boxes` draws boxes with their id and label on the photo,
or on a neutral canvas of the recorded size when the photo is missing or
unreadable, so an item stays usable without its image.

Memory stays bounded whatever file sits under the root: an image with more than
:data:`MAX_IMAGE_PIXELS` pixels is refused at import (:func:`image_size`) and,
should such a file appear later, drawn as a note instead of being decoded;
other photos are decoded already scaled towards the display size (JPEG draft
mode, integer reduction for other formats). Rendered images (PNG or JPEG
bytes) are cached per file, modification time, boxes and options, in a cache
bounded by its total size; callers get bytes or a fresh PIL image they may change.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from PIL import Image, ImageDraw, ImageFont, UnidentifiedImageError

from .errors import InputError
from .lru import LRUCache
from .model import Box

#: Longest side of a rendered image; larger photos are scaled down for display.
DEFAULT_MAX_SIDE = 1024
#: Canvas size when neither the image nor a recorded size is available.
FALLBACK_SIZE = (640, 480)
CANVAS_COLOUR = (200, 200, 200)
#: Most pixels (width x height) an image file may have: about 7000 x 7000, so a 48-megapixel photo fits while
#: one decoded image stays near 200 MB. Larger files are refused at import and never decoded for display.
MAX_IMAGE_PIXELS = 50_000_000
# Pillow's own check, for every image this process opens, agrees with ours: it warns above the cap and refuses
# twice the cap before reading any pixel (its default, about 89 megapixels, would let 178 through).
Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
#: Photos are decoded at no less than this multiple of the display size (JPEG draft mode, integer reduction
#: for other formats) before the final resampling: fast, and sharp enough for the box lines and labels.
REDUCING_GAP = 2.0
#: Total bytes of rendered images kept in memory, least recently used dropped first.
RENDER_CACHE_BYTES = 64 * 1024 * 1024
#: JPEG quality of rendered images asked for as JPEG (the annotate page): sharp box labels, a tenth of a PNG.
JPEG_QUALITY = 90

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


def allowed_image_folders(environ=None) -> tuple[tuple[Path, ...], bool]:
    """The folders image roots may lie in, resolved, and whether an administrator listed them.

    ``ANNOTATOR_IMAGE_ROOTS`` (os.pathsep-separated) when set; otherwise the
    data directory. The bundled sample's folder is always allowed.
    """
    from .config import SAMPLE_DIR, load_settings
    settings = load_settings(environ)
    configured = settings.image_roots is not None
    folders = list(settings.image_roots) if configured else [settings.data_dir]
    out: list[Path] = []
    for folder in [*folders, SAMPLE_DIR]:
        try:
            resolved = Path(folder).resolve()
        except (OSError, RuntimeError, ValueError):
            continue  # a listed folder that cannot be resolved allows nothing
        if not any(is_inside(resolved, kept) for kept in out):
            out.append(resolved)
    return tuple(out), configured


def is_inside(path: Path, folder: Path) -> bool:
    """True when resolved ``path`` is ``folder`` or lies below it."""
    return path == folder or folder in path.parents


def check_image_root(root: Path | str, *, trusted: Path | str | None = None, source: str | None = None,
                     location=None, environ=None) -> Path:
    """The resolved image root, when images may be read from it; InputError naming it and the allowed folders.

    An image root must lie (after following symlinks) in one of
    :func:`allowed_image_folders`. ``trusted`` is the project's import folder:
    a folder that someone with shell access named on the command line (an
    ``--image-root``, or the folder of the imported JSONL file); roots in it
    are allowed too, unless ``ANNOTATOR_IMAGE_ROOTS`` is set, which is then
    the complete list. Pages never pass ``trusted``, so a root typed into the
    browser or read from an uploaded file must lie in an allowed folder.
    """
    given = str(root)
    try:
        resolved = Path(effective_image_root(root)).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise InputError(f"image root {given!r} cannot be resolved ({exc})", source, location) from None
    folders, configured = allowed_image_folders(environ)
    if any(is_inside(resolved, f) for f in folders):
        return resolved
    if trusted is not None and not configured:
        try:
            if is_inside(resolved, Path(effective_image_root(trusted)).resolve()):
                return resolved
        except (OSError, RuntimeError, ValueError):
            pass
    shown = repr(given) if Path(given) == resolved else f"{given!r} (which is {str(resolved)!r})"
    how = ("the folders in ANNOTATOR_IMAGE_ROOTS" if configured else
           "the data directory and, for a command-line import, the folder it names; an administrator can allow "
           "more with ANNOTATOR_IMAGE_ROOTS")
    raise InputError(f"image root {shown} is not in a folder images may be read from: "
                     f"{', '.join(repr(str(f)) for f in folders)} ({how})", source, location)


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


class _TooLarge(Exception):
    def __init__(self, pixels: int | None, size: tuple[int, int] | None):
        super().__init__(pixels)
        self.pixels, self.size = pixels, size

    def describe(self) -> str:
        if self.pixels is None:
            return f"it has more than {2 * MAX_IMAGE_PIXELS:,} pixels; at most {MAX_IMAGE_PIXELS:,} are allowed"
        dims = f" ({self.size[0]} x {self.size[1]})" if self.size else ""
        return f"it has {self.pixels:,} pixels{dims}; at most {MAX_IMAGE_PIXELS:,} are allowed"


def _open_image(path: Path | str) -> Image.Image:
    """Open an image file (its header only) unless it has more than MAX_IMAGE_PIXELS pixels (_TooLarge)."""
    try:
        im = Image.open(path)
    except Image.DecompressionBombError as exc:  # over twice the cap: Pillow refuses before we see the size
        found = re.search(r"\((\d+) pixels\)", str(exc))
        raise _TooLarge(int(found.group(1)) if found else None, None) from None
    width, height = im.size
    if width * height > MAX_IMAGE_PIXELS:
        im.close()
        raise _TooLarge(width * height, (width, height))
    return im


def image_size(path: Path | str, *, source: str | None = None, location=None) -> tuple[int, int] | None:
    """(width, height) of an image read from its header only, or None if missing/unreadable.

    An image with more than :data:`MAX_IMAGE_PIXELS` pixels raises InputError
    naming the file, its pixel count and the limit (after ``source`` and
    ``location``, the input file and line that named it, when given).
    """
    try:
        with _open_image(path) as im:
            return int(im.size[0]), int(im.size[1])
    except _TooLarge as exc:
        raise InputError(f"image {str(path)!r} is too large to show: {exc.describe()}", source, location) from None
    except (OSError, UnidentifiedImageError, ValueError):
        return None


@dataclass(frozen=True)
class RenderOptions:
    """How to draw: which boxes stand out or are left out, labels, output size."""

    highlight: frozenset[str] = frozenset()  # when non-empty, other boxes are drawn faint
    hidden: frozenset[str] = frozenset()
    show_labels: bool = True
    max_side: int = DEFAULT_MAX_SIDE


def render_boxes(root: Path | str | None, image: str | None, boxes, *, width: int | None = None, height: int | None = None,
                 highlight=(), hidden=(), show_labels: bool = True, max_side: int = DEFAULT_MAX_SIDE,
                 trusted_root: Path | str | None = None) -> Image.Image:
    """Draw ``boxes`` (id + label, one colour each) on an item's image; return a new PIL image.

    ``image`` is the item's path relative to ``root``. A root images may not be
    read from (:func:`check_image_root`) or a path that would leave the root
    raises InputError; a missing, unreadable or too large file gives a
    grey canvas of the recorded ``width`` x ``height`` with a visible note
    instead. Box colours follow the order of ``boxes`` (see :func:`box_colour`),
    so a legend drawn elsewhere can use the same colours. The result is scaled
    so its longer side is at most ``max_side``.
    """
    png = render_boxes_png(root, image, boxes, width=width, height=height, highlight=highlight, hidden=hidden,
                           show_labels=show_labels, max_side=max_side, trusted_root=trusted_root)
    with Image.open(io.BytesIO(png)) as im:
        im.load()
        return im.copy()


def render_boxes_png(root: Path | str | None, image: str | None, boxes, **options) -> bytes:
    """Like :func:`render_boxes` but return PNG bytes (cached; cheap to call again)."""
    return render_boxes_bytes(root, image, boxes, image_format="PNG", **options)


def render_boxes_bytes(root: Path | str | None, image: str | None, boxes, *, width: int | None = None,
                       height: int | None = None, highlight=(), hidden=(), show_labels: bool = True,
                       max_side: int = DEFAULT_MAX_SIDE, image_format: str = "PNG",
                       trusted_root: Path | str | None = None) -> bytes:
    """Like :func:`render_boxes` but return the encoded image: ``image_format`` PNG or JPEG.

    The root must pass :func:`check_image_root` (``trusted_root``: the
    project's import folder), else InputError. Cached per image file, its
    modification time and size, the boxes and the options, so a file replaced
    on disk is drawn again; the cache keeps at most :data:`RENDER_CACHE_BYTES`
    of rendered images.
    """
    path: str | None = None
    stamp = None
    note: str | None = None
    if image:
        if root is not None and str(root) != "":
            check_image_root(root, trusted=trusted_root)
        resolved = resolve_image_path(root, image)
        path = str(resolved)
        try:
            st = os.stat(resolved)
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            path, note = None, f"image not found: {image}"
    else:
        note = "no image recorded for this item"
    fmt = image_format.upper()
    if fmt not in ("PNG", "JPEG"):
        raise ValueError(f"image_format must be PNG or JPEG, not {image_format!r}")
    opts = RenderOptions(frozenset(highlight), frozenset(hidden), bool(show_labels), int(max_side))
    key = (path, stamp, tuple(_as_box(b) for b in boxes), width, height, opts, note, image or "", fmt)
    data = _RENDERED.get(key)
    if data is None:
        data = _render(*key)
        _RENDERED.put(key, data)
    return data


def render_item_png(root: Path | str | None, item, **options) -> bytes:
    """Render an :class:`annotator.model.Item` with its gold boxes (see :func:`render_boxes_png`)."""
    return render_boxes_png(root, item.image, item.boxes, width=item.width, height=item.height, **options)


def _as_box(b) -> Box:
    if isinstance(b, Box):
        return b
    raise TypeError(f"expected Box, got {type(b).__name__}")


#: Rendered images, least recently used dropped first, bounded by their total length in bytes; safe across threads
#: (the annotate page renders the next images in a background thread).
_RENDERED = LRUCache(RENDER_CACHE_BYTES, weight=len)


def _display_size(size: tuple[int, int], max_side: int) -> tuple[int, int]:
    """``size`` scaled so the longer side is at most ``max_side`` (and the area at most MAX_IMAGE_PIXELS)."""
    w, h = max(1, int(size[0])), max(1, int(size[1]))
    scale = min(1.0, max_side / max(w, h)) if max_side > 0 else 1.0
    scale = min(scale, (MAX_IMAGE_PIXELS / (w * h)) ** 0.5)
    return max(1, round(w * scale)), max(1, round(h * scale))


def _load_scaled(path: str, max_side: int) -> tuple[Image.Image, tuple[int, int]]:
    """The photo as RGB at display size, decoded scaled where the format allows; and its full size."""
    with _open_image(path) as im:
        full = im.size
        target = _display_size(full, max_side)
        if target != full:
            # draft() for JPEG, reduce() for the rest, then a Lanczos resize to the exact size.
            im.thumbnail(target, Image.Resampling.LANCZOS, reducing_gap=REDUCING_GAP)
            if im.size != target:
                im = im.resize(target, Image.Resampling.LANCZOS)
        else:
            im.load()
        return (im.convert("RGB") if im.mode != "RGB" else im.copy()), full


def _render(path: str | None, stamp, boxes: tuple[Box, ...], width, height, opts: RenderOptions,
            note: str | None, name: str, fmt: str) -> bytes:
    base = None
    if path is not None:
        try:
            base, full = _load_scaled(path, opts.max_side)
        except _TooLarge as exc:
            note = f"image too large to show: {name} ({exc.describe().removeprefix('it has ')})"
        except (OSError, UnidentifiedImageError, ValueError) as exc:
            note = f"image not readable: {name} ({type(exc).__name__})"
    if base is None:
        full = (int(width), int(height)) if width and height else FALLBACK_SIZE
        # Drawn at display size straight away: a recorded size can be anything up to 2**31 pixels a side.
        base = Image.new("RGB", _display_size(full, opts.max_side), CANVAS_COLOUR)
    _draw(base, boxes, base.size[0] / full[0], opts)
    if note:
        _draw_note(base, note)
    out = io.BytesIO()
    if fmt == "JPEG":
        base.save(out, format="JPEG", quality=JPEG_QUALITY, subsampling=0)
    else:
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
    """Forget cached renders (tests; after replacing image files in place with the same mtime and size)."""
    _RENDERED.clear()


@dataclass(frozen=True)
class LabelPlace:
    """Where a box's label goes, as fractions of the image (0..1): its top-left corner and its size at the
    smallest display width it was planned for."""

    box_id: str
    text: str
    index: int      # the box's place in the item's list (its colour: box_colour(index))
    left: float
    top: float
    width: float
    height: float


def place_labels(boxes, image_width: float, image_height: float, *, display_width: float = 340.0,
                 font_px: float = 12.0, hidden=()) -> list[LabelPlace]:
    """Label positions for ``boxes`` that do not overlap one another, for labels of ``font_px`` pixels shown
    over the image at ``display_width`` pixels or wider (wider displays only add room between them).

    Each label tries, in turn: just above its box's top-left corner, inside that corner, just below the box,
    inside its bottom-left corner, then further right along the top edge; the first place inside the image
    that meets no label placed before wins (larger boxes are placed first: their labels have the most room).
    When those are all taken, the free place nearest the box's corner on a grid over the picture; only
    when the picture is full of labels does one go just above its box anyway."""
    W, H = max(1.0, float(image_width)), max(1.0, float(image_height))
    display_height = display_width * H / W
    # Label size in image fractions: an average character is ~0.6 em wide; 4 px padding each side.
    line = (font_px * 1.35 + 2) / display_height
    hidden = set(hidden)
    placed: list[LabelPlace] = []
    order = sorted(((i, b) for i, b in enumerate(boxes) if b.box_id not in hidden),
                   key=lambda ib: -(ib[1].w * ib[1].h))
    for index, b in order:
        text = f"{b.box_id} {b.label}".strip()
        width = min(1.0, (len(text) * font_px * 0.6 + 8) / display_width)
        x0, y0 = b.x / W, b.y / H
        x1, y1 = (b.x + b.w) / W, (b.y + b.h) / H
        candidates = [(x0, y0 - line), (x0, y0), (x0, y1), (x0, y1 - line)]
        step = width * 0.5
        x = x0 + step
        while x + width <= max(x1, x0 + width) + 1e-9 and len(candidates) < 40:
            candidates += [(x, y0 - line), (x, y0)]
            x += step
        def free(left, top):
            return not any(left < p.left + p.width and p.left < left + width and top < p.top + p.height
                           and p.top < top + line for p in placed)

        spot = None
        for left, top in candidates:
            left = min(max(0.0, left), max(0.0, 1.0 - width))
            if 0 <= top and top + line <= 1.0 and free(left, top):
                spot = (left, top)
                break
        if spot is None:
            # Crowded: the free place on a grid over the picture nearest to the box's corner.
            rows = max(1, int((1.0 - line) / line) + 1)
            cols = max(1, int(max(0.0, 1.0 - width) / (width / 2)) + 1) if width < 1 else 1
            grid = [(min(c * width / 2, max(0.0, 1.0 - width)), min(r * line, 1.0 - line))
                    for r in range(rows) for c in range(cols + 1)]
            open_spots = [g for g in grid if free(*g)]
            if open_spots:
                spot = min(open_spots, key=lambda g: (g[0] - x0) ** 2 + (g[1] - y0) ** 2)
        if spot is None:  # no room left anywhere: just above the box
            spot = (min(max(0.0, x0), max(0.0, 1.0 - width)), min(max(0.0, y0 - line), max(0.0, 1.0 - line)))
        placed.append(LabelPlace(b.box_id, text, index, spot[0], spot[1], width, line))
    return sorted(placed, key=lambda p: p.index)
