"""Table writers: one registry that turns tables into file bytes.

Every export of the app (agreement, error analysis, rescoring, diversity,
content selection …) goes through :func:`write_table`::

    from annotator.io.tables import write_table, file_name, mime_type

    data = write_table(df, "csv")                               # one table
    data = write_table({"Errors per description": t1,
                        "Error types": t2}, "xlsx")              # several named tables
    data = write_table(report, "latex", caption="Agreement")      # anything with .to_tables()

What can be passed as ``tables``:

* a ``pandas.DataFrame`` (one unnamed table; ``name=`` gives it a name),
* a mapping ``{name: DataFrame}`` (several named tables, order kept),
* an object with a ``to_tables()`` method returning such a mapping
  (the report objects of annotator.agreement and annotator.analysis).

Formats (``FORMATS``; add one with :func:`register_format`):

``csv``    UTF-8, header row, no index. Several tables: one section per table,
           each introduced by a line ``# <name>`` and separated by a blank line.
           A text cell or header that a spreadsheet would run as a formula —
           starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return,
           and not simply a number like ``-0.5`` — gets a leading ``'`` (the
           OWASP advice against CSV injection); ``raw_csv=True`` writes every
           cell exactly as it is.
``xlsx``   one worksheet per table (names cut to Excel's 31 characters and made
           unique), bold header row. Text is always stored as text, so a caption
           that starts with ``=`` never becomes a formula. Characters an XLSX
           file cannot hold (control characters other than tab and line breaks,
           unpaired surrogates, U+FFFE/U+FFFF) are written as U+FFFD ``�``.
``latex``  booktabs ``tabular`` (``\\toprule``/``\\midrule``/``\\bottomrule``)
           inside a ``table`` float; every text cell and header is escaped
           (``& % $ # _ { } ~ ^ \\``; control characters become ``?``).
           Needs ``\\usepackage{booktabs}``.
           Several tables: one float each. ``caption=``/``label=`` are used
           for a single table; with several, the table name is the caption.
``md``     GitHub pipe tables; ``| \\ ` * _ [ ] < >`` escaped, newlines folded,
           other control characters written as ``�``. Several tables: a
           ``### <name>`` heading before each.
``json``   UTF-8. One unnamed DataFrame → a list of row objects; named
           table(s) → an object ``{name: [row objects]}``. NaN → null. Control
           characters are escaped (``\\u001b``), so every text survives.

Floats: CSV, XLSX and JSON keep full precision; LaTeX and Markdown use
``float_format`` (default ``"{:.3f}"``, a format string or a callable).
Missing values print as an empty cell (CSV/XLSX/LaTeX/Markdown) or null (JSON).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from ..errors import InputError
from ..names import LONE_SURROGATE

__all__ = ["FORMATS", "TableFormat", "register_format", "write_table", "as_tables", "file_name", "mime_type",
           "download_file", "escape_latex", "escape_markdown", "neutralise_formula", "xml_safe"]

DEFAULT_FLOAT_FORMAT = "{:.3f}"


@dataclass(frozen=True)
class TableFormat:
    """A registered output format: its name, file extension, MIME type and writer."""

    name: str
    extension: str
    mime: str
    writer: Callable[..., bytes]
    description: str = ""


#: Registered formats by name, in registration order.
FORMATS: dict[str, TableFormat] = {}


def register_format(name: str, *, extension: str, mime: str, description: str = ""):
    """Decorator: register ``writer(tables: dict[str, DataFrame], *, single: bool, **options) -> bytes``."""
    def deco(func):
        FORMATS[name] = TableFormat(name, extension, mime, func, description)
        return func
    return deco


def as_tables(tables, name: str | None = None) -> tuple[dict[str, pd.DataFrame], bool]:
    """Normalise the accepted inputs to ``({name: DataFrame}, single_unnamed)``.

    ``single_unnamed`` is True when one DataFrame was given without a name
    (JSON then writes a bare list of rows).
    """
    if hasattr(tables, "to_tables") and not isinstance(tables, pd.DataFrame):
        tables = tables.to_tables()
    if isinstance(tables, pd.DataFrame):
        return {name or "table": tables}, name is None
    if isinstance(tables, Mapping):
        out = {}
        for key, df in tables.items():
            if not isinstance(df, pd.DataFrame):
                raise InputError(f"table {key!r} is a {type(df).__name__}, not a DataFrame")
            out[str(key)] = df
        if not out:
            raise InputError("there is no table to write")
        return out, False
    raise InputError(f"cannot write a {type(tables).__name__} as a table; give a DataFrame or a mapping of DataFrames")


def write_table(tables, fmt: str, *, name: str | None = None, float_format=None, caption: str | None = None,
                label: str | None = None, raw_csv: bool = False) -> bytes:
    """Render one table or several named tables in format ``fmt``; return the file's bytes.

    ``tables``: DataFrame, mapping name → DataFrame, or an object with ``to_tables()``.
    ``name``: name of a single DataFrame (sheet name, heading, JSON key).
    ``float_format``: for LaTeX/Markdown, a format string like ``"{:.2f}"`` or a callable.
    ``caption``/``label``: LaTeX caption and ``\\label`` of a single table.
    ``raw_csv``: CSV cells exactly as they are, without the ``'`` before formula-like text.
    Raises InputError for an unknown format.
    """
    spec = FORMATS.get(fmt)
    if spec is None:
        raise InputError(f"unknown table format {fmt!r}; choose one of {', '.join(FORMATS)}")
    named, single = as_tables(tables, name)
    return spec.writer(named, single=single, float_format=float_format, caption=caption, label=label, raw_csv=raw_csv)


def file_name(stem: str, fmt: str) -> str:
    """``stem`` with the extension of ``fmt`` (characters unsafe in file names replaced)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem).strip("._") or "table"
    return f"{safe}.{FORMATS[fmt].extension}"


