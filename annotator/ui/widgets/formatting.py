"""How the pages write numbers in tables: one format per column, and "—" for a missing value (never "None",
"nan" or an empty cell that reads as zero). Every page shows its tables through :func:`show_table`, so a share
reads the same everywhere."""

from __future__ import annotations

import math
import numbers

import pandas as pd

EMPTY = "—"
#: A table of at most this many rows is shown whole (streamlit's own default shows ten and scrolls the rest).
WHOLE_ROWS = 25


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


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def column_digits(values) -> int:
    """The decimals one column of numbers is written with: none when every figure is whole (counts), three when
    every figure lies within ±1 (ratios such as kappa, precision or recall), else two."""
    finite = [float(v) for v in values if _is_number(v) and not _missing(v)]
    if all(v.is_integer() for v in finite):
        return 0
    return 3 if all(abs(v) <= 1 for v in finite) else 2


def printf(spec: str):
    """A cell writer for a printf-style column format as the pages give streamlit ("%.3f", "%+.2f", "%d");
    "—" when missing."""
    def write(x) -> str:
        if _missing(x):
            return EMPTY
        return spec % (int(round(float(x))) if spec.rstrip().endswith(("d", "i")) else float(x))
    return write


def text_table(frame: pd.DataFrame, formats: dict, *, numbers_too: bool = False) -> pd.DataFrame:
    """``frame`` with each column in ``formats`` written by its formatter, one format per column, and every
    other missing cell as "—". With ``numbers_too``, every other column holding a fractional or missing figure
    is written with one number of decimals for the whole column (:func:`column_digits`); whole-number columns
    without a gap stay numbers."""
    out = frame.copy()
    for col in out.columns:
        values = out[col]
        if col in formats:
            out[col] = [formats[col](v) for v in values]
        elif numbers_too and _needs_text(values):
            digits = column_digits(values)
            out[col] = [number(v, digits) if _is_number(v) or _missing(v) else v for v in values]
        elif values.dtype == object or values.isna().any():
            out[col] = [EMPTY if _missing(v) else v for v in values]
    return out


def _needs_text(values: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(values.dtype):
        return False
    if pd.api.types.is_numeric_dtype(values.dtype):
        return pd.api.types.is_float_dtype(values.dtype) or bool(values.isna().any())
    return any(_is_number(v) and not float(v).is_integer() for v in values) or (
        values.isna().any() and any(_is_number(v) for v in values))


def _number_format(config) -> str | None:
    if isinstance(config, dict) and (config.get("type_config") or {}).get("type") == "number":
        return (config["type_config"] or {}).get("format") or ""
    return None


def show_table(data, formats: dict | None = None, *, container=None, **kwargs):
    """Show ``data`` (a frame, or rows as a list of dicts) as a streamlit table with one format per column and
    "—" for every missing cell. ``formats`` maps a column to a cell writer (:func:`percent`, :func:`number`, …);
    a column the page configures as a number with a printf format ("%.3f") is written in that format; any other
    column of fractional or missing figures gets one number of decimals (:func:`column_digits`). Formatted
    columns are shown as right-aligned text so a missing figure reads "—", not "None". Other keyword arguments
    go to ``st.dataframe`` (``container`` is where to draw, ``st`` by default); a table of up to :data:`WHOLE_ROWS`
    rows is shown whole unless a ``height`` is given. Returns what ``st.dataframe`` returns."""
    import streamlit as st
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    config = dict(kwargs.pop("column_config", None) or {})
    formats = dict(formats or {})
    for col, cfg in config.items():
        spec = _number_format(cfg)
        if spec is not None and col in frame.columns and col not in formats and spec.startswith("%"):
            formats[col] = printf(spec)
    shown = text_table(frame, formats, numbers_too=True)
    for col in shown.columns:
        if shown[col].dtype == object and pd.api.types.is_numeric_dtype(frame[col].dtype) \
                and not pd.api.types.is_bool_dtype(frame[col].dtype):
            cfg = config.get(col)
            label = cfg.get("label") if isinstance(cfg, dict) else cfg if isinstance(cfg, str) else None
            helptext = cfg.get("help") if isinstance(cfg, dict) else None
            config[col] = st.column_config.TextColumn(label, help=helptext, alignment="right")
    if "height" not in kwargs and len(shown) <= WHOLE_ROWS:
        kwargs["height"] = "content"  # a short table whole, without a scroll area of its own
    return (container or st).dataframe(shown, column_config=config or None, **kwargs)
