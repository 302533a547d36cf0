"""``annotator diversity``, ``annotator rich-sparse``, ``annotator correlate`` and ``annotator human-scores``.

* ``diversity``: lexical-diversity measures of the reference corpus and of each
  system, with the lexical diversity ratio (ld) and the lexical gap (Lg), TTR
  curves (also per image) and an estimate of µ;
* ``rich-sparse``: standard metrics on human and machine descriptions with
  ground truth drawn from either (the lexical-gap study's Table 1);
* ``human-scores import|list|clear``: per-caption human judgements;
* ``correlate``: correlations of metrics, weighted metrics, ld and Lg with the
  human scores (optionally importing a file of them first).
"""

from __future__ import annotations

import math
from pathlib import Path

from ..metrics.registry import REGISTRY
from ..tokenize.ptb import TOKENIZERS
from . import json_command
from .tables import add_raw_csv_flag

_MTLD_CHOICES = ("lexicalrichness", "mccarthy-jarvis", "taaled-mean-length")


def register(sub) -> None:
    json_command(
        sub, "diversity", _diversity, _project_arg, _diversity_options, _output_args,
        help="lexical diversity of references and systems, with ld and the lexical gap",
        description="Tokenise a reference corpus cr (the project's references unless chosen with the options below) "
                    "and each system's captions once, compute TTR, root TTR, log TTR, HD-D, MTLD and MATTR, and each "
                    "system's lexical diversity ratio ld = L(system) / L(cr) and lexical gap "
                    "Lg = 1 / (1 + exp(-alpha (ld - mu))).")
    json_command(
        sub, "rich-sparse", _rich_sparse, _project_arg, _rich_sparse_options, _output_args,
        help="standard metrics on human and machine descriptions, each as ground truth (Table 1)",
        description="For every image, draw GROUND_TRUTH descriptions of one pool (human: the references; machine: the "
                    "systems' captions) as ground truth and score the other descriptions of a pool against them; "
                    "repeat DRAWS times (seeded) and report each metric's mean over the draws for human and machine "
                    "candidates against human and machine ground truth.")

    hs = sub.add_parser("human-scores", help="import, list or clear per-caption human judgement scores")
    hsub = hs.add_subparsers(dest="action", metavar="ACTION", required=True)
    from ..io import human_scores
    from .io import add_format_command
    add_format_command(hsub, human_scores.FORMAT, "import")  # the same command as `import human-scores`
    json_command(hsub, "list", _hs_list, _project_arg,
                 help="the stored human scores of a project (summary per name and system)")
    json_command(hsub, "clear", _hs_clear, _project_arg, _hs_clear_options, help="delete stored human scores")

    json_command(
        sub, "correlate", _correlate, _project_arg, _correlate_options, _output_args,
        help="correlate metrics, M·ld, M·Lg, ld and Lg with human scores",
        description="Spearman, Pearson and Kendall correlations (with p-values) of per-caption metric scores, the "
                    "metrics weighted by the lexical diversity ratio and by the lexical gap, and ld and Lg "
                    "themselves, with human scores: overall, over system means, and per system.")


def _project_arg(p) -> None:
    p.add_argument("--project", required=True)


def _tokenize_arg(p) -> None:
    p.add_argument("--tokenize", choices=TOKENIZERS, default=None,
                   help="metric tokenisation (default: the project's setting, see annotator settings)")


def _diversity_options(p) -> None:
    p.add_argument("--system", action="append", default=[], metavar="S", help="only this system (repeatable; default: all)")
    _gap_args(p)
    _reference_args(p)
    _measure_args(p)
    p.add_argument("--curves", action="store_true",
                   help="also compute TTR curves (in --output tables and JSON) and count the images whose references "
                        "are more diverse than their captions at the same length")
    p.add_argument("--image", action="append", default=[], metavar="KEY",
                   help="TTR curves of this image's references and captions (repeatable)")
    p.add_argument("--shuffles", type=int, default=10, help="random caption orders averaged in a TTR curve (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the caption orders and random sub-corpora (default 0)")
    g = p.add_argument_group("estimating mu", "from the ld of rich (references) and sparse (captions) sub-corpora")
    g.add_argument("--estimate-mu", action="store_true", help="estimate mu as the minimum-error point between the two "
                                                               "ld distributions")
    g.add_argument("--subcorpora", default="image", metavar="image|N",
                   help="sub-corpora: one per image (default), or random groups of N descriptions")
    g.add_argument("--mu-method", choices=("gaussian", "empirical"), default="gaussian",
                   help="crossing of normal fits (default) or the best observed split")


