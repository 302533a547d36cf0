"""Projects, items, boxes, references, systems and captions."""

from __future__ import annotations

import gc
import itertools
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import Connection, func, select

from ..correspondence import check_box_ids
from ..errors import InputError, NotFound
from ..model import Box, Caption, Item, Project, Reference
from . import Store
from .codec import decode_mentions, encode_mentions
from .given_lines import number_given_lines, refuse_repeated_lines
from .project_settings import get_setting, set_setting
from .rows import insert_if_absent, keyset_chunks, lock_key
from .samples import project_annotated_sample
from .schema import boxes, captions, current_judgements, items, judgements, projects, refs, systems

_CHUNK = 5000


def _now() -> datetime:
    return datetime.now(timezone.utc)


def project_id(conn: Connection, name: str, *, create: bool = False, image_root: str | None = None) -> int:
    """Id of the project called ``name``; create it if asked, else raise NotFound."""
    pid = conn.execute(select(projects.c.id).where(projects.c.name == name)).scalar()
    if pid is not None:
        if image_root is not None:
            conn.execute(projects.update().where(projects.c.id == pid).values(image_root=image_root))
        return pid
    if not create:
        raise NotFound(f"no project called {name!r}")
    # A concurrent first import may create the same project between our SELECT and INSERT: take theirs.
    pid = insert_if_absent(conn, projects, {"name": name, "image_root": image_root, "description": "", "created_at": _now()})
    return pid if pid is not None else project_id(conn, name, image_root=image_root)


def project_names(store: Store) -> list[str]:
    """All project names, sorted."""
    with store.read() as conn:
        return [r[0] for r in conn.execute(select(projects.c.name).order_by(projects.c.name))]


def projects_by_recent_judgements(conn: Connection, newest: int = 2000) -> list[str]:
    """Every project name: those with judgements among the ``newest`` judgement rows first, the most recently
    judged first (a primary-key walk, instant on any size), then the rest by name."""
    recent_rows = select(judgements.c.caption_id).order_by(judgements.c.id.desc()).limit(int(newest)).subquery()
    recent = conn.execute(
        select(projects.c.name).select_from(recent_rows.join(captions, captions.c.id == recent_rows.c.caption_id)
                                            .join(systems, systems.c.id == captions.c.system_id)
                                            .join(projects, projects.c.id == systems.c.project_id))
    ).scalars().all()
    names = conn.execute(select(projects.c.name).order_by(projects.c.name)).scalars().all()
    return list(dict.fromkeys([*recent, *names]))


def project_system_names(conn: Connection, pid: int) -> list[str]:
    """Names of project ``pid``'s systems (caption sources) in import order."""
    return [r[0] for r in conn.execute(select(systems.c.name).where(systems.c.project_id == pid).order_by(systems.c.id))]


def system_names(store: Store, project: str) -> list[str]:
    """The systems of the project called ``project`` in import order (NotFound for an unknown project)."""
    with store.read() as conn:
        return project_system_names(conn, project_id(conn, project))


def project_image_root(conn: Connection, pid: int) -> str | None:
    """The project's image root directory (or None)."""
    return conn.execute(select(projects.c.image_root).where(projects.c.id == pid)).scalar()


#: Project setting: the image root an import run from the command line set (see annotator.images.check_image_root).
TRUSTED_IMAGE_ROOT = "trusted_image_root"


def trusted_image_root(conn: Connection, pid: int) -> str | None:
    """The image root someone with shell access gave project ``pid`` (its import folder), or None."""
    return get_setting(conn, pid, TRUSTED_IMAGE_ROOT)


def system_id(conn: Connection, pid: int, name: str, *, create: bool = False) -> int:
    """Id of system ``name`` in project ``pid``; create it if asked, else raise NotFound."""
    sid = conn.execute(select(systems.c.id).where(systems.c.project_id == pid, systems.c.name == name)).scalar()
    if sid is None:
        if not create:
            raise NotFound(f"project has no system called {name!r}")
        sid = insert_if_absent(conn, systems, {"project_id": pid, "name": name})
        if sid is None:  # created by a concurrent import since the lookup above
            sid = conn.execute(select(systems.c.id).where(systems.c.project_id == pid, systems.c.name == name)).scalar_one()
    return sid


