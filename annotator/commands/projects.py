"""``annotator init`` and ``annotator projects``."""

from __future__ import annotations

from . import add_json_flag


def register(sub) -> None:
    p = sub.add_parser("init", help="create (or migrate) the database")
    add_json_flag(p)
    p.set_defaults(func=_init, creates_store=True)
    p = sub.add_parser("projects", help="list projects with their item, caption and judgement counts")
    add_json_flag(p)
    p.set_defaults(func=_projects)


def _init(args, ctx) -> int:
    store = ctx.store()
    ctx.emit({"database": repr(store), "integrity": store.integrity_check()}, f"database ready: {store!r}")
    return 0


def _projects(args, ctx) -> int:
    from ..store.projects import project_summaries
    rows = project_summaries(ctx.store())
    lines = [f"{r['project']}: {r['items']} items, {r['captions']} captions ({', '.join(r['systems']) or 'no systems'}), "
             f"{r['references']} references, {r['judgements']} judgements" for r in rows] or ["no projects"]
    ctx.emit(rows, "\n".join(lines))
    return 0