def mime_type(fmt: str) -> str:
    """The MIME type of ``fmt`` (for download buttons)."""
    return FORMATS[fmt].mime


def download_file(tables, fmt: str, stem: str, **options) -> tuple[bytes, str, str]:
    """(bytes, file name, MIME type) of a page's download of ``tables`` in ``fmt``.

    One file in ``fmt`` (options as :func:`write_table`), except CSV of several tables: then a zip
    archive with one CSV file per table (``<table name>.csv``), each of which a CSV reader such as
    ``pandas.read_csv`` takes as it is — one file holding several tables with section lines does not.
    """
    import zipfile
    name = options.pop("name", None)
    named, _ = as_tables(tables, name)
    if fmt != "csv" or len(named) == 1:
        return write_table(tables, fmt, name=name, **options), file_name(stem, fmt), mime_type(fmt)
    buf = io.BytesIO()
    used: set[str] = set()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for key, df in named.items():
            member = file_name(key, "csv")
            n = 2
            while member in used:  # two names that differ only in characters a file name cannot hold
                member, n = file_name(f"{key}-{n}", "csv"), n + 1
            used.add(member)
            zf.writestr(member, write_table(df, "csv", raw_csv=options.get("raw_csv", False)))
    return buf.getvalue(), file_name(stem, "csv")[:-4] + ".zip", "application/zip"


# ---------------------------------------------------------------- helpers

def _is_missing(value) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _formatter(float_format) -> Callable[[float], str]:
    if float_format is None:
        float_format = DEFAULT_FLOAT_FORMAT
    if callable(float_format):
        return float_format
    return float_format.format


def _cell_text(value, fmt_float) -> str:
    if _is_missing(value):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return fmt_float(float(value))
    if isinstance(value, (np.integer,)):
        return str(int(value))
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(str(v) for v in value)
    return str(value)


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _plain(value):
    """A cell as a plain JSON/XLSX value."""
    if _is_missing(value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isinf(value):
        return None
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, (pd.Timestamp,)):
        return value.isoformat()
    return value


# ---------------------------------------------------------------- writers

