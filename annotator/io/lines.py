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

from pathlib import Path

from ..correspondence import parse_markup
from ..errors import InputError
from ..images import image_size, resolve_image_path
from ..limits import TEXT_LIMITS, check_text_length
from ..model import Caption, Item, Project, Reference
from ..names import find_refused_in_text
from ..store import Store
from .importers import ImportResult, import_guard, import_project
from .options import INLINE_MENTIONS, Example, ImportFormat, ReaderOption, image_root_option
from .textfiles import read_lines
from .validate import check_name, check_project, check_text, clean_image_path, image_key, resolve_root


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
    captions' sample index n (None: 0).
    """
    if system is None or not str(system).strip():
        raise InputError("a system name is required")
    system = check_name(system, "system", "--system")
    sample = check_sample(sample, str(captions))
    cap_lines = read_lines(captions)
    n = len(cap_lines)
    if n == 0:
        raise InputError("the captions file is empty", str(captions))
    ref_columns = []
    for path in references:
        lines = read_lines(path)
        if len(lines) != n:
            raise InputError(f"line counts differ: {path} has {len(lines)} lines but the captions file {captions} has {n}",
                             str(path))
        # Checked here, so a message names this file and not the captions file; one scan of the whole file,
        # line by line only when it holds something refused.
        if find_refused_in_text("\n".join(lines)):
            for i, text in enumerate(lines):
                if find_refused_in_text(text):
                    check_text(text, "reference", str(path), i + 1)
        if lines and max(map(len, lines)) > TEXT_LIMITS["reference"]:
            for i, text in enumerate(lines):
                check_text_length(text, "reference", str(path), i + 1)
        ref_columns.append(lines)
    names = None
    if images is not None:
        names = read_lines(images)
        if len(names) != n:
            raise InputError(f"line counts differ: the image list {images} has {len(names)} lines but the captions file "
                             f"{captions} has {n}", str(images))
        seen: dict[str, int] = {}
        for i, name in enumerate(names):
            names[i] = name = clean_image_path(name, str(images), i + 1)  # ./a.jpg and a.jpg are one image
            key = check_name(image_key(name), "key", str(images), i + 1)
            if key in seen:
                raise InputError(f"image {name!r} is listed twice (first on line {seen[key]})", str(images), i + 1)
            seen[key] = i + 1
    root = resolve_root(image_root, trusted=trust_root)
    items = []
    # Transposing once keeps the per-item loop cheap for 100k-line files.
    ref_rows = list(zip(*ref_columns)) if ref_columns else [()] * n
    for i in range(n):
        name = names[i] if names is not None else None
        width = height = None
        if name is not None and root is not None and read_sizes:
            where = {"source": str(images), "location": i + 1}
            size = image_size(resolve_image_path(root, name, **where), **where)
            if size is not None:
                width, height = size
        items.append(Item(
            key=image_key(name) if name is not None else line_key(i),
            image=name,
            width=width,
            height=height,
            references=[Reference(t) for t in ref_rows[i]],
            captions=[_caption(system, cap_lines[i], inline_mentions, str(captions), i + 1, sample)],
        ))
    return check_project(Project(name=project, image_root=root, items=items,
                                 trusted_image_root=root if trust_root else None), str(captions), range(1, n + 1))


@import_guard
def import_lines(store: Store, project: str, system: str, captions: Path | str, references=(), *,
                 images: Path | str | None = None, image_root: Path | str | None = None,
                 inline_mentions: bool = False, trust_root: bool = False, sample: int | None = None) -> ImportResult:
    """Import line-aligned captions of ``system`` with references (and an image list) into ``project``.

    ``inline_mentions``: the captions carry ``[words|box ids]`` markup (see :func:`read_lines_project`).
    ``sample``: the captions' sample index n (None: 0); a second file of the same system and sample is refused.
    ``trust_root``: the image root was named on the command line (see the module docstring).
    """
    project = check_name(project, "project", "--project")
    proj = read_lines_project(project, system, captions, references, images=images, image_root=image_root,
                              inline_mentions=inline_mentions, trust_root=trust_root, sample=sample)
    return import_project(store, proj, "lines", source=str(captions))


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
