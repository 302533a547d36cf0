"""``annotator team``: the team dashboard's figures (annotator.team) for a lead.

    annotator team --project P [--json]
    annotator team --project P --format xlsx --output team.xlsx
"""

from __future__ import annotations

from .agreement import add_interval_flags, interval_options
from .tables import emit_report, report_command


def register(sub) -> None:
    """Add ``annotator team``."""
    report_command(
        sub, "team", _team, options=add_interval_flags,
        help="who has done how much, how fast, what waits for the fine pass, agreement so far",
        description=("Per annotator: assigned, done, skipped, fine pass pending, not started, median seconds per "
                     "caption, captions per hour, last active (UTC); assigned captions judged per day; agreement "
                     "so far on the captions two annotators share, with the kappa interval (practice items left "
                     "out). The Team page shows the same figures."))


def _team(args, ctx) -> int:
    from ..team import read_team_report
    report = read_team_report(ctx.store(), args.project, **interval_options(args))
    return emit_report(report, args, ctx, readable, caption=f"Team figures of {args.project}")


def _num(x, digits: int = 1) -> str:
    return "—" if x is None or x != x else f"{x:.{digits}f}"


def readable(report) -> str:
    """The report as lines of text."""
    lines = [f"project {report.project}: " + ", ".join(f"{k} {v}" for k, v in report.totals.items())]
    for r in report.annotators.to_dict(orient="records"):
        lines.append(f"{r['annotator']}: assigned {r['assigned']}, done {r['done']}, skipped {r['skipped']}, "
                     f"fine pass pending {r['fine pass pending']}, not started {r['not started']}; "
                     f"median {_num(r['median seconds'])} s per caption, {_num(r['captions per hour'])} captions "
                     f"per hour; last active {r['last active (UTC)'] or '—'}")
    level = f"{report.confidence:.0%}"
    for r in report.agreement.to_dict(orient="records"):
        lines.append(f"{r['annotator A']} vs {r['annotator B']}: {r['shared captions']} shared captions, agreement "
                     f"{_num(r['observed agreement'], 3)}, kappa {_num(r['kappa'], 3)} "
                     f"({level} interval {_num(r['kappa low'], 3)} to {_num(r['kappa high'], 3)})")
    if report.agreement.empty:
        lines.append("agreement: no two annotators share a judged caption yet")
    return "\n".join(lines)
