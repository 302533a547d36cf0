"""``annotator corrections``: conservative corrections from the command line.

Subcommands: ``list``, ``export``, ``queue``, ``save``, ``untouched``,
``check``, ``history`` and ``delta`` (the per-type rescoring table, the same
JSON as ``annotator rescore --by-type``).
"""

from __future__ import annotations

from pathlib import Path

from . import json_command
from .tables import add_raw_csv_flag


def register(sub) -> None:
    p = sub.add_parser("corrections", help="conservative corrections: list, export, queue, save, check, delta table",
                       description="Corrections fix one error type of a caption with as few changes as possible; "
                                   "they are stored beside the original caption, with their history.")
    csub = p.add_subparsers(dest="corrections_command", metavar="ACTION")
    json_command(csub, "list", _list, _scope,
                 help="current corrections of a project (with word diff and override reasons)")
    json_command(csub, "export", _export, _scope, _export_options, add_raw_csv_flag,
                 help="write the current corrections to a table file")
    json_command(csub, "queue", _queue, _queue_options,
                 help="captions whose judgement in a layer carries an error type")
    json_command(csub, "save", _save, _one, _save_options,
                 help="store a correction of one caption for one error type (guards applied)")
    json_command(csub, "untouched", _untouched, _one,
                 help="record the decision to leave a caption as it is for one error type")
    json_command(csub, "check", _check, _check_options,
                 help="check a correction against the guard of a type without storing it")
    json_command(csub, "history", _history, _history_options,
                 help="every stored revision of one caption's corrections")
    json_command(csub, "delta", _delta, _delta_options,
                 help="rescoring table: baseline, one row per corrected type, all corrections (the tool's addition)")
    json_command(csub, "plan", _plan, _plan_options,
                 help="the default correction plan: the most frequent error types of the error tables, Generally "
                      "unrelated left out (the study corrected five)")
    json_command(csub, "blind", _blind, _blind_options,
                 help="show or switch blind correction for a project (references and live scores hidden on the "
                      "Correction page until a correction is saved; on by default)")
    p.set_defaults(func=lambda args, ctx: (p.print_help(), 1)[1])


def _scope(q) -> None:
    q.add_argument("--project", required=True)
    q.add_argument("--system", default=None)
    q.add_argument("--type", default=None, dest="error_type", help="error type id")


def _one(q) -> None:
    q.add_argument("--project", required=True)
    q.add_argument("--system", required=True)
    q.add_argument("--line", required=True, type=int, help="0-based line of the caption in the system's file")
    q.add_argument("--type", required=True, dest="error_type", help="error type id")
    q.add_argument("--user", required=True, help="who made the correction (an existing user)")


def _export_options(q) -> None:
    q.add_argument("--out", required=True, type=Path, help="output file")
    q.add_argument("--format", default=None, help="csv, xlsx, latex, md or json (default: from the file extension)")


def _queue_options(q) -> None:
    q.add_argument("--project", required=True)
    q.add_argument("--system", required=True)
    q.add_argument("--type", required=True, dest="error_type", help="error type id")
    q.add_argument("--layer", required=True, help="'adjudicated', 'consensus' or 'annotator:NAME'")
    q.add_argument("--user", default=None, help="show this user's existing corrections")


def _save_options(q) -> None:
    q.add_argument("--text", required=True, help="the corrected caption")
    q.add_argument("--override-reason", default=None, help="store despite a guard violation, for this reason")
    q.add_argument("--max-changed-words", type=int, default=None, help="cap on changed words for the types without "
                   "a word-class rule (activity, scene, number …); off by default")


def _check_options(q) -> None:
    q.add_argument("--type", required=True, dest="error_type")
    q.add_argument("--original", required=True)
    q.add_argument("--corrected", required=True)
    q.add_argument("--max-changed-words", type=int, default=None)


