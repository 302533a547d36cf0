"""Read the texts lexical-diversity analysis needs: a project's references and its systems' captions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from sqlalchemy import func, select

from ..errors import NotFound
from . import Store
from .projects import project_id, project_system_names
from .schema import captions, items, refs, systems

__all__ = ["CaptionText", "reference_texts", "references_by_item", "caption_texts", "item_keys", "texts_fingerprint"]


@dataclass(frozen=True)
class CaptionText:
    """One stored caption with the keys human scores can refer to it by."""

    caption_id: int
    item_key: str
    line_no: int
    text: str
    n: int = 0  # the sample index among the system's descriptions of the item


def reference_texts(store: Store, project: str) -> list[str]:
    """Every reference description of the project, in item order then reference order."""
    with store.read() as conn:
        pid = project_id(conn, project)
        q = (select(refs.c.text).select_from(refs.join(items, refs.c.item_id == items.c.id))
             .where(items.c.project_id == pid).order_by(items.c.position, refs.c.position))
        return [r[0] for r in conn.execute(q)]


def caption_texts(store: Store, project: str, names: Sequence[str] | None = None, *,
                  annotated_only: bool = False) -> dict[str, list[CaptionText]]:
    """Captions per system (sample 0 in line order, then sample 1, …); ``names`` restricts and orders the systems.

    Every sample of a system is read (its pool of descriptions: diversity, rich-sparse, µ and Lg read them
    all); ``annotated_only`` keeps the one caption per item that annotation and human scores are about
    (:mod:`annotator.store.samples`). Raises NotFound for a system name the project does not have.
    """
    from .samples import project_annotated_sample
    with store.read() as conn:
        pid = project_id(conn, project)
        known = project_system_names(conn, pid)
        wanted = list(dict.fromkeys(names)) if names else known
        for name in wanted:
            if name not in known:
                raise NotFound(f"project {project!r} has no system called {name!r}"
                               + (f" (it has: {', '.join(known)})" if known else " (it has no captions yet)"))
        out: dict[str, list[CaptionText]] = {name: [] for name in wanted}
        if not wanted:
            return out
        q = (select(systems.c.name, captions.c.id, items.c.key, captions.c.line_no, captions.c.text, captions.c.n)
             .select_from(captions.join(systems, captions.c.system_id == systems.c.id)
                          .join(items, items.c.id == captions.c.item_id))
             .where(systems.c.project_id == pid, systems.c.name.in_(wanted))
             .order_by(systems.c.id, captions.c.n, captions.c.line_no))
        if annotated_only:
            q = q.where(project_annotated_sample(conn, pid))
        for name, cid, key, line_no, text, n in conn.execute(q):
            out[name].append(CaptionText(cid, key, line_no, text, n))
        return out


def item_keys(store: Store, project: str) -> list[str]:
    """The project's item keys in item order (NotFound for an unknown project)."""
    with store.read() as conn:
        pid = project_id(conn, project)
        return [r[0] for r in conn.execute(select(items.c.key).where(items.c.project_id == pid).order_by(items.c.position))]


def texts_fingerprint(store: Store, project: str) -> tuple:
    """A cheap value that changes when the project's references or captions change (for caches)."""
    with store.read() as conn:
        pid = project_id(conn, project)
        rf = conn.execute(select(func.count(), func.max(refs.c.id)).select_from(refs.join(items, refs.c.item_id == items.c.id))
                          .where(items.c.project_id == pid)).one()
        cp = conn.execute(select(func.count(), func.max(captions.c.id))
                          .select_from(captions.join(systems, captions.c.system_id == systems.c.id))
                          .where(systems.c.project_id == pid)).one()
    return (pid, *tuple(rf), *tuple(cp))


def references_by_item(store: Store, project: str) -> dict[str, list[str]]:
    """Item key → its reference descriptions in order (items without references are absent)."""
    with store.read() as conn:
        pid = project_id(conn, project)
        q = (select(items.c.key, refs.c.text).select_from(refs.join(items, refs.c.item_id == items.c.id))
             .where(items.c.project_id == pid).order_by(items.c.position, refs.c.position))
        out: dict[str, list[str]] = {}
        for key, text in conn.execute(q):
            out.setdefault(key, []).append(text)
        return out