#: Batches written between two collections of their garbage (:func:`collect_batch_garbage`).
BATCHES_PER_COLLECTION = 8
_batches_written = itertools.count(1)


def collect_batch_garbage() -> None:
    """During an import (the collector paused by ``annotator.io.importers.paused_gc``), free the reference cycles
    of the batches written last: the database statements they ran (SQLAlchemy's clauses, holding the keys and
    lines they name) are freed only by the collector, and without this an import held them all to its end (a
    streaming JSONL import grew by about 170 bytes an item, near 1 GiB at 4 million). Every
    :data:`BATCHES_PER_COLLECTION` th call, the young generations only: a collection walks the batch being
    written, so collecting after every batch cost about a tenth of an import's CPU time. Outside an import the
    collector runs by itself and nothing is done."""
    if not gc.isenabled() and next(_batches_written) % BATCHES_PER_COLLECTION == 0:
        gc.collect(1)


@dataclass(frozen=True)
class ImportSummary:
    """What an import wrote."""

    project: str
    items_created: int
    references: int
    boxes: int
    captions: int


def write_project(conn: Connection, project: Project, *, source: str = "input") -> ImportSummary:
    """Merge a domain Project into the store inside the caller's transaction.

    New items are created. For an item that exists already, incoming boxes and
    references must be the same as the stored ones (or the stored ones empty),
    and a system may not have two captions with one sample index ``n`` for one
    item; anything else raises InputError, and the caller's transaction rolls
    back so nothing is written. A system's new captions are numbered (line_no)
    after its stored ones of the same sample, in item order: each sample counts
    its own lines, so the annotated captions (whichever n) keep lines 0..N-1.
    """
    writer = ProjectWriter(conn, project, source=source)
    writer.write(project.items)
    return writer.finish()


