"""``annotator rescore``: coco-caption metrics for a system's captions.

Scores the system's stored captions (or a line-aligned replacement file) against
the project's references with BLEU-1…4, METEOR, ROUGE-L and CIDEr-D.
"""

from __future__ import annotations

from pathlib import Path

from ..cli import add_json_flag
from ..errors import InputError


def register(sub) -> None:
    p = sub.add_parser("rescore", help="BLEU, METEOR, ROUGE-L and CIDEr-D of a system against the references",
                       description="Score a system's captions against the project's references exactly as "
                                   "coco-caption (pycocoevalcap) does. METEOR needs Java.")
    p.add_argument("--project", required=True, help="project name")
    p.add_argument("--system", required=True, help="system whose captions (or caption order) to use")
    p.add_argument("--captions", metavar="FILE",
                   help="score this UTF-8 file instead: line i replaces the system's caption line i")
    p.add_argument("--tokenize", choices=["none", "ptb"], default="none",
                   help="none: raw text (default); ptb: coco-caption's PTB tokenizer (needs Java)")
    p.add_argument("--metrics", default="bleu,meteor,rouge,cider",
                   help="comma-separated subset of bleu,meteor,rouge,cider (default: all)")
    p.add_argument("--per-segment", action="store_true", help="also output per-caption scores")
    try:  # the per-error-type table (--by-type and its options) lives with the correction workflow
        from ..rescoring import add_by_type_arguments
    except ImportError:
        pass
    else:
        add_by_type_arguments(p)
    add_json_flag(p)
    p.set_defaults(func=_rescore)


def load_system(store, project: str, system: str) -> tuple[list[str], list[list[str]], list[str]]:
    """(captions, references, item keys) of a system, in the system's line order.

    Raises InputError when an item has no references (it cannot be scored).
    """
    from ..store.projects import captions_of_system, load_project, project_id
    proj = load_project(store, project, with_captions=False)
    by_id = {it.item_id: it for it in proj.items}
    with store.read() as conn:
        rows = captions_of_system(conn, project_id(conn, project), system)
    hyps, refs, keys = [], [], []
    for r in rows:
        item = by_id[r.item_id]
        if not item.references:
            raise InputError(f"item {item.key!r} has no references, so system {system!r} cannot be scored",
                             f"project {project!r}")
        hyps.append(r.text)
        refs.append([ref.text for ref in item.references])
        keys.append(item.key)
    return hyps, refs, keys


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
        from ..rescoring import run_by_type
        return run_by_type(args, ctx)
    from ..metrics import rescore
    store = ctx.store()
    hyps, refs, keys = load_system(store, args.project, args.system)
    if not hyps:
        raise InputError(f"system {args.system!r} has no captions", f"project {args.project!r}")
    source = "stored captions"
    if args.captions:
        hyps = read_caption_file(args.captions, len(hyps))
        source = args.captions
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    result = rescore(hyps, refs, metrics=metrics, tokenize=args.tokenize, per_segment=args.per_segment)
    result = {"project": args.project, "system": args.system, "captions": source, **result}
    if args.per_segment:
        result["items"] = keys
    lines = [f"{args.project} / {args.system} ({source}, {result['n']} captions, tokenize={result['tokenize']})"]
    for key in ("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr"):
        if key in result:
            v = result[key]
            lines.append(f"  {key:<8} {'n/a' if v is None else f'{v:.4f}'}")
    lines += [f"  {sig}" for sig in result["signatures"].values()]
    lines += [f"  note: {n}" for n in result["notes"]]
    ctx.emit(result, "\n".join(lines))
    return 0