def _history_options(q) -> None:
    q.add_argument("--project", required=True)
    q.add_argument("--system", required=True)
    q.add_argument("--line", required=True, type=int, help="0-based line of the caption in the system's file")
    q.add_argument("--type", default=None, dest="error_type")


def _delta_options(q) -> None:
    q.add_argument("--project", required=True)
    q.add_argument("--system", required=True)
    q.add_argument("--layer", default=None, help="count only corrections whose type the layer still gives the caption")
    q.add_argument("--corrector", action="append", dest="correctors", metavar="USER",
                   help="use only this user's corrections (repeatable)")
    q.add_argument("--resamples", type=int, default=1000, help="paired bootstrap resamples (default: %(default)s)")
    q.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")


def _plan_options(q) -> None:
    q.add_argument("--project", required=True)
    q.add_argument("--system", default=None, help="count one system's captions (default: every system)")
    q.add_argument("--layer", default=None, help="whose judgements count (default: as rescore --by-type)")
    q.add_argument("--size", type=int, default=5, help="how many types (default: %(default)s)")


def _blind_options(q) -> None:
    q.add_argument("--project", required=True)
    q.add_argument("mode", nargs="?", choices=("on", "off"), help="switch it on or off (default: show the mode)")
    q.add_argument("--views", choices=("open", "closed"), default=None,
                   help="while blind correction is on, close the Annotate page's references and the Rescoring page's "
                        "scores to correctors (analysts), or open them again (default: open; leads always see them)")


def _caption_id(store, project: str, system: str, line: int) -> int:
    from ..store.judgements import caption_id_for_line
    from ..store.projects import project_id
    with store.read() as conn:
        return caption_id_for_line(conn, project_id(conn, project), system, line, source="--line")


def _records(df) -> list[dict]:
    return [{k: (None if v != v else v) if isinstance(v, float) else v for k, v in row.items()}
            for row in df.to_dict(orient="records")]


def _list(args, ctx) -> int:
    from ..correction import corrections_table
    df = corrections_table(ctx.store(), args.project, system=args.system, error_type=args.error_type)
    rows = _records(df)
    lines = []
    for r in rows:
        what = "left untouched" if r["untouched"] else r["diff"]
        extra = f"  [override: {r['override_reason']}]" if r["override_reason"] else ""
        lines.append(f"{r['system']}:{r['line_no']} {r['error_type']} by {r['user']} (rev {r['revision']}): {what}{extra}")
    ctx.emit(rows, "\n".join(lines) or "no corrections")
    return 0


def _export(args, ctx) -> int:
    from ..correction import corrections_table
    from ..errors import InputError
    from ..io.tables import FORMATS, write_table
    fmt = args.format
    if fmt is None:
        ext = args.out.suffix.lstrip(".").lower()
        fmt = {"tex": "latex", "markdown": "md"}.get(ext, ext)
    if fmt not in FORMATS:
        raise InputError(f"unknown table format {fmt!r}; choose one of {', '.join(FORMATS)}", str(args.out))
    df = corrections_table(ctx.store(), args.project, system=args.system, error_type=args.error_type)
    try:
        args.out.write_bytes(write_table(df, fmt, name="corrections", raw_csv=args.raw_csv))
    except OSError as exc:
        raise InputError(f"cannot write file ({exc.strerror or exc})", str(args.out)) from None
    ctx.emit({"file": str(args.out), "format": fmt, "rows": len(df)}, f"wrote {len(df)} corrections to {args.out}")
    return 0


def _queue(args, ctx) -> int:
    from ..correction import queue
    from ..correction.span_rule import bracketed, prefill
    rows = queue(ctx.store(), args.project, args.system, args.error_type, args.layer, user=args.user)
    lines = []
    for r in rows:
        c = r.correction
        state = "" if c is None else (" [untouched]" if c.corrected_text is None else f" → {c.corrected_text}")
        lines.append(f"{r.line_no}\t{r.item_key}\t{bracketed(r.text, r.spans)}{state}")
    # Each row: its spans of the type (marked words) and the caption their suggested fixes make.
    data = [r.to_dict() | {"prefill": prefill(r.text, r.spans)} for r in rows]
    ctx.emit(data, "\n".join(lines) or "nothing to correct")
    return 0


