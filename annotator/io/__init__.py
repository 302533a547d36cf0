"""Reading and writing project data.

Readers turn files into domain objects (:mod:`annotator.model`) and never touch
the database; each format's ``import_*`` function, beside its reader in the
format's module, writes what the reader produced in one store transaction
(with :mod:`annotator.io.importers`, the step they share), so an import is
all-or-nothing. Writers turn stored projects back into files.

Import formats are listed by the importer catalog (:mod:`annotator.exchange.catalog`):
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
* ``label_studio`` the codec of Label Studio's files (config, tasks, characters and words); the exchange
                 itself, which maps people and stores, is :mod:`annotator.exchange.label_studio`

(``annotator.io.tables`` holds the table writers every export of analysis
results goes through.)

Item keys follow one convention everywhere: the image file name when there is
one (``1000092795.jpg``, ``COCO_val2014_000000391895.jpg``), so captions of
another system imported later in another format attach to the same items.
"""

from importlib import import_module

#: Where each import function lives: the format module that reads its files also stores them.
_HOMES = {
    "ImportResult": "importers", "import_project": "importers",
    "import_lines": "lines", "import_coco": "coco", "import_flickr30k": "flickr30k",
    "import_jsonl": "jsonl", "export_jsonl": "jsonl", "import_judgement_rows": "judgement_rows",
    "import_judgements": "judgements", "import_corrections": "corrections", "import_human_scores": "human_scores",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str):
    # Loaded on first use, so `import annotator.io.tables` (the table writers) stays light.
    if name in _HOMES:
        return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
