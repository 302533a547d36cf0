"""``annotator agreement``, ``annotator disagreements``, ``annotator adjudicate`` and ``annotator practice``.

    annotator agreement --project P --annotators A B [--system S] --json
    annotator agreement --project P --spans [--annotators A B] --json
    annotator agreement --project P --annotators A B C --format xlsx --output agreement.xlsx
    annotator disagreements --project P --annotators A B --json
    annotator adjudicate --project P --caption 17 --user lea --label inaccurate --types gender activity
    annotator practice --project P --items img1.jpg img2.jpg [--unset]
"""

from __future__ import annotations

from . import add_json_flag
from .tables import emit_report, report_command, write_output


def register(sub) -> None:
    """Add the agreement-related subcommands."""
    report_command(
        sub, "agreement", _agreement, options=_agreement_options,
        help="inter-annotator agreement: kappa with bootstrap interval, error-type P/R/F, alpha, Fleiss",
        description=("Agreement of two or more annotators on the captions they share. Items marked as practice are "
                     "left out. With --json the figures of the first two annotators are at the top level "
                     "(the first is the reference of the error-type precision/recall) and every pair is under "
                     "'pairs'."))
    report_command(sub, "disagreements", _disagreements, options=_disagreements_options,
                   help="captions the annotators disagree on (the adjudication queue)")

    p = sub.add_parser("adjudicate", help="store a lead's final judgement of a caption")
    p.add_argument("--project", required=True)
    p.add_argument("--caption", type=int, required=True, help="caption id (see 'annotator disagreements')")
    p.add_argument("--user", required=True, help="the lead's user name (must have the lead or admin role)")
    p.add_argument("--label", required=True, choices=("accurate", "inaccurate"))
    p.add_argument("--types", nargs="*", default=[], metavar="TYPE", help="error type ids, names or aliases")
    p.add_argument("--note", default="")
    p.add_argument("--spans", default=None, metavar="JSON",
                   help='error spans as JSON, e.g. \'[{"start": 0, "end": 1, "type": "number", "fix": "three"}]\'')
    add_json_flag(p)
    p.set_defaults(func=_adjudicate)

    p = sub.add_parser("practice", help="mark items as practice/guideline examples (left out of agreement)")
    p.add_argument("--project", required=True)
    p.add_argument("--items", nargs="+", required=True, metavar="KEY")
    p.add_argument("--unset", action="store_true", help="remove the practice mark instead")
    add_json_flag(p)
    p.set_defaults(func=_practice)


def _agreement_options(p) -> None:
    p.add_argument("--annotators", nargs="+", metavar="NAME", default=None,
                   help="two or more annotators (default: everyone who annotated the project)")
    p.add_argument("--system", default=None, help="only this system's captions")
    p.add_argument("--spans", action="store_true",
                   help="agreement on where: token and exact-span F1 of the error spans, per pair and type")
    add_interval_flags(p)
    p.add_argument("--fleiss-m", type=int, default=None,
                   help="Fleiss' kappa over captions judged by exactly this many annotators (default: all of them)")


def _disagreements_options(p) -> None:
    p.add_argument("--annotators", nargs="+", metavar="NAME", default=None)
    p.add_argument("--system", default=None)
    p.add_argument("--labels-only", action="store_true", help="only label disagreements, not error-type ones")
    p.add_argument("--open", action="store_true", help="only captions not adjudicated yet")


def add_interval_flags(p) -> None:
    """``--resamples``, ``--seed`` and ``--confidence`` of the kappa interval (read back by :func:`interval_options`)."""
    p.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed (default 0)")
    p.add_argument("--confidence", type=float, default=None, help="interval level (default 0.95)")


def interval_options(args) -> dict:
    """n_resamples, seed and confidence from :func:`add_interval_flags`' flags, defaults filled in."""
    from ..agreement import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
    return {"n_resamples": args.resamples if args.resamples is not None else DEFAULT_RESAMPLES,
            "seed": args.seed if args.seed is not None else DEFAULT_SEED,
            "confidence": args.confidence if args.confidence is not None else DEFAULT_CONFIDENCE}


