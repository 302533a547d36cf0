"""``annotator judgements export``: every judgement of a project, one row per caption judgement.

    annotator judgements export --project P --format csv --output judgements.csv
    annotator judgements export --project P --annotator ali sam --system S --format jsonl > ali-sam.jsonl
    annotator judgements export --project P --layer adjudicated --history --format xlsx --output decided.xlsx

The JSONL file reads back with ``annotator import jsonl --project P FILE`` (same judgements, revisions and
times); CSV and XLSX are for people.
"""

from __future__ import annotations

from . import add_json_flag


def register(sub) -> None:
    """Add ``judgements export`` to the CLI."""
    from ..judgement_export import EXPORT_FORMATS
    from .tables import add_raw_csv_flag
    top = sub.add_parser("judgements", help="export every judgement of a project, one row per caption judgement")
    inner = top.add_subparsers(dest="judgements_command", metavar="ACTION")
    p = inner.add_parser(
        "export", help="one row per current judgement (or every revision): caption, annotator, label, types, "
                       "note, seconds, revision, time",
        description="Columns: project, system, item, line, caption, annotator, kind, label (empty: skipped), "
                    "error_types (ids joined by ';' in CSV/XLSX, a list in JSONL), note, seconds, revision, "
                    "saved_at. The JSONL file reads back with `annotator import jsonl`.")
    p.add_argument("--project", required=True)
    p.add_argument("--annotator", nargs="+", action="extend", metavar="A",
                   help="only these users' judgements (annotations and adjudications)")
    p.add_argument("--layer", metavar="LAYER",
                   help="only the judgements a layer's decisions rest on: 'adjudicated', 'consensus' or "
                        "'annotator:NAME'")
    p.add_argument("--system", metavar="S", help="only this system's captions")
    p.add_argument("--history", action="store_true", help="every revision, not only the current judgements")
    p.add_argument("--format", required=True, choices=EXPORT_FORMATS)
    p.add_argument("--output", metavar="FILE", default=None,
                   help="file to write (default: standard output; xlsx to stdout only when it is not a terminal)")
    add_raw_csv_flag(p)
    add_json_flag(p)
    p.set_defaults(func=_export)
    top.set_defaults(func=lambda args, ctx: (top.print_help(), 1)[1])


def _export(args, ctx) -> int:
    from ..judgement_export import export_judgements
    from .tables import write_data
    export = export_judgements(ctx.store(), args.project, annotators=args.annotator, layer=args.layer,
                               system=args.system, history=args.history)
    write_data(export.to_bytes(args.format, raw_csv=args.raw_csv), args, ctx)
    if args.json and args.output:
        ctx.emit({**export.summary(), "format": args.format, "output": args.output})
    elif args.output:
        ctx.note(f"{len(export)} judgement {'revisions' if args.history else 'rows'} of {args.project!r}")
    return 0
