"""``annotator estimate``: error shares of whole systems from a human sample and the automatic detectors.

    annotator estimate --project P --system S --annotator A --json
    annotator estimate --project P --layer adjudicated --types top5 --alpha 0.1
    annotator estimate --project P --layer adjudicated --difference S1 S2 --format csv --output estimates.csv
"""

from __future__ import annotations

from .tables import chosen_layer, emit_report, report_command


def register(sub) -> None:
    """Add the ``estimate`` subcommand."""
    report_command(
        sub, "estimate", _estimate, layer=True, options=_estimate_options,
        help="estimate each system's inaccurate share and error-type shares with intervals",
        description=("Combine the human labels of a layer (the annotated captions) with the automatic error "
                     "detectors' scores of every caption by prediction-powered inference: per system the "
                     "estimated share of inaccurate captions and of each error type, its interval, the classical "
                     "interval from the human labels alone, and how well each detector agrees with the humans. "
                     "The intervals assume the labelled captions are a random sample of the system's captions; "
                     "a system with sample draws (assign --active/--random) is estimated from them instead, each "
                     "label weighted by its recorded chance of being drawn. Captions of practice items are left out."))


def _estimate_options(p) -> None:
    p.add_argument("--system", action="append", default=[], metavar="S",
                   help="estimate this system; repeat for several (default: every system that has at least two "
                        "labels; the others are listed as skipped)")
    p.add_argument("--types", nargs="+", default=["all"], metavar="TYPE",
                   help="'all' (default), 'top5' (the five most frequent) or error type ids")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="1 - confidence of the intervals, between 0.001 and 0.5 (default 0.05)")
    p.add_argument("--population", action="store_true",
                   help="estimate the rate of the process the captions come from instead of the share among "
                        "these captions (wider; the reference implementation's estimand)")
    p.add_argument("--scores", metavar="FILE", default=None,
                   help="also write every estimated caption's detector scores, human label and trigger words to "
                        "FILE (.csv or .jsonl), to check an estimate with another tool")
    p.add_argument("--difference", nargs=2, action="append", default=[], metavar=("A", "B"),
                   help="also estimate system A minus system B for every target (repeatable)")
    p.add_argument("--judge", default=None, metavar="NAME",
                   help="use this judge's probabilities as the predictor (annotator judge list; default the built-in "
                        "detectors); types it does not score get the classical interval")


def _estimate(args, ctx) -> int:
    from ..estimate.project import estimate_store

    from ..estimate.project import check_alpha, score_format
    check_alpha(args.alpha, "--alpha")
    scores_fmt = score_format(args.scores) if args.scores else None
    types = args.types[0] if args.types in (["all"], ["top5"]) else args.types
    if types not in ("all", "top5"):
        from ..taxonomy import taxonomy
        types = [taxonomy().resolve_strict(t, "--types") for t in types]
    judge = None
    if args.judge is not None:
        from ..judges import load_judge
        judge = load_judge(ctx.store(), args.project, args.judge)
    result = estimate_store(ctx.store(), args.project, chosen_layer(args), systems=args.system or None, alpha=args.alpha,
                            types=types, finite_population=not args.population,
                            pairs=[tuple(p) for p in args.difference], judge=judge)
    if scores_fmt:
        _write_scores(result, args.scores, scores_fmt, ctx)
    return emit_report(result, args, ctx, _readable, caption=f"Estimated error shares ({result.layer})",
                       data=result.to_dict())


def _write_scores(result, path: str, fmt: str, ctx) -> None:
    from ..errors import InputError
    from ..estimate.project import scores_file
    frame = result.scores_frame()
    data = scores_file(frame, fmt)
    try:
        with open(path, "wb") as out:
            out.write(data)
    except OSError as exc:
        raise InputError(f"cannot write {path!r}: {exc.strerror}", "--scores") from None
    whose = "the detector scores" if result.judge == "detectors" else f"judge {result.judge!r}'s scores"
    ctx.note(f"wrote {whose} of {len(frame):,} captions to {path}")


def _pct(x) -> str:
    return "—" if x is None or x != x else f"{100 * x:5.1f}%"


def _num(x) -> str:
    return "—" if x is None or x != x else f"{x:.2f}"


def _readable(result) -> str:
    lines = []
    for r in result.reports:
        estimand = "share of these captions" if r.finite_population else "rate of the process"
        lines.append(f"system {r.system}, layer {result.layer}: {r.n_total} captions, {r.n_human} with human labels "
                     f"({estimand}, {100 * (1 - r.alpha):g}% intervals, predictor: {r.predictor})")
        lines.append(f"  {'target':22s} {'estimate':>8s}  {'interval':17s}  {'classical':17s}  {'labels':>6s}  "
                     f"{'detector' if r.predictor == 'detectors' else 'judge'} P / R / AUC")
        for row in r.frame().itertuples(index=False):
            q = f"{_num(row.precision)} / {_num(row.recall)} / {_num(row.auc)}" if row.target in r.detectors else "—"
            mark = "*" if row.sparse else " "
            lines.append(f"  {row.target:22s} {_pct(row.estimate):>8s}  [{_pct(row.ci_low)}, {_pct(row.ci_high)}]{mark} "
                         f"[{_pct(row.classical_low)}, {_pct(row.classical_high)}]  {row.n_human:6d}  {q}")
        lines.append(f"  object hallucination: CHAIR-i {_num(r.chair.chair_i)}, CHAIR-s {_num(r.chair.chair_s)}")
        lines += [f"  warning: {w}" for w in r.warnings] + [f"  note: {n}" for n in r.notes]
    lines += [f"skipped system {s}: {why}" for s, why in result.skipped.items()]
    for (a, b), diffs in result.differences.items():
        lines.append(f"{a} minus {b}:")
        for target, d in diffs.items():
            lines.append(f"  {target:22s} {100 * d.estimate:+6.1f} points  [{100 * d.ci[0]:+.1f}, {100 * d.ci[1]:+.1f}]"
                         f"  classical [{100 * d.classical_ci[0]:+.1f}, {100 * d.classical_ci[1]:+.1f}]  "
                         + (f"paired on {d.pairs} images" if d.design == "paired" else "independent samples"))
    return "\n".join(lines)