class ProjectWriter:
    """:func:`write_project` in batches: an import that streams its input writes each batch of items as it is
    read, inside the caller's one transaction, and holds only the batch (and the keys seen so far) in memory.

    ``project`` gives the name and image roots (its items are ignored); :meth:`write` merges a batch of items
    (``locations``: where each came from, for messages); ``given_lines`` ((item key, system, n) → line) orders
    captions by the lines a file gave them: the captions of such a system and sample are numbered in the order
    of those lines by :meth:`finish`, which returns the summary."""

    def __init__(self, conn: Connection, project: Project, *, source: str = "input"):
        if project.image_root is not None:
            # Wherever a root is set, it must be a folder images may be read from (the pages never trust a root).
            from ..images import check_image_root  # (Pillow: heavy, and only for an import that names a root)
            check_image_root(project.image_root, trusted=project.trusted_image_root, source=source)
        # Imports into one project run one after another (PostgreSQL; SQLite admits one writer anyway), so
        # two first imports racing into a new project cannot both create the same items.
        lock_key(conn, f"project:{project.name}")
        self.conn, self.name, self.source = conn, project.name, source
        self.pid = pid = project_id(conn, project.name, create=True, image_root=project.image_root)
        if project.image_root is not None and project.trusted_image_root is not None:
            set_setting(conn, pid, TRUSTED_IMAGE_ROOT, project.trusted_image_root)
        self.next_position = conn.execute(select(func.coalesce(func.max(items.c.position) + 1, 0))
                                          .where(items.c.project_id == pid)).scalar()
        self.first_position = self.next_position  # the items this import creates come from here on
        self.items_read = 0
        self.system_ids: dict[str, int] = {}
        self.next_line: dict[tuple[int, int], int] = {}  # (system id, n) -> next line
        self.ordered: set[tuple[int, int]] = set()  # (system id, n) whose captions are numbered by finish()
        self.counts = [0, 0, 0, 0]  # items created, references, boxes, captions

    def write(self, batch: list[Item], locations=None, given_lines: dict | None = None) -> None:
        """Merge one batch of items (see :func:`write_project`)."""
        collect_batch_garbage()  # the statements of the batch before
        conn, source = self.conn, self.source
        existing = self._stored_items(batch, locations)
        new_items, key_to_id = self._insert_new_items(batch, existing)
        old_boxes, old_refs = _stored_boxes_and_references(
            conn, [key_to_id[i.key] for i in batch if i.key in existing and (i.boxes or i.references)])
        box_rows, ref_rows, cap_rows = [], [], []
        samples_seen: set[tuple[int, str, int]] = set()
        given_at: list[tuple[int, int, int]] = []  # (caption row, item of the batch, given line) of given lines
        for k, item in enumerate(batch):
            iid = key_to_id[item.key]
            where = f"item {item.key!r}"
            box_rows.extend(_new_box_rows(item, iid, old_boxes.get(iid, []), source, where))
            ref_rows.extend(_new_reference_rows(item, iid, old_refs.get(iid, []), source, where))
            for cap in item.captions:
                _check_sample(cap, (iid, cap.system), samples_seen, source, where)
                sid = self._system_id(cap.system)
                given = None if given_lines is None else given_lines.get((item.key, cap.system, cap.n))
                if given is not None:
                    given_at.append((len(cap_rows), k, given))
                cap_rows.append({"item_id": iid, "system_id": sid, "line_no": self._line(sid, cap.n, given),
                                 "text": cap.text, "mentions": encode_mentions(cap.mentions), "n": cap.n})
        _check_caption_mentions(conn, batch, key_to_id, source)
        if cap_rows and existing:
            _refuse_taken_samples(conn, cap_rows, self.system_ids, key_to_id,
                                  [existing[k][0] for k in existing], source)
        if given_at:
            where = [locations[k] if locations is not None else f"record {self.items_read - len(batch) + k + 1}"
                     for _, k, _ in given_at]
            refuse_repeated_lines(conn, cap_rows, given_at, where, self.system_ids, source)
        for table, rows in ((boxes, box_rows), (refs, ref_rows), (captions, cap_rows)):
            _bulk_insert(conn, table, rows)
        for k, n in enumerate((len(new_items), len(ref_rows), len(box_rows), len(cap_rows))):
            self.counts[k] += n

    def finish(self) -> ImportSummary:
        """Number the captions given in line order (after the stored lines of their system and sample)."""
        for sid, sample in sorted(self.ordered):
            number_given_lines(self.conn, sid, sample, self.next_line[(sid, sample)])
        return ImportSummary(self.name, *self.counts)

    def _stored_items(self, batch: list[Item], locations) -> dict[str, tuple[int, int]]:
        """The batch's items that were stored before this import (key → (id, position)); an item key given
        twice in the import is refused: twice in the batch, or once more after this import stored it (its
        position is one this import gave), so no set of every key read is kept."""
        seen: set[str] = set()
        for n, item in enumerate(batch):
            if item.key in seen:
                self._twice(item.key, locations, n)
            seen.add(item.key)
        existing = {}
        for chunk in _chunks([i.key for i in batch]):
            existing.update((r.key, (r.id, r.position)) for r in self.conn.execute(
                select(items.c.key, items.c.id, items.c.position).where(items.c.project_id == self.pid,
                                                                        items.c.key.in_(chunk))))
        for n, item in enumerate(batch):
            if item.key in existing and existing[item.key][1] >= self.first_position:
                self._twice(item.key, locations, n)
        self.items_read += len(batch)
        return existing

    def _twice(self, key: str, locations, n: int):
        where = locations[n] if locations is not None else f"record {self.items_read + n + 1}"
        raise InputError(f"item {key!r} appears twice", self.source, where)

    def _insert_new_items(self, batch: list[Item], existing: dict):
        """Insert the batch's items not stored yet, after the stored ones; return (new item rows, key → id)."""
        first = self.next_position
        new_items = []
        for item in batch:
            if item.key not in existing:
                new_items.append({"project_id": self.pid, "key": item.key, "position": self.next_position,
                                  "image_path": item.image, "width": item.width, "height": item.height,
                                  "is_practice": bool(item.is_practice)})
                self.next_position += 1
        _bulk_insert(self.conn, items, new_items)
        key_to_id = {k: v[0] for k, v in existing.items()}
        if new_items:
            key_to_id.update((r.key, r.id) for r in self.conn.execute(
                select(items.c.key, items.c.id).where(items.c.project_id == self.pid, items.c.position >= first)))
        return new_items, key_to_id

    def _system_id(self, name: str) -> int:
        if name not in self.system_ids:
            self.system_ids[name] = system_id(self.conn, self.pid, name, create=True)
        return self.system_ids[name]

    def _line(self, sid: int, sample: int, given: int | None) -> int:
        """A new caption's line: the next after the stored lines of its system and sample, in the order written;
        with a ``given`` line, a placeholder (-1 - given, unique and below every stored line) that
        :meth:`finish` replaces in the order of the given lines."""
        key = (sid, sample)
        if key not in self.next_line:
            self.next_line[key] = self.conn.execute(select(func.coalesce(func.max(captions.c.line_no) + 1, 0)).where(
                captions.c.system_id == sid, captions.c.n == sample)).scalar()
        if given is not None:
            self.ordered.add(key)
            return -1 - given
        line = self.next_line[key]
        self.next_line[key] += 1
        return line


