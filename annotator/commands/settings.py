"""``annotator settings``: a project's settings that change its numbers, shown and changed.

    annotator settings --project P                       # print them
    annotator settings --project P --metric-tokenize ptb # score with coco-caption's PTB tokenizer from now on
"""

from __future__ import annotations

from ..metrics.tokenize import TOKENIZERS
from . import add_json_flag


def register(sub) -> None:
    p = sub.add_parser("settings", help="show or change a project's settings (metric tokenisation)",
                       description="Show a project's settings; with an option, change that setting first.")
    p.add_argument("--project", required=True, help="project name")
    p.add_argument("--metric-tokenize", choices=TOKENIZERS, default=None,
                   help="how caption metrics read the text: none = raw text (the default; reproduces the "
                        "error-analysis study's released scores), ptb = coco-caption's PTB tokenizer first (the COCO evaluation server's; "
                        "needs Java)")
    add_json_flag(p)
    p.set_defaults(func=_settings)


def _settings(args, ctx) -> int:
    from ..assignment import second_pass_mode
    from ..metric_settings import project_tokenize, set_project_tokenize, tokenize_header
    store = ctx.store()
    if args.metric_tokenize is not None:
        set_project_tokenize(store, args.project, args.metric_tokenize)
    tok = project_tokenize(store, args.project)
    out = {"project": args.project, "metric_tokenize": tok, "second_pass": second_pass_mode(store, args.project)}
    ctx.emit(out, f"project {args.project!r}\n  metric {tokenize_header(tok)}\n  second pass: {out['second_pass']}")
    return 0
