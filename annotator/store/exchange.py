"""Queries the importers and the exporter need beyond the repository modules."""

from __future__ import annotations

from typing import Iterator

from sqlalchemy import Connection, select

from . import Store
from .codec import decode_types
from .projects import project_id
from .schema import captions, corrections, current_corrections, current_judgements, projects, systems


def has_projects(conn: Connection) -> bool:
    """True when the store holds at least one project."""
    return conn.execute(select(projects.c.id).limit(1)).first() is not None


def caption_lines(conn: Connection, pid: int) -> dict[int, tuple[str, int]]:
    """caption id → (system name, 0-based line) for every caption of a project."""
    q = (select(captions.c.id, systems.c.name, captions.c.line_no)
         .join(systems, systems.c.id == captions.c.system_id).where(systems.c.project_id == pid))
    return {r.id: (r.name, r.line_no) for r in conn.execute(q)}


def project_caption_lines(store: Store, project: str) -> dict[int, tuple[str, int]]:
    """:func:`caption_lines` of project ``project`` (NotFound for an unknown one), read in a connection of its own."""
    with store.read() as conn:
        return caption_lines(conn, project_id(conn, project))


def current_annotations(conn: Connection, user_id: int, caption_ids) -> dict[int, tuple[str | None, tuple[str, ...]]]:
    """caption id → (label, error type ids) of a user's current own (annotation-kind) judgements."""
    out = {}
    ids = list(caption_ids)
    for start in range(0, len(ids), 5000):
        chunk = ids[start:start + 5000]
        q = select(current_judgements.c.caption_id, current_judgements.c.label, current_judgements.c.error_types).where(
            current_judgements.c.user_id == user_id, current_judgements.c.kind == "annotation",
            current_judgements.c.caption_id.in_(chunk))
        for r in conn.execute(q):
            out[r.caption_id] = (r.label, decode_types(r.error_types))
    return out


def current_correction_texts(conn: Connection, user_id: int, error_type: str, caption_ids) -> dict[int, str | None]:
    """caption id → corrected text of a user's current correction for one error type."""
    out = {}
    ids = list(caption_ids)
    for start in range(0, len(ids), 5000):
        chunk = ids[start:start + 5000]
        q = (select(current_corrections.c.caption_id, corrections.c.corrected_text)
             .join(corrections, corrections.c.id == current_corrections.c.correction_id)
             .where(current_corrections.c.user_id == user_id, current_corrections.c.error_type == error_type,
                    current_corrections.c.caption_id.in_(chunk)))
        for r in conn.execute(q):
            out[r.caption_id] = r.corrected_text
    return out


def judgement_records(conn: Connection, pid: int, *, history: bool = False, user_keys: list[str] | None = None,
                      system: str | None = None, kinds=None, item_ids=None) -> list:
    """Judgement rows of a project with what a person needs to read them, in project order (system, item,
    annotator, kind, revision).

    Each row: judgement_id, caption_id, user_id, system, item, line, caption, annotator, kind, label,
    error_types (stored form), note, seconds, revision, saved_at, spans (stored form), suggested (True when the
    annotate panel opened pre-filled from a judge's suggestion, False when not, None when nothing was recorded).
    Only current revisions unless ``history``;
    ``user_keys`` (store.users.user_name_key of the names), ``system``, ``kinds`` and ``item_ids`` (a chunk of
    items, :func:`items_in_chunks`) filter.
    """
    from .schema import items, judgements, users
    j = judgements
    source = (j.join(captions, captions.c.id == j.c.caption_id).join(systems, systems.c.id == captions.c.system_id)
              .join(items, items.c.id == captions.c.item_id).join(users, users.c.id == j.c.user_id))
    if not history:
        source = source.join(current_judgements, current_judgements.c.judgement_id == j.c.id)
    q = (select(j.c.id, j.c.caption_id, j.c.user_id, systems.c.name.label("system"), items.c.key.label("item"),
                captions.c.line_no.label("line"), captions.c.text.label("caption"), users.c.name.label("annotator"),
                j.c.kind, j.c.label, j.c.error_types, j.c.note, j.c.seconds, j.c.revision, j.c.created_at.label("saved_at"), j.c.spans,
                j.c.suggested)
         .select_from(source).where(systems.c.project_id == pid))
    if user_keys is not None:
        q = q.where(users.c.name_key.in_(list(user_keys)))
    if system is not None:
        q = q.where(systems.c.name == system)
    if kinds is not None:
        q = q.where(j.c.kind.in_(list(kinds)))
    if item_ids is not None:
        q = q.where(items.c.id.in_(list(item_ids)))
    return conn.execute(q.order_by(systems.c.id, items.c.position, users.c.name, j.c.kind, j.c.revision)).all()


def project_caption_index(conn: Connection, pid: int) -> dict[tuple[str, str], tuple[int, int, str]]:
    """(system name, item key) → (caption id, 0-based line, text) for each system's annotated caption of each
    item of a project (:mod:`annotator.store.samples`): the whole index in memory (the imports look captions up a
    batch at a time instead, :func:`caption_index_of`, or read them a chunk at a time,
    :func:`project_captions_in_chunks`)."""
    return {(system, key): (cid, line, text) for chunk in project_captions_in_chunks(conn, pid)
            for system, key, cid, line, text in chunk}


