"""Flickr30K Entities: ``Sentences/<id>.txt`` and ``Annotations/<id>.xml``.

A sentence line marks phrases as ``[/EN#<chain>/<type>[/<type>…] words]``;
chain 0 (type ``notvisual``) is a phrase with nothing to point at. An
annotation file is VOC-like: ``<size>`` and ``<object>`` elements with one or
more ``<name>`` (chain ids) and a ``<bndbox>`` (1-based inclusive pixel
corners), or ``<nobndbox>``/``<scene>`` flags and no box.

Mapping to the domain model:

* item key and image = ``<id>.jpg``; width/height from ``<size>``;
* one gold box per (chain, box): id ``<chain>`` when the chain has one box,
  ``<chain>.1``, ``<chain>.2`` … (file order) when it has several; an object
  shared by two chains becomes a box of each; coordinates become 0-based
  ``x = xmin - 1``, ``w = xmax - xmin + 1``;
* box label = the head word (last word, lower-cased, punctuation stripped) of
  the first phrase of that chain in the sentences, ``entity`` if no phrase
  names the chain;
* references = the sentences with the markup removed (tokens joined by one
  space); each phrase becomes a :class:`Mention` over its tokens, pointing at
  every box of its chain (none for chain 0 or chains without boxes), with the
  phrase type(s) kept as ``phrase_type``.

XML is parsed with defusedxml: entity declarations and external references are
refused with an InputError.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import defusedxml
import defusedxml.ElementTree as DET

from ..errors import InputError
from ..images import image_size, resolve_image_path
from ..limits import check_text_length
from ..model import Box, Item, Mention, Project, Reference
from ..store import Store
from .importers import ImportResult, import_batches, import_guard
from .options import Example, ImportFormat, ReaderOption, image_root_option
from .textfiles import read_lines, shorten
from .validate import check_dimension, check_name, check_project, parse_float, resolve_root

_PHRASE = re.compile(r"\[/EN#([0-9]{1,18})((?:/[^\s/\[\]]+)+)\s+([^\[\]]*?)\]")
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$")  # a plain file name stem, not a path
_STRIP = ".,;:!?\"'()"


def parse_sentence(line: str, *, source: str | None = None, location=None) -> tuple[str, list[tuple[int, int, int, str, str]]]:
    """Split one marked-up sentence into plain text and phrases.

    Returns ``(text, phrases)`` where text is the tokens joined by single
    spaces and each phrase is ``(start, end, chain, type, phrase_text)`` with
    token indices (end exclusive). Stray or unbalanced brackets raise InputError.
    """
    tokens: list[str] = []
    phrases = []
    pos = 0
    for m in _PHRASE.finditer(line):
        outside = line[pos:m.start()]
        if "[" in outside or "]" in outside:
            raise InputError("malformed phrase markup (unbalanced '[' or ']')", source, location)
        tokens.extend(outside.split())
        words = m.group(3).split()
        if not words:
            raise InputError(f"empty phrase for chain {m.group(1)}", source, location)
        start = len(tokens)
        tokens.extend(words)
        phrases.append((start, len(tokens), int(m.group(1)), m.group(2)[1:], " ".join(words)))
        pos = m.end()
    rest = line[pos:]
    if "[" in rest or "]" in rest:
        raise InputError("malformed phrase markup (unbalanced '[' or ']')", source, location)
    tokens.extend(rest.split())
    return " ".join(tokens), phrases


def _head_word(phrase: str) -> str:
    words = [w.strip(_STRIP).lower() for w in phrase.split()]
    words = [w for w in words if w]
    return words[-1] if words else "entity"


def parse_annotation(path: Path | str) -> tuple[int | None, int | None, dict[int, list[tuple[float, float, float, float]]]]:
    """Read an Annotations XML file: (width, height, {chain: [(x, y, w, h), …]}) in 0-based pixels."""
    src = str(path)
    try:
        tree = DET.parse(src, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except defusedxml.DefusedXmlException as exc:
        raise InputError(f"refused XML: {type(exc).__name__} — entity declarations and external references are not allowed",
                         src) from None
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise InputError(f"invalid XML: {exc}", src, line) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", src) from None
    root = tree.getroot()

    def as_int(el, name: str, where: str) -> int:
        child = el.find(name)
        if child is None or child.text is None:
            raise InputError(f"missing <{name}>", src, where)
        try:
            value = parse_float(child.text.strip(), f"<{name}>")
        except InputError:
            value = math.nan
        if not value.is_integer():
            raise InputError(f"<{name}> is not a whole number: {shorten(child.text)!r}", src, where)
        number = int(value)
        if abs(number) > 2**31 - 1:
            raise InputError(f"<{name}> is out of range: {child.text!r}", src, where)
        return number

    width = height = None
    size = root.find("size")
    if size is not None:
        width = check_dimension(as_int(size, "width", "<size>"), "<width>", src, "<size>")
        height = check_dimension(as_int(size, "height", "<size>"), "<height>", src, "<size>")
    chains: dict[int, list[tuple[float, float, float, float]]] = {}
    for n, obj in enumerate(root.findall("object"), start=1):
        where = f"<object> #{n}"
        names = obj.findall("name")
        if not names:
            raise InputError("an <object> without <name>", src, where)
        bnd = obj.find("bndbox")
        for name in names:
            raw = (name.text or "").strip()
            if not re.fullmatch(r"[0-9]{1,18}", raw):
                raise InputError(f"<name> is not a chain id: {name.text!r}", src, where)
            chain = int(raw)
            if bnd is None:
                continue  # <nobndbox>/<scene>: the chain exists but has no box
            xmin, ymin, xmax, ymax = (as_int(bnd, k, where) for k in ("xmin", "ymin", "xmax", "ymax"))
            if xmax < xmin or ymax < ymin:
                raise InputError(f"box corners are reversed ({xmin},{ymin})-({xmax},{ymax})", src, where)
            chains.setdefault(chain, []).append((float(xmin - 1), float(ymin - 1), float(xmax - xmin + 1), float(ymax - ymin + 1)))
    return width, height, chains


def _read_ids(ids_file: Path | str | None, sentences_dir: Path) -> list[str]:
    if ids_file is None:
        if not sentences_dir.is_dir():
            raise InputError("no Sentences/ directory", str(sentences_dir))
        ids = sorted((p.stem for p in sentences_dir.glob("*.txt")), key=lambda s: (len(s), s))
        if not ids:
            raise InputError("no sentence files (*.txt)", str(sentences_dir))
        return ids
    out = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(read_lines(ids_file), start=1):
        image_id = raw.strip()
        if not image_id:
            continue
        if image_id.lower().endswith(".jpg"):
            image_id = image_id[:-4]
        if not _SAFE_ID.match(image_id) or ".." in image_id:
            raise InputError(f"not an image id: {raw!r}", str(ids_file), n)
        if image_id in seen:
            raise InputError(f"image id {image_id} is listed twice (first on line {seen[image_id]})", str(ids_file), n)
        seen[image_id] = n
        out.append(image_id)
    if not out:
        raise InputError("the id list is empty", str(ids_file))
    return out


#: Images read and written at a time by an import (memory holds one batch).
BATCH = 2000


def read_flickr30k_project(project: str, root: Path | str, *, ids: Path | str | None = None,
                           image_root: Path | str | None = None, read_sizes: bool = True,
                           trust_root: bool = False) -> Project:
    """Read Flickr30K Entities sentences and boxes for the listed images (all when ``ids`` is None). The whole
    project is held in memory: an import reads a batch of images at a time instead (:func:`flickr30k_batches`)."""
    head, batches = flickr30k_batches(project, root, ids=ids, image_root=image_root, read_sizes=read_sizes,
                                      trust_root=trust_root)
    for items, _ in batches:
        head.items.extend(items)
    return head


def flickr30k_batches(project: str, root: Path | str, *, ids: Path | str | None = None,
                      image_root: Path | str | None = None, read_sizes: bool = True, trust_root: bool = False,
                      size: int | None = None):
    """The project without items (its name and image root), and its items ``size`` images at a time (default
    :data:`BATCH`) with where each came from, read and checked as :func:`read_flickr30k_project` says: memory
    holds a batch (and the image ids), whatever the number of images."""
    root = Path(root)
    if not root.is_dir():
        raise InputError("not a directory", str(root))
    img_root = resolve_root(image_root, trusted=trust_root)
    head = Project(name=project, image_root=img_root, trusted_image_root=img_root if trust_root else None)
    return head, _batches(head, root, _read_ids(ids, root / "Sentences"), read_sizes, size or BATCH)


def _batches(head: Project, root: Path, image_ids: list[str], read_sizes: bool, size: int):
    for start in range(0, len(image_ids), size):
        items = [_item(root, image_id, head.image_root, read_sizes) for image_id in image_ids[start:start + size]]
        where = [f"image {i.key}" for i in items]
        yield check_project(replace(head, items=items), str(root), where).items, where


def _item(root: Path, image_id: str, img_root, read_sizes: bool) -> Item:
    """The item of one image: its sentences (references with their phrases) and its boxes."""
    sent_path, ann_path = root / "Sentences" / f"{image_id}.txt", root / "Annotations" / f"{image_id}.xml"
    if not sent_path.is_file():
        raise InputError(f"no sentence file for image {image_id}", str(sent_path))
    if not ann_path.is_file():
        raise InputError(f"no annotation file for image {image_id}", str(ann_path))
    parsed = []
    for n, line in enumerate(read_lines(sent_path), start=1):
        if not line.strip():
            continue
        text, phrases = parse_sentence(line, source=str(sent_path), location=n)
        parsed.append((check_text_length(text, "reference", str(sent_path), n), phrases))
    if not parsed:
        raise InputError("no sentences", str(sent_path))
    width, height, chains = parse_annotation(ann_path)
    heads: dict[int, str] = {}
    for _, phrases in parsed:
        for _, _, chain, _, words in phrases:
            heads.setdefault(chain, _head_word(words))
    boxes: list[Box] = []
    chain_boxes: dict[int, tuple[str, ...]] = {}
    for chain, rects in chains.items():
        ids_ = [str(chain)] if len(rects) == 1 else [f"{chain}.{k}" for k in range(1, len(rects) + 1)]
        chain_boxes[chain] = tuple(ids_)
        label = heads.get(chain, "entity")
        boxes.extend(Box(bid, label, *rect) for bid, rect in zip(ids_, rects))
    refs = [Reference(text, tuple(Mention(s, e, chain_boxes.get(chain, ()) if chain != 0 else (), ptype)
                                  for s, e, chain, ptype, _ in phrases))
            for text, phrases in parsed]
    name = f"{image_id}.jpg"
    if img_root is not None:
        path = resolve_image_path(img_root, name, source=str(ann_path))
        if (width is None or height is None) and read_sizes:
            size = image_size(path, source=str(ann_path))
            if size is not None:
                width, height = size
    return Item(key=name, image=name, width=width, height=height, boxes=boxes, references=refs)


@import_guard
def import_flickr30k(store: Store, project: str, root: Path | str, *, ids: Path | str | None = None,
                     image_root: Path | str | None = None, trust_root: bool = False) -> ImportResult:
    """Import Flickr30K Entities references with phrase–box links and gold boxes into ``project``, a batch of
    images at a time in one transaction (bad input in any image leaves the store unchanged)."""
    project = check_name(project, "project", "--project")
    head, batches = flickr30k_batches(project, root, ids=ids, image_root=image_root, trust_root=trust_root)
    return import_batches(store, head, batches, "flickr30k", source=str(root))


def _run(store, project: str, *, command_line: bool, root, ids=None, image_root=None):
    return import_flickr30k(store, project, root, ids=ids, image_root=image_root, trust_root=command_line)


FORMAT = ImportFormat(
    name="flickr30k",
    help="Flickr30K Entities: ROOT/Sentences/*.txt and ROOT/Annotations/*.xml",
    title="Flickr30K Entities (Sentences/ and Annotations/ on the server)",
    options=(
        ReaderOption("root", "--root", "the folder holding Sentences/ and Annotations/", metavar="DIR", kind="folder",
                     required=True, key="data_f30k_root", label="Folder on the server holding Sentences/ and Annotations/"),
        ReaderOption("ids", "--ids", "image ids to import, one per line (default: every sentence file)", metavar="FILE",
                     kind="file", key="data_f30k_ids", label="Image ids (optional, one per line)"),
        image_root_option(),
    ),
    read=read_flickr30k_project,
    run=_run,
    example=Example(files={"root": ".", "ids": "ids.txt"},
                    # the object of chains 10 and 11 is a box of each
                    expect={"items_created": 1, "references": 5, "boxes": 4}),
    creates_store=True,
)
