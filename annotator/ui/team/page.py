"""The Team page (leads): per annotator progress and speed, progress over time, agreement so far.

Every figure comes from annotator.team.TeamReport, the object ``annotator team`` prints. The page keeps
one live frame per project (current annotations with skips and timing); a refresh reads only what was
saved since the last one.
"""

from __future__ import annotations

import time

import altair as alt
import pandas as pd
import streamlit as st

from ... import ui
from ...agreement import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from ...errors import AnnotatorError
from ...io.tables import FORMATS
from ...frames.assignments import assignment_frame
from ...frames.shared import team_live_frame
from ...store.frame_versions import assignment_version
from ...team import TeamReport, combine, recent_activity, team_agreement, team_counts
from ..widgets.downloads import table_download
from ..widgets.palette import category_colour


def _live(url: str, project: str):
    # The process's one Team frame per project (annotator.frames; the server's warm-up may have read it).
    return team_live_frame(ui.get_store(), project, snapshots=ui.frame_snapshots(url))


@st.cache_resource(show_spinner=False, max_entries=8)
def _assignments(url: str, project: str, version: tuple):
    return assignment_frame(ui.get_store(), project, snapshots=ui.frame_snapshots(url), version=version)


@st.cache_resource(show_spinner="Counting…", max_entries=8)
def _counts(url: str, project: str, version: tuple, assignment_version: tuple, _frame, _assignments):
    return team_counts(project, _frame, _assignments)


@st.cache_resource(show_spinner="Computing agreement so far…", max_entries=8)
def _agreement(url: str, project: str, version: tuple, _frame):
    return team_agreement(_frame, confidence=DEFAULT_CONFIDENCE, n_resamples=DEFAULT_RESAMPLES, seed=DEFAULT_SEED)


class TeamFigures:
    """The selected project's team figures as the page needs them: the counts at once, the agreement half
    (a bootstrap) only when asked for, so the first table shows before it is computed. Both come from
    annotator.team, the functions ``annotator team`` runs."""

    def __init__(self, ctx: ui.PageContext):
        self.url = ctx.store.url
        self.project = ui.require_project(ctx, "Import captions and assign them first.")
        try:
            self.frame, self.version = _live(self.url, self.project).get()
            a_version = assignment_version(ctx.store, self.project)
            self.counts = _counts(self.url, self.project, self.version, a_version, self.frame,
                                  _assignments(self.url, self.project, a_version))
        except AnnotatorError as exc:
            ui.show_error_and_stop(exc)

    def report(self) -> TeamReport:
        """The whole TeamReport (counts and agreement)."""
        return combine(self.counts, _agreement(self.url, self.project, self.version, self.frame))


def progress_chart(progress: pd.DataFrame) -> alt.Chart:
    """Cumulative captions judged per annotator by day: one line each, told apart by colour and point shape."""
    data = progress.assign(day=pd.to_datetime(progress["day"]))
    return alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=70, filled=True)).encode(
        x=alt.X("day:T", title="day (UTC)", axis=alt.Axis(format="%Y-%m-%d", tickCount="day")),
        y=alt.Y("cumulative:Q", title="captions judged (cumulative)", axis=alt.Axis(tickMinStep=1)),
        color=category_colour("annotator"), shape=alt.Shape("annotator:N", title="annotator"),
        tooltip=[alt.Tooltip("day:T", format="%Y-%m-%d"), "annotator:N", "judged:Q", "cumulative:Q"])


ABOUT = ("Who has done how much and how fast, what waits for the fine pass, and how well the annotators agree so "
         "far. Done counts assigned captions with a label (captions waiting for their fine pass are not done yet); "
         "speed uses the working time saved with each current judgement (imported judgements without one are left "
         "out); times are UTC. The same figures: `annotator team --project P`.")
REFRESH_SECONDS = 30  # how often the page reads new saves by itself while its switch is on


def render(ctx: ui.PageContext) -> None:
    """Draw the Team page; with "Refresh by itself" on (the default) its figures are read again every
    REFRESH_SECONDS seconds (only the new saves are read)."""
    ui.compact_header("Team", ABOUT)
    auto = st.toggle(f"Refresh by itself every {REFRESH_SECONDS} s", value=True, key="team_auto_refresh")
    st.fragment(run_every=REFRESH_SECONDS if auto else None)(_render_figures)(ctx)


def _render_figures(ctx: ui.PageContext) -> None:
    figures = TeamFigures(ctx)
    counts = figures.counts
    c0, c1, c2, c3, c4 = st.columns(5)
    totals = counts.totals
    c0.metric("Assigned", f"{totals['assigned']:,}")
    c1.metric("Done", f"{totals['done']:,}")
    c2.metric("Skipped", f"{totals['skipped']:,}")
    c3.metric("Fine pass pending", f"{totals['fine pass pending']:,}")
    c4.metric("Not started", f"{totals['not started']:,}")
    st.button("Refresh", key="team_refresh", icon=":material/refresh:",
              help="Read what was saved since the page was drawn (only the new judgements are read).")

    st.subheader("Per annotator")
    if counts.annotators.empty:
        st.info("Nobody has captions assigned or judged in this project yet.")
        return
    shown = counts.annotators.assign(**{"last active (UTC)": counts.annotators["last active (UTC)"].fillna("")})
    ui.show_table(shown, hide_index=True, width="stretch", key="team_annotators", column_config={
        "median seconds": st.column_config.NumberColumn(format="%.1f"),
        "captions per hour": st.column_config.NumberColumn(format="%.1f")})
    recent = recent_activity(figures.frame, time.time())
    if recent.empty:
        st.caption("Within the hour: nobody saved a judgement in the last hour.")
    else:
        st.markdown("**Within the hour**")
        ui.show_table(recent, hide_index=True, width="stretch", key="team_recent")

    st.subheader("Progress over time")
    if counts.progress.empty:
        st.caption("No assigned caption has been judged yet.")
    else:
        st.altair_chart(progress_chart(counts.progress), width="stretch")
        st.caption("Assigned captions judged, by the day of their current judgement (a caption judged again counts "
                   "on its newest day).")

    st.subheader("Agreement so far")
    report = figures.report()  # the bootstrap runs here, after the tables above are on screen
    if report.agreement.empty:
        st.caption("No two annotators share a judged caption yet (practice items are left out).")
    else:
        ui.show_table(report.agreement, hide_index=True, width="stretch", key="team_agreement", column_config={
            c: st.column_config.NumberColumn(format="%.3f")
            for c in ("observed agreement", "kappa", "kappa low", "kappa high")})
        st.caption(f"Cohen's kappa on the captions each pair shares, with its {report.confidence:.0%} interval "
                   f"(percentile bootstrap over captions, {report.n_resamples:,} resamples, seed {report.seed}). "
                   "Practice items are left out. Details on the Agreement page.")

    st.subheader("Export")
    fmt = st.selectbox("Format", list(FORMATS), key="team_format", format_func=lambda f: f"{f} — {FORMATS[f].description}")
    table_download("Download the team tables", report, fmt, f"{report.project}-team", key="team_download",
                   caption=f"Team figures of {report.project}")