def _stored_boxes_and_references(conn: Connection, item_ids: list[int]) -> tuple[dict[int, list], dict[int, list]]:
    """The stored boxes and references of items that existed already, to check a merge against."""
    old_boxes: dict[int, list] = {}
    old_refs: dict[int, list] = {}
    for chunk in _chunks(item_ids):
        for r in conn.execute(select(boxes.c.item_id, boxes.c.box_key, boxes.c.label, boxes.c.x, boxes.c.y, boxes.c.w, boxes.c.h).where(boxes.c.item_id.in_(chunk))).all():
            old_boxes.setdefault(r.item_id, []).append((r.box_key, r.label, r.x, r.y, r.w, r.h))
        for r in conn.execute(select(refs.c.item_id, refs.c.text).where(refs.c.item_id.in_(chunk)).order_by(refs.c.item_id, refs.c.position)).all():
            old_refs.setdefault(r.item_id, []).append(r.text)
    return old_boxes, old_refs


def _new_box_rows(item, iid: int, stored: list, source: str, where: str) -> list[dict]:
    """The item's gold boxes to insert: none when the same ones are stored; other stored ones are refused."""
    if not item.boxes:
        return []
    incoming = sorted((b.box_id, b.label, b.x, b.y, b.w, b.h) for b in item.boxes)
    stored = sorted(stored)
    if stored and stored != incoming:
        raise InputError("gold boxes differ from the ones already stored for this item", source, where)
    if stored:
        return []
    ids = [b.box_id for b in item.boxes]
    if len(ids) != len(set(ids)):
        raise InputError("duplicate box id", source, where)
    return [{"item_id": iid, "box_key": b.box_id, "label": b.label, "synset": b.synset,
             "x": b.x, "y": b.y, "w": b.w, "h": b.h} for b in item.boxes]


def _new_reference_rows(item, iid: int, stored: list, source: str, where: str) -> list[dict]:
    """The item's references to insert: none when the same ones are stored; other stored ones are refused."""
    if not item.references:
        return []
    if stored and stored != [r.text for r in item.references]:
        raise InputError("references differ from the ones already stored for this item", source, where)
    if stored:
        return []
    return [{"item_id": iid, "position": k, "text": r.text, "mentions": encode_mentions(r.mentions)}
            for k, r in enumerate(item.references)]


def _check_sample(cap, item_system: tuple[int, str], seen: set, source: str, where: str) -> None:
    """A caption's sample index is a non-negative integer, once per item and system in the input."""
    sample = cap.n
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise InputError(f"sample index n of system {cap.system!r} must be a non-negative integer, "
                         f"got {sample!r}", source, where)
    if (*item_system, sample) in seen:
        raise InputError(f"system {cap.system!r} has two captions with n = {sample} for this item", source, where)
    seen.add((*item_system, sample))


