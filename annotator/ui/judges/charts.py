"""The Judges page's charts: the reliability diagram of a judge's probabilities and its confusion matrix against
the human layer (Altair), both drawn from the :class:`annotator.judges.report.JudgeCalibration` the page shows."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st


def reliability_diagram(calibration, *, container=None) -> None:
    """Per bin, the judge's mean probability against the share the humans call inaccurate (the dots' size: how
    many captions), with the diagonal a perfectly calibrated judge lies on."""
    where = container or st
    rows = [{"bin": f"{b.lo:.1f}–{b.hi:.1f}", "mean p": b.mean_p, "share inaccurate": b.observed, "captions": b.n}
            for b in calibration.bins if b.n]
    if not rows:
        where.caption("No caption both scored by the judge and labelled in this layer.")
        return
    frame = pd.DataFrame(rows)
    diagonal = alt.Chart(pd.DataFrame({"x": [0.0, 1.0], "y": [0.0, 1.0]})).mark_line(
        strokeDash=[4, 4], color="#888888").encode(x="x:Q", y="y:Q")
    axis_x = alt.X("mean p:Q", scale=alt.Scale(domain=[0, 1]), title="The judge's mean probability (inaccurate)")
    axis_y = alt.Y("share inaccurate:Q", scale=alt.Scale(domain=[0, 1]), title="Share the humans call inaccurate")
    line = alt.Chart(frame).mark_line(color="#1f5fa8").encode(x=axis_x, y=axis_y)
    dots = alt.Chart(frame).mark_circle(color="#1f5fa8", opacity=0.85).encode(
        x="mean p:Q", y="share inaccurate:Q", size=alt.Size("captions:Q", legend=None, scale=alt.Scale(range=[40, 400])),
        tooltip=["bin", alt.Tooltip("mean p:Q", format=".2f"), alt.Tooltip("share inaccurate:Q", format=".2f"),
                 "captions"])
    where.altair_chart((diagonal + line + dots).properties(height=300, title="Reliability"), width="stretch")


def confusion_chart(calibration, layer: str, *, container=None) -> None:
    """The 2x2 table of the layer's labels (rows) against the judge's decisions (columns) as a heat map."""
    where = container or st
    labels = ("accurate", "inaccurate")
    cells = calibration.vs_layer.confusion
    frame = pd.DataFrame([{"layer": a, "judge": b, "captions": cells[i][j]}
                          for i, a in enumerate(labels) for j, b in enumerate(labels)])
    heat = alt.Chart(frame).mark_rect().encode(
        x=alt.X("judge:N", title=f"judge {calibration.judge}", axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("layer:N", title=f"humans ({layer})"),
        color=alt.Color("captions:Q", scale=alt.Scale(scheme="blues"), legend=None),
        tooltip=["layer", "judge", "captions"])
    text = alt.Chart(frame).mark_text(fontSize=16).encode(x="judge:N", y="layer:N", text="captions:Q")
    where.altair_chart((heat + text).properties(height=220, title="Confusion"), width="stretch")
