"""``annotator tables``: error-frequency tables of a layer, as JSON or as CSV/XLSX/LaTeX/Markdown files.

    annotator tables --project P --annotator A --json
    annotator tables --project P --layer adjudicated --system S --format latex --output t.tex
    annotator tables --project P --layer adjudicated --system S1 --system S2 --json   # side by side

:func:`write_output` is the shared "--format/--output" writer other commands
(``annotator agreement``) use; :func:`report_command` adds a subcommand with the
flags every such report shares and :func:`emit_report` writes or prints what it found.
"""

from __future__ import annotations

from . import add_json_flag

TABLE_FORMATS = ("csv", "xlsx", "latex", "md", "json")


def add_output_flags(p) -> None:
    """``--format``, ``--output`` and ``--raw-csv`` for commands that export tables."""
    p.add_argument("--format", choices=TABLE_FORMATS, default=None,
                   help="write the tables in this format instead of printing figures")
    p.add_argument("--output", metavar="FILE", default=None,
                   help="file to write (default: standard output; xlsx to stdout only when it is not a terminal)")
    add_raw_csv_flag(p)


def add_raw_csv_flag(p) -> None:
    """``--raw-csv``: CSV cells exactly as stored (see :func:`annotator.io.tables.neutralise_formula`)."""
    p.add_argument("--raw-csv", action="store_true",
                   help="CSV: write every cell exactly as stored (by default text starting with = + - @, a tab or a "
                        "carriage return gets a leading ' so a spreadsheet does not run it as a formula)")


def report_command(sub, name: str, func, *, help: str, description: str | None = None, layer: bool = False,
                   options=None):
    """Add a subcommand that reports on one project: ``--project``; with ``layer``, the required choice of
    ``--annotator NAME`` or ``--layer LAYER`` (read back by :func:`chosen_layer`); the command's own
    ``options(parser)``; then ``--json`` and :func:`add_output_flags`. Returns the parser."""
    p = sub.add_parser(name, help=help, description=description)
    p.add_argument("--project", required=True)
    if layer:
        who = p.add_mutually_exclusive_group(required=True)
        who.add_argument("--annotator", metavar="NAME", help="use this annotator's judgements")
        who.add_argument("--layer", metavar="LAYER", help="'adjudicated', 'consensus' or 'annotator:NAME'")
    if options is not None:
        options(p)
    add_json_flag(p)
    add_output_flags(p)
    p.set_defaults(func=func)
    return p


def chosen_layer(args):
    """The :class:`annotator.layers.Layer` of a :func:`report_command` with ``layer``: ``--layer`` parsed, or
    ``--annotator``'s own judgements."""
    from ..layers import Layer, parse_layer
    return parse_layer(args.layer) if args.layer else Layer.annotator(args.annotator)


def emit_report(report, args, ctx, readable, *, caption: str | None = None, data=None) -> int:
    """With ``--format``, write ``report`` (see :func:`write_output`); otherwise print it: ``data`` (default
    ``report.summary()``) as JSON with ``--json``, else ``readable(report)``. Returns the exit code, 0."""
    if args.format:
        write_output(report, args, ctx, caption=caption)
        return 0
    ctx.emit(report.summary() if data is None else data, readable(report))
    return 0


def write_output(report, args, ctx, *, caption: str | None = None) -> None:
    """Render ``report.to_tables()`` in ``args.format`` to ``args.output`` or standard output."""
    from ..io.tables import write_table
    write_data(write_table(report, args.format, caption=caption, raw_csv=args.raw_csv), args, ctx)


