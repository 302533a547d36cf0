"""``annotator content-selection``: score box selection of baselines, systems and the human upper bound."""

from __future__ import annotations


from ..cli import add_json_flag


def register(sub) -> None:
    """Add the ``content-selection`` subcommand."""
    p = sub.add_parser(
        "content-selection",
        help="content-selection P/R/F of baselines (k = 1..15), systems and the human upper bound",
        description=(
            "Score how well box selections match the boxes the gold descriptions mention. Textual priors are "
            "learned from --train-project (then all of --project is scored) or from a seeded random split of "
            "--project (then only its test part is scored; default: --split-seed 0)."))
    p.add_argument("--project", required=True, help="project to evaluate")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--train-project", metavar="P2", help="learn the textual priors from this project")
    src.add_argument("--split-seed", type=int, metavar="N", help="split --project at random with this seed (default 0)")
    p.add_argument("--test-fraction", type=float, default=0.2, metavar="F",
                   help="share of --project used for testing when splitting (default 0.2)")
    p.add_argument("--system", action="append", default=[], metavar="S",
                   help="also score this system's captions (repeatable; 'all' for every system of the project)")
    p.add_argument("--baselines", default="all",
                   help="comma-separated baselines, 'all' (default) or 'none': random, size, position, unigram, "
                        "bigram, bigram+size, bigram+position, unigram+size, unigram+position")
    p.add_argument("--k", default="1-15", help="selection sizes, e.g. 1-15 (default), 3 or 1,3,5")
    p.add_argument("--runs", type=int, default=5, help="random orders per image for the random baseline (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random baseline (default 0)")
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
    report = evaluate_project(project, train_project=train, split_seed=args.split_seed, test_fraction=args.test_fraction,
                              baselines=baselines, ks=ks, systems=systems, runs=args.runs, seed=args.seed)
    for name, reason in report.meta.get("systems_skipped", {}).items():
        ctx.note(f"annotator: warning: system {name!r} not scored: {reason}")
    ctx.emit(report.to_dict(), _readable(report))
    return 0


def _fmt(s) -> str:
    return f"{s.P:.2f} ± {s.P_sd:.2f}   {s.R:.2f} ± {s.R_sd:.2f}   {s.F:.2f} ± {s.F_sd:.2f}"


def _readable(report) -> str:
    m = report.meta
    source = f"priors from project {m['train_project']!r}" if "train_project" in m else \
        f"split seed {m['split_seed']}, test fraction {m['test_fraction']}"
    lines = [f"project {m['project']!r}: {m['images']} images scored ({m['skipped_images']} without boxes or "
             f"mentioned boxes skipped); {source}", "",
             f"{'method':18s} {'k':>3s}   {'P':^11s}   {'R':^11s}   {'F':^11s}",
             f"{'upper bound':18s} {'':>3s}   {_fmt(report.upper_bound)}"]
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
    return "\n".join(lines)
