"""COCO JSON: captions (references), instances (gold boxes) and results (a system's captions).

* captions JSON: ``{"images": [{"id", "file_name", "width", "height"}, …],
  "annotations": [{"id", "image_id", "caption"}, …]}``
* instances JSON: same ``images``, ``annotations`` with ``category_id`` and
  ``bbox`` = ``[x, y, width, height]`` in pixels, and ``categories`` with
  ``id`` and ``name``
* results JSON: ``[{"image_id", "caption"}, …]`` (the format the COCO
  evaluation server takes)

Item key = the image's ``file_name`` (``str(id)`` when an image has none), in
line with the other importers. Box id = the instance annotation's ``id`` as a
string, label = the category name. Reference and caption texts are trimmed
of surrounding whitespace (COCO captions often end in spaces or newlines).
References keep the order of the captions file. The system's captions are
numbered (line 0, 1, …) in the order of the results file. An image id that
comes back in the results file gives the system several descriptions of that
image (samples or beams): its records get n = 0, 1, 2, … in file order, and
annotation works on the first (n = 0) unless the project chose another index.
"""

from __future__ import annotations

from pathlib import Path

from ..correspondence import parse_markup
from ..errors import InputError
from ..images import image_size, resolve_image_path
from ..limits import check_text_length
from ..model import Box, Caption, Item, Project, Reference
from ..store import Store
from ..store.projects import write_project
from .importers import ImportResult, import_guard
from .options import INLINE_MENTIONS, Example, ImportFormat, ReaderOption, image_root_option
from .textfiles import read_json, shorten
from .validate import (
    LIMITS, check_coordinate, check_dimension, check_name, check_project, check_text, clean_image_path, image_key,
    parse_int, resolve_root,
)


def _require(record, fields, source: str, where: str) -> None:
    if not isinstance(record, dict):
        raise InputError(f"expected an object, got {type(record).__name__}", source, where)
    for f in fields:
        if f not in record or record[f] is None:
            raise InputError(f"missing field {f!r}", source, where)


def _list(data, key: str, source: str) -> list:
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        raise InputError(f"expected a top-level object with a {key!r} list", source)
    return data[key]


def _captioned_image(rec, known, known_as: str, src: str, where: str, field: str) -> int:
    """The image id of a record that holds an ``image_id`` among ``known`` (``known_as`` names that list in
    the error) and a text, a ``field`` ("reference" or "caption") as stored once trimmed; InputError where
    either is missing or wrong."""
    _require(rec, ["image_id", "caption"], src, where)
    iid = _int_id(rec["image_id"], src, where, "image_id")
    if iid not in known:
        raise InputError(f"unknown image_id {iid} (not in {known_as})", src, where)
    check_text(rec["caption"], "caption", src, where)
    check_text_length(rec["caption"].strip(), field, src, where)
    return iid


def _int_id(value, source: str, where: str, field: str = "id") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(f"{field} must be an integer, got {shorten(repr(value))}", source, where)
    if isinstance(value, str):
        return parse_int(value, field, source, where)
    return value


def _images(data, source: str, images: dict[int, dict], order: list[int]) -> None:
    for n, rec in enumerate(_list(data, "images", source)):
        where = f"images[{n}]"
        _require(rec, ["id"], source, where)
        iid = _int_id(rec["id"], source, where)
        name = rec.get("file_name")
        if name is not None:
            name = clean_image_path(name, source, where)  # ./a.jpg and a.jpg are one image
            check_name(image_key(name), "key", source, where)
        info = {"file_name": name, "width": check_dimension(rec.get("width"), "width", source, where),
                "height": check_dimension(rec.get("height"), "height", source, where)}
        if iid in images:
            old = images[iid]
            if old["file_name"] != info["file_name"] and info["file_name"] is not None and old["file_name"] is not None:
                raise InputError(f"image id {iid} is listed with two file names ({old['file_name']!r}, {info['file_name']!r})",
                                 source, where)
            if old.get("_source") == source:
                raise InputError(f"image id {iid} is listed twice", source, where)
            for k in ("file_name", "width", "height"):
                if old[k] is None:
                    old[k] = info[k]
            continue
        info["_source"] = source
        images[iid] = info
        order.append(iid)


