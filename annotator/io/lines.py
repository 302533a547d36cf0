"""Line-aligned text files (the coco-caption / multi-bleu convention).

One file of captions for a named system, N reference files and optionally a
list of image file names; line *i* of every file belongs to the same image.
Lines are kept exactly as written (only the line terminator is removed).

Item keys: the image file name from the image list when one is given, else
``line-000001``, ``line-000002`` … (1-based line number, six digits, wider
only past 999999 lines). Importing a second system's captions with the same
image list (or, without one, the same number of lines) therefore attaches
them to the same items.

Several descriptions per image of one system (samples or beams) come as one
captions file per sample, each imported with its sample index (``--sample``
0, 1, …; default 0, the caption annotation works on unless the project chose another index) under the same system
name, the same references and the same image list.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..correspondence import parse_markup
from ..errors import InputError
from ..images import image_size, resolve_image_path
from ..limits import TEXT_LIMITS, check_text_length
from ..model import Caption, Item, Project, Reference
from ..names import find_refused_in_text
from ..store import Store
from .importers import ImportResult, import_batches, import_guard
from .options import INLINE_MENTIONS, Example, ImportFormat, ReaderOption, image_root_option
from .textfiles import file_lines
from .validate import check_name, check_project, check_text, clean_image_path, image_key, resolve_root


#: Lines read and written at a time by an import (memory holds one batch).
BATCH = 2000


def line_key(index: int) -> str:
    """The item key of 0-based line ``index`` when no image list is given."""
    return f"line-{index + 1:06d}"


def _caption(system: str, text: str, inline_mentions: bool, source: str, line: int, sample: int) -> Caption:
    if not inline_mentions:
        return Caption(system, text, n=sample)
    plain, mentions = parse_markup(text, source=source, location=line)
    return Caption(system, plain, mentions, n=sample)


def check_sample(sample, source: str) -> int:
    """The sample index of a captions file: None means 0; anything but a whole number ≥ 0 is refused."""
    if sample is None:
        return 0
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise InputError(f"--sample (the sample index n of these captions) must be a whole number of 0 or more, "
                         f"got {sample!r}", source)
    return sample


def read_lines_project(project: str, system: str, captions: Path | str, references=(), *, images: Path | str | None = None,
                       image_root: Path | str | None = None, read_sizes: bool = True,
                       inline_mentions: bool = False, trust_root: bool = False, sample: int | None = None) -> Project:
    """Read line-aligned files into a :class:`Project` (nothing is stored).

    Every file must have as many lines as the captions file; the error names
    both files and both counts. Image names must be relative and stay under
    ``image_root``; when the image exists there, its width and height are read
    from the file header (``read_sizes``). With ``inline_mentions`` the
    captions carry ``[words|box ids]`` markup (:mod:`annotator.correspondence`):
    each is stored as its plain text with its mentions; without it a caption
    is kept exactly as written, brackets included. ``trust_root``: the image
    root was named on the command line (see :func:`~annotator.images.check_image_root`). ``sample``: the
    captions' sample index n (None: 0). The whole project is held in memory: an import streams the files
    instead (:func:`lines_batches`).
    """
    head, batches = lines_batches(project, system, captions, references, images=images, image_root=image_root,
                                  read_sizes=read_sizes, inline_mentions=inline_mentions, trust_root=trust_root,
                                  sample=sample)
    for batch, _ in batches:
        head.items.extend(batch)
    return head


def lines_batches(project: str, system: str, captions: Path | str, references=(), *,
                  images: Path | str | None = None, image_root: Path | str | None = None, read_sizes: bool = True,
                  inline_mentions: bool = False, trust_root: bool = False, sample: int | None = None,
                  size: int | None = None):
    """The project without items (its name and image root), and the items of line-aligned files ``size`` at a
    time with their line numbers, checked as :func:`read_lines_project` says, the files read line by line
    together (memory holds one batch, and the image names seen); ``size`` defaults to :data:`BATCH`."""
    if system is None or not str(system).strip():
        raise InputError("a system name is required")
    system = check_name(system, "system", "--system")
    sample = check_sample(sample, str(captions))
    project = check_name(project, "project", str(captions))
    root = resolve_root(image_root, trusted=trust_root)
    head = Project(name=project, image_root=root, trusted_image_root=root if trust_root else None)
    return head, _line_batches(head, system, captions, list(references), images, read_sizes, inline_mentions,
                               sample, size or BATCH)


def _line_batches(head: Project, system: str, captions, references: list, images, read_sizes: bool,
                  inline_mentions: bool, sample: int, size: int):
    src = str(captions)
    cap_lines = file_lines(captions)
    ref_lines = [file_lines(path) for path in references]
    name_lines = file_lines(images) if images is not None else None
    seen: dict[str, int] = {}  # image key -> line
    batch: list[Item] = []
    locations: list[int] = []
    n = 0
    for n, caption in cap_lines:
        refs = [Reference(_reference(next(lines, None), path, n, captions, cap_lines))
                for lines, path in zip(ref_lines, references)]
        name = None
        if name_lines is not None:
            name = _image_name(next(name_lines, None), images, n, captions, cap_lines, seen)
        batch.append(Item(key=image_key(name) if name is not None else line_key(n - 1), image=name,
                          **_size(head.image_root, name, images, n, read_sizes),
                          references=refs, captions=[_caption(system, caption, inline_mentions, src, n, sample)]))
        locations.append(n)
        if len(batch) >= size:
            yield check_project(replace(head, items=batch), src, locations).items, locations
            batch, locations = [], []
    if n == 0:
        raise InputError("the captions file is empty", src)
    for lines, path in [*zip(ref_lines, references), *([(name_lines, images)] if images is not None else [])]:
        extra = sum(1 for _ in lines)
        if extra:
            what = f"the image list {path}" if path is images else str(path)
            raise InputError(f"line counts differ: {what} has {n + extra} lines but the captions file {captions} "
                             f"has {n}", str(path))
    if batch:
        yield check_project(replace(head, items=batch), src, locations).items, locations


def _count_differs(path, what: str, lines_read: int, captions, cap_lines) -> InputError:
    """Line counts differ: the file at ``path`` ended after ``lines_read`` lines, before the captions file."""
    n = lines_read + 1 + sum(1 for _ in cap_lines)
    return InputError(f"line counts differ: {what} has {lines_read} lines but the captions file {captions} has {n}",
                      str(path))


def _reference(line, path, n: int, captions, cap_lines) -> str:
    """Line ``n`` of reference file ``path``, checked here so a message names this file and not the captions
    file."""
    if line is None:
        raise _count_differs(path, str(path), n - 1, captions, cap_lines)
    text = line[1]
    if find_refused_in_text(text):
        check_text(text, "reference", str(path), n)
    if len(text) > TEXT_LIMITS["reference"]:
        check_text_length(text, "reference", str(path), n)
    return text


def _image_name(line, images, n: int, captions, cap_lines, seen: dict[str, int]) -> str:
    """Line ``n`` of the image list: a clean relative path (./a.jpg and a.jpg are one image), listed once."""
    if line is None:
        raise _count_differs(images, f"the image list {images}", n - 1, captions, cap_lines)
    name = clean_image_path(line[1], str(images), n)
    key = check_name(image_key(name), "key", str(images), n)
    if key in seen:
        raise InputError(f"image {name!r} is listed twice (first on line {seen[key]})", str(images), n)
    seen[key] = n
    return name


def _size(root, name, images, n: int, read_sizes: bool) -> dict:
    """The width and height of image ``name`` when it exists under ``root`` (read from its header)."""
    if name is None or root is None or not read_sizes:
        return {"width": None, "height": None}
    where = {"source": str(images), "location": n}
    size = image_size(resolve_image_path(root, name, **where), **where)
    return {"width": size[0], "height": size[1]} if size is not None else {"width": None, "height": None}


@import_guard
def import_lines(store: Store, project: str, system: str, captions: Path | str, references=(), *,
                 images: Path | str | None = None, image_root: Path | str | None = None,
                 inline_mentions: bool = False, trust_root: bool = False, sample: int | None = None) -> ImportResult:
    """Import line-aligned captions of ``system`` with references (and an image list) into ``project``.

    ``inline_mentions``: the captions carry ``[words|box ids]`` markup (see :func:`read_lines_project`).
    ``sample``: the captions' sample index n (None: 0); a second file of the same system and sample is refused.
    ``trust_root``: the image root was named on the command line (see the module docstring).
    The files are read a batch of lines at a time, each batch written as it is read, in one transaction.
    """
    project = check_name(project, "project", "--project")
    head, batches = lines_batches(project, system, captions, references, images=images, image_root=image_root,
                                  inline_mentions=inline_mentions, trust_root=trust_root, sample=sample)
    return import_batches(store, head, batches, "lines", source=str(captions))


def _run(store, project: str, *, command_line: bool, system, captions, references, images=None, image_root=None,
         inline_mentions=False, sample=None):
    return import_lines(store, project, system, captions, references, images=images, image_root=image_root,
                        inline_mentions=inline_mentions, trust_root=command_line, sample=sample)


FORMAT = ImportFormat(
    name="lines",
    help="line-aligned text files: one caption per line, N reference files, optional image list",
    title="Line-aligned text files (captions, references, image list)",
    options=(
        ReaderOption("system", "--system", "name of the system that produced the captions", required=True,
                     label="System name"),
        ReaderOption("captions", "--captions", "one caption per line", metavar="FILE", kind="file", required=True,
                     label="Captions file (one per line)"),
        ReaderOption("references", "--references", "reference files, one reference per line", metavar="FILE",
                     kind="files", required=True, label="Reference files (line-aligned)"),
        ReaderOption("images", "--images", "image file names, one per line (they become the item keys)", metavar="FILE",
                     kind="file", label="Image list (optional, one file name per line)"),
        ReaderOption("sample", "--sample", "the sample (beam) index n of these captions, for a system with several "
                     "descriptions per image: one captions file per sample, 0, 1, … (default 0, the one annotated)",
                     metavar="N", kind="integer", label="Sample index n (optional; empty: 0, the one annotated)"),
        INLINE_MENTIONS,
        image_root_option(),
    ),
    read=read_lines_project,
    run=_run,
    example=Example(files={"captions": "captions.txt", "references": ("refs1.txt", "refs2.txt"), "images": "images.txt"},
                    values={"system": "sat-attn"},
                    expect={"items_created": 3, "references": 6, "captions": 3, "boxes": 0}),
    creates_store=True,
)
