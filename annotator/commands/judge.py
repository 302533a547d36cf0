"""``annotator judge …``: AI judges — run one, measure them against the humans, list, export, remove, suggest.

    annotator judge run --project P --judge NAME --endpoint URL --model M [--k 5] [--system S …] [--limit N]
                        [--concurrency 8]
    annotator judge report --project P --layer adjudicated [--judge NAME …] [--json | --format md --output F]
    annotator judge list --project P
    annotator judge export --project P --judge NAME [--output F]
    annotator judge delete --project P --judge NAME
    annotator judge suggestions --project P [--judge NAME | --off]

Importing a judge's outputs is ``annotator import judge`` (docs/judges.md).
"""

from __future__ import annotations


from . import add_json_flag, json_command
from .tables import chosen_layer, emit_report, report_command


def register(sub) -> None:
    """Add ``judge`` and its subcommands."""
    p = sub.add_parser("judge", help="AI judges: run one against a model server, measure them against the humans, "
                                     "list, export, delete, pre-fill the annotate panel",
                       description="A judge gives every caption a probability of being inaccurate (and of each "
                                   "error type, with error spans). Import one with 'annotator import judge'; the "
                                   "built-in detectors are the judge 'detectors'.")
    judge = p.add_subparsers(dest="judge_command", metavar="COMMAND", required=True)
    _run_parser(judge)
    report_command(judge, "report", _report, layer=True, options=_report_options,
                   help="each judge against a human layer: accuracy, kappa, per-type P/R/F1, calibration, spans, "
                        "disagreements",
                   description="Over the captions the layer labelled (practice items left out): per judge, accuracy "
                               "and Cohen's kappa with its interval against the layer and each annotator (beside "
                               "the annotators' own kappas), per-type precision, recall, F1 and kappa, expected "
                               "calibration error with its reliability bins, the confusion matrix, token-level "
                               "span P/R/F1, the judges' agreement with each other and the most confident "
                               "disagreements with the humans.")
    json_command(judge, "list", _list, _project, help="the judges of a project with their signatures")
    json_command(judge, "export", _export, _project, _one_judge, _output,
                 help="write a judge's outputs as a judge file (reads back with 'annotator import judge')")
    json_command(judge, "delete", _delete, _project, _one_judge, help="remove a stored judge and its outputs")
    json_command(judge, "suggestions", _suggestions, _project, _suggestion_options,
                 help="pre-fill the annotate panel from a judge for first annotators (never a double-annotated "
                      "caption's second annotator, never blind correction, never Adjudication), or stop")


def _project(p) -> None:
    p.add_argument("--project", required=True)


def _one_judge(p) -> None:
    p.add_argument("--judge", required=True, metavar="NAME")


def _output(p) -> None:
    p.add_argument("--output", metavar="FILE", default=None, help="write here instead of standard output")


def _report_options(p) -> None:
    p.add_argument("--judge", action="append", default=None, metavar="NAME",
                   help="this judge (repeat for several; default every judge of the project, the detectors first)")
    p.add_argument("--disagreements", type=int, default=50, metavar="N",
                   help="list each judge's N most confident disagreements with the layer (default 50)")


def _suggestion_options(p) -> None:
    how = p.add_mutually_exclusive_group()
    how.add_argument("--judge", metavar="NAME", default=None, help="pre-fill from this judge")
    how.add_argument("--off", action="store_true", help="stop pre-filling")


def _run_parser(judge) -> None:
    from ..judges.runner import API_KEY_ENV
    p = judge.add_parser(
        "run", help="ask an OpenAI-compatible vision-language model about every caption, k times",
        description="Ask any OpenAI-compatible chat-completions server that accepts images (vLLM, Ollama, llama.cpp, "
                    "LM Studio, hosted APIs) about every caption, with the prompt of guidelines/judge_prompt.md. "
                    "Answers are kept as they arrive: a stopped run resumes without asking again. The judge's "
                    "outputs are the vote fractions of its k answers per caption.")
    p.add_argument("--project", required=True)
    p.add_argument("--judge", required=True, metavar="NAME", help="the judge's name (its outputs are replaced)")
    p.add_argument("--endpoint", required=True, metavar="URL",
                   help="the server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model", required=True, metavar="M", help="the model name the server knows")
    p.add_argument("--k", type=int, default=5, help="samples per caption (default 5)")
    p.add_argument("--system", action="append", default=None, metavar="S", help="only this system (repeatable)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N captions")
    p.add_argument("--concurrency", type=int, default=8, help="requests at once (default 8)")
    p.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1)")
    p.add_argument("--max-tokens", type=int, default=512, help="longest answer (default 512 tokens)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for one answer (default 120)")
    p.add_argument("--attempts", type=int, default=6, help="tries per sample (default 6)")
    p.add_argument("--api-key-env", default=API_KEY_ENV, metavar="VAR",
                   help=f"the environment variable holding the API key (default {API_KEY_ENV}; unset: no key sent)")
    add_json_flag(p)
    p.set_defaults(func=_run)


