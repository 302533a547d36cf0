"""Reading and writing project data.

Readers turn files into domain objects (:mod:`annotator.model`) and never touch
the database; :mod:`annotator.io.importers` writes what a reader produced in
one store transaction, so an import is all-or-nothing. Writers turn stored
projects back into files.

Import formats are listed by the importer catalog (:mod:`annotator.io.catalog`):
each format's module declares ``FORMAT`` (name, help, options, example files
under ``examples/``, reader and import), and the command line and the Data page
are built from it. Formats (documented for users in ``docs/formats.md``):

* ``lines``      line-aligned captions / references / image list (the
                 coco-caption and multi-bleu convention)
* ``coco``       COCO captions, instances and results JSON
* ``flickr30k``  Flickr30K Entities Sentences/ and Annotations/
* ``jsonl``      the native format, one item per line (round-trips)
* ``judgements`` coarse/fine JSON files of the original error-analysis tool
* judgement rows one row per caption judgement (the judgements export; its
                 JSONL reads back through ``import_jsonl``)
* ``corrections`` a corrected full copy of one system's captions
* ``human-scores`` per-caption human judgement scores (CSV/TSV or one per line)

(``annotator.io.tables`` holds the table writers every export of analysis
results goes through.)

Item keys follow one convention everywhere: the image file name when there is
one (``1000092795.jpg``, ``COCO_val2014_000000391895.jpg``), so captions of
another system imported later in another format attach to the same items.
"""


__all__ = [
    "ImportResult", "export_jsonl", "import_coco", "import_corrections", "import_flickr30k", "import_human_scores",
    "import_jsonl", "import_judgement_rows", "import_judgements", "import_lines", "import_project",
]


def __getattr__(name: str):
    # Loaded on first use, so `import annotator.io.tables` (the table writers) stays light.
    if name in __all__:
        from . import importers
        return getattr(importers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