def _refuse_taken_samples(conn: Connection, cap_rows: list[dict], system_ids: dict[str, int],
                          key_to_id: dict[str, int], stored_ids: list[int], source: str) -> None:
    """Refuse a new caption whose (item, system, n) the store holds already, naming the item (``stored_ids``:
    the items of the batch that were stored before it)."""
    name_of = {v: k for k, v in system_ids.items()}
    taken = set()
    for chunk in _chunks(stored_ids):
        taken.update((r.item_id, r.system_id, r.n) for r in conn.execute(
            select(captions.c.item_id, captions.c.system_id, captions.c.n).where(captions.c.item_id.in_(chunk))))
    clashes = [row for row in cap_rows if (row["item_id"], row["system_id"], row["n"]) in taken]
    if clashes:  # the first system's lowest sample first, as a file is read
        order: dict[int, int] = {}
        for row in cap_rows:
            order.setdefault(row["system_id"], len(order))
        row = min(clashes, key=lambda r: (order[r["system_id"]], r["n"]))
        item_key = next(k for k, v in key_to_id.items() if v == row["item_id"])
        sample = f" with n = {row['n']}" if row["n"] else ""
        raise InputError(f"system {name_of[row['system_id']]!r} already has a caption{sample} for this item",
                         source, f"item {item_key!r}")


def _check_caption_mentions(conn: Connection, batch: list[Item], key_to_id: dict[str, int], source: str) -> None:
    """Refuse caption mentions of boxes the item does not have (incoming boxes, else the stored ones)."""
    marked = [i for i in batch if any(c.mentions for c in i.captions)]
    stored: dict[int, set[str]] = {}
    for chunk in _chunks([key_to_id[i.key] for i in marked if not i.boxes]):
        for r in conn.execute(select(boxes.c.item_id, boxes.c.box_key).where(boxes.c.item_id.in_(chunk))):
            stored.setdefault(r.item_id, set()).add(r.box_key)
    for item in marked:
        known = {b.box_id for b in item.boxes} or stored.get(key_to_id[item.key])
        if not known:  # no boxes yet: checked when the captions are scored
            continue
        for c in item.captions:
            check_box_ids(c.mentions, known, f"{source}, item {item.key!r}, caption of system {c.system!r}")


def _bulk_insert(conn: Connection, table, rows: list[dict]) -> None:
    """Insert many rows. On SQLite the statement is compiled once and the rows go to the
    driver as tuples, which skips SQLAlchemy's per-row parameter processing (the bulk of
    an import's CPU time); other databases take SQLAlchemy's executemany path."""
    if not rows:
        return
    if conn.dialect.name != "sqlite":
        for chunk in _chunks(rows):
            conn.execute(table.insert(), chunk)
        return
    cols = list(rows[0])
    sql = f'INSERT INTO {table.name} ({", ".join(cols)}) VALUES ({", ".join("?" for _ in cols)})'
    for chunk in _chunks(rows):
        conn.exec_driver_sql(sql, [tuple(r[c] for c in cols) for r in chunk])


def _chunks(rows, size: int = _CHUNK):
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


def load_project(store: Store, name: str, *, with_captions: bool = True, all_samples: bool = False) -> Project:
    """Read a whole project back as domain objects (items in import order).

    Captions: each system's annotated one per item (:mod:`annotator.store.samples`); with ``all_samples``
    every sample, in line order (exports)."""
    with store.read() as conn:
        pid = project_id(conn, name)
        root = project_image_root(conn, pid)
        trusted = trusted_image_root(conn, pid)
        rows = conn.execute(select(items).where(items.c.project_id == pid).order_by(items.c.position)).all()
        by_id = {}
        out = []
        for r in rows:
            item = Item(key=r.key, image=r.image_path, width=r.width, height=r.height, is_practice=bool(r.is_practice), item_id=r.id)
            by_id[r.id] = item
            out.append(item)
        for b in conn.execute(select(boxes).join(items, boxes.c.item_id == items.c.id).where(items.c.project_id == pid).order_by(boxes.c.id)):
            by_id[b.item_id].boxes.append(Box(b.box_key, b.label, b.x, b.y, b.w, b.h, b.synset))
        for r in conn.execute(select(refs).join(items, refs.c.item_id == items.c.id).where(items.c.project_id == pid).order_by(refs.c.item_id, refs.c.position)):
            by_id[r.item_id].references.append(Reference(r.text, decode_mentions(r.mentions)))
        if with_captions:
            q = (select(captions.c.id, captions.c.item_id, captions.c.text, captions.c.mentions, captions.c.line_no,
                        captions.c.n, systems.c.name)
                 .join(systems, captions.c.system_id == systems.c.id).where(systems.c.project_id == pid)
                 .order_by(systems.c.id, captions.c.n, captions.c.line_no))
            if not all_samples:
                q = q.where(project_annotated_sample(conn, pid))
            for c in conn.execute(q):
                by_id[c.item_id].captions.append(Caption(c.name, c.text, decode_mentions(c.mentions), caption_id=c.id,
                                                         line=c.line_no, n=c.n))
    return Project(name=name, image_root=root, items=out, trusted_image_root=trusted)