class _Bar:
    """The run's progress on standard error: a bar redrawn in place on a terminal, a line per tenth otherwise."""

    def __init__(self, stream):
        self.stream, self.shown = stream, -1
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def __call__(self, stats) -> None:
        total = max(stats.samples, 1)
        share = stats.done / total
        if not self.tty and int(share * 10) == self.shown and stats.done < stats.samples:
            return
        self.shown = int(share * 10)
        bar = "#" * int(share * 30)
        line = (f"[{bar:<30}] {stats.done}/{stats.samples} samples ({stats.cached} stored before) · 429: "
                f"{stats.retried_429} · 5xx: {stats.retried_5xx} · unparsable: {stats.unparsable} · failed: "
                f"{stats.failed}")
        self.stream.write(("\r" + line) if self.tty else line + "\n")
        if self.tty and stats.done >= stats.samples:
            self.stream.write("\n")
        self.stream.flush()


def _run(args, ctx) -> int:
    from ..judges.runner import RunSettings, run_judge
    settings = RunSettings(endpoint=args.endpoint, model=args.model, k=args.k, concurrency=args.concurrency,
                           temperature=args.temperature, max_tokens=args.max_tokens, timeout=args.timeout,
                           attempts=args.attempts, api_key_env=args.api_key_env)
    result = run_judge(ctx.store(), args.project, args.judge, settings, systems=args.system, limit=args.limit,
                       progress=_Bar(ctx.err))
    ctx.emit(result.to_dict(), result.describe())
    return 0


def _report(args, ctx) -> int:
    from ..errors import InputError
    from ..judges.report import judge_report
    if args.disagreements < 0:
        raise InputError(f"must be 0 or more, got {args.disagreements}", "--disagreements")
    report = judge_report(ctx.store(), args.project, chosen_layer(args), args.judge, limit=args.disagreements)
    return emit_report(report, args, ctx, readable, caption=f"Judges against {report.layer}")


