"""``annotator settings``: a project's settings that change its numbers, shown and changed.

    annotator settings --project P                       # print them
    annotator settings --project P --metric-tokenize ptb # score with coco-caption's PTB tokenizer from now on
    annotator settings --project P --training-corpus P2  # P2's references are cr of every ld and Lg of P
    annotator settings --project P --annotated-sample 1  # annotate each system's captions with n = 1
"""

from __future__ import annotations

from ..tokenize.ptb import TOKENIZERS
from . import add_json_flag


def register(sub) -> None:
    p = sub.add_parser("settings",
                       help="show or change a project's settings (metric tokenisation, training corpus, annotated sample)",
                       description="Show a project's settings; with an option, change that setting first.")
    p.add_argument("--project", required=True, help="project name")
    p.add_argument("--metric-tokenize", choices=TOKENIZERS, default=None,
                   help="how caption metrics read the text: none = raw text (the default; reproduces the "
                        "error-analysis study's released scores), ptb = coco-caption's PTB tokenizer first (the COCO evaluation server's; "
                        "needs Java)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--training-corpus", metavar="P2",
                   help="the project holding the systems' training corpus: its references (or, with "
                        "--training-system, one system's captions there) become cr of every ld and Lg of this "
                        "project, as in the lexical-gap study (default: the project's own references stand in)")
    g.add_argument("--no-training-corpus", action="store_true", help="forget the training corpus")
    p.add_argument("--training-system", metavar="S", help="with --training-corpus: that project's captions of S")
    p.add_argument("--annotated-sample", type=int, metavar="N", default=None,
                   help="which of each system's descriptions of an image annotation, assignment, agreement, "
                        "correction, rescoring, human scores and the imports and exports keyed by image and system "
                        "work on: the captions with sample index n = N (default 0, the first). Refused once the "
                        "project holds judgements, corrections, human scores or human-sample draws (they belong to "
                        "the captions annotators saw) and for an N no caption of the project has; assignments "
                        "made before move to the captions with the new index")
    add_json_flag(p)
    p.set_defaults(func=_settings)


def _settings(args, ctx) -> int:
    from ..assignment import annotated_sample_index, second_pass_mode, set_annotated_sample_index
    from ..diversity.sources import STUDY_CR_NOTE, set_training_corpus, training_corpus
    from ..errors import InputError
    from ..metric_settings import project_tokenize, set_project_tokenize, tokenize_header
    store = ctx.store()
    if args.training_system is not None and args.training_corpus is None:
        raise InputError("--training-system needs --training-corpus P2", "--training-system")
    if args.metric_tokenize is not None:
        set_project_tokenize(store, args.project, args.metric_tokenize)
    if args.training_corpus is not None or args.no_training_corpus:
        set_training_corpus(store, args.project, args.training_corpus, args.training_system)
    if args.annotated_sample is not None:
        set_annotated_sample_index(store, args.project, args.annotated_sample)
    tok = project_tokenize(store, args.project)
    training = training_corpus(store, args.project)
    out = {"project": args.project, "metric_tokenize": tok, "second_pass": second_pass_mode(store, args.project),
           "annotated_sample": annotated_sample_index(store, args.project),
           "training_corpus": None if training is None else {"project": training.project, "system": training.system}}
    cr = training.describe() if training is not None else f"none ({STUDY_CR_NOTE})"
    ctx.emit(out, f"project {args.project!r}\n  metric {tokenize_header(tok)}\n  second pass: {out['second_pass']}"
                  f"\n  annotated sample: n = {out['annotated_sample']}"
                  f"\n  training corpus (cr of ld and Lg): {cr}")
    return 0
