"""Download buttons for tables: one file per format, a zip of CSV files when a page has several tables."""

from __future__ import annotations

import streamlit as st

from ...io.tables import download_file


def table_download(label: str, tables, fmt: str, stem: str, *, key: str, container=None, **options) -> None:
    """A download button for ``tables`` in ``fmt`` (annotator.io.tables.download_file: CSV of several
    tables is a zip with one CSV per table); ``options`` go to the writer (caption, float_format …)."""
    data, name, mime = download_file(tables, fmt, stem, **options)
    (container or st).download_button(label + (" (zip of CSV files)" if name.endswith(".zip") else ""), data=data,
                                      file_name=name, mime=mime, key=key)
