"""How pages show a change of a score: always signed, and no colour or arrow for a change that rounds to zero
(the charts' colours are annotator.ui.widgets.palette's)."""

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