def read_coco_project(project: str, captions_json: Path | str, instances_json: Path | str | None = None, *,
                      image_root: Path | str | None = None, read_sizes: bool = True,
                      trust_root: bool = False) -> tuple[Project, dict[int, str]]:
    """Items with references (and gold boxes when an instances file is given); nothing stored.

    Returns the project and the map from COCO image id to item key (needed to
    attach a results file's captions).
    """
    cap_src = str(captions_json)
    cap_data = read_json(captions_json)
    images: dict[int, dict] = {}
    order: list[int] = []
    _images(cap_data, cap_src, images, order)
    refs: dict[int, list[Reference]] = {}
    seen_ann: set[int] = set()
    for n, rec in enumerate(_list(cap_data, "annotations", cap_src)):
        where = f"annotations[{n}]"
        iid = _captioned_image(rec, images, "the images list", cap_src, where, "reference")
        if "id" in rec:
            aid = _int_id(rec["id"], cap_src, where)
            if aid in seen_ann:
                raise InputError(f"duplicate annotation id {aid}", cap_src, where)
            seen_ann.add(aid)
        refs.setdefault(iid, []).append(Reference(rec["caption"].strip()))

    boxes: dict[int, list[Box]] = {}
    if instances_json is not None:
        inst_src = str(instances_json)
        inst = read_json(instances_json)
        _images(inst, inst_src, images, order)
        categories: dict[int, str] = {}
        for n, rec in enumerate(_list(inst, "categories", inst_src)):
            where = f"categories[{n}]"
            _require(rec, ["id", "name"], inst_src, where)
            cid = _int_id(rec["id"], inst_src, where)
            if cid in categories:
                raise InputError(f"duplicate category id {cid}", inst_src, where)
            categories[cid] = check_text(rec["name"], "category name", inst_src, where, max_len=LIMITS["label"])
        box_ids: set[int] = set()
        for n, rec in enumerate(_list(inst, "annotations", inst_src)):
            where = f"annotations[{n}]"
            _require(rec, ["id", "image_id", "category_id", "bbox"], inst_src, where)
            aid = _int_id(rec["id"], inst_src, where)
            if aid in box_ids:
                raise InputError(f"duplicate annotation id {aid}", inst_src, where)
            box_ids.add(aid)
            iid = _int_id(rec["image_id"], inst_src, where, "image_id")
            if iid not in images:
                raise InputError(f"unknown image_id {iid} (not in the images list)", inst_src, where)
            cid = _int_id(rec["category_id"], inst_src, where, "category_id")
            if cid not in categories:
                raise InputError(f"unknown category_id {cid}", inst_src, where)
            bbox = rec["bbox"]
            if not isinstance(bbox, list) or len(bbox) != 4:
                raise InputError(f"bbox must be [x, y, width, height], got {bbox!r}", inst_src, where)
            x, y, w, h = (check_coordinate(v, "bbox value", inst_src, where) for v in bbox)
            if w < 0 or h < 0:
                raise InputError(f"bbox has a negative size: {bbox!r}", inst_src, where)
            boxes.setdefault(iid, []).append(Box(str(aid), categories[cid], x, y, w, h))

    root = resolve_root(image_root, trusted=trust_root)
    items = []
    keys: dict[str, int] = {}
    for iid in order:
        info = images[iid]
        key = image_key(info["file_name"]) if info["file_name"] else str(iid)
        if key in keys:
            raise InputError(f"images {keys[key]} and {iid} share the file name {key!r}", cap_src)
        keys[key] = iid
        width, height = info["width"], info["height"]
        if root is not None and info["file_name"]:
            # Always check containment under the root; read the size only when the JSON lacks it.
            path = resolve_image_path(root, info["file_name"], source=cap_src, location=f"image id {iid}")
            if (width is None or height is None) and read_sizes:
                size = image_size(path, source=cap_src, location=f"image id {iid}")
                if size is not None:
                    width, height = size
        items.append(Item(key=key, image=info["file_name"], width=int(width) if width is not None else None,
                          height=int(height) if height is not None else None,
                          boxes=boxes.get(iid, []), references=refs.get(iid, [])))
    proj = check_project(Project(name=project, image_root=root, items=items,
                                 trusted_image_root=root if trust_root else None), cap_src, [f"image id {iid}" for iid in order])
    return proj, {iid: k for k, iid in keys.items()}


