"""How pages show a change of a score: always signed, and no colour or arrow for a change that rounds to zero."""

from __future__ import annotations

import math


def metric_delta(change: float | None, digits: int = 2) -> dict:
    """Keyword arguments for ``st.metric`` showing ``change``: "+1.25" / "−0.40" with the usual green or
    red arrow, and "±0.00" in grey without an arrow when it rounds to zero (or is missing)."""
    if change is None or not math.isfinite(change):
        return {"delta": None}
    if round(change, digits) == 0:
        return {"delta": f"±{0:.{digits}f}", "delta_color": "off", "delta_arrow": "off"}
    return {"delta": f"{change:+.{digits}f}"}


#: The charts' colours for categories (systems, baselines, annotators, groups): saturated enough to read on white
#: (contrast ≥ 3:1 against it) and ordered so that neighbours differ in hue and lightness. Streamlit's own
#: palette has near-white tints (a light blue, a light pink) that vanish as lines on a white chart.
PALETTE = ("#1f5fa8", "#d55e00", "#2a8a3a", "#8e44ad", "#a6761d", "#0b7f86", "#c0392b", "#4d4d4d", "#c2185b",
           "#6b4f2a", "#3f51b5", "#5b7a0e")


def category_colour(field: str, title: str | None = None, domain=None):
    """An Altair colour channel for the categories of ``field`` in :data:`PALETTE` (``domain`` fixes their order
    and makes every layer that uses the same domain share one legend); more categories than colours repeat."""
    import altair as alt
    n = len(domain) if domain is not None else len(PALETTE)
    scale = alt.Scale(range=[PALETTE[i % len(PALETTE)] for i in range(max(n, 1))],
                      **({"domain": list(domain)} if domain is not None else {}))
    return alt.Color(f"{field}:N", title=title if title is not None else field, scale=scale)