def _num(v, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _ci(ci) -> str:
    return "—" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def readable(report) -> str:
    """The report as plain text: a block per judge, then the annotators' and the judges' agreement."""
    from ..judges.outputs import signature_text
    lines = [f"judges against {report.layer} in {report.project!r}: {report.captions} captions labelled "
             f"(inaccurate at p >= 0.5; ECE over {report.bins} equal bins)"]
    for j in report.judges:
        a = j.vs_layer
        lines += ["", f"judge {j.judge} ({signature_text(j.signature)})",
                  f"  {j.n} captions scored ({j.unscored} of the layer's without an output): accuracy "
                  f"{_num(a.accuracy)}, kappa {_num(a.kappa)} {_ci(a.kappa_ci)}, ECE {_num(j.ece)}",
                  f"  confusion (layer rows accurate/inaccurate, judge columns): {a.confusion[0]} {a.confusion[1]}"]
        for x in j.annotators:
            lines.append(f"  against {x.a}: {x.n} captions, accuracy {_num(x.accuracy)}, kappa {_num(x.kappa)} "
                         f"{_ci(x.kappa_ci)}")
        lines.append(f"  spans: token P {_num(j.spans.precision)}, R {_num(j.spans.recall)}, F1 {_num(j.spans.f1)} "
                     f"({j.spans.captions_with_spans} of {j.spans.captions} captions with human spans)")
        lines.append(f"  {'type':<22}{'layer':>6}{'judge':>6}{'both':>6}{'P':>7}{'R':>7}{'F1':>7}{'kappa':>7}")
        for t, s in j.per_type.items():
            lines.append(f"  {t:<22}{s.human:>6}{s.judge:>6}{s.both:>6}{_num(s.precision):>7}{_num(s.recall):>7}"
                         f"{_num(s.f1):>7}{_num(s.kappa):>7}")
        for e in j.suggestions:
            agree = e.agreement
            lines.append(f"  {e.group}: {e.judgements} judgements, agreement with the judge "
                         f"{_num(agree.accuracy if agree else None)}, kappa {_num(agree.kappa if agree else None)}, "
                         f"median {_num(e.median_seconds, 1)} s per caption")
        for d in j.disagreements[:10]:
            lines.append(f"  disagrees ({d.confidence:.2f}): {d.system} {d.item}: layer {d.human}, judge p "
                         f"{d.p_inaccurate:.2f} — {d.caption}")
    for title, rows in (("annotators", report.human), ("judges", report.between)):
        for a in rows:
            lines.append(f"{title}: {a.a} vs {a.b}: {a.n} captions, accuracy {_num(a.accuracy)}, kappa "
                         f"{_num(a.kappa)} {_ci(a.kappa_ci)}")
    return "\n".join(lines)


def _list(args, ctx) -> int:
    from ..judges.outputs import DetectorJudge, signature_text
    from ..store.judges import project_judges
    from ..store.projects import project_id
    store = ctx.store()
    with store.read() as conn:
        found = project_judges(conn, project_id(conn, args.project))
    rows = [{"judge": "detectors", "signature": DetectorJudge().signature, "outputs": None, "source": "built in",
             "updated_at": None}]
    rows += [{"judge": j.name, "signature": j.signature, "outputs": j.outputs, "source": j.source,
              "updated_at": j.updated_at.isoformat() if j.updated_at else None} for j in found]
    text = "\n".join(f"{r['judge']}: {signature_text(r['signature'])}"
                     + (f"; {r['outputs']} captions, from {r['source']}" if r["outputs"] is not None else
                        "; every caption, computed when asked") for r in rows)
    ctx.emit({"project": args.project, "judges": rows}, text)
    return 0


def _export(args, ctx) -> int:
    from pathlib import Path

    from ..exchange.judge_files import write_judge_file
    from ..judges import load_judge
    from ..judges.outputs import DETECTORS
    from ..store.judges import caption_index_all
    from ..store.projects import project_id
    from .io import _write_atomic
    store = ctx.store()
    judge = _exportable(store, args.project, args.judge) if args.judge == DETECTORS else \
        load_judge(store, args.project, args.judge)
    with store.read() as conn:
        places = {v[0]: (s, key, n) for (s, key, n), v in caption_index_all(conn, project_id(conn, args.project)).items()}
    if args.output is None:
        n = write_judge_file(judge, places, ctx.data_out(json_lines=True))
    else:
        count = []
        _write_atomic(Path(args.output), lambda fh: count.append(write_judge_file(judge, places, fh)))
        n = count[0]
        ctx.emit({"project": args.project, "judge": args.judge, "outputs": n, "output": args.output},
                 f"wrote {n} outputs of judge {args.judge!r} to {args.output}")
    return 0


def _exportable(store, project: str, name: str):
    """The detectors' scores of every caption as a stored judge's outputs (to write them as a judge file)."""
    from ..estimate.project import project_detections
    from ..judges.outputs import DetectorJudge, JudgeOutputs
    from ..store.projects import load_project
    proj = load_project(store, project)
    texts = {c.caption_id: c.text for it in proj.items for c in it.captions}
    det = DetectorJudge()
    outputs = {}
    for sc in project_detections(proj).values():
        outputs.update(det.outputs_for(sc, texts))
    return JudgeOutputs(name, det.signature, outputs)


def _delete(args, ctx) -> int:
    from ..store.judges import delete_judge
    from ..store.projects import project_id
    with ctx.store().transaction() as conn:
        n = delete_judge(conn, project_id(conn, args.project), args.judge)
    ctx.emit({"project": args.project, "judge": args.judge, "outputs_removed": n},
             f"removed judge {args.judge!r} and its {n} outputs from {args.project!r}")
    return 0


def _suggestions(args, ctx) -> int:
    from ..judges.suggestions import set_suggestion_judge, suggestion_judge
    store = ctx.store()
    if args.judge is not None or args.off:
        set_suggestion_judge(store, args.project, None if args.off else args.judge)
    name = suggestion_judge(store, args.project)
    ctx.emit({"project": args.project, "suggestions": name},
             f"{args.project!r}: " + (f"the annotate panel starts from judge {name!r} for first annotators"
                                      if name else "no suggestions (the annotate panel starts empty)"))
    return 0