def write_data(data: bytes, args, ctx) -> None:
    """Write a rendered file (format ``args.format``) to ``args.output`` or standard output: text formats as
    :meth:`CommandContext.data_out` shows them, an xlsx workbook only to a file or a pipe."""
    from ..errors import InputError
    if args.output:
        try:
            with open(args.output, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", args.output) from exc
        ctx.note(f"wrote {args.output} ({len(data):,} bytes)")
        return
    out = ctx.out
    if args.format == "xlsx":
        buffer = getattr(out, "buffer", None)
        if buffer is None or (hasattr(out, "isatty") and out.isatty()):
            raise InputError("an xlsx workbook is binary: give --output FILE (or redirect standard output)", "--output")
        out.flush()
        buffer.write(data)
        buffer.flush()
        return
    ctx.data_out(json_lines=args.format in ("json", "jsonl")).write(data.decode("utf-8"))


def register(sub) -> None:
    """Add the ``tables`` subcommand."""
    report_command(
        sub, "tables", _tables, layer=True, options=_tables_options,
        help="error-frequency tables (accuracy, errors per description, error types) of a layer",
        description=("Count accurate and inaccurate captions, errors per inaccurate description (1, 2, 3, 4+) and "
                     "every error type, from one annotator's judgements or from the adjudicated layer "
                     "(adjudication where present, else the annotators' agreed judgement; captions whose labels "
                     "still differ are left out and reported as unresolved), or from the consensus layer "
                     "(the same without the adjudications)."))


def _tables_options(p) -> None:
    p.add_argument("--system", action="append", default=[], metavar="S",
                   help="only this system's captions; repeat for a side-by-side comparison")
    p.add_argument("--exclude-practice", action="store_true", help="leave out items marked as practice examples")
    p.add_argument("--order", choices=("grouped", "count", "taxonomy"), default="grouped",
                   help="row order of the error-type table (default: grouped)")


def _tables(args, ctx) -> int:
    from ..analysis import compare_systems, error_tables
    from ..errors import NotFound
    from ..layers import build_layer
    from ..store.analysis_queries import judgement_frame
    from ..store.projects import system_names

    layer = chosen_layer(args)
    store = ctx.store()
    known = system_names(store, args.project)
    for s in args.system:
        if s not in known:
            raise NotFound(f"project {args.project!r} has no system {s!r}; systems: {', '.join(known) or 'none'}")
    frame = judgement_frame(store, args.project, kinds=("annotation", "adjudication"))
    built = build_layer(frame, layer)
    if layer.kind == "annotator" and len(built) == 0:
        raise NotFound(f"{layer.user!r} has no judgements in project {args.project!r}")
    systems = list(dict.fromkeys(args.system))
    if len(systems) > 1:
        report = compare_systems(built, systems, exclude_practice=args.exclude_practice)
        summary = report.summary()
        text = "\n\n".join(_readable(t, args.order) for t in report.tables.values())
    else:
        report = error_tables(built, system=systems[0] if systems else None, exclude_practice=args.exclude_practice)
        summary = report.summary()
        text = _readable(report, args.order)
    if args.format:
        write_output(_Ordered(report, args.order), args, ctx, caption=f"Error analysis ({layer})")
        return 0
    ctx.emit(summary, text)
    return 0


class _Ordered:
    """A report whose type table uses the order asked on the command line."""

    def __init__(self, report, order: str):
        self.report, self.order = report, order

    def to_tables(self):
        tables = self.report.to_tables()
        tables["Error types"] = self.report.types_frame(self.order)
        return tables


def _pct(x) -> str:
    return "—" if x is None or x != x else f"{100 * x:.1f}%"  # None or NaN: no denominator


def _readable(t, order: str) -> str:
    lines = [f"layer {t.layer}" + (f", system {t.system}" if t.system else ", all systems"),
             f"captions: {t.total}  accurate: {t.accurate} ({_pct(t.share_accurate)})  "
             f"inaccurate: {t.inaccurate} ({_pct(t.share_inaccurate)})"]
    if t.unresolved:
        lines.append(f"left out: {t.unresolved} captions whose labels differ and are not adjudicated yet")
    if t.untyped:
        lines.append(f"inaccurate without known types: {t.untyped}")
    lines.append("errors per description: " + "  ".join(f"{k}: {v}" for k, v in t.errors_per_description.items()))
    lines.append(f"errors in total: {t.total_errors}" + (f" ({t.errors_per_inaccurate:.2f} per inaccurate description)"
                                                          if t.errors_per_inaccurate is not None else ""))
    from ..analysis import SHARE_OF_DESCRIPTIONS, SHARE_OF_ERRORS
    lines.append(f"    {'error type':28s} {'count':>8s} {SHARE_OF_ERRORS:>16s} {SHARE_OF_DESCRIPTIONS:>22s}")
    group = None
    for row in t.types_frame(order).to_dict("records"):
        if order == "grouped" and row["group"] != group:
            group = row["group"]
            lines.append(f"  {group} ({t.group_counts()[group]})")
        lines.append(f"    {row['name']:28s} {row['count']:>8d} {_pct(row[SHARE_OF_ERRORS]):>16s} "
                     f"{_pct(row[SHARE_OF_DESCRIPTIONS]):>22s}")
    lines.append(f"share of errors: count / {t.total_errors} error types ticked; share of descriptions: count / "
                 f"{t.known_descriptions} descriptions with known types (accurate ones included)")
    return "\n".join(lines)
