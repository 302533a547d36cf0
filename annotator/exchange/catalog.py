"""The importer catalog: the import formats, in the order the command line and the Data page list them.

Each entry is a module that declares ``FORMAT``, an :class:`~annotator.io.options.ImportFormat` (name, help,
options, example files, reader and import): the format codecs of :mod:`annotator.io` and the exchanges of this
package, which compose layers above the codecs (Label Studio). ``annotator import <format>``, the Data page's
import form, the example and hostile-input tests and the format documentation check all read this list, so a new
format is its module plus one line here. The catalog lives above both packages because it names modules of
both: io/ imports nothing from here.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module

from ..io.options import ImportFormat

#: Format modules, relative to the ``annotator`` package, one per import format.
MODULES = (
    "io.lines",
    "io.coco",
    "io.flickr30k",
    "io.jsonl",
    "io.judgements",
    "io.corrections",
    "io.human_scores",
    "exchange.label_studio",
    "exchange.judge_files",
)


@cache
def formats() -> tuple[ImportFormat, ...]:
    """Every import format of the catalog, in catalog order."""
    return tuple(import_module(f"annotator.{module}").FORMAT for module in MODULES)


def get_format(name: str) -> ImportFormat:
    """The format called ``name`` (as on the command line); KeyError if there is none."""
    for fmt in formats():
        if fmt.name == name:
            return fmt
    raise KeyError(name)
