"""``annotator rescore``: the registered caption metrics for a system's captions.

Scores the system's stored captions (or a line-aligned replacement file) against
the project's references with every metric of :data:`annotator.metrics.REGISTRY`
(BLEU-1…4, METEOR, ROUGE-L and CIDEr-D), or, with ``--by-type``, builds the
per-error-type table of :func:`annotator.rescoring.by_type_table`. The metric
names, their defaults and the tokenisation choices come from the registry.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import InputError
from ..metrics.bootstrap import DEFAULT_RESAMPLES
from ..metrics.registry import REGISTRY
from ..metrics.sample import Sample
from ..tokenize.ptb import TOKENIZERS
from . import add_json_flag


def _metric_labels() -> str:
    labels = [REGISTRY.label(k) for k in REGISTRY.keys()]
    return ", ".join(labels[:-1]) + " and " + labels[-1] if len(labels) > 1 else labels[0]


def add_metric_arguments(parser) -> None:
    """Add ``--metrics`` (registry names, comma-separated) and ``--tokenize`` (the metrics' tokenisers) to a parser."""
    parser.add_argument("--tokenize", choices=TOKENIZERS, default=None,
                        help="none: raw text; ptb: coco-caption's PTB tokenizer (needs Java); "
                             "default: the project's setting (annotator settings; none unless changed)")
    parser.add_argument("--metrics", default=",".join(REGISTRY.defaults()),
                        help=f"comma-separated subset of {','.join(REGISTRY.keys())} (default: %(default)s)")


def add_by_type_arguments(parser) -> None:
    """Add ``--by-type`` and its options (``--layer``, ``--corrector``, ``--resamples``, ``--seed``) to a parser."""
    parser.add_argument("--by-type", action="store_true",
                        help="per-error-type table: baseline, each type's corrections alone, all corrections together "
                             "(a row this tool adds to the study's table), "
                             "with paired-bootstrap intervals and p-values")
    parser.add_argument("--layer", default=None,
                        help="with --by-type: count only corrections whose type this layer gives the caption "
                             "('adjudicated' or 'annotator:NAME'; default: adjudicated when a lead adjudicated, else "
                             "the one annotator; required with several annotators and no adjudication)")
    parser.add_argument("--corrector", action="append", dest="correctors", metavar="USER",
                        help="with --by-type: only this user's corrections (repeatable)")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES,
                        help="with --by-type: bootstrap resamples (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="with --by-type: bootstrap seed (default: %(default)s)")


def register(sub) -> None:
    p = sub.add_parser("rescore", help=f"{_metric_labels()} of a system against the references",
                       description="Score a system's captions against the project's references exactly as "
                                   "coco-caption (pycocoevalcap) does. METEOR needs Java.",
                       epilog="metrics:\n" + REGISTRY.cards_text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--project", required=True, help="project name")
    p.add_argument("--system", required=True, help="system whose captions (or caption order) to use")
    p.add_argument("--captions", metavar="FILE",
                   help="score this UTF-8 file instead: line i replaces the system's caption line i")
    add_metric_arguments(p)
    p.add_argument("--per-segment", action="store_true", help="also output per-caption scores")
    add_by_type_arguments(p)
    add_json_flag(p)
    p.set_defaults(func=_rescore)


def run_by_type(args, ctx) -> int:
    """``annotator rescore --by-type``: print the per-error-type table (JSON with ``--json``)."""
    from ..rescoring import by_type_table, format_by_type
    if getattr(args, "captions", None):
        raise InputError("--by-type scores the stored captions and their corrections; it cannot be combined with --captions")
    names = getattr(args, "metrics", None)
    keys = REGISTRY.score_keys(names) if names else None
    result = by_type_table(ctx.store(), args.project, args.system, layer=getattr(args, "layer", None),
                           correctors=getattr(args, "correctors", None),
                           resamples=getattr(args, "resamples", DEFAULT_RESAMPLES), seed=getattr(args, "seed", 0),
                           metrics=keys, tokenize=getattr(args, "tokenize", None))
    ctx.emit(result, format_by_type(result))
    return 0


def load_system(store, project: str, system: str, requires=frozenset({"references"})
                ) -> tuple[list[str], list[Sample], list[str]]:
    """(captions, samples, item keys) of a system, in the system's line order.

    Each sample carries the item's references, image size and gold boxes;
    its image path is resolved under the project's image root only when
    ``requires`` (what the chosen metrics read, see
    :meth:`~annotator.metrics.registry.MetricRegistry.requires`) has
    ``"image"``. Raises InputError when an item has no references and they
    are required (it cannot be scored), or its image cannot be located.
    """
    from ..images import check_image_root, resolve_image_path
    from ..store.projects import captions_of_system, load_project, project_id
    proj = load_project(store, project, with_captions=False)
    if "image" in requires and proj.image_root:  # images are read only from allowed folders
        check_image_root(proj.image_root, trusted=proj.trusted_image_root, source=f"project {project!r}")
    by_id = {it.item_id: it for it in proj.items}
    with store.read() as conn:
        rows = captions_of_system(conn, project_id(conn, project), system)
    hyps, samples, keys = [], [], []
    for r in rows:
        item = by_id[r.item_id]
        if not item.references and "references" in requires:
            raise InputError(f"item {item.key!r} has no references, so system {system!r} cannot be scored",
                             f"project {project!r}")
        image = None
        if "image" in requires:
            image = str(resolve_image_path(proj.image_root, item.image or "", source=f"project {project!r}",
                                           location=f"item {item.key!r}"))
        size = (item.width, item.height) if item.width and item.height else None
        hyps.append(r.text)
        samples.append(Sample(r.text, [ref.text for ref in item.references], image, size, item.boxes))
        keys.append(item.key)
    return hyps, samples, keys


def read_caption_file(path: str, expected: int) -> list[str]:
    """Captions of a line-aligned file (one per line, UTF-8); must have ``expected`` lines."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path) from exc
    try:
        data = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("not valid UTF-8", path, raw[:exc.start].count(b"\n") + 1) from exc
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line, it does not start a new one
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    if len(lines) != expected:
        where = min(len(lines), expected) + 1
        raise InputError(f"has {len(lines)} caption lines but the system has {expected} captions", path, where)
    return lines


def _rescore(args, ctx) -> int:
    if getattr(args, "by_type", False):
        return run_by_type(args, ctx)
    from ..metric_settings import resolve_tokenize, tokenize_header
    from ..metrics import rescore
    metrics = REGISTRY.select(args.metrics)
    store = ctx.store()
    tokenize = resolve_tokenize(store, args.project, args.tokenize)
    hyps, samples, keys = load_system(store, args.project, args.system, REGISTRY.requires(metrics))
    if not hyps:
        raise InputError(f"system {args.system!r} has no captions", f"project {args.project!r}")
    source = "stored captions"
    if args.captions:
        hyps = read_caption_file(args.captions, len(hyps))
        source = args.captions
    result = rescore(hyps, samples, metrics=metrics, tokenize=tokenize, per_segment=args.per_segment)
    result = {"project": args.project, "system": args.system, "captions": source, **result}
    if args.per_segment:
        result["items"] = keys
    lines = [f"{args.project} / {args.system} ({source}, {result['n']} captions); {tokenize_header(result['tokenize'])}"]
    width = max(8, *(len(k) for k in REGISTRY.score_keys()))
    for key in REGISTRY.score_keys():
        if key in result:
            v = result[key]
            lines.append(f"  {key:<{width}} {'n/a' if v is None else f'{v:.4f}'}")
    lines += [f"  {sig}" for sig in result["signatures"].values()]
    lines += [f"  note: {n}" for n in result["notes"]]
    ctx.emit(result, "\n".join(lines))
    return 0
