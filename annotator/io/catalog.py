"""The importer catalog: the import formats, in the order the command line and the Data page list them.

Each entry is a module of :mod:`annotator.io` that declares ``FORMAT``, an
:class:`~annotator.io.options.ImportFormat` (name, help, options, example files,
reader and import). ``annotator import <format>``, the Data page's import form,
the example and hostile-input tests and the format documentation check all read
this list, so a new format is its module plus one line here.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module

from .options import ImportFormat

#: Format modules under annotator/io/, one per import format.
MODULES = (
    "lines",
    "coco",
    "flickr30k",
    "jsonl",
    "judgements",
    "corrections",
    "human_scores",
    "label_studio",
)


@cache
def formats() -> tuple[ImportFormat, ...]:
    """Every import format of the catalog, in catalog order."""
    return tuple(import_module(f"{__package__}.{module}").FORMAT for module in MODULES)


def get_format(name: str) -> ImportFormat:
    """The format called ``name`` (as on the command line); KeyError if there is none."""
    for fmt in formats():
        if fmt.name == name:
            return fmt
    raise KeyError(name)