def _agreement(args, ctx) -> int:
    from ..agreement import agreement_report
    from ..errors import InputError, NotFound
    from ..store.analysis_queries import judgement_frame
    from ..store.projects import system_names

    store = ctx.store()
    if args.system is not None and args.system not in system_names(store, args.project):
        raise NotFound(f"project {args.project!r} has no system {args.system!r}")
    if args.annotators is not None and len(args.annotators) < 2:
        raise InputError("agreement needs at least two annotators", "--annotators")
    if args.spans:
        from ..span_agreement import readable, span_agreement
        report = span_agreement(store, args.project, args.annotators, system=args.system)
        return emit_report(report, args, ctx, readable, caption="Span agreement")
    frame = judgement_frame(store, args.project, kinds=("annotation",), system=args.system, users_=args.annotators)
    present = set(frame["user"].astype(object)) if len(frame) else set()
    if args.annotators:
        missing = [a for a in args.annotators if a not in present]
        if missing:
            raise NotFound(f"{missing[0]!r} has no judgements in project {args.project!r}"
                           + (f" for system {args.system!r}" if args.system else ""))
    elif len(present) < 2:
        raise InputError(f"project {args.project!r} has fewer than two annotators with judgements")
    report = agreement_report(frame, args.annotators, system=args.system, fleiss_m=args.fleiss_m,
                              **interval_options(args))
    return emit_report(report, args, ctx, _readable, caption="Inter-annotator agreement")


def _num(x, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _readable(r) -> str:
    lines = [f"annotators: {', '.join(r.annotators)}" + (f"; system {r.system}" if r.system else "")]
    if r.practice_captions_excluded:
        lines.append(f"left out: {r.practice_captions_excluded} captions of {r.practice_items_excluded} practice items")
    for p in r.pairs:
        ci = f" [{_num(p.kappa_ci[0])}, {_num(p.kappa_ci[1])}]" if p.kappa_ci else ""
        lines += [f"{p.a} vs {p.b}: {p.n} shared captions, agreement {_num(p.agreement)}, kappa {_num(p.kappa)}{ci}",
                  f"  inaccurate: {p.a} {p.inaccurate[p.a]}, {p.b} {p.inaccurate[p.b]}, both {p.both_inaccurate}",
                  f"  error types ({p.a} as reference): precision {_num(p.fine.precision)}, recall {_num(p.fine.recall)}, "
                  f"F1 {_num(p.fine.f1)} (macro F1 {_num(p.fine.macro_f1)}) on {p.fine.n} captions"
                  + (f"; {p.fine_pending} waiting for the fine pass" if p.fine_pending else "")]
    lines.append(f"Krippendorff's alpha {_num(r.alpha)} ({r.alpha_units} captions); Fleiss' kappa {_num(r.fleiss_kappa)} "
                 f"({r.fleiss_items} captions with {r.fleiss_m} judgements)")
    return "\n".join(lines)


def _disagreements(args, ctx) -> int:
    from ..adjudication import adjudication_queue
    from ..store.analysis_queries import caption_details, judgement_frame

    store = ctx.store()
    frame = judgement_frame(store, args.project, kinds=("annotation", "adjudication"), system=args.system)
    queue = adjudication_queue(frame, annotators=args.annotators, include_types=not args.labels_only,
                               include_done=not args.open)
    details = caption_details(store, args.project, queue["caption_id"].tolist())
    queue = queue.merge(details[["caption_id", "item_key", "line_no", "text"]], on="caption_id", how="left")
    if args.format:
        write_output({"Disagreements": queue}, args, ctx)
        return 0
    rows = queue.to_dict(orient="records")
    text = "\n".join(f"{r['caption_id']}\t{r['system']}\t{r['item_key']}\t{r['disagreement']}\t"
                     f"{'adjudicated' if r['adjudicated'] else 'open'}\t{r['text']}" for r in rows) or "no disagreements"
    ctx.emit(rows, text)
    return 0


def _adjudicate(args, ctx) -> int:
    from ..adjudication import adjudicate
    from ..errors import NotFound
    from ..store.analysis_queries import caption_details, user_role
    from ..taxonomy import taxonomy

    store = ctx.store()
    role = user_role(store, args.user)
    if role is None:
        raise NotFound(f"no user called {args.user!r}")
    if caption_details(store, args.project, [args.caption]).empty:
        raise NotFound(f"project {args.project!r} has no caption with id {args.caption}")
    tax = taxonomy()
    types = [tax.resolve_strict(t, "--types") for t in args.types]
    from ..errors import InputError
    from ..spans import parse_spans, spans_json
    try:
        spans = parse_spans(args.spans)
    except InputError as exc:
        raise InputError(exc.detail, "--spans") from None
    revision = adjudicate(store, args.caption, args.user, role, args.label, types, note=args.note, spans=spans)
    ctx.emit({"caption_id": args.caption, "user": args.user, "label": args.label, "error_types": types,
              "spans": spans_json(spans), "revision": revision},
             f"caption {args.caption}: adjudicated as {args.label} (revision {revision})")
    return 0


def _practice(args, ctx) -> int:
    from ..store.projects import set_practice
    n = set_practice(ctx.store(), args.project, args.items, not args.unset)
    ctx.emit({"items": n, "practice": not args.unset},
             f"{n} items {'no longer ' if args.unset else ''}marked as practice")
    return 0