def _rich_sparse_options(p) -> None:
    p.add_argument("--system", action="append", default=[], metavar="S", help="machine descriptions only from this "
                                                                              "system (repeatable; default: all)")
    p.add_argument("--draws", type=int, default=1000, help="evaluations per cell (default 1000)")
    p.add_argument("--ground-truth", type=int, default=5, help="descriptions drawn as ground truth (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    p.add_argument("--metric", action="append", default=[], metavar="M", choices=REGISTRY.names(),
                   help=f"metric: {REGISTRY.choices_text()} (repeatable; default {', '.join(REGISTRY.defaults())})")
    _tokenize_arg(p)


def _hs_clear_options(p) -> None:
    p.add_argument("--name", action="append", default=[], help="only scores with this name (repeatable)")


def _correlate_options(p) -> None:
    p.add_argument("--human", metavar="FILE", help="import this human-score file first (same forms as human-scores import)")
    _human_file_args(p)
    p.add_argument("--score", action="append", default=[], metavar="NAME", help="correlate only this human score (repeatable)")
    mg = p.add_mutually_exclusive_group()
    mg.add_argument("--metric", action="append", default=[], metavar="M", choices=REGISTRY.names(),
                    help=f"metric to compute per caption: {REGISTRY.choices_text()} (repeatable; default "
                         f"{', '.join(REGISTRY.defaults(in_process_only=True))})")
    mg.add_argument("--metric-scores", metavar="FILE", help="per-caption metric values from a CSV keyed like human scores")
    mg.add_argument("--no-metrics", action="store_true", help="only ld and Lg")
    _tokenize_arg(p)
    _gap_args(p)
    _reference_args(p)
    _measure_args(p)
    p.add_argument("--overall-only", action="store_true", help="only the pooled correlations (no system means, no per-system rows)")


def _gap_args(p) -> None:
    from ..diversity import RATIO_MEASURES
    p.add_argument("--measure", default="hdd", choices=RATIO_MEASURES, help="measure L of the diversity ratio (default hdd)")
    from ..diversity.gap import GAP_PRESETS
    p.add_argument("--gap-preset", default="text", choices=list(GAP_PRESETS),
                   help="µ and α of the lexical gap: text = the study's text (µ 0.81, α 5; the default), table3 = "
                        "fitted to the study's Table 3 (µ 0.82, α 20.4), which the text's values do not reproduce")
    p.add_argument("--mu", type=float, default=None, help="µ of the lexical gap (default: the preset's, 0.81)")
    p.add_argument("--alpha", type=float, default=None, help="α of the lexical gap (default: the preset's, 5)")


def _reference_args(p) -> None:
    g = p.add_argument_group("reference corpus cr of ld and Lg",
                             "default: the training corpus named with annotator settings --training-corpus, else the "
                             "project's own references")
    g.add_argument("--reference-corpus", metavar="FILE",
                   help="a UTF-8 text file, one description per line (e.g. the captions a system was trained on)")
    g.add_argument("--reference-project", metavar="P", help="another project's references")
    g.add_argument("--reference-system", metavar="S",
                   help="this system's captions (of --reference-project, else of --project)")


def _reference(args, ctx):
    from ..diversity.sources import reference_corpus
    return reference_corpus(ctx.store(), args.project, reference_project=args.reference_project,
                            system=args.reference_system, file=args.reference_corpus)


