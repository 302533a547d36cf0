"""``annotator assign``: split a project's captions across annotators, with a blind double sample; or queue the
next human sample of each system (``--active N`` / ``--random N``), drawn with recorded probabilities.

    annotator assign --project P --annotators A B
    annotator assign --project P --annotators A B --active 200 --system S [--seed 1] [--layer adjudicated]
"""

from __future__ import annotations

from . import add_json_flag

#: Options of a regular assignment that a sample draw leaves alone (their defaults are filled in for a regular one).
_REGULAR_ONLY = {"double_fraction": "--double-fraction", "split": "--split", "second_pass": "--second-pass",
                 "replace": "--replace"}


def register(sub) -> None:
    """Add ``assign`` to the CLI."""
    from ..assignment import DEFAULT_DOUBLE_FRACTION, SECOND_PASS_MODES, SPLITS
    from ..estimate.sampling import DEFAULT_FLOOR, DEFAULT_WIDEST
    p = sub.add_parser("assign", help="assign a project's captions to annotators (with a blind double-annotation "
                                      "sample), or queue the next human sample of each system",
                       description="Split the captions of a project across annotators. A seeded random sample is "
                                   "also given to a second annotator, who works blind. Practice items go to everyone. "
                                   "With --active N or --random N, draw instead the next human sample of each "
                                   "system (about N captions not labelled yet, each with a recorded chance that the "
                                   "estimate weights by) and add it to the end of the queues.")
    p.add_argument("--project", required=True)
    p.add_argument("--annotators", nargs="+", required=True, metavar="NAME", help="existing user names")
    p.add_argument("--double-fraction", type=float, default=None,
                   help=f"share of captions a second annotator also judges (default: {DEFAULT_DOUBLE_FRACTION})")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the double-annotation sample or of the draw (default: %(default)s)")
    p.add_argument("--system", action="append", dest="systems", metavar="S",
                   help="assign (or draw from) only this system's captions (repeatable; default: all systems)")
    p.add_argument("--split", choices=SPLITS, default=None,
                   help="how to split: contiguous blocks (default) or round-robin")
    p.add_argument("--second-pass", choices=SECOND_PASS_MODES, default=None,
                   help="staged (default): second annotators give error types only for captions both found "
                        "inaccurate; full: both tasks at once")
    p.add_argument("--replace", action="store_true", help="replace the project's assignments (judgements are kept)")
    sample = p.add_argument_group("the next human sample (the blind double sample and practice items stay as they are)")
    how = sample.add_mutually_exclusive_group()
    how.add_argument("--active", type=int, metavar="N",
                     help="draw about N captions per system where labels shrink the widest intervals of the "
                          "estimate most (detector unsure, or flagging a type whose interval is wide)")
    how.add_argument("--random", type=int, metavar="N", help="draw about N captions per system, all with the same chance")
    sample.add_argument("--layer", default="adjudicated", metavar="LAYER",
                        help="the judgements that count as labelled: 'adjudicated' (default), 'consensus' or "
                             "'annotator:NAME'")
    sample.add_argument("--targets", nargs="+", metavar="TARGET",
                        help="aim at these intervals ('inaccurate' or error type ids; default: the widest)")
    sample.add_argument("--widest", type=int, default=None,
                        help=f"how many of the widest intervals to aim at (default: {DEFAULT_WIDEST})")
    sample.add_argument("--judge", default=None, metavar="NAME",
                        help="with --active: read how unsure each caption is from this judge's probabilities "
                             "(annotator judge list; default the built-in detectors)")
    sample.add_argument("--floor", type=float, default=None,
                        help="every caption keeps at least this share of the chance a uniform draw gives it "
                             f"(default: {DEFAULT_FLOOR})")
    add_json_flag(p)
    p.set_defaults(func=_assign)


def _assign(args, ctx) -> int:
    from ..assignment import DEFAULT_DOUBLE_FRACTION, DEFAULT_SECOND_PASS, assign
    from ..errors import InputError
    size = args.active if args.active is not None else args.random
    if size is not None:
        given = [flag for key, flag in _REGULAR_ONLY.items() if getattr(args, key) not in (None, False)]
        if given:
            raise InputError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to a sample draw "
                             "(it adds to the queues and leaves the double sample alone)",
                             "--active" if args.active is not None else "--random")
        return _draw(args, ctx, size)
    for flag, value in (("--targets", args.targets), ("--widest", args.widest), ("--floor", args.floor),
                        ("--judge", args.judge)):
        if value is not None:
            raise InputError(f"{flag} belongs to a sample draw; add --active N", flag)
    if args.layer != "adjudicated":
        raise InputError("--layer belongs to a sample draw; add --active N or --random N", "--layer")
    s = assign(ctx.store(), args.project, args.annotators,
               double_fraction=DEFAULT_DOUBLE_FRACTION if args.double_fraction is None else args.double_fraction,
               seed=args.seed, systems=args.systems, split=args.split or "blocks",
               second_pass=args.second_pass or DEFAULT_SECOND_PASS, replace=args.replace)
    lines = [f"project {s.project!r}: {s.captions} captions ({s.practice} practice), {s.double} double-annotated "
             f"(seed {s.seed}, {s.split}, second pass {s.second_pass})"]
    lines += [f"  {name}: {c['total']} in queue ({c['first']} first, {c['second']} second, {c['practice']} practice)"
              for name, c in s.per_annotator.items()]
    ctx.emit(s, "\n".join(lines))
    return 0


def _draw(args, ctx, size: int) -> int:
    from ..assignment import assign_sample
    s = assign_sample(ctx.store(), args.project, args.annotators, size, systems=args.systems,
                      design="active" if args.active is not None else "uniform", seed=args.seed, layer=args.layer,
                      targets=args.targets, widest=args.widest, floor=args.floor, judge=args.judge)
    ctx.emit(s, _draw_text(s))
    return 0


def _draw_text(s) -> str:
    lines = []
    for d in s.draws:
        lines.append(f"system {d.system!r}, draw {d.number} ({d.design}, seed {d.seed}, labels of {d.layer}): "
                     f"{d.taken} captions drawn of {d.candidates} not labelled yet (about {d.size} asked)"
                     + (f"; the {d.labelled_before} labelled already count for certain" if d.labelled_before else ""))
        if d.design == "active":
            aims = ", ".join(t if w is None else f"{t} (interval {100 * w:.1f} points wide)" for t, w in d.widths.items())
            lines.append(f"  aimed at: {aims}; how unsure each caption is: judge {d.judge}")
        if d.probability_range:
            lo, hi = d.probability_range
            lines.append(f"  chances of the drawn captions: {lo:.3g} to {hi:.3g}")
        lines.append("  queued: " + (", ".join(f"{n} {k}" for n, k in d.per_annotator.items()) or "none")
                     + (f"; {d.already_queued} were in a queue already and keep their place" if d.already_queued else ""))
    for n, k in s.practice_added.items():
        lines.append(f"{n}: {k} practice items first (their queue was empty)")
    return "\n".join(lines)