def project_summaries(store: Store) -> list[dict]:
    """Per project: items, systems, captions, references and current judgements counts."""
    out = []
    with store.read() as conn:
        for p in conn.execute(select(projects.c.id, projects.c.name, projects.c.image_root).order_by(projects.c.name)):
            n_items = conn.execute(select(func.count()).select_from(items).where(items.c.project_id == p.id)).scalar()
            sys_names = [r[0] for r in conn.execute(select(systems.c.name).where(systems.c.project_id == p.id).order_by(systems.c.id))]
            n_caps = conn.execute(select(func.count()).select_from(captions.join(systems, captions.c.system_id == systems.c.id)).where(systems.c.project_id == p.id)).scalar()
            n_refs = conn.execute(select(func.count()).select_from(refs.join(items, refs.c.item_id == items.c.id)).where(items.c.project_id == p.id)).scalar()
            n_judg = conn.execute(select(func.count()).select_from(
                current_judgements.join(captions, current_judgements.c.caption_id == captions.c.id).join(systems, captions.c.system_id == systems.c.id))
                .where(systems.c.project_id == p.id, current_judgements.c.label.is_not(None))).scalar()
            out.append({"project": p.name, "image_root": p.image_root, "items": n_items, "systems": sys_names,
                        "captions": n_caps, "references": n_refs, "judgements": n_judg})
    return out


def captions_of_system(conn: Connection, pid: int, system: str) -> list:
    """Rows (id, item_id, line_no, text) of one system's annotated captions (one per item,
    :mod:`annotator.store.samples`), in line order."""
    sid = system_id(conn, pid, system)
    return conn.execute(select(captions.c.id, captions.c.item_id, captions.c.line_no, captions.c.text)
                        .where(captions.c.system_id == sid, project_annotated_sample(conn, pid))
                        .order_by(captions.c.line_no)).all()


def system_captions_in_chunks(conn: Connection, pid: int, system: str, size: int = _CHUNK):
    """:func:`captions_of_system` ``size`` rows at a time (each chunk read when the one before is used up), so
    that memory holds a chunk and not the system's captions."""
    sid = system_id(conn, pid, system)
    q = select(captions.c.id, captions.c.item_id, captions.c.line_no, captions.c.text).where(
        captions.c.system_id == sid, project_annotated_sample(conn, pid))
    yield from keyset_chunks(conn, q, (captions.c.line_no,), size)


def practice_marks(conn: Connection, pid: int) -> tuple[int, int]:
    """(count, sum of ids) of project ``pid``'s practice items: what the version checks compare to see a
    change of practice marks (one walk of the practice index of migration 11)."""
    row = conn.execute(select(func.count(), func.coalesce(func.sum(items.c.id), 0))
                       .where(items.c.project_id == pid, items.c.is_practice.is_(True))).one()
    return int(row[0]), int(row[1])


def set_practice(store: Store, project: str, item_keys, practice: bool = True) -> int:
    """Mark items as practice/guideline examples (left out of agreement); return rows changed."""
    keys = list(item_keys)
    with store.transaction() as conn:
        pid = project_id(conn, project)
        found = {r[0] for r in conn.execute(select(items.c.key).where(items.c.project_id == pid, items.c.key.in_(keys)))}
        missing = [k for k in keys if k not in found]
        if missing:
            raise NotFound(f"project {project!r} has no item {missing[0]!r}")
        changed = conn.execute(items.update().where(items.c.project_id == pid, items.c.key.in_(keys))
                               .values(is_practice=practice)).rowcount
        from .queue_tallies import recount
        recount(conn, pid)  # practice items never wait for a fine pass
        return changed


def table_counts(store: Store) -> dict[str, int]:
    """Row count of every table (used by tests to prove a failed import wrote nothing)."""
    from .schema import metadata
    with store.read() as conn:
        return {t.name: conn.execute(select(func.count()).select_from(t)).scalar() for t in metadata.sorted_tables}