def _measure_args(p) -> None:
    p.add_argument("--hdd-draws", type=int, default=42, help="HD-D sample size (default 42)")
    p.add_argument("--mattr-window", type=int, default=50, help="MATTR window (default 50; lexicalrichness uses 100)")
    p.add_argument("--mtld", choices=_MTLD_CHOICES, default="lexicalrichness",
                   help="MTLD variant (default lexicalrichness: TTR <= threshold, no minimum factor length)")
    p.add_argument("--mtld-threshold", type=float, default=0.72, help="MTLD factor threshold (default 0.72)")
    p.add_argument("--keep-case", action="store_true", help="do not lower-case tokens")
    p.add_argument("--keep-punctuation", action="store_true", help="split on whitespace only, keep punctuation")


def _human_file_options():
    """The human-score format's options beyond the file: its reader's options and --replace."""
    from ..io import human_scores
    return [o for o in human_scores.FORMAT.options if o.flag is not None]


def _human_file_args(p) -> None:
    from .io import add_format_options
    add_format_options(p, _human_file_options(), "hs_")


def _output_args(p) -> None:
    p.add_argument("--output", metavar="FILE", help="also write the tables to FILE")
    p.add_argument("--format", dest="table_format", default=None,
                   help="format of --output: csv, xlsx, latex, md, json (default: from the file extension)")
    add_raw_csv_flag(p)


def _settings(args):
    from dataclasses import replace

    from ..diversity import MTLD_PRESETS, DiversitySettings, GapSettings
    from ..diversity.gap import gap_preset
    from ..errors import InputError
    from ..tokenize.words import TokenSettings
    try:
        mtld = replace(MTLD_PRESETS[args.mtld], threshold=args.mtld_threshold)
        settings = DiversitySettings(tokens=TokenSettings(lowercase=not args.keep_case, strip_punctuation=not args.keep_punctuation),
                                     hdd_draws=args.hdd_draws, mattr_window=args.mattr_window, mtld=mtld)
        mu, alpha = gap_preset(args.gap_preset)
        gap = GapSettings(measure=args.measure, mu=mu if args.mu is None else args.mu,
                          alpha=alpha if args.alpha is None else args.alpha)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return settings, gap


def _output_format(args) -> str | None:
    """The table format of --output (None without --output); checked before any work is done."""
    if not args.output:
        return None
    from ..errors import InputError
    from ..io.tables import FORMATS
    fmt = args.table_format
    if fmt is None:
        ext = Path(args.output).suffix.lower().lstrip(".")
        fmt = {"tex": "latex", "markdown": "md"}.get(ext, ext)
        if fmt not in FORMATS:
            raise InputError(f"cannot tell the table format from {args.output!r}; give --format", "--output")
    return fmt


def _write_output(args, tables) -> None:
    fmt = _output_format(args)
    if fmt is not None:
        from ..io.tables import write_table
        Path(args.output).write_bytes(write_table(tables, fmt, raw_csv=args.raw_csv))


