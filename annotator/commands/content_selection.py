"""``annotator content-selection``: score box selection of baselines, systems and the human upper bound."""

from __future__ import annotations


from . import add_json_flag


def register(sub) -> None:
    """Add the ``content-selection`` subcommand."""
    p = sub.add_parser(
        "content-selection",
        help="content-selection P/R/F of baselines (k = 1..15), systems and the human upper bound",
        description=(
            "Score how well box selections match the boxes the gold descriptions mention. Every image of --project "
            "with a box and two gold descriptions is scored, and every row (upper bound, baselines, systems) is "
            "averaged over those same images. The unigram and bigram baselines and their combinations learn their "
            "priors from --train-project, or else leave one image out: each image is ranked with the counts of the "
            "project's other images."))
    p.add_argument("--project", required=True, help="project to evaluate")
    p.add_argument("--train-project", metavar="P2", help="learn the textual priors from this project")
    p.add_argument("--system", action="append", default=[], metavar="S",
                   help="also score this system's captions (repeatable; 'all' for every system of the project)")
    p.add_argument("--baselines", default="all",
                   help="comma-separated baselines, 'all' (default) or 'none': random, size, position, unigram, "
                        "bigram, bigram+size, bigram+position, unigram+size, unigram+position")
    p.add_argument("--k", default="1-15", help="selection sizes, e.g. 1-15 (default), 3 or 1,3,5")
    p.add_argument("--runs", type=int, default=5, help="random orders per image for the random baseline (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random baseline (default 0)")
    p.add_argument("--empty-descriptions", choices=("count", "drop"), default="count",
                   help="gold descriptions that mention no box: counted in M with no instance, as equations 1 and 2 "
                        "are written (count, default), or left out of M (drop)")
    p.add_argument("--single-descriptions", choices=("score", "skip"), default="score",
                   help="images with a single gold description: scored by every baseline and system as equation 1 "
                        "is written, the upper bound averaged over the images with two or more (score, default), or "
                        "left out of every row so that all rows have the same images (skip)")
    p.add_argument("--no-upper-bound", action="store_true", help="leave the upper bound out")
    p.add_argument("--per-image", action="store_true",
                   help="also list each scored image with its mention statistics")
    g = p.add_argument_group("example sentences", "each baseline's selection realised as a sentence, as in the "
                                                  "paper's Section 4.3 (beside the systems' captions)")
    g.add_argument("--examples", type=int, default=0, metavar="N",
                   help="example sentences for the first N scored images (default 0: none)")
    g.add_argument("--example-image", action="append", default=[], metavar="KEY",
                   help="example sentences for this scored image (repeatable; instead of the first N)")
    g.add_argument("--example-k", type=int, default=3, metavar="K",
                   help="boxes each baseline selects for its sentence (default 3, as in the paper's examples)")
    add_json_flag(p)
    p.set_defaults(func=_content_selection)


def _content_selection(args, ctx) -> int:
    from ..content_selection import evaluate_project, parse_baselines, parse_ks
    from ..errors import InputError
    from ..store.projects import load_project

    baselines = parse_baselines(args.baselines)
    ks = parse_ks(args.k)
    if args.runs < 1:
        raise InputError("--runs must be at least 1", "--runs")
    store = ctx.store()
    want_systems = bool(args.system)
    project = load_project(store, args.project, with_captions=want_systems)
    systems = project.systems if "all" in args.system else list(dict.fromkeys(args.system))
    train = load_project(store, args.train_project, with_captions=False) if args.train_project else None
    report = evaluate_project(project, train_project=train, baselines=baselines, ks=ks, systems=systems,
                              runs=args.runs, seed=args.seed, empty_descriptions=args.empty_descriptions,
                              single_descriptions=args.single_descriptions,
                              upper_bound=not args.no_upper_bound)
    for name, reason in report.meta.get("systems_skipped", {}).items():
        ctx.note(f"annotator: warning: system {name!r} not scored: {reason}")
    out, text = report.to_dict(), _readable(report, args.per_image)
    if args.examples or args.example_image:
        from ..content_selection.examples import example_sentences
        examples = example_sentences(project, report, train_project=train, images=args.example_image,
                                     limit=args.examples, k=args.example_k, seed=args.seed)
        out["examples"] = {"k": args.example_k, "sentences": [e.to_dict() for e in examples]}
        text += "\n\n" + _readable_examples(examples, args.example_k)
    ctx.emit(out, text)
    return 0


def _readable_examples(examples, k: int) -> str:
    lines = [f"example sentences (baselines at k = {k}; systems: their captions)"]
    image = None
    for e in examples:
        if e.image != image:
            image = e.image
            lines += ["", f"image {image}"]
        c = e.choice
        name = f"system {c.method.split(':', 1)[1]}" if c.method.startswith("system:") else c.method
        f = "   –" if c.scores is None else f"F {c.scores[2]:.2f}"
        lines.append(f"  {name:18s} {f}   {e.text or '(nothing selected)'}")
    return "\n".join(lines)


def _fmt(s) -> str:
    return f"{s.P:.2f} ± {s.P_sd:.2f}   {s.R:.2f} ± {s.R_sd:.2f}   {s.F:.2f} ± {s.F_sd:.2f}"


def _readable(report, per_image: bool = False) -> str:
    from ..content_selection import scope_lines

    m = report.meta
    lines = [f"project {m['project']!r}", *scope_lines(report), "",
             f"{'method':18s} {'k':>3s}   {'P':^11s}   {'R':^11s}   {'F':^11s}"]
    if report.upper_bound is not None:
        lines.append(f"{'upper bound':18s} {'':>3s}   {_fmt(report.upper_bound)}")
    for name, by_k in report.baselines.items():
        for k, s in by_k.items():
            lines.append(f"{name:18s} {k:>3d}   {_fmt(s)}")
    for name, s in report.systems.items():
        miss = m.get("system_captions_missing", {}).get(name, 0)
        note = f"   ({miss} images without a caption)" if miss else ""
        if name in m.get("systems_without_mentions", ()):
            note += "   (no caption has box correspondences; captions with [words|ids] markup are read with " \
                    "import --mentions inline)"
        lines.append(f"{('system ' + name):18s} {'':>3s}   {_fmt(s)}" + note)
    for name, reason in m.get("systems_skipped", {}).items():
        lines.append(f"{('system ' + name):18s} {'':>3s}   not scored: {reason}")
    if per_image and report.stats is not None:
        lines += ["", f"{'image':30s} {'boxes':>5s} {'descriptions':>12s} {'no mention':>10s} "
                      f"{'instances/description':>21s} {'boxes mentioned':>15s}"]
        lines.extend(f"{r['key']:30s} {r['boxes']:>5d} {r['descriptions']:>12d} {r['descriptions_without_mentions']:>10d} "
                     f"{r['instances_per_description']:>21.2f} {r['boxes_mentioned']:>15d}" for r in report.stats.rows())
    return "\n".join(lines)
