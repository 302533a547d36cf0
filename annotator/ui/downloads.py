"""Download buttons for tables: one file per format, a zip of CSV files when a page has several tables.

Each file is written when its button is clicked (Streamlit calls the button's ``data`` then, on a thread of its
own), not on every run of the page: a page with a button per table and format wrote every one of them, XLSX
included, each time a widget changed."""

from __future__ import annotations

from functools import partial

import streamlit as st

from ..io.tables import download_file, download_name, file_name, mime_type, write_table


def table_download(label: str, tables, fmt: str, stem: str, *, key: str, container=None, **options) -> None:
    """A download button for ``tables`` in ``fmt`` (annotator.io.tables.download_file: CSV of several
    tables is a zip with one CSV per table); ``options`` go to the writer (caption, float_format …)."""
    name, mime = download_name(tables, fmt, stem, name=options.get("name"))
    (container or st).download_button(label + (" (zip of CSV files)" if name.endswith(".zip") else ""),
                                      data=lambda: download_file(tables, fmt, stem, **options)[0],
                                      file_name=name, mime=mime, key=key)


def written_table_download(label: str, tables, fmt: str, stem: str, *, key: str, container=None, **options) -> None:
    """A download button for one file of ``tables`` in ``fmt`` as :func:`annotator.io.tables.write_table` writes
    it (several tables in one file, whatever the format), named ``stem`` with the format's extension."""
    (container or st).download_button(label, data=partial(write_table, tables, fmt, **options),
                                      file_name=file_name(stem, fmt), mime=mime_type(fmt), key=key)