# Cells a spreadsheet would take as a formula (or a DDE call): the OWASP list of leading characters.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def neutralise_formula(text: str) -> str:
    """``text`` with a leading ``'`` when a spreadsheet would run it as a formula; numbers such as ``-0.5`` stay."""
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def _csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells and headers are neutralised (the frame itself is left alone)."""
    def cell(v):
        return neutralise_formula(v) if isinstance(v, str) else v

    columns = [cell(c) for c in df.columns]
    text_cols = [c for c in df.columns if not (_is_numeric(df[c]) or pd.api.types.is_bool_dtype(df[c]))]
    if columns == list(df.columns) and not text_cols:
        return df
    out = df.copy(deep=False)
    for c in text_cols:
        out[c] = out[c].map(cell)
    out.columns = columns
    return out


def _has_carriage_return(df: pd.DataFrame) -> bool:
    if any("\r" in str(c) for c in df.columns):
        return True
    for c in df.columns:
        if not (_is_numeric(df[c]) or pd.api.types.is_bool_dtype(df[c])):
            if any(isinstance(v, str) and "\r" in v for v in df[c]):
                return True
    return False


@register_format("csv", extension="csv", mime="text/csv", description="comma-separated values")
def _write_csv(tables: dict, *, single: bool, raw_csv: bool = False, **_) -> bytes:
    parts = []
    for n, (key, df) in enumerate(tables.items()):
        buf = io.StringIO()
        if len(tables) > 1:
            if n:
                buf.write("\n")
            buf.write(f"# {' '.join(str(key).splitlines())}\n")
        df = df if raw_csv else _csv_safe(df)
        # Python's csv module quotes a field holding "\n" but not one holding a lone "\r" (which readers take as a
        # line end): quote every field of a table that has one.
        quoting = csv.QUOTE_ALL if _has_carriage_return(df) else csv.QUOTE_MINIMAL
        df.to_csv(buf, index=False, lineterminator="\n", quoting=quoting)
        parts.append(buf.getvalue())
    return "".join(parts).encode("utf-8", errors="replace")


def _sheet_names(keys) -> list[str]:
    out: list[str] = []
    for key in keys:
        base = "".join("_" if c in "[]:*?/\\" else c for c in xml_safe(key)).strip("'") or "Sheet"
        candidate = base[:31]
        n = 2
        while candidate.lower() in (o.lower() for o in out):
            suffix = f" ({n})"
            candidate = base[:31 - len(suffix)] + suffix
            n += 1
        out.append(candidate)
    return out


@register_format("xlsx", extension="xlsx", mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                 description="Excel workbook, one sheet per table")
def _write_xlsx(tables: dict, *, single: bool, **_) -> bytes:
    from openpyxl import Workbook
    from openpyxl.cell.cell import TYPE_STRING
    from openpyxl.styles import Font

    wb = Workbook()
    wb.remove(wb.active)
    bold = Font(bold=True)
    for sheet_name, df in zip(_sheet_names(tables), tables.values()):
        ws = wb.create_sheet(sheet_name)
        for col, header in enumerate(df.columns, start=1):
            cell = ws.cell(row=1, column=col)
            cell.value = xml_safe(str(header))
            cell.data_type = TYPE_STRING
            cell.font = bold
        for r, row in enumerate(df.itertuples(index=False, name=None), start=2):
            for col, value in enumerate(row, start=1):
                value = _plain(value)
                if isinstance(value, list):
                    value = ", ".join(str(v) for v in value)
                cell = ws.cell(row=r, column=col)
                if isinstance(value, str):
                    cell.value = xml_safe(value)
                    # openpyxl would take a leading "=" as a formula; keep text as text.
                    cell.data_type = TYPE_STRING
                else:
                    cell.value = value
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


# What XML 1.0 (the inside of an XLSX file) cannot hold: C0 controls but tab and line breaks, lone surrogates,
# U+FFFE/U+FFFF. (DEL and C1 are legal XML; they are replaced too, as no spreadsheet shows them.)
_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
#: Shown where a character could not be written.
REPLACEMENT = "\ufffd"


def xml_safe(text: str) -> str:
    """``text`` with every character an XLSX sheet cannot hold replaced by U+FFFD (visible, not silently dropped)."""
    return _NOT_IN_XML.sub(REPLACEMENT, text)


_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "\n": " ", "\r": " ",
}


def escape_latex(text: str) -> str:
    """Escape LaTeX's special characters so ``text`` prints literally (a control character prints as ``?``)."""
    return "".join(_LATEX_ESCAPES.get(c, c) for c in _NOT_IN_XML.sub("?", str(text)))


