"""How the pages write numbers in tables: one format per column, and "—" for a missing value (never "None",
"nan" or an empty cell that reads as zero). Used by the pages' tables so a share reads the same everywhere."""

from __future__ import annotations

import math

import pandas as pd

EMPTY = "—"


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and not math.isfinite(x)) or (not isinstance(x, str) and pd.isna(x))


def percent(x, digits: int = 1) -> str:
    """A share (0.275) as a percentage with ``digits`` decimals ("27.5 %"); "—" when missing."""
    return EMPTY if _missing(x) else f"{100 * float(x):.{digits}f} %"


def number(x, digits: int = 2) -> str:
    """A number with ``digits`` decimals (whole numbers with thousands separators at 0); "—" when missing."""
    if _missing(x):
        return EMPTY
    return f"{int(round(float(x))):,}" if digits == 0 else f"{float(x):.{digits}f}"


def text_table(frame: pd.DataFrame, formats: dict) -> pd.DataFrame:
    """``frame`` with each column in ``formats`` written by its formatter, one format per column, and every
    other missing cell as "—"."""
    out = frame.copy()
    for col in out.columns:
        if col in formats:
            out[col] = [formats[col](v) for v in out[col]]
        elif out[col].dtype == object or out[col].isna().any():
            out[col] = [EMPTY if _missing(v) else v for v in out[col]]
    return out