def project_captions_in_chunks(conn: Connection, pid: int, size: int = 5000) -> Iterator[list[tuple]]:
    """(system name, item key, caption id, 0-based line, text) of each system's annotated caption of each item of
    a project (:mod:`annotator.store.samples`), ``size`` rows at a time in caption id order (each chunk read when
    the one before is used up): memory holds a chunk, not the project's captions."""
    from .rows import keyset_chunks
    from .samples import project_annotated_sample
    from .schema import items
    q = (select(systems.c.name, items.c.key, captions.c.id, captions.c.line_no, captions.c.text)
         .select_from(captions.join(systems, systems.c.id == captions.c.system_id)
                      .join(items, items.c.id == captions.c.item_id))
         .where(systems.c.project_id == pid, project_annotated_sample(conn, pid)))
    for rows in keyset_chunks(conn, q, (captions.c.id,), size):
        yield [tuple(r) for r in rows]


def judgement_annotators(conn: Connection, pid: int, *, system: str | None = None) -> list[str]:
    """The names of the people with a current judgement of project ``pid`` (``system``: of that system's
    captions), without reading the judgements."""
    from .schema import users
    j = current_judgements
    q = (select(users.c.name).distinct()
         .select_from(j.join(captions, captions.c.id == j.c.caption_id)
                      .join(systems, systems.c.id == captions.c.system_id).join(users, users.c.id == j.c.user_id))
         .where(systems.c.project_id == pid))
    if system is not None:
        q = q.where(systems.c.name == system)
    return [r[0] for r in conn.execute(q)]


def items_in_chunks(conn: Connection, pid: int, size: int = 2000) -> Iterator[list]:
    """Rows (id, key, image_path) of a project's items in import order (position), ``size`` at a time (each
    chunk read when the one before is used up): memory holds a chunk, not the project."""
    from .rows import keyset_chunks
    from .schema import items
    q = select(items.c.id, items.c.key, items.c.image_path, items.c.position).where(items.c.project_id == pid)
    yield from keyset_chunks(conn, q, (items.c.position, items.c.id), size)


def references_of_items(conn: Connection, item_ids) -> dict[int, list[str]]:
    """item id → its references' texts in order, for a chunk of items."""
    from .schema import refs
    out: dict[int, list[str]] = {}
    for r in conn.execute(select(refs.c.item_id, refs.c.text).where(refs.c.item_id.in_(list(item_ids)))
                          .order_by(refs.c.item_id, refs.c.position)):
        out.setdefault(r.item_id, []).append(r.text)
    return out


def annotated_captions_of_items(conn: Connection, pid: int, item_ids, system: str | None = None) -> dict[int, list]:
    """item id → rows (id, system, line_no, text) of its annotated captions (:mod:`annotator.store.samples`) in
    the order a loaded project gives them (system, sample, line), for a chunk of items."""
    from .samples import project_annotated_sample
    q = (select(captions.c.id, captions.c.item_id, systems.c.name.label("system"), captions.c.line_no,
                captions.c.text)
         .join(systems, captions.c.system_id == systems.c.id)
         .where(systems.c.project_id == pid, project_annotated_sample(conn, pid),
                captions.c.item_id.in_(list(item_ids))))
    if system is not None:
        q = q.where(systems.c.name == system)
    out: dict[int, list] = {}
    for r in conn.execute(q.order_by(systems.c.id, captions.c.n, captions.c.line_no)):
        out.setdefault(r.item_id, []).append(r)
    return out


def caption_index_of(conn: Connection, pid: int, by_item, by_line) -> tuple[dict, dict]:
    """The annotated captions asked for only, a batch of an import at a time: ((system, item key) → (caption id,
    line, text) for the pairs of ``by_item``, (system, line) → the same for the pairs of ``by_line``)."""
    from .samples import project_annotated_sample
    from .schema import items
    annotated = project_annotated_sample(conn, pid)
    joined = (captions.join(systems, systems.c.id == captions.c.system_id)
              .join(items, items.c.id == captions.c.item_id))
    cols = (systems.c.name, items.c.key, captions.c.id, captions.c.line_no, captions.c.text)
    items_of: dict[str, list] = {}
    for system, key in by_item:
        items_of.setdefault(system, []).append(key)
    lines_of: dict[str, list] = {}
    for system, line in by_line:
        lines_of.setdefault(system, []).append(line)
    index, at_line = {}, {}
    for wanted, column, out, pick in ((items_of, items.c.key, index, 1), (lines_of, captions.c.line_no, at_line, 3)):
        for system, values in wanted.items():
            values = sorted(values)
            for start in range(0, len(values), 5000):
                q = select(*cols).select_from(joined).where(systems.c.project_id == pid, systems.c.name == system,
                                                            annotated, column.in_(values[start:start + 5000]))
                out.update(((r[0], r[pick]), (r[2], r[3], r[4])) for r in conn.execute(q))
    return index, at_line


def stored_revisions(conn: Connection, caption_ids) -> dict[tuple[int, int, str], dict[int, tuple]]:
    """(caption id, user id, kind) → {revision: (label, error type ids, note, seconds, spans)} of every
    judgement revision of the given captions."""
    from ..spans import decode_spans
    from .schema import judgements
    out: dict = {}
    ids = sorted(set(caption_ids))
    for start in range(0, len(ids), 5000):
        q = (select(judgements.c.caption_id, judgements.c.user_id, judgements.c.kind, judgements.c.revision,
                    judgements.c.label, judgements.c.error_types, judgements.c.note, judgements.c.seconds, judgements.c.spans)
             .where(judgements.c.caption_id.in_(ids[start:start + 5000])))
        for r in conn.execute(q):
            out.setdefault((r[0], r[1], r[2]), {})[int(r[3])] = (r[4], decode_types(r[5]), r[6] or "", float(r[7] or 0.0),
                                                          decode_spans(r[8]))
    return out