def read_coco_results(project: str, system: str, results_json: Path | str, keys_by_image_id: dict[int, str], *,
                      inline_mentions: bool = False) -> Project:
    """A system's captions from a results file, as items holding only captions, in file order (an image's
    repeated records become its samples n = 0, 1, … in file order).

    With ``inline_mentions`` each caption carries ``[words|box ids]`` markup
    and is stored as its plain text with its mentions (box ids are the
    instance annotation ids); without it captions are text as written.

    ``keys_by_image_id`` maps COCO image ids to item keys (from the captions
    file). Unknown image ids and missing fields raise InputError with the
    record index.
    """
    if system is None or not str(system).strip():
        raise InputError("a system name is required for --results")
    system = check_name(system, "system", "--system")
    src = str(results_json)
    data = read_json(results_json)
    if not isinstance(data, list):
        raise InputError("expected a list of {\"image_id\", \"caption\"} records", src)
    by_image: dict[int, Item] = {}
    first_record: list[str] = []
    for n, rec in enumerate(data):
        where = f"record {n}"
        iid = _captioned_image(rec, keys_by_image_id, "the captions file's images", src, where, "caption")
        text, mentions = rec["caption"].strip(), ()
        if inline_mentions:
            text, mentions = parse_markup(text, source=src, location=where)
        if iid not in by_image:
            by_image[iid] = Item(key=keys_by_image_id[iid])
            first_record.append(where)
        item = by_image[iid]
        item.captions.append(Caption(system, text, mentions, n=len(item.captions)))
    if not by_image:
        raise InputError("the results file has no records", src)
    return check_project(Project(name=project, items=list(by_image.values())), src, first_record)


@import_guard
def import_coco(store: Store, project: str, captions_json: Path | str, instances_json: Path | str | None = None, *,
                results: Path | str | None = None, system: str | None = None,
                image_root: Path | str | None = None, inline_mentions: bool = False,
                trust_root: bool = False) -> ImportResult:
    """Import COCO references (+ instance boxes, + one system's results) into ``project``.

    ``inline_mentions``: the results' captions carry ``[words|box ids]`` markup (see :func:`read_coco_results`).
    """
    project = check_name(project, "project", "--project")
    if (results is None) != (system is None):
        raise InputError("--results and --system go together: give both or neither")
    proj, keys = read_coco_project(project, captions_json, instances_json, image_root=image_root,
                                   trust_root=trust_root)
    res_proj = (read_coco_results(project, system, results, keys, inline_mentions=inline_mentions)
                if results is not None else None)
    result = ImportResult(project, "coco", items_read=len(proj.items), systems=res_proj.systems if res_proj else [])
    with store.transaction() as conn:
        result.add(write_project(conn, proj, source=str(captions_json)))
        if res_proj is not None:
            result.add(write_project(conn, res_proj, source=str(results)))
    return result


def _run(store, project: str, *, command_line: bool, captions_json, instances_json, results=None, system=None,
         image_root=None, inline_mentions=False):
    if not command_line and results is None:
        system = None  # the page's system field only names the system of a results file
    return import_coco(store, project, captions_json, instances_json, results=results, system=system,
                       image_root=image_root, inline_mentions=inline_mentions, trust_root=command_line)


FORMAT = ImportFormat(
    name="coco",
    help="COCO captions + instances JSON, optionally a results JSON of one system",
    title="COCO captions / instances / results JSON",
    options=(
        ReaderOption("captions_json", "--captions-json", "COCO captions JSON: images and their reference captions",
                     metavar="F", kind="file", required=True, label="Captions JSON", types=("json",)),
        ReaderOption("instances_json", "--instances-json", "COCO instances JSON: the gold boxes", metavar="F",
                     kind="file", required=True, label="Instances JSON", types=("json",)),
        ReaderOption("results", "--results", 'a system\'s captions: [{"image_id", "caption"}, …]', metavar="F",
                     kind="file", label="Results JSON of one system (optional)", types=("json",)),
        ReaderOption("system", "--system", "name of the system of --results", label="System name (for the results)"),
        INLINE_MENTIONS,
        image_root_option(),
    ),
    read=read_coco_project,
    run=_run,
    example=Example(files={"captions_json": "captions.json", "instances_json": "instances.json",
                           "results": "results.json"}, values={"system": "nic", "inline_mentions": True},
                    expect={"items_created": 2, "references": 3, "captions": 2, "boxes": 3, "systems": ["nic"]}),
    creates_store=True,
)
