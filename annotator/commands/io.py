"""``annotator import <format> …`` and ``annotator export``.

Every import is all-or-nothing: bad input prints one message naming the file
and line/record on stderr, exits with code 2 and leaves the database as it was.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ..cli import add_json_flag, json_text


IMAGE_ROOT_HELP = ("the folder image names are relative to: any folder, unless ANNOTATOR_IMAGE_ROOTS lists the "
                   "allowed ones")


def register(sub) -> None:
    imp = sub.add_parser("import", help="import captions, references, boxes, judgements or corrections")
    fmt = imp.add_subparsers(dest="format", metavar="FORMAT", required=True)

    p = fmt.add_parser("lines", help="line-aligned text files: one caption per line, N reference files, optional image list")
    p.add_argument("--project", required=True)
    p.add_argument("--system", required=True, help="name of the system that produced the captions")
    p.add_argument("--captions", required=True, metavar="FILE")
    p.add_argument("--references", required=True, nargs="+", metavar="FILE")
    p.add_argument("--images", metavar="FILE", help="image file names, one per line (they become the item keys)")
    p.add_argument("--image-root", metavar="DIR", help=IMAGE_ROOT_HELP)
    _add_mentions_option(p)
    add_json_flag(p)
    p.set_defaults(func=_lines, creates_store=True)

    p = fmt.add_parser("coco", help="COCO captions + instances JSON, optionally a results JSON of one system")
    p.add_argument("--project", required=True)
    p.add_argument("--captions-json", required=True, metavar="F")
    p.add_argument("--instances-json", required=True, metavar="F")
    p.add_argument("--results", metavar="F", help='a system\'s captions: [{"image_id", "caption"}, …]')
    p.add_argument("--system", help="name of the system of --results")
    p.add_argument("--image-root", metavar="DIR", help=IMAGE_ROOT_HELP)
    _add_mentions_option(p)
    add_json_flag(p)
    p.set_defaults(func=_coco, creates_store=True)

    p = fmt.add_parser("flickr30k", help="Flickr30K Entities: ROOT/Sentences/*.txt and ROOT/Annotations/*.xml")
    p.add_argument("--project", required=True)
    p.add_argument("--root", required=True, metavar="DIR")
    p.add_argument("--ids", metavar="FILE", help="image ids to import, one per line (default: every sentence file)")
    p.add_argument("--image-root", metavar="DIR", help=IMAGE_ROOT_HELP)
    add_json_flag(p)
    p.set_defaults(func=_flickr30k, creates_store=True)

    p = fmt.add_parser("jsonl", help="the native JSONL format (see docs/formats.md)")
    p.add_argument("--project", required=True)
    p.add_argument("file", metavar="FILE")
    p.add_argument("--image-root", metavar="DIR", help="override the image root given in the file's header; "
                   + IMAGE_ROOT_HELP)
    add_json_flag(p)
    p.set_defaults(func=_jsonl, creates_store=True)

    p = fmt.add_parser("judgements", help="coarse/fine judgement JSON files of the original error-analysis tool")
    p.add_argument("--project", required=True)
    p.add_argument("--system", required=True)
    p.add_argument("--annotator", required=True, help="user the judgements belong to (created if unknown)")
    p.add_argument("--coarse", required=True, metavar="FILE")
    p.add_argument("--fine", metavar="FILE")
    add_json_flag(p)
    p.set_defaults(func=_judgements)

    p = fmt.add_parser("corrections", help="a corrected full copy of a system's captions, for one error type")
    p.add_argument("--project", required=True)
    p.add_argument("--system", required=True)
    p.add_argument("--error-type", required=True, metavar="ID")
    p.add_argument("--captions", required=True, metavar="FILE")
    p.add_argument("--annotator", help="user the corrections belong to (default: corrector)")
    add_json_flag(p)
    p.set_defaults(func=_corrections)

    from .diversity import add_human_scores_import_parser
    add_human_scores_import_parser(fmt, "human-scores")

    p = sub.add_parser("export", help="export a project")
    p.add_argument("--project", required=True)
    p.add_argument("--format", required=True, choices=["jsonl"])
    p.add_argument("--output", metavar="FILE", help="write here instead of standard output")
    add_json_flag(p)
    p.set_defaults(func=_export)


def _add_mentions_option(p) -> None:
    p.add_argument("--mentions", choices=["none", "inline"], default="none",
                   help="'inline': the captions carry box correspondences as [words|box ids] and are stored as plain "
                        "text with their mentions; 'none' (default): captions are text exactly as written")


def _done(ctx, result) -> int:
    ctx.emit(result, result.describe())
    return 0


def _lines(args, ctx) -> int:
    from ..io import import_lines
    return _done(ctx, import_lines(ctx.store(), args.project, args.system, args.captions, args.references,
                                   images=args.images, image_root=args.image_root,
                                   inline_mentions=args.mentions == "inline", trust_root=True))


def _coco(args, ctx) -> int:
    from ..io import import_coco
    return _done(ctx, import_coco(ctx.store(), args.project, args.captions_json, args.instances_json,
                                  results=args.results, system=args.system, image_root=args.image_root,
                                  inline_mentions=args.mentions == "inline", trust_root=True))


def _flickr30k(args, ctx) -> int:
    from ..io import import_flickr30k
    return _done(ctx, import_flickr30k(ctx.store(), args.project, args.root, ids=args.ids, image_root=args.image_root,
                                       trust_root=True))


def _jsonl(args, ctx) -> int:
    from ..io import import_jsonl
    return _done(ctx, import_jsonl(ctx.store(), args.project, args.file, image_root=args.image_root, trust_root=True))


def _judgements(args, ctx) -> int:
    from ..io import import_judgements
    return _done(ctx, import_judgements(ctx.store(), args.project, args.system, args.annotator, args.coarse, args.fine))


def _corrections(args, ctx) -> int:
    from ..io import import_corrections
    return _done(ctx, import_corrections(ctx.store(), args.project, args.system, args.error_type, args.captions,
                                         annotator=args.annotator))


def _export(args, ctx) -> int:
    from ..io import export_jsonl
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
            ctx.note(json_text({"project": args.project, "format": args.format, "items": n, "output": None}))
        return 0
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    # Write next to the target and rename, so a failed export never leaves half a file.
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            n = export_jsonl(store, args.project, fh)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    ctx.emit({"project": args.project, "format": args.format, "items": n, "output": str(out)},
             f"exported {n} items of {args.project!r} to {out}")
    return 0
