"""``annotator import <format> …`` and ``annotator export``.

The import commands are built from the importer catalog (:mod:`annotator.exchange.catalog`):
one subcommand per format, its flags from the format's declared options.
Every import is all-or-nothing: bad input prints one message naming the file
and line/record on stderr, exits with code 2 and leaves the database as it was.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ..exchange.catalog import formats
from ..report import json_text
from . import add_json_flag


def register(sub) -> None:
    imp = sub.add_parser("import", help="import captions, references, boxes, judgements or corrections")
    fmt_sub = imp.add_subparsers(dest="format", metavar="FORMAT", required=True)
    for fmt in formats():
        add_format_command(fmt_sub, fmt, fmt.name)

    p = sub.add_parser("export", help="export a project (native JSONL, or Label Studio tasks)",
                       description="`annotator export --project P --format jsonl` writes the native JSONL; "
                                   "`annotator export label-studio --project P --output tasks.json` writes Label "
                                   "Studio's JSON task list (and with --config its labeling config).")
    p.add_argument("target", nargs="?", choices=["label-studio"], default=None,
                   help="label-studio: Label Studio's task list instead of the native JSONL")
    p.add_argument("--project", required=True)
    p.add_argument("--format", choices=["jsonl"], default=None, help="the native JSONL (the default)")
    p.add_argument("--output", metavar="FILE", help="write here instead of standard output")
    p.add_argument("--system", default=None, help="label-studio: only this system's captions")
    p.add_argument("--layer", default=None,
                   help="label-studio: only the judgements this layer rests on ('adjudicated', 'consensus', "
                        "'annotator:NAME'); default every current judgement")
    p.add_argument("--config", metavar="FILE", default=None,
                   help="label-studio: also write the labeling config (XML) that shows these tasks")
    p.add_argument("--image-prefix", default="",
                   help="label-studio: put this before each image path, where Label Studio finds the pictures (e.g. "
                        "'/data/local-files/?d=sample/' for its local files, see docs/formats.md)")
    p.add_argument("--predictions", action="store_true",
                   help="label-studio: add the automatic detectors' flags and trigger words as predictions")
    p.add_argument("--email-domain", metavar="DOMAIN", default=None,
                   help="label-studio: accounts without an e-mail address get NAME@DOMAIN (recorded on the account); "
                        "without it such accounts refuse the export")
    p.add_argument("--blind", action="store_true",
                   help="label-studio: no system name and no predictions, one task per caption and annotator (nobody "
                        "starts from another's annotation)")
    add_json_flag(p)
    p.set_defaults(func=_export)


def add_format_command(subparsers, fmt, name: str):
    """The command that imports format ``fmt`` (registered as ``name`` under ``subparsers``)."""
    p = subparsers.add_parser(name, help=fmt.help, description=fmt.description)
    p.add_argument("--project", required=True)
    add_format_options(p, fmt.options, fmt.dest_prefix)
    add_json_flag(p)
    p.set_defaults(func=lambda args, ctx: _import(fmt, args, ctx), creates_store=fmt.creates_store)
    return p


def add_format_options(p, options, dest_prefix: str = "") -> None:
    """One argument per declared option, stored under ``dest_prefix + option.name``."""
    for o in options:
        dest = dest_prefix + o.name
        if o.flag is None:
            p.add_argument(dest, metavar=o.metavar, help=o.help)
        elif o.kind == "switch" and o.cli_values:
            p.add_argument(o.flag, dest=dest, choices=list(o.cli_values), default=o.cli_values[0], help=o.help)
        elif o.kind == "switch":
            p.add_argument(o.flag, dest=dest, action="store_true", help=o.help)
        else:
            p.add_argument(o.flag, dest=dest, required=o.required, metavar=o.metavar, help=o.help,
                           nargs="+" if o.kind == "files" else None, type=int if o.kind == "integer" else None)


def format_values(args, options, dest_prefix: str = "") -> dict:
    """The run function's keyword values from the parsed options."""
    return {o.name: o.value(getattr(args, dest_prefix + o.name)) for o in options}


def _import(fmt, args, ctx) -> int:
    result = fmt.run(ctx.store(), args.project, command_line=True, **format_values(args, fmt.options, fmt.dest_prefix))
    ctx.emit(result, result.describe())
    return 0


def _write_atomic(out: Path, write) -> None:
    """Write a file next to ``out`` and rename it into place, so a failed export never leaves half a file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            write(fh)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _export_label_studio(args, ctx) -> int:
    from ..errors import InputError
    from ..exchange.label_studio import label_studio_tasks
    from ..io.label_studio import labeling_config, write_label_studio
    if args.format is not None:
        raise InputError("label-studio writes Label Studio's JSON; leave out --format", "--format")
    if args.blind and args.predictions:
        raise InputError("--blind leaves the detectors' predictions out; leave out --predictions", "--predictions")
    tasks = label_studio_tasks(ctx.store(), args.project, system=args.system, layer=args.layer,
                               image_prefix=args.image_prefix, predictions=args.predictions,
                               email_domain=args.email_domain, blind=args.blind)
    written = []  # the tasks are read from the store as they are written (memory holds a chunk of them)
    if args.output is None:
        written = write_label_studio(tasks, ctx.data_out())
    else:
        _write_atomic(Path(args.output), lambda fh: written.extend(write_label_studio(tasks, fh)))
    if args.config:
        _write_atomic(Path(args.config), lambda fh: fh.write(labeling_config(blind=args.blind)))
    summary = {"project": args.project, "format": "label-studio", "tasks": written[0],
               "annotations": written[1], "output": args.output, "config": args.config}
    if args.output is None:
        if args.json:
            ctx.note(json_text(summary))
        return 0
    ctx.emit(summary, f"exported {summary['tasks']} tasks with {summary['annotations']} annotations of "
                      f"{args.project!r} to {args.output}" + (f" and the labeling config to {args.config}"
                                                               if args.config else ""))
    return 0


def _export(args, ctx) -> int:
    from ..errors import InputError
    from ..io import export_jsonl
    if args.target == "label-studio":
        return _export_label_studio(args, ctx)
    for flag in ("system", "layer", "config"):
        if getattr(args, flag):
            raise InputError(f"--{flag} belongs to 'export label-studio'", f"--{flag}")
    if args.image_prefix or args.predictions or args.email_domain or args.blind:
        raise InputError("--image-prefix, --predictions, --email-domain and --blind belong to 'export label-studio'",
                         "export")
    store = ctx.store()
    if args.output is None:
        if hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(encoding="utf-8")
        try:
            n = export_jsonl(store, args.project, ctx.data_out(json_lines=True))
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader stopped early (e.g. `| head`): not an error of ours.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 0
        if args.json:  # stdout carries the data, so the summary goes to stderr
            ctx.note(json_text({"project": args.project, "format": "jsonl", "items": n, "output": None}))
        return 0
    out = Path(args.output)
    written = []
    _write_atomic(out, lambda fh: written.append(export_jsonl(store, args.project, fh)))
    n = written[0]
    ctx.emit({"project": args.project, "format": "jsonl", "items": n, "output": str(out)},
             f"exported {n} items of {args.project!r} to {out}")
    return 0