def _latex_one(df: pd.DataFrame, fmt_float, caption: str | None, label: str | None) -> str:
    aligns = "".join("r" if _is_numeric(df[c]) else "l" for c in df.columns) or "l"
    lines = ["\\begin{table}[ht]", "\\centering", f"\\begin{{tabular}}{{{aligns}}}", "\\toprule",
             " & ".join(escape_latex(str(c)) for c in df.columns) + " \\\\", "\\midrule"]
    for row in df.itertuples(index=False, name=None):
        lines.append(" & ".join(escape_latex(_cell_text(v, fmt_float)) for v in row) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    if caption:
        lines.append(f"\\caption{{{escape_latex(caption)}}}")
    if label:
        lines.append(f"\\label{{{''.join(c for c in label if c.isalnum() or c in ':-_.')}}}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


@register_format("latex", extension="tex", mime="application/x-tex", description="LaTeX booktabs tabular")
def _write_latex(tables: dict, *, single: bool, float_format=None, caption=None, label=None, **_) -> bytes:
    fmt_float = _formatter(float_format)
    out = []
    if len(tables) == 1:
        (key, df), = tables.items()
        out.append(_latex_one(df, fmt_float, caption if caption is not None else (None if single else key), label))
    else:
        for key, df in tables.items():
            out.append(_latex_one(df, fmt_float, key, None))
    return "\n".join(out).encode("utf-8")


_MD_SPECIAL = set("\\|`*_[]<>")


def escape_markdown(text: str) -> str:
    """Escape characters that would break a pipe table or render as Markdown/HTML."""
    text = xml_safe(" ".join(str(text).splitlines()))
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in text)


def _markdown_one(df: pd.DataFrame, fmt_float) -> str:
    headers = [escape_markdown(str(c)) for c in df.columns]
    aligns = ["---:" if _is_numeric(df[c]) else ":---" for c in df.columns]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(aligns) + " |"]
    for row in df.itertuples(index=False, name=None):
        lines.append("| " + " | ".join(escape_markdown(_cell_text(v, fmt_float)) for v in row) + " |")
    return "\n".join(lines) + "\n"


@register_format("md", extension="md", mime="text/markdown", description="Markdown pipe table")
def _write_markdown(tables: dict, *, single: bool, float_format=None, **_) -> bytes:
    fmt_float = _formatter(float_format)
    if len(tables) == 1 and single:
        return _markdown_one(next(iter(tables.values())), fmt_float).encode("utf-8")
    parts = [f"### {escape_markdown(key)}\n\n{_markdown_one(df, fmt_float)}" for key, df in tables.items()]
    return "\n".join(parts).encode("utf-8")


def _records(df: pd.DataFrame) -> list[dict]:
    cols = [str(c) for c in df.columns]
    return [{c: _plain(v) for c, v in zip(cols, row)} for row in df.itertuples(index=False, name=None)]


@register_format("json", extension="json", mime="application/json", description="JSON rows")
def _write_json(tables: dict, *, single: bool, **_) -> bytes:
    if single:
        obj = _records(next(iter(tables.values())))
    else:
        obj = {key: _records(df) for key, df in tables.items()}
    text = json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)
    if LONE_SURROGATE.search(text):
        text = json.dumps(obj, indent=2, ensure_ascii=True, allow_nan=False)  # \\udXXX escapes: still valid JSON
    return (text + "\n").encode("utf-8")