def _num(v, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    if isinstance(v, int):
        return str(v)
    return f"{v:.{digits}f}"


def _diversity(args, ctx) -> int:
    from ..diversity import project_diversity
    settings, gap = _settings(args)
    if args.shuffles < 1:
        from ..errors import InputError
        raise InputError("--shuffles must be at least 1", "--shuffles")
    _output_format(args)
    reference = _reference(args, ctx)
    store = ctx.store()
    report = project_diversity(store, args.project, systems=args.system or None, settings=settings, gap=gap,
                               curves=args.curves, curve_shuffles=args.shuffles, seed=args.seed, reference=reference)
    out = report.to_dict()
    tables = report.to_tables()
    extra: list[str] = []
    pools = None
    if args.curves or args.image or args.estimate_mu:
        from ..diversity.sources import project_pools
        pools = project_pools(store, args.project, args.system or None)
    if args.curves:
        from ..diversity.curves import compare_image_curves
        out["curves"] = {name: _curve_dict(c) for name, c in report.curves.items()}
        comparison = compare_image_curves(pools, tokens=settings.tokens, shuffles=args.shuffles, seed=args.seed)
        out["image_curve_comparison"] = comparison.to_dict()
        extra.append(f"per image, at the same number of tokens: references more diverse than captions on "
                     f"{comparison.human_higher} of {comparison.images} images, less on {comparison.machine_higher}, "
                     f"equal on {comparison.equal}" + (f" ({comparison.skipped} without words on one side)"
                                                       if comparison.skipped else ""))
    if args.image:
        import pandas as pd

        from ..diversity.curves import image_curves
        per_image = image_curves(pools, args.image, tokens=settings.tokens, shuffles=args.shuffles, seed=args.seed)
        out["image_curves"] = {c.key: {"human": _curve_dict(c.human), "machine": _curve_dict(c.machine)}
                               for c in per_image}
        tables["TTR curves per image"] = pd.concat([c.to_frame() for c in per_image], ignore_index=True)
    if args.estimate_mu:
        from ..diversity.calibration import estimate_mu
        mu = estimate_mu(pools, reference, settings=settings, measure_key=gap.measure, split=args.subcorpora,
                         method=args.mu_method, seed=args.seed)
        out["mu_estimate"] = mu.to_dict()
        tables.update(mu.to_tables())
        summary = mu.summary()
        extra.append(f"estimated mu = {mu.mu:.3f} ({mu.method}; error {mu.error:.3f}): ld of "
                     f"{summary['rich']['n']} rich sub-corpora mean {summary['rich']['mean']:.3f}, "
                     f"{summary['sparse']['n']} sparse mean {summary['sparse']['mean']:.3f}"
                     + (f"; {mu.dropped} left out (no {mu.measure})" if mu.dropped else "")
                     + ("" if mu.separated else "; the rich sub-corpora are not the more diverse, so mu means little"))
    _write_output(args, tables)
    ctx.emit(out, "\n".join([_readable_diversity(report), *extra]))
    return 0


def _curve_dict(curve) -> dict:
    return {"tokens": curve.tokens.tolist(), "ttr": curve.ttr.tolist(), "sd": curve.sd.tolist()}


def _rich_sparse(args, ctx) -> int:
    from ..diversity.rich_sparse import DrawSettings, project_rich_sparse
    _output_format(args)
    settings = DrawSettings(draws=args.draws, ground_truth=args.ground_truth, seed=args.seed)
    report = project_rich_sparse(ctx.store(), args.project, systems=args.system or None,
                                 metrics=args.metric or None, settings=settings, tokenize=args.tokenize)
    _write_output(args, report)
    table = report.table()
    table.columns = [f"{a[len('Ground truth: '):]} / {b[len('Candidates: '):]}" for a, b in table.columns]
    from ..metric_settings import paper_tokenize_note, tokenize_header
    lines = [f"ground truth / candidates; mean over {settings.draws} draws of {settings.ground_truth} ground-truth "
             f"descriptions per image (seed {settings.seed}); {tokenize_header(report.tokenize)}; "
             f"{paper_tokenize_note(report.tokenize, 'lexical-gap')}",
             table.to_string(float_format=lambda v: f"{v:.3f}", na_rep="–"), ""]
    lines += [f"{c.ground_truth} / {c.candidates}: {c.images} images, {c.candidates_per_draw} candidates per draw"
              for c in report.cells]
    lines += [f"note: {n}" for n in report.notes]
    ctx.emit(report.to_dict(), "\n".join(lines))
    return 0


def _readable_diversity(report) -> str:
    cols = ["texts", "tokens", "types", "ttr", "rttr", "logttr", "hdd", "mtld", "mattr", "ld", "lexical_gap"]
    heads = ["texts", "tokens", "types", "TTR", "RTTR", "LogTTR", "HD-D", "MTLD", "MATTR", "ld", "Lg"]
    frame = report.to_frame()
    width = max(12, *(len(str(c)) for c in frame["corpus"]))
    lines = [f"reference corpus cr: {report.describe_reference()}",
             *([f"note: {report.reference.note}"] if report.reference is not None and report.reference.note else []),
             "",
             f"{'corpus':{width}s} " + " ".join(f"{h:>8s}" for h in heads)]
    for rec in frame.to_dict("records"):
        lines.append(f"{str(rec['corpus']):{width}s} " + " ".join(
            f"{_num(rec[c], 2 if c in ('rttr', 'mtld') else 3):>8s}" for c in cols))
    lines.append("")
    lines.append(f"ld = {report.gap.measure}(system) / {report.gap.measure}(cr); "
                 f"Lg = 1 / (1 + exp(-{report.gap.alpha:g} (ld - {report.gap.mu:g})))")
    from ..diversity.readability import READABILITY, READABILITY_LABELS
    if any(c in frame.columns and frame[c].notna().any() for c in READABILITY):
        lines += ["", "readability (textstat; each description one sentence):",
                  f"{'corpus':{width}s} " + " ".join(f"{READABILITY_LABELS[c]:>20s}" for c in READABILITY)]
        for rec in frame.to_dict("records"):
            lines.append(f"{str(rec['corpus']):{width}s} " + " ".join(f"{_num(rec[c], 2):>20s}" for c in READABILITY))
    return "\n".join(lines)


def _import_file(args, ctx, path):
    from ..io import human_scores
    from .io import format_values
    return human_scores.FORMAT.run(ctx.store(), args.project, command_line=True, file=path,
                                   **format_values(args, _human_file_options(), "hs_"))


def _hs_list(args, ctx) -> int:
    from ..store.human_scores import scores_frame
    df = scores_frame(ctx.store(), args.project)
    summary = []
    if not df.empty:
        for (name, system), g in df.groupby(["name", "system"], sort=False):
            summary.append({"name": name, "system": system, "captions": int(len(g)), "mean": float(g["value"].mean()),
                            "min": float(g["value"].min()), "max": float(g["value"].max())})
    text = "\n".join(f"{r['name']:20s} {r['system']:20s} {r['captions']:6d} captions  mean {r['mean']:.3f}  "
                     f"range {r['min']:g}..{r['max']:g}" for r in summary) or f"project {args.project!r} has no human scores"
    ctx.emit({"project": args.project, "scores": summary}, text)
    return 0


def _hs_clear(args, ctx) -> int:
    from ..store.human_scores import delete_scores
    from ..store.projects import project_id
    store = ctx.store()
    with store.transaction() as conn:
        n = delete_scores(conn, project_id(conn, args.project), args.name or None)
    ctx.emit({"project": args.project, "deleted": n}, f"deleted {n} human score(s)")
    return 0


def _correlate(args, ctx) -> int:
    from ..diversity.correlation import project_correlations, read_metric_scores
    settings, gap = _settings(args)
    store = ctx.store()
    imported = None
    if args.human:
        imported = _import_file(args, ctx, args.human)
    elif args.hs_system or args.hs_name:
        from ..errors import InputError
        raise InputError("--system/--name describe a --human file; give --human FILE")
    metrics = None
    compute = None
    if args.metric_scores:
        metrics = read_metric_scores(store, args.project, args.metric_scores)
    elif not args.no_metrics:
        compute = tuple(args.metric) or REGISTRY.defaults(in_process_only=True)
    report = project_correlations(store, args.project, metrics=metrics, compute_metrics=compute, humans=args.score or None,
                                  settings=settings, gap=gap, per_system=not args.overall_only,
                                  system_means=not args.overall_only, tokenize=args.tokenize,
                                  reference=_reference(args, ctx))
    _write_output(args, report)
    out = report.to_dict()
    if imported is not None:
        out["imported"] = {"names": list(imported.names), "captions": imported.captions, "values": imported.values}
    ctx.emit(out, _readable_correlations(report))
    return 0


def _readable_correlations(report) -> str:
    lines = []
    for h in report.humans:
        for scope in report.scopes():
            table = report.table(scope, h)
            if table.empty:
                continue
            lines.append(f"== {h} · {scope}")
            lines.append(table.to_string(float_format=lambda v: f"{v:.3f}", na_rep="–"))
            lines.append("")
    if report.reference:
        lines.append(f"reference corpus cr: {report.reference}")
    if report.systems:
        from ..diversity.readability import READABILITY_LABELS
        lines.append("systems: " + ", ".join(
            f"{s} ld={_num(ld)} Lg={_num(lg)}" + "".join(f" {READABILITY_LABELS[k]}={_num(v, 2)}"
                                                        for k, v in report.readability.get(s, {}).items())
            for s, (ld, lg) in report.systems.items()))
    lines.extend(f"note: {n}" for n in report.notes)
    return "\n".join(lines)
