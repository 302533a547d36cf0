"""Checks every importer applies before anything reaches the database.

Readers check what they parse where they can name the line or record; the
final pass :func:`check_project` then makes sure every value of a Project fits
the store on SQLite *and* PostgreSQL: no NUL characters or lone surrogates in
text, captions and references within their length limit (annotator.limits.TEXT_LIMITS), names within their
column widths, finite coordinates, image sizes that
fit a 32-bit integer, and gold boxes inside their image. A box that pokes out
of the image by at most :data:`BOX_TOLERANCE` (2 px or 1 % of the side,
whichever is larger — rounding in the source data) is clipped to the image;
one further outside is refused.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import replace

from ..errors import InputError
from ..limits import TEXT_LIMITS, check_text_length
from ..model import Box, Project
from ..names import clean_name, find_refused_in_text, text_problem
from ..store import schema
from .textfiles import shorten

#: Longest value per kind of name (the column widths of the schema).
LIMITS = {
    "project": schema.projects.c.name.type.length,
    "key": schema.items.c.key.type.length,
    "box id": schema.boxes.c.box_key.type.length,
    "label": schema.boxes.c.label.type.length,
    "synset": schema.boxes.c.synset.type.length,
    "system": schema.systems.c.name.type.length,
    "user": schema.users.c.name.type.length,
    "score name": schema.human_scores.c.name.type.length,
}
MAX_DIMENSION = 2**31 - 1  # an INTEGER column on PostgreSQL
MAX_COORDINATE = 1e9
BOX_TOLERANCE = (2.0, 0.01)  # absolute pixels, fraction of the image side


def check_text(value, what: str, source=None, location=None, *, max_len: int | None = None,
               allow_empty: bool = True) -> str:
    """Return ``value`` if it is free text the store, a spreadsheet and a terminal can hold; else InputError naming it.

    Refused: NUL and the other control characters except tab and line breaks,
    unpaired surrogates, U+FFFE/U+FFFF (see :func:`annotator.names.text_problem`),
    and more than ``max_len`` characters.
    """
    if not isinstance(value, str):
        raise InputError(f"{what} must be a string, got {type(value).__name__}", source, location)
    problem = text_problem(value)
    if problem is not None:
        raise InputError(f"{what} contains {problem}", source, location)
    if max_len is not None and len(value) > max_len:
        raise InputError(f"{what} is {len(value)} characters long; at most {max_len} are allowed", source, location)
    if not allow_empty and not value.strip():
        raise InputError(f"{what} must not be empty", source, location)
    return value


def check_same_caption(given: str, stored: str, source=None, location=None, *, which: str = "") -> None:
    """InputError "the caption differs from the project's" unless ``given`` (a caption's text as a file carries
    it) is ``stored`` (the project's text of that caption).

    Both texts are shown shortened around the first character where they part, so two long captions that
    differ in one word show that word. ``which`` names the caption (" (system 's', item 'a.jpg')"). Readers
    call it before they read positions in the file's text (token spans, character offsets), so a changed
    caption is reported as one, and not as a span that no longer fits.
    """
    if given == stored:
        return
    at = next((k for k, (a, b) in enumerate(zip(given, stored)) if a != b), min(len(given), len(stored)))
    raise InputError(f"the caption differs from the project's{which}: the file has {_around(given, at)!r}, the "
                     f"project {_around(stored, at)!r}", source, location)


def _around(text: str, at: int, width: int = 80) -> str:
    """``text`` cut to about ``width`` characters that include position ``at``, with an ellipsis where it was cut."""
    if len(text) <= width:
        return text
    start = max(0, min(at - width // 3, len(text) - width))
    part = text[start:start + width]
    return ("…" if start else "") + part + ("…" if start + width < len(text) else "")


def check_name(value, kind: str, source=None, location=None) -> str:
    """A name of ``kind`` (a key of :data:`LIMITS`) as it is stored: :func:`annotator.names.clean_name` within its column."""
    return clean_name(value, _NAME_WORDS.get(kind, kind), source, location, max_len=LIMITS[kind])


_NAME_WORDS = {"key": "item key", "user": "user name", "project": "project name", "system": "system name"}


def clean_image_path(name, source=None, location=None) -> str:
    """An image path as stored: relative, ``/``-separated, without ``.`` or empty segments; InputError otherwise.

    ``sub\\a.jpg``, ``./sub//a.jpg`` and ``sub/./a.jpg`` all become ``sub/a.jpg``.
    Refused besides what :func:`annotator.images.check_relative_image_path`
    refuses (absolute paths, ``..``): control characters, white space at the
    start or end of the path or of one of its folders, and paths that name no
    file (``.``, ``sub/``). The Unicode form is kept as written, so the file is
    found on disk; :func:`image_key` gives the item key.
    """
    if _plain_image_path(name):
        return name  # the common case: nothing to normalise
    from ..images import check_relative_image_path
    check_text(name, "image path", source, location)
    check_relative_image_path(name, source=source, location=location)  # empty, absolute, ".."
    shown = shorten(name)
    if name.endswith(("/", "\\")):
        raise InputError(f"image path {shown!r} names a folder, not an image file", source, location)
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        raise InputError(f"image path {shown!r} names no file", source, location)
    for part in parts:
        if part != part.strip():
            raise InputError(f"image path {shown!r} has white space at the start or end of {shorten(part)!r}", source,
                             location)
    return "/".join(parts)


# ASCII letters, digits and "_.-" in "/"-separated segments that are not empty, "." or "..": already normal.
_PLAIN_IMAGE_PATH = re.compile(r"(?!\.\.?(?:/|\Z))[A-Za-z0-9_.\-]+(?:/(?!\.\.?(?:/|\Z))[A-Za-z0-9_.\-]+)*")


def _plain_image_path(name) -> bool:
    return isinstance(name, str) and _PLAIN_IMAGE_PATH.fullmatch(name) is not None


def image_key(path: str) -> str:
    """The item key of an image path from :func:`clean_image_path`: its NFC form, so both Unicode spellings of a
    name are one item."""
    return path if path.isascii() else unicodedata.normalize("NFC", path)


_ASCII_INT = re.compile(r"[+-]?[0-9]+")
_ASCII_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = {"nan", "inf", "infinity"}
#: Longest whole number read from text: 18 digits always fit a 64-bit integer column.
MAX_INT_DIGITS = 18


def parse_int(text, what: str, source=None, location=None) -> int:
    """A whole number written in ASCII digits (an optional sign; no spaces, underscores or other scripts' digits).

    Python's ``int()`` would also take ``"١٢"``, ``"1_000"`` and ``" 7 "``, and
    raises ValueError past 4300 digits; here every such text is an InputError
    naming ``what``, the file and the line.
    """
    raw = str(text)
    if not _ASCII_INT.fullmatch(raw):
        raise InputError(f"{what} {shorten(raw)!r} is not a whole number", source, location)
    if len(raw.lstrip("+-")) > MAX_INT_DIGITS:
        raise InputError(f"{what} {shorten(raw)!r} is too large (at most {MAX_INT_DIGITS} digits)", source, location)
    return int(raw)


def parse_float(text, what: str, source=None, location=None) -> float:
    """A finite decimal number written in ASCII (``3``, ``-0.5``, ``1e-3``); InputError otherwise.

    Refuses what ``float()`` would also take: ``nan``, ``inf``, ``1_000``,
    other scripts' digits, and values that overflow to infinity.
    """
    raw = str(text)
    if not _ASCII_FLOAT.fullmatch(raw):
        kind = "a finite number" if raw.strip().lower().lstrip("+-") in _NON_FINITE else "a number"
        raise InputError(f"{what}: {shorten(raw)!r} is not {kind}", source, location)
    value = float(raw)
    if not math.isfinite(value):
        raise InputError(f"{what}: {shorten(raw)!r} is not a finite number", source, location)
    return value


def check_dimension(value, what: str, source=None, location=None) -> int | None:
    """Image width/height: None, or a whole positive number that fits a 32-bit integer."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what} must be a number, got {value!r}", source, location)
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise InputError(f"{what} must be a whole number of pixels, got {value!r}", source, location)
    if not 1 <= value <= MAX_DIMENSION:
        raise InputError(f"{what} must be between 1 and {MAX_DIMENSION}, got {value!r}", source, location)
    return int(value)


def check_coordinate(value, what: str, source=None, location=None) -> float:
    """A finite box coordinate or size."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what} must be a number, got {value!r}", source, location)
    try:
        f = float(value)
    except OverflowError:
        raise InputError(f"{what} is too large: {value!r}", source, location) from None
    if not math.isfinite(f) or abs(f) > MAX_COORDINATE:
        raise InputError(f"{what} must be a finite number of pixels, got {value!r}", source, location)
    return f


def fit_box(box: Box, width: int | None, height: int | None, source=None, location=None) -> Box:
    """The box clipped to the image when it pokes out a little; InputError when it lies further outside."""
    for name in ("x", "y", "w", "h"):
        check_coordinate(getattr(box, name), f"box {box.box_id!r} {name}", source, location)
    if box.w < 0 or box.h < 0:
        raise InputError(f"box {box.box_id!r} has a negative size", source, location)
    if width is None or height is None:
        return box
    tol_x = max(BOX_TOLERANCE[0], BOX_TOLERANCE[1] * width)
    tol_y = max(BOX_TOLERANCE[0], BOX_TOLERANCE[1] * height)
    x1, y1 = box.x + box.w, box.y + box.h
    if box.x < -tol_x or box.y < -tol_y or x1 > width + tol_x or y1 > height + tol_y:
        raise InputError(f"box {box.box_id!r} ({box.x:g}, {box.y:g}, {box.w:g} x {box.h:g}) lies outside the "
                         f"{width} x {height} image", source, location)
    if box.x >= 0 and box.y >= 0 and x1 <= width and y1 <= height:
        return box
    nx, ny = max(0.0, box.x), max(0.0, box.y)
    return Box(box.box_id, box.label, nx, ny, min(float(width), x1) - nx, min(float(height), y1) - ny, box.synset)


def _check_mentions(mentions, text: str, box_ids: set[str] | None, what: str, source, where) -> None:
    n_tokens = None
    for m in mentions:
        if n_tokens is None:
            n_tokens = len(text.split())
        if not (0 <= m.start < m.end <= n_tokens):
            raise InputError(f"{what}: mention span {m.start}..{m.end} is outside the text's {n_tokens} tokens", source, where)
        for b in m.box_ids:
            check_text(b, f"{what}: mention box id", source, where)
            if box_ids is not None and b not in box_ids:
                raise InputError(f"{what}: mention points at unknown box {b!r}", source, where)
        if m.phrase_type is not None:
            check_text(m.phrase_type, f"{what}: phrase type", source, where)


def check_project(project: Project, source=None, locations=None) -> Project:
    """Check every value of ``project`` (see the module docstring); return it with names and image paths in their
    stored form (:func:`check_name`, :func:`clean_image_path`) and near-edge boxes clipped.

    ``locations`` optionally gives, per item, where it came from (a line
    number or a record name) for the error message; else the item key is used.
    """
    project.name = check_name(project.name, "project", source)
    if project.image_root is not None:
        check_text(project.image_root, "image root", source)
    seen: set[str] = set()
    system_names: dict[str, str] = {}  # as given -> as stored; a project has few systems and many captions
    plain_path, refused_in_text = _PLAIN_IMAGE_PATH.fullmatch, find_refused_in_text
    longest_caption, longest_reference = TEXT_LIMITS["caption"], TEXT_LIMITS["reference"]
    for n, item in enumerate(project.items):
        where = locations[n] if locations is not None else f"item #{n + 1}"
        item.key = check_name(item.key, "key", source, where)
        if locations is None:
            where = f"item {item.key!r}"
        if item.key in seen:
            raise InputError(f"item {item.key!r} appears twice", source, where)
        seen.add(item.key)
        if item.image is not None and not plain_path(item.image):
            item.image = clean_image_path(item.image, source, where)
        item.width = check_dimension(item.width, "width", source, where)
        item.height = check_dimension(item.height, "height", source, where)
        ids: set[str] = set()
        fitted = []
        for b in item.boxes:
            box_id = check_name(b.box_id, "box id", source, where)
            if box_id in ids:
                raise InputError(f"box id {box_id!r} is used twice", source, where)
            ids.add(box_id)
            check_text(b.label, f"box {box_id!r} label", source, where, max_len=LIMITS["label"])
            if b.synset is not None:
                check_text(b.synset, f"box {box_id!r} synset", source, where, max_len=LIMITS["synset"])
            if box_id != b.box_id:
                b = replace(b, box_id=box_id)
            fitted.append(fit_box(b, item.width, item.height, source, where))
        item.boxes = fitted
        box_ids = ids if item.boxes else None
        for k, r in enumerate(item.references):
            if type(r.text) is not str or refused_in_text(r.text):
                check_text(r.text, f"reference {k + 1}", source, where)
            if len(r.text) > longest_reference:
                check_text_length(r.text, "reference", source, where, named=f"reference {k + 1}")
            if r.mentions:
                _check_mentions(r.mentions, r.text, box_ids, f"reference {k + 1}", source, where)
        samples: set[tuple[str, int]] = set()
        captions = []
        for c in item.captions:
            system = system_names.get(c.system) or system_names.setdefault(c.system, check_name(c.system, "system",
                                                                                                source, where))
            if isinstance(c.n, bool) or not isinstance(c.n, int) or c.n < 0:
                raise InputError(f"the sample index n of a caption of {system!r} must be a whole number of 0 or more, "
                                 f"got {c.n!r}", source, where)
            if (system, c.n) in samples:
                raise InputError(f"system {system!r} has two captions with n = {c.n} for this item", source, where)
            samples.add((system, c.n))
            if type(c.text) is not str or refused_in_text(c.text):
                check_text(c.text, f"caption of {system!r}", source, where)
            if len(c.text) > longest_caption:
                check_text_length(c.text, "caption", source, where, named=f"the caption of {system!r}")
            if c.mentions:
                _check_mentions(c.mentions, c.text, box_ids, f"caption of {system!r}", source, where)
            captions.append(c if system == c.system else replace(c, system=system))
        item.captions = captions
    return project



def resolve_root(image_root, source: str | None = "--image-root", *, trusted=False) -> str | None:
    """The absolute form of an image root given by the user (None stays None), checked to be a folder images
    may be read from (:func:`annotator.images.check_image_root`). ``trusted`` (imports run from the command
    line only): True when the root itself was named there, or the folder the import vouches for."""
    if image_root is None:
        return None
    from pathlib import Path

    from ..images import check_image_root
    text = check_text(str(image_root), "image root", source, allow_empty=False)
    try:
        given = Path(text).absolute()  # relative to the working directory, as typed
    except (OSError, ValueError) as exc:
        raise InputError(f"image root {text!r} cannot be resolved ({exc})", source) from None
    folder = given if trusted is True else (trusted or None)
    return str(check_image_root(given, trusted=folder, source=source))
