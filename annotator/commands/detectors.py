"""``annotator detectors evaluate``: the automatic detectors scored word by word against a layer's spans.

    annotator detectors evaluate --project P --layer adjudicated --json
    annotator detectors evaluate --project P --annotator ali --format csv --output detectors.csv
"""

from __future__ import annotations

from .tables import chosen_layer, emit_report, report_command


def register(sub) -> None:
    """Add ``detectors`` and its subcommand ``evaluate``."""
    p = sub.add_parser("detectors", help="the automatic error detectors behind 'annotator estimate'")
    detectors = p.add_subparsers(dest="detectors_command", metavar="COMMAND", required=True)
    report_command(
        detectors, "evaluate", _evaluate, layer=True, options=_options,
        help="per error type, token-level P/R/F1 of the detectors' trigger words against the layer's error spans, "
             "with caption-level P/R beside them",
        description=("The detectors' flagged types (score at or above --threshold) and their trigger words, as "
                     "token spans, against one judgement layer: tokens both mark / tokens the detector marks "
                     "(precision), / tokens the layer marks (recall); captions likewise. Captions the layer skipped "
                     "or left with open types are left out; practice items too."))


def _options(p) -> None:
    p.add_argument("--system", action="append", default=None, metavar="NAME",
                   help="only this system's captions (repeat for several; default: every system)")
    p.add_argument("--threshold", type=float, default=None, help="flag a type at this score or above (default 0.5)")


def readable(report) -> str:
    """The evaluation as a plain-text table."""
    def num(v):
        return "—" if v is None else f"{v:.3f}"
    lines = [f"detectors against {report.layer} in {report.project!r}: {report.captions} captions judged, "
             f"{report.captions_with_spans} with error spans (flag at score >= {report.threshold:g})",
             f"{'type':<22}{'det tok':>8}{'hum tok':>8}{'both':>6}{'tok P':>7}{'tok R':>7}{'tok F1':>7}"
             f"{'cap P':>7}{'cap R':>7}"]
    for t, s in report.per_type.items():
        lines.append(f"{t:<22}{s.tokens_detector:>8}{s.tokens_human:>8}{s.tokens_both:>6}{num(s.token_precision):>7}"
                     f"{num(s.token_recall):>7}{num(s.token_f1):>7}{num(s.caption_precision):>7}"
                     f"{num(s.caption_recall):>7}")
    if not report.per_type:
        lines.append("(no type flagged by the detectors or marked by the layer)")
    return "\n".join(lines)


def _evaluate(args, ctx) -> int:
    from ..errors import InputError
    from ..estimate.span_eval import FLAG_THRESHOLD, evaluate_detectors
    threshold = FLAG_THRESHOLD if args.threshold is None else args.threshold
    if not 0 < threshold <= 1:
        raise InputError(f"the threshold is a score above 0 and at most 1, got {threshold}", "--threshold")
    report = evaluate_detectors(ctx.store(), args.project, chosen_layer(args), systems=args.system,
                                threshold=threshold)
    return emit_report(report, args, ctx, readable, caption="Detectors against human error spans")
