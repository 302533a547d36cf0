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

An import streams the files (:class:`CocoReader`): each record is read and checked as the reader reaches it and
put in a spool (:mod:`annotator.store.spool`, a scratch file apart from the store), because a COCO file lists its
captions and boxes apart from its images and in any order; the items then come out of the spool a batch of images
at a time, each with its references and boxes, into the import's one transaction. Memory holds a batch, not the
files.
"""

from __future__ import annotations

from pathlib import Path

from ..correspondence import parse_markup
from ..errors import InputError
from ..images import image_size, resolve_image_path
from ..limits import check_text_length
from ..model import Box, Caption, Item, Project, Reference
from ..store import Store
from ..store.imports import write_project_parts
from ..store.spool import Spool
from .importers import ImportResult, import_guard
from .options import INLINE_MENTIONS, Example, ImportFormat, ReaderOption, image_root_option
from .json_stream import JsonStream
from .textfiles import shorten
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


def _int_id(value, source: str, where: str, field: str = "id") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(f"{field} must be an integer, got {shorten(repr(value))}", source, where)
    if isinstance(value, str):
        return parse_int(value, field, source, where)
    return value


def _caption_record(rec, src: str, where: str, field: str) -> tuple[int, str]:
    """(image id, text as stored once trimmed) of a record that holds an ``image_id`` and a text, a ``field``
    ("reference" or "caption"); InputError where either is missing or wrong (whether the image is known is
    checked once the file is read)."""
    _require(rec, ["image_id", "caption"], src, where)
    iid = _int_id(rec["image_id"], src, where, "image_id")
    check_text(rec["caption"], "caption", src, where)
    return iid, check_text_length(rec["caption"].strip(), field, src, where)


def _top_level_lists(path, src: str, handlers: dict) -> None:
    """Read the COCO file at ``path`` a record at a time: ``handlers[key](n, record)`` for each record n of the
    top-level list ``key``; every key of ``handlers`` must be a list there (InputError otherwise)."""
    doc = JsonStream(path, src)
    if doc.opens() != "{":
        raise InputError(f"expected a top-level object with a {next(iter(handlers))!r} list", src)
    seen = set()
    for key, line in doc.members():
        handle = handlers.get(key)
        if handle is None:
            continue
        if doc.peek() != "[":
            raise InputError(f"expected a top-level object with a {key!r} list", src, line)
        for n, (record, _) in enumerate(doc.elements()):
            handle(n, record)
        seen.add(key)
    doc.close()
    for key in handlers:
        if key not in seen:
            raise InputError(f"expected a top-level object with a {key!r} list", src)


class CocoReader:
    """COCO files read a record at a time into a :class:`~annotator.store.spool.Spool` (a scratch file apart
    from the store), then given back as items a batch at a time: memory holds a batch, whatever the files' size.

    A COCO file lists its captions and boxes apart from its images, in any order (the images may even come after
    them), so the records go to the spool as they are read, each checked on its own; :meth:`read` then checks
    what needs the whole file (unknown image ids, an annotation id given twice), and :meth:`batches` reads the
    images back in file order with their references and boxes gathered by image id (the spool's index), so
    the items are those of :func:`read_coco_project`. ``results`` (:meth:`read_results`, :meth:`result_batches`)
    gives a system's captions grouped the same way, images in the order they first appear in the file.
    """

    #: Images (or results' images) given back at a time.
    BATCH = 2000

    def __init__(self, spool: Spool, project: str, captions_json, instances_json=None, *, image_root=None,
                 read_sizes: bool = True, trust_root: bool = False):
        self.spool, self.project = spool, check_name(project, "project", "--project")
        self.files = [str(captions_json)] + ([str(instances_json)] if instances_json is not None else [])
        self.paths = [captions_json] + ([instances_json] if instances_json is not None else [])
        self.read_sizes = read_sizes
        self.root = resolve_root(image_root, trusted=trust_root)
        self.head = Project(name=self.project, image_root=self.root, trusted_image_root=self.root if trust_root else None)
        self.categories: dict[int, str] = {}
        self.items_read = 0
        for bag, values in (("images", 5), ("refs", 2), ("ann_ids", 1), ("boxes", 7), ("box_ids", 1),
                            ("results", 2)):
            spool.bag(bag, values)
        spool.bag("keys", 1, indexed=True)  # item key → image id, and image id → item key, of the images given back
        spool.bag("key_of", 1, indexed=True)

    # ------------------------------------------------------------------ reading into the spool

    def read(self) -> "CocoReader":
        """Read the captions (and instances) file into the spool, checking every record and then what needs the
        whole file; InputError naming the file and the record (``images[n]``, ``annotations[n]``)."""
        spool, cap_src = self.spool, self.files[0]

        def image(file_no: int):
            src = self.files[file_no]

            def add(n: int, rec) -> None:
                where = f"images[{n}]"
                _require(rec, ["id"], src, where)
                iid = _int_id(rec["id"], src, where)
                name = rec.get("file_name")
                if name is not None:
                    name = clean_image_path(name, src, where)  # ./a.jpg and a.jpg are one image
                    check_name(image_key(name), "key", src, where)
                spool.add("images", iid, name, check_dimension(rec.get("width"), "width", src, where),
                          check_dimension(rec.get("height"), "height", src, where), file_no, n)
            return add

        def reference(n: int, rec) -> None:
            where = f"annotations[{n}]"
            iid, text = _caption_record(rec, cap_src, where, "reference")
            if "id" in rec:
                spool.add("ann_ids", _int_id(rec["id"], cap_src, where), n)
            spool.add("refs", iid, text, n)

        _top_level_lists(self.paths[0], cap_src, {"images": image(0), "annotations": reference})
        self._check_annotations(cap_src, "refs", "ann_ids", "the images list")
        if len(self.paths) > 1:
            self._read_instances(image(1))
        return self

    def _check_annotations(self, src: str, bag: str, ids: str, images_of: str) -> None:
        """The first annotation (in file order) naming an image no images list has, or repeating an annotation
        id, refused."""
        missing = self.spool.first_missing(bag, "images")
        repeat = self.spool.first_repeat(ids)
        problems = []
        if missing is not None:
            problems.append((missing[-1], f"unknown image_id {missing[0]} (not in {images_of})"))
        if repeat is not None:
            problems.append((repeat[0][-1], f"duplicate annotation id {repeat[0][0]}"))
        if problems:
            n, message = min(problems)
            raise InputError(message, src, f"annotations[{n}]")

    def _read_instances(self, image) -> None:
        src, categories, used = self.files[1], self.categories, {}

        def category(n: int, rec) -> None:
            where = f"categories[{n}]"
            _require(rec, ["id", "name"], src, where)
            cid = _int_id(rec["id"], src, where)
            if cid in categories:
                raise InputError(f"duplicate category id {cid}", src, where)
            categories[cid] = check_text(rec["name"], "category name", src, where, max_len=LIMITS["label"])

        def box(n: int, rec) -> None:
            where = f"annotations[{n}]"
            _require(rec, ["id", "image_id", "category_id", "bbox"], src, where)
            aid = _int_id(rec["id"], src, where)
            iid = _int_id(rec["image_id"], src, where, "image_id")
            cid = _int_id(rec["category_id"], src, where, "category_id")
            if categories and cid not in categories:  # the categories came first: say so now
                raise InputError(f"unknown category_id {cid}", src, where)
            used.setdefault(cid, n)
            bbox = rec["bbox"]
            if not isinstance(bbox, list) or len(bbox) != 4:
                raise InputError(f"bbox must be [x, y, width, height], got {shorten(repr(bbox))}", src, where)
            x, y, w, h = (check_coordinate(v, "bbox value", src, where) for v in bbox)
            if w < 0 or h < 0:
                raise InputError(f"bbox has a negative size: {bbox!r}", src, where)
            self.spool.add("box_ids", aid, n)
            self.spool.add("boxes", iid, str(aid), cid, x, y, w, h, n)

        _top_level_lists(self.paths[1], src, {"images": image, "categories": category, "annotations": box})
        unknown = [(n, cid) for cid, n in used.items() if cid not in categories]
        if unknown:
            n, cid = min(unknown)
            raise InputError(f"unknown category_id {cid}", src, f"annotations[{n}]")
        self._check_annotations(src, "boxes", "box_ids", "the images list")

    def read_results(self, system: str, results_json, *, inline_mentions: bool = False) -> "CocoReader":
        """Read a system's results file (``[{"image_id", "caption"}, …]``) into the spool, a record at a time;
        InputError naming the record (``record n``) for a missing field, a bad caption or an unknown image."""
        if system is None or not str(system).strip():
            raise InputError("a system name is required for --results")
        self.system = check_name(system, "system", "--system")
        self.results_src, self.inline_mentions = src, inline_mentions = str(results_json), inline_mentions
        doc = JsonStream(results_json, src)
        if doc.opens() != "[":
            raise InputError("expected a list of {\"image_id\", \"caption\"} records", src)
        for n, (rec, _line) in enumerate(doc.elements()):
            where = f"record {n}"
            iid, text = _caption_record(rec, src, where, "caption")
            if inline_mentions:
                parse_markup(text, source=src, location=where)
            self.spool.add("results", iid, text, n)
        doc.close()
        if not self.spool.count("results"):
            raise InputError("the results file has no records", src)
        missing = self.spool.first_missing("results", "images")
        if missing is not None:
            raise InputError(f"unknown image_id {missing[0]} (not in the captions file's images)", src,
                             f"record {missing[-1]}")
        return self

    # ------------------------------------------------------------------ items out of the spool

    def _image(self, iid: int, rows: list[tuple]) -> dict:
        """One image's record, merged over the lists naming it (captions, instances): a file name or size one
        leaves out is taken from the other; two file names, or one list naming it twice, are refused."""
        _, name, width, height, file_no, _n = rows[0]
        info = {"file_name": name, "width": width, "height": height}
        for _, name, width, height, other, n in rows[1:]:
            src, where = self.files[other], f"images[{n}]"
            old = info["file_name"]
            if old != name and name is not None and old is not None:
                raise InputError(f"image id {iid} is listed with two file names ({old!r}, {name!r})", src, where)
            if other == file_no:
                raise InputError(f"image id {iid} is listed twice", src, where)
            for k, v in (("file_name", name), ("width", width), ("height", height)):
                if info[k] is None:
                    info[k] = v
        return info

    def batches(self, size: int | None = None):
        """The items (images in file order, with their references and boxes) ``size`` at a time (default
        :attr:`BATCH`), with where each came from (``image id N``), checked as :func:`check_project` does."""
        size, group = size or self.BATCH, []
        for iid, rows in self.spool.groups("images"):
            group.append((iid, self._image(iid, rows)))
            if len(group) >= size:
                yield self._items(group)
                group = []
        if group:
            yield self._items(group)

    def _items(self, group: list[tuple[int, dict]]):
        src, spool, root = self.files[0], self.spool, self.root
        ids = [iid for iid, _ in group]
        refs, boxes = spool.of_keys("refs", ids), spool.of_keys("boxes", ids)
        keys = {}
        for iid, info in group:
            key = image_key(info["file_name"]) if info["file_name"] else str(iid)
            if key in keys:
                raise InputError(f"images {keys[key]} and {iid} share the file name {key!r}", src)
            keys[key] = iid
        earlier = spool.of_keys("keys", list(keys))  # the keys of the batches before (bag "keys": key → image id)
        if earlier:
            key = min(earlier, key=lambda k: earlier[k][0][0])
            raise InputError(f"images {earlier[key][0][1]} and {keys[key]} share the file name {key!r}", src)
        items, where = [], []
        for (iid, info), key in zip(group, keys):
            spool.add("keys", key, iid)
            spool.add("key_of", iid, key)
            width, height = info["width"], info["height"]
            if root is not None and info["file_name"]:
                # Always check containment under the root; read the size only when the JSON lacks it.
                path = resolve_image_path(root, info["file_name"], source=src, location=f"image id {iid}")
                if (width is None or height is None) and self.read_sizes:
                    size = image_size(path, source=src, location=f"image id {iid}")
                    if size is not None:
                        width, height = size
            items.append(Item(key=key, image=info["file_name"], width=int(width) if width is not None else None,
                              height=int(height) if height is not None else None,
                              boxes=[Box(b[1], self.categories[b[2]], *b[3:7]) for b in boxes.get(iid, ())],
                              references=[Reference(r[1]) for r in refs.get(iid, ())]))
            where.append(f"image id {iid}")
        self.items_read += len(items)
        return check_project(Project(name=self.project, image_root=root, items=items,
                                     trusted_image_root=self.head.trusted_image_root), src, where).items, where

    def keys_by_image_id(self) -> dict[int, str]:
        """COCO image id → item key of every image given back so far (for :func:`read_coco_project`)."""
        return {iid: rows[0][1] for iid, rows in self.spool.groups("key_of")}

    def result_batches(self, size: int | None = None):
        """The results' captions as items holding only captions, images in the order they first appear in the
        results file, an image's records its samples n = 0, 1, … in file order; ``size`` images at a time."""
        size, group = size or self.BATCH, []
        for iid, rows in self.spool.groups("results"):
            group.append((iid, rows))
            if len(group) >= size:
                yield self._result_items(group)
                group = []
        if group:
            yield self._result_items(group)

    def _result_items(self, group):
        src, system = self.results_src, self.system
        by_image = {iid: rows[0][1] for iid, rows in self.spool.of_keys("key_of", [iid for iid, _ in group]).items()}
        items, where = [], []
        for iid, rows in group:
            captions = []
            for k, (_, text, n) in enumerate(rows):
                mentions = ()
                if self.inline_mentions:
                    text, mentions = parse_markup(text, source=src, location=f"record {n}")
                captions.append(Caption(system, text, mentions, n=k))
            items.append(Item(key=by_image[iid], captions=captions))
            where.append(f"record {rows[0][2]}")
        return check_project(Project(name=self.project, items=items), src, where).items, where


def read_coco_project(project: str, captions_json: Path | str, instances_json: Path | str | None = None, *,
                      image_root: Path | str | None = None, read_sizes: bool = True,
                      trust_root: bool = False) -> tuple[Project, dict[int, str]]:
    """Items with references (and gold boxes when an instances file is given); nothing stored.

    Returns the project and the map from COCO image id to item key (needed to attach a results file's
    captions). The whole project is held in memory: an import streams the files instead (:class:`CocoReader`).
    """
    with Spool() as spool:
        reader = CocoReader(spool, project, captions_json, instances_json, image_root=image_root,
                            read_sizes=read_sizes, trust_root=trust_root).read()
        proj = reader.head
        for items, _ in reader.batches():
            proj.items.extend(items)
        return proj, reader.keys_by_image_id()


@import_guard
def import_coco(store: Store, project: str, captions_json: Path | str, instances_json: Path | str | None = None, *,
                results: Path | str | None = None, system: str | None = None,
                image_root: Path | str | None = None, inline_mentions: bool = False,
                trust_root: bool = False) -> ImportResult:
    """Import COCO references (+ instance boxes, + one system's results) into ``project``.

    ``inline_mentions``: the results' captions carry ``[words|box ids]`` markup (:mod:`annotator.correspondence`):
    each is stored as its plain text with its mentions (box ids are the instance annotation ids). The files are
    read a record at a time into a spool (:class:`CocoReader`), checked whole, then written a batch of images at
    a time in one transaction: memory holds a batch, and bad input anywhere leaves the store unchanged.
    """
    project = check_name(project, "project", "--project")
    if (results is None) != (system is None):
        raise InputError("--results and --system go together: give both or neither")
    with Spool() as spool:
        reader = CocoReader(spool, project, captions_json, instances_json, image_root=image_root,
                            trust_root=trust_root).read()
        if results is not None:
            reader.read_results(system, results, inline_mentions=inline_mentions)
        result = ImportResult(project, "coco", systems=[reader.system] if results is not None else [])
        parts = [(reader.head, reader.batches(), str(captions_json))]
        if results is not None:
            parts.append((Project(name=project), reader.result_batches(), str(results)))
        for summary in write_project_parts(store, parts):  # one transaction, the store's
            result.add(summary)
        result.items_read = reader.items_read
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
