"""``annotator assign``: split a project's captions across annotators, with a blind double sample."""

from __future__ import annotations

from ..cli import add_json_flag


def register(sub) -> None:
    """Add ``assign`` to the CLI."""
    from ..assignment import DEFAULT_DOUBLE_FRACTION, SECOND_PASS_MODES, SPLITS
    p = sub.add_parser("assign", help="assign a project's captions to annotators (with a blind double-annotation sample)",
                       description="Split the captions of a project across annotators. A seeded random sample is "
                                   "also given to a second annotator, who works blind. Practice items go to everyone.")
    p.add_argument("--project", required=True)
    p.add_argument("--annotators", nargs="+", required=True, metavar="NAME", help="existing user names")
    p.add_argument("--double-fraction", type=float, default=DEFAULT_DOUBLE_FRACTION,
                   help="share of captions a second annotator also judges (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the double-annotation sample (default: %(default)s)")
    p.add_argument("--system", action="append", dest="systems", metavar="S",
                   help="assign only this system's captions (repeatable; default: all systems)")
    p.add_argument("--split", choices=SPLITS, default="blocks", help="how to split: contiguous blocks or round-robin")
    p.add_argument("--second-pass", choices=SECOND_PASS_MODES, default="staged",
                   help="staged: second annotators give error types only for captions both found inaccurate; "
                        "full: both tasks at once (default: %(default)s)")
    p.add_argument("--replace", action="store_true", help="replace the project's assignments (judgements are kept)")
    add_json_flag(p)
    p.set_defaults(func=_assign)


def _assign(args, ctx) -> int:
    from ..assignment import assign
    s = assign(ctx.store(), args.project, args.annotators, double_fraction=args.double_fraction, seed=args.seed,
               systems=args.systems, split=args.split, second_pass=args.second_pass, replace=args.replace)
    lines = [f"project {s.project!r}: {s.captions} captions ({s.practice} practice), {s.double} double-annotated "
             f"(seed {s.seed}, {s.split}, second pass {s.second_pass})"]
    lines += [f"  {name}: {c['total']} in queue ({c['first']} first, {c['second']} second, {c['practice']} practice)"
              for name, c in s.per_annotator.items()]
    ctx.emit(s, "\n".join(lines))
    return 0
