"""``annotator backup [--output FILE]`` and ``annotator restore FILE``: SQLite backups.

Both work while the app is running. On PostgreSQL they explain the
pg_dump / pg_restore commands to use instead and exit with code 1.
"""

from __future__ import annotations

from . import add_json_flag


def register(sub) -> None:
    p = sub.add_parser("backup", help="copy the SQLite database to a backup file (safe while the app runs)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="where to write the backup (default: backups/<name>-<UTC time>.db next to the database)")
    add_json_flag(p)
    p.set_defaults(func=_backup)
    p = sub.add_parser("restore", help="replace the SQLite database with a backup file (keeps a safety copy first)")
    p.add_argument("file", metavar="FILE", help="a backup made by `annotator backup`")
    p.add_argument("--no-safety-copy", action="store_true", help="do not back up the current database before restoring")
    add_json_flag(p)
    p.set_defaults(func=_restore)


def _backup(args, ctx) -> int:
    from ..backup import backup
    # ctx.url(), not ctx.store(): backup must not open, change or create the database it copies.
    r = backup(ctx.url(), args.output)
    ctx.emit(r, f"backup written: {r.path} ({r.bytes:,} bytes, integrity {r.integrity}, schema version "
                f"{r.schema_version}, {r.current_judgements:,} current judgements, {r.judgements:,} revisions)")
    return 0


def _restore(args, ctx) -> int:
    from ..backup import restore
    r = restore(args.file, ctx.url(), safety_copy=not args.no_safety_copy)
    kept = f"; the previous database was kept as {r.safety_copy}" if r.safety_copy else ""
    ctx.emit(r, f"restored {args.file} into {r.path} (integrity {r.integrity}, {r.current_judgements:,} current "
                f"judgements, {r.judgements:,} revisions){kept}")
    return 0