def _saved(s) -> dict:
    return {"caption_id": s.caption_id, "error_type": s.error_type, "user": s.user, "revision": s.revision,
            "corrected_text": s.corrected_text, "override_reason": s.override_reason,
            "violations": list(s.report.violations) if s.report else []}


def _save(args, ctx) -> int:
    from ..correction import correct_caption
    store = ctx.store()
    cid = _caption_id(store, args.project, args.system, args.line)
    s = correct_caption(store, cid, args.error_type, args.user, args.text, override_reason=args.override_reason,
                        max_changed_words=args.max_changed_words)
    text = (f"saved revision {s.revision} of {args.system}:{args.line} for {args.error_type}"
            + (" (left untouched: text unchanged)" if s.corrected_text is None else "")
            + (f" (guard overridden: {s.override_reason})" if s.override_reason else ""))
    ctx.emit(_saved(s), text)
    return 0


def _untouched(args, ctx) -> int:
    from ..correction import leave_untouched
    store = ctx.store()
    cid = _caption_id(store, args.project, args.system, args.line)
    s = leave_untouched(store, cid, args.error_type, args.user)
    ctx.emit(_saved(s), f"recorded {args.system}:{args.line} as left untouched for {args.error_type} (revision {s.revision})")
    return 0


def _check(args, ctx) -> int:
    from ..correction import check_correction, diff_text
    r = check_correction(args.error_type, args.original, args.corrected, max_changed_words=args.max_changed_words)
    out = {"ok": r.ok, "rule": r.rule, "changed_words": r.changed_words, "violations": list(r.violations),
           "diff": diff_text(args.original, args.corrected)}
    text = out["diff"] + "\n" + ("allowed" if r.ok else "refused: " + "; ".join(r.violations))
    ctx.emit(out, text)
    return 0 if r.ok else 1


def _history(args, ctx) -> int:
    from ..correction import caption_corrections
    store = ctx.store()
    cid = _caption_id(store, args.project, args.system, args.line)
    hist = caption_corrections(store, cid, args.error_type)
    lines = [f"{h.error_type} {h.user} rev {h.revision} {h.created_at}: "
             + ("left untouched" if h.untouched else h.corrected_text)
             + (f"  [override: {h.override_reason}]" if h.override_reason else "") for h in hist]
    ctx.emit(hist, "\n".join(lines) or "no corrections")
    return 0


def _plan(args, ctx) -> int:
    from ..correction.plan import correction_plan
    from ..errors import InputError
    if args.size < 1:
        raise InputError("--size must be at least 1", "--size")
    plan = correction_plan(ctx.store(), args.project, system=args.system, layer=args.layer, size=args.size)
    ctx.emit(plan, plan.describe())
    return 0


def _blind(args, ctx) -> int:
    from ..correction.blind import project_blind, project_views_closed, set_project_blind, set_project_views_closed
    store = ctx.store()
    if args.mode is not None:
        set_project_blind(store, args.project, args.mode == "on")
    if args.views is not None:
        set_project_views_closed(store, args.project, args.views == "closed")
    on, closed = project_blind(store, args.project), project_views_closed(store, args.project)
    ctx.emit({"project": args.project, "blind": on, "views_closed": closed},
             f"blind correction is {'on' if on else 'off'} for {args.project}; references and scores on the Annotate "
             f"and Rescoring pages are {'closed to correctors while it is on' if closed else 'open to correctors'}")
    return 0


def _delta(args, ctx) -> int:
    from ..rescoring import by_type_table, format_by_type
    out = by_type_table(ctx.store(), args.project, args.system, layer=args.layer, correctors=args.correctors,
                        resamples=args.resamples, seed=args.seed)
    ctx.emit(out, format_by_type(out))
    return 0
